//! Numbers as Go writes a float64.

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub(crate) fn format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The shortest digits that read back as f, and the decimal exponent.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    // The shortest form switches to an exponent below 1e-4 and from 1e6 on.
    if !(-4..6).contains(&exp) {
        exp_form(sign, &digits, exp)
    } else {
        fixed_form(sign, &digits, exp)
    }
}

fn exp_form(sign: &str, digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let mut s = format!("{sign}{first}");
    if !rest.is_empty() {
        s.push('.');
        s.push_str(rest);
    }
    s.push('e');
    s.push(if exp < 0 { '-' } else { '+' });
    s.push_str(&format!("{:02}", exp.abs()));
    s
}

fn fixed_form(sign: &str, digits: &str, exp: i32) -> String {
    let point = exp + 1;
    let mut s = sign.to_string();
    if point <= 0 {
        s.push_str("0.");
        s.push_str(&"0".repeat((-point) as usize));
        s.push_str(digits);
    } else if point as usize >= digits.len() {
        s.push_str(digits);
        s.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        s.push_str(&digits[..point as usize]);
        s.push('.');
        s.push_str(&digits[point as usize..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_floats_like_go() {
        assert_eq!(format_float(420.0), "420");
        assert_eq!(format_float(100000.0), "100000");
        assert_eq!(format_float(1000000.0), "1e+06");
        assert_eq!(format_float(1234567.0), "1.234567e+06");
        assert_eq!(format_float(-5.0), "-5");
        assert_eq!(format_float(0.5), "0.5");
        assert_eq!(format_float(9007199254740993.0), "9.007199254740992e+15");
    }
}
