//! Upstream's `ignition-validate` prints its whole report through Go's `fmt.Fprintf` as the
//! format string, with no arguments: a `%` in a key, a unit name or a path is read as a
//! formatting verb (`%00"` prints `%!"(MISSING)`, `%%` prints `%`). This applies those rules
//! so that the drop-in prints what upstream prints.

/// Go's `parsenum` over `s[i..end]`: whether a number is there, and where the text goes on.
/// A number past a million with more digits to read is "crazy long": Go gives up on it and
/// jumps to `end`, so the rest of the format is never printed.
fn digits(s: &[char], mut i: usize, end: usize) -> (bool, usize) {
    let start = i;
    let mut num: u64 = 0;
    while i < end && s[i].is_ascii_digit() {
        if num > 1_000_000 {
            return (false, end);
        }
        num = num * 10 + u64::from(s[i] as u8 - b'0');
        i += 1;
    }
    (i > start, i)
}

/// An argument index (`[n]`) at `i`: with no arguments every index is bad. Returns where
/// the text goes on and whether the brackets were well formed.
fn arg_index(s: &[char], i: usize, good: &mut bool) -> (usize, bool) {
    if s.get(i) != Some(&'[') {
        return (i, false);
    }
    *good = false;
    if s.len() - i < 3 {
        return (i + 1, false);
    }
    for j in i + 1..s.len() {
        if s[j] == ']' {
            let (some, end) = digits(s, i + 1, j);
            return (j + 1, some && end == j);
        }
    }
    (i + 1, false)
}

/// `format` as Go's `fmt.Sprintf(format)` prints it.
pub fn sprintf_without_args(format: &str) -> String {
    if !format.contains('%') {
        return format.to_string();
    }
    let s: Vec<char> = format.chars().collect();
    let mut out = String::with_capacity(format.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != '%' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        i += 1;
        while i < s.len() && matches!(s[i], '#' | '0' | '+' | '-' | ' ') {
            i += 1;
        }
        let mut good = true;
        let (next, mut after_index) = arg_index(&s, i, &mut good);
        i = next;
        if s.get(i) == Some(&'*') {
            i += 1;
            out.push_str("%!(BADWIDTH)");
            after_index = false;
        } else {
            let (width, next) = digits(&s, i, s.len());
            i = next;
            if after_index && width {
                good = false;
            }
        }
        if i + 1 < s.len() && s[i] == '.' {
            i += 1;
            if after_index {
                good = false;
            }
            let (next, after) = arg_index(&s, i, &mut good);
            i = next;
            after_index = after;
            if s.get(i) == Some(&'*') {
                i += 1;
                out.push_str("%!(BADPREC)");
                after_index = false;
            } else {
                i = digits(&s, i, s.len()).1;
            }
        }
        if !after_index {
            i = arg_index(&s, i, &mut good).0;
        }
        let Some(&verb) = s.get(i) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += 1;
        if verb == '%' {
            out.push('%');
        } else if !good {
            out.push_str(&format!("%!{verb}(BADINDEX)"));
        } else {
            out.push_str(&format!("%!{verb}(MISSING)"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sprintf_without_args as f;

    #[test]
    fn reads_percent_signs_as_go_verbs() {
        assert_eq!(f("no verbs"), "no verbs");
        assert_eq!(f(r#"unit "%00" is"#), r#"unit "%!"(MISSING) is"#);
        assert_eq!(f("a%%b"), "a%b");
        assert_eq!(f("a%5%b"), "a%b");
        assert_eq!(f("key a%20b"), "key a%!b(MISSING)");
        assert_eq!(f("end%"), "end%!(NOVERB)");
        assert_eq!(f("x%-08.3fy"), "x%!f(MISSING)y");
        assert_eq!(f("%*d"), "%!(BADWIDTH)%!d(MISSING)");
        assert_eq!(f("%.*d"), "%!(BADPREC)%!d(MISSING)");
        assert_eq!(f("%[1]d"), "%!d(BADINDEX)");
        assert_eq!(f("%é"), "%!é(MISSING)");
        // A width or precision past a million swallows the rest of the format.
        assert_eq!(f("a%-99999999999d b %d"), "a%!(NOVERB)");
        assert_eq!(f("a%.12345678d b"), "a%!(NOVERB)");
        assert_eq!(f("a%1000001d b"), "a%!d(MISSING) b");
        assert_eq!(f("a%[12345678]d b"), "a%!d(BADINDEX) b");
    }
}
