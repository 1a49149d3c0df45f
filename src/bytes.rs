//! Scans over bytes written so that the compiler turns them into vector instructions: a
//! scan that stops at the first match tests a byte at a time, which showed in profiles of
//! large translations (every data URL is scanned when validated and when written).

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

#[cfg(test)]
mod tests {
    use super::any_byte;

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
