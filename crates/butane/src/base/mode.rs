//! Catching `mode: 644` where `0644` was meant: a mode that is not a typical permission set
//! while its decimal digits, read as octal, would be.

pub(crate) const DECIMAL_MODE: &str =
    "unreasonable mode would be reasonable if specified in octal; remember to add a leading zero";

/// Whether `mode` looks like a permission set someone would choose on purpose.
fn typical(mode: i64, directory: bool) -> bool {
    if mode == 0 {
        return true;
    }
    let (mut r, mut w, mut x) = (false, false, false);
    // From the least specific class (other) to the most specific (user): each must grant at
    // least what a less specific one grants, and never write or execute without read.
    for shift in [0, 3, 6] {
        let t = (mode >> shift) & 7;
        let (tr, tw, tx) = (t & 4 != 0, t & 2 != 0, t & 1 != 0);
        if (r && !tr) || (w && !tw) || (x && !tx) {
            return false;
        }
        if tx && r && !x {
            return false;
        }
        if (tw || tx) && !tr {
            return false;
        }
        r |= tr;
        w |= tw;
        x |= tx;
    }
    if !r {
        return false;
    }
    if directory {
        x && mode & 0o4000 == 0 && (mode & 0o3000 == 0 || w)
    } else {
        (mode & 0o6000 == 0 || (x && mode & 0o0002 == 0)) && mode & 0o1000 == 0
    }
}

/// Whether `mode` was probably written in decimal by mistake.
pub(crate) fn looks_decimal(mode: i64, directory: bool) -> bool {
    if !(0..=7777).contains(&mode) {
        return false;
    }
    // The decimal digits read as octal ones (none may be 8 or 9).
    let (mut rest, mut as_octal, mut scale) = (mode, 0, 1);
    loop {
        let digit = rest % 10;
        if digit > 7 {
            return false;
        }
        as_octal += digit * scale;
        scale *= 8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    !typical(mode, directory) && typical(as_octal, directory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_decimal_modes() {
        assert!(looks_decimal(644, false));
        assert!(looks_decimal(755, true));
        assert!(looks_decimal(600, false));
        assert!(!looks_decimal(0o644, false));
        assert!(!looks_decimal(0o755, true));
        assert!(!looks_decimal(0, false));
        assert!(!looks_decimal(888, false));
        assert!(typical(0o4755, false));
        assert!(!typical(0o1644, false));
        assert!(typical(0o1777, true));
        assert!(!typical(0o4755, true));
    }

    /// The digit arithmetic reads a mode's decimal digits as octal as parsing them would.
    #[test]
    fn decimal_digits_read_as_octal() {
        for mode in 0..=7777i64 {
            let digits = mode.to_string();
            let expected = !digits.bytes().any(|b| b > b'7') && {
                let as_octal = i64::from_str_radix(&digits, 8).unwrap();
                !typical(mode, false) && typical(as_octal, false)
            };
            assert_eq!(looks_decimal(mode, false), expected, "{mode}");
        }
    }
}
