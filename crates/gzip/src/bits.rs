//! The bit writer deflate streams are written with.

/// Bits into bytes, least significant first. Each write stores a whole word and moves on
/// by the bytes completed, without a branch.
pub(crate) struct BitWriter<'a> {
    pub(crate) out: &'a mut [u8],
    /// The next byte to write.
    at: usize,
    acc: u64,
    /// Bits in `acc`, less than 8 between calls.
    n: u32,
}

impl<'a> BitWriter<'a> {
    /// Bytes written past the end (and then overwritten or cut off).
    pub(crate) const SLACK: usize = 8;

    pub(crate) fn new(out: &'a mut [u8]) -> Self {
        Self {
            out,
            at: 0,
            acc: 0,
            n: 0,
        }
    }

    /// Appends the low `len` (at most 56) bits of `bits`.
    pub(crate) fn put(&mut self, bits: u64, len: u32) {
        self.acc |= bits << self.n;
        self.n += len;
        self.out[self.at..self.at + 8].copy_from_slice(&self.acc.to_le_bytes());
        let bytes = self.n / 8;
        self.at += bytes as usize;
        self.acc >>= bytes * 8;
        self.n %= 8;
    }

    /// Pads the bits left to a byte, and returns the length written.
    pub(crate) fn finish(&mut self) -> usize {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
        self.at
    }
}
