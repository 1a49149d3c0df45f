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
    // Go's ParseFloat refuses a number beyond the largest float (Rust's gives infinity):
    // go-yaml then keeps the text a string.
    if is_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
        && f.is_finite()
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

/// The tag go-yaml names a plain scalar by in its messages: [`Resolved::tag`], or
/// `!!timestamp` for a date it would read as one, or `!!merge` for `<<` (its parser tags a
/// plain `<<` so wherever it stands).
pub fn plain_tag(s: &str) -> &'static str {
    if s == "<<" {
        return "!!merge";
    }
    match resolve(s) {
        Resolved::Str if is_timestamp(s) => "!!timestamp",
        r => r.tag(),
    }
}

/// A tag as go-yaml prints it: the core schema's as `!!name`, others as written.
pub fn short_tag(tag: &str) -> String {
    match tag.strip_prefix("tag:yaml.org,2002:") {
        Some(name) => format!("!!{name}"),
        None => tag.to_string(),
    }
}

/// What an explicit tag of the core schema asks of a scalar: go-yaml resolves the text as if
/// untagged and refuses it, stopping the whole decoding, when it is not of that type (an
/// integer passes for a float). `tag` is short (`!!int`); other tags ask nothing here.
pub fn check_explicit(tag: &str, text: &str) -> Result<(), String> {
    if !matches!(
        tag,
        "!!bool" | "!!int" | "!!float" | "!!null" | "!!timestamp"
    ) {
        return Ok(());
    }
    let found = if tag == "!!timestamp" && is_timestamp(text) {
        "!!timestamp"
    } else {
        match resolve(text) {
            // A float tag takes an integer that fits in 64 signed bits.
            Resolved::Int(i) if tag == "!!float" && i64::try_from(i).is_ok() => "!!float",
            r => r.tag(),
        }
    };
    if found == tag {
        Ok(())
    } else {
        Err(format!("cannot decode {found} `{text}` as a {tag}"))
    }
}

/// Whether go-yaml reads `s` as a timestamp: four digits and a dash, then one of the forms
/// it tries with Go's time parser, `2001-12-14`, `2001-12-14 21:59:43.10` (one or more
/// spaces), and `2001-12-14T21:59:43.10Z` (`T` or `t`, then `Z` or an offset `+hh:mm`).
/// Months, days, hours, minutes and seconds take one or two digits and must be in range.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let mut at = 5;
    // One or two digits, as Go reads a number without padding.
    let num = |at: &mut usize| -> Option<u32> {
        let d = |i: usize| {
            b.get(i)
                .filter(|c| c.is_ascii_digit())
                .map(|c| u32::from(c - b'0'))
        };
        let first = d(*at)?;
        *at += 1;
        match d(*at) {
            Some(second) => {
                *at += 1;
                Some(first * 10 + second)
            }
            None => Some(first),
        }
    };
    let Some(month) = num(&mut at) else {
        return false;
    };
    if b.get(at) != Some(&b'-') {
        return false;
    }
    at += 1;
    let Some(day) = num(&mut at) else {
        return false;
    };
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    if at == b.len() {
        return true;
    }
    let zoned = match b[at] {
        b'T' | b't' => {
            at += 1;
            true
        }
        b' ' => {
            while b.get(at) == Some(&b' ') {
                at += 1;
            }
            false
        }
        _ => return false,
    };
    let mut clock = [0u32; 3];
    for (i, part) in clock.iter_mut().enumerate() {
        if i > 0 {
            if b.get(at) != Some(&b':') {
                return false;
            }
            at += 1;
        }
        match num(&mut at) {
            Some(v) => *part = v,
            None => return false,
        }
    }
    if clock[0] > 23 || clock[1] > 59 || clock[2] > 59 {
        return false;
    }
    // A fraction of a second: a period or a comma, then digits.
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        at += 1;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
    }
    if !zoned {
        return at == b.len();
    }
    match &b[at..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            let two = |x: &u8, y: &u8| {
                (x.is_ascii_digit() && y.is_ascii_digit())
                    .then(|| u32::from(x - b'0') * 10 + u32::from(y - b'0'))
            };
            matches!((two(h1, h2), two(m1, m2)), (Some(h), Some(m)) if h <= 24 && m <= 60)
        }
        _ => false,
    }
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
        // Beyond the largest float Go's ParseFloat fails: the text stays a string.
        assert_eq!(resolve("1e400"), Resolved::Str);
        assert_eq!(resolve("-1.8e308"), Resolved::Str);
        assert_eq!(resolve(&"9".repeat(400)), Resolved::Str);
        assert_eq!(resolve("1e-400"), Resolved::Float(0.0));
    }

    #[test]
    fn explicit_tags_as_go_yaml_checks_them() {
        assert_eq!(check_explicit("!!int", "0x10"), Ok(()));
        assert_eq!(check_explicit("!!float", "420"), Ok(()));
        assert_eq!(check_explicit("!!null", ""), Ok(()));
        assert_eq!(check_explicit("!!timestamp", "2001-02-03"), Ok(()));
        assert_eq!(check_explicit("!!foo", "x"), Ok(()));
        let refused = |tag, text| check_explicit(tag, text).unwrap_err();
        assert_eq!(
            refused("!!bool", "yes"),
            "cannot decode !!str `yes` as a !!bool"
        );
        assert_eq!(refused("!!bool", ""), "cannot decode !!null `` as a !!bool");
        // The resolver knows no `<<`: text (only the parser tags a plain one a merge).
        assert_eq!(
            refused("!!int", "<<"),
            "cannot decode !!str `<<` as a !!int"
        );
        assert_eq!(
            refused("!!int", "1.5"),
            "cannot decode !!float `1.5` as a !!int"
        );
        assert_eq!(
            refused("!!float", "18446744073709551615"),
            "cannot decode !!int `18446744073709551615` as a !!float"
        );
        // Only an explicit timestamp tag reads a date as one.
        assert_eq!(
            refused("!!int", "2001-02-03"),
            "cannot decode !!str `2001-02-03` as a !!int"
        );
        assert_eq!(
            refused("!!timestamp", "420"),
            "cannot decode !!int `420` as a !!timestamp"
        );
    }

    #[test]
    fn timestamps_as_go_yaml_reads_them() {
        for s in [
            "2001-12-14",
            "2001-1-2",
            "2000-02-29",
            "2001-12-14 21:59:43.10",
            "2001-12-14   1:2:3",
            "2001-12-14t21:59:43,5Z",
            "2001-12-14T21:59:43-05:00",
        ] {
            assert!(is_timestamp(s), "{s}");
        }
        for s in [
            "2001-13-01",
            "2001-02-29",
            "2001-12-14T21:59:43",
            "2001-12-14 21:59:43Z",
            "2001-12-14 24:00:00",
            "2001-12-14x",
            "20011-12-14",
            "2001-123-1",
        ] {
            assert!(!is_timestamp(s), "{s}");
        }
        assert_eq!(plain_tag("2001-12-14"), "!!timestamp");
        assert_eq!(plain_tag("1.0.0"), "!!str");
        assert_eq!(plain_tag("<<"), "!!merge");
    }
}
