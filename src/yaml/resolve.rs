//! What a YAML plain scalar means once a target type asks for it, following go-yaml v3:
//! `~`/`null`/empty are null, `true`/`false` (three spellings) are booleans, integers may be
//! written in decimal, `0x` hex, `0o` or leading-zero octal and `0b` binary (underscores
//! ignored), and everything else is text.

#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str,
}

impl Resolved {
    /// The YAML tag name used in messages, as go-yaml prints it.
    pub fn tag(&self) -> &'static str {
        match self {
            Resolved::Null => "!!null",
            Resolved::Bool(_) => "!!bool",
            Resolved::Int(_) => "!!int",
            Resolved::Float(_) => "!!float",
            Resolved::Str => "!!str",
        }
    }
}

pub fn resolve(s: &str) -> Resolved {
    if is_null(s) {
        return Resolved::Null;
    }
    match s {
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        _ => {}
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return Resolved::Str;
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(i) = parse_int(&plain) {
        return Resolved::Int(i);
    }
    if is_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
    {
        return Resolved::Float(f);
    }
    Resolved::Str
}

/// Whether the plain scalar `s` is a null: what [`resolve`] tells without its work on
/// numbers (walks over a whole document ask it of every scalar).
pub fn is_null(s: &str) -> bool {
    matches!(s, "" | "~" | "null" | "Null" | "NULL")
}

/// Go's `strconv.ParseInt(s, 0, 64)`: sign, then a base prefix or a leading zero for octal;
/// then, as go-yaml tries next, `strconv.ParseUint` (no sign) for what is above MaxInt64.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, signed, digits) = match s.as_bytes().first()? {
        b'-' => (true, true, &s[1..]),
        b'+' => (false, true, &s[1..]),
        _ => (false, false, s),
    };
    let (radix, body) = if let Some(r) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, r)
    } else if let Some(r) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, r)
    } else if let Some(r) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, r)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(body, radix).ok()?;
    let v = if neg { -v } else { v };
    let max = if signed {
        i128::from(i64::MAX)
    } else {
        i128::from(u64::MAX)
    };
    (i128::from(i64::MIN)..=max).contains(&v).then_some(v)
}

fn is_float(s: &str) -> bool {
    let b = s.trim_start_matches(['-', '+']);
    let (mantissa, exp) = match b.find(['e', 'E']) {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |x: &str| x.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
    let exp_ok = exp.is_none_or(|e| {
        let e = e.trim_start_matches(['-', '+']);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exp_ok
}

/// go-yaml v3 also reads the YAML 1.1 spellings when the target is a boolean.
pub fn resolve_bool(s: &str) -> Option<bool> {
    match resolve(s) {
        Resolved::Bool(b) => Some(b),
        _ => yaml_1_1_bool(s),
    }
}

/// The YAML 1.1 words for a boolean, which go-yaml v3 takes from any string decoded into a
/// boolean, quoted ones too (but not a quoted `true`, a string of the core schema).
pub fn yaml_1_1_bool(s: &str) -> Option<bool> {
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_go_yaml() {
        assert_eq!(resolve("0644"), Resolved::Int(420));
        assert_eq!(resolve("644"), Resolved::Int(644));
        assert_eq!(resolve("0o755"), Resolved::Int(493));
        assert_eq!(resolve("0x1F"), Resolved::Int(31));
        assert_eq!(resolve("-12"), Resolved::Int(-12));
        assert_eq!(resolve("1_000"), Resolved::Int(1000));
        // Above MaxInt64 unsigned is still an integer (go-yaml's ParseUint); signed, a float.
        assert_eq!(
            resolve("9223372036854775808"),
            Resolved::Int(9223372036854775808)
        );
        assert_eq!(
            resolve("+9223372036854775808"),
            Resolved::Float(9223372036854775808.0)
        );
        assert_eq!(
            resolve("18446744073709551616"),
            Resolved::Float(18446744073709551616.0)
        );
        assert_eq!(resolve("09"), Resolved::Float(9.0));
        assert_eq!(resolve("1.5"), Resolved::Float(1.5));
        assert_eq!(resolve("~"), Resolved::Null);
        assert_eq!(resolve("True"), Resolved::Bool(true));
        assert_eq!(resolve("yes"), Resolved::Str);
        assert_eq!(resolve_bool("yes"), Some(true));
        assert_eq!(resolve("rw-r--r--"), Resolved::Str);
        assert_eq!(resolve("1.0.0"), Resolved::Str);
        assert_eq!(resolve("99999999999999999999"), Resolved::Float(1e20));
    }
}
