//! Bytes looked at in bulk: scans written so that the compiler turns them into vector
//! instructions (a scan that stops at the first match tests a byte at a time, which showed
//! in profiles of large translations: every data URL is scanned when validated and when
//! written), and bytes made text as Go makes them.

/// Whether any byte of `b` satisfies `f`. Whole blocks of 32 bytes are tested without
/// stopping early.
#[inline]
pub fn any_byte(b: &[u8], f: impl Fn(u8) -> bool) -> bool {
    let mut blocks = b.chunks_exact(32);
    for block in &mut blocks {
        if block.iter().fold(0u8, |m, &x| m | u8::from(f(x))) != 0 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&x| f(x))
}

/// `bytes` as text the way a Go program sees a string of them when it encodes it (as JSON)
/// or ranges over it: every byte that does not begin a valid UTF-8 sequence is one U+FFFD.
/// Rust's lossy conversion puts one U+FFFD for a whole broken sequence (a cut-off
/// four-byte character is one there, three here).
pub fn go_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let mut rest = bytes;
    let mut out = String::new();
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) if out.is_empty() && valid.len() == bytes.len() => return valid.into(),
            Ok(valid) => {
                out.push_str(valid);
                return out.into();
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                out.extend(std::iter::repeat_n('\u{FFFD}', bad));
                rest = &after[bad..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{any_byte, go_lossy};

    #[test]
    fn broken_utf8_is_one_replacement_per_byte() {
        assert_eq!(go_lossy(b"plain \xef\xbf\xbd"), "plain \u{FFFD}");
        assert_eq!(
            go_lossy(b"caf\xe9 \xf0\x9f\x98 x\xed\xa0\x80\xf0\x9f"),
            "caf\u{FFFD} \u{FFFD}\u{FFFD}\u{FFFD} x\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"
        );
    }

    #[test]
    fn finds_a_byte_anywhere() {
        for len in [0, 1, 31, 32, 33, 64, 100] {
            let mut b = vec![b'a'; len];
            assert!(!any_byte(&b, |x| x == b'<'), "{len}");
            for at in 0..len {
                b[at] = b'<';
                assert!(any_byte(&b, |x| x == b'<'), "{len} {at}");
                b[at] = b'a';
            }
        }
    }
}
