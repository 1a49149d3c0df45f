//! The order go-yaml writes a map's string keys in.

use std::cmp::Ordering;

/// go-yaml's order for string keys: letters by code point, runs of digits by value, and
/// letters after other characters (before them right after a digit).
pub(crate) fn key_order(a: &str, b: &str) -> Ordering {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut digits = false;
    let n = ar.len().min(br.len());
    for i in 0..n {
        if ar[i] == br[i] {
            digits = is_digit(ar[i]);
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            let a_first = if digits { al } else { bl };
            return if a_first {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// Go's `unicode.IsDigit`, for the digits keys are written with.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_keys_naturally() {
        let mut keys = vec!["a10", "a2", "b", "A", "a", "_x", "1"];
        keys.sort_by(|a, b| key_order(a, b));
        assert_eq!(keys, ["_x", "1", "A", "a", "a2", "a10", "b"]);
    }
}
