//! Deflate's alphabets (RFC 1951): the literal/length, distance and code-length codes,
//! their extra bits and bases, and the fixed codes of a static block.

/// The shortest and the longest match deflate sends.
pub(crate) const MIN_MATCH: usize = 3;
pub(crate) const MAX_MATCH: usize = 258;

pub(crate) const LITERALS: usize = 256;
pub(crate) const END_BLOCK: usize = 256;
pub(crate) const LENGTH_CODES: usize = 29;
pub(crate) const L_CODES: usize = LITERALS + 1 + LENGTH_CODES;
pub(crate) const D_CODES: usize = 30;
pub(crate) const BL_CODES: usize = 19;
pub(crate) const MAX_BITS: u16 = 15;
pub(crate) const MAX_BL_BITS: u16 = 7;

pub(crate) const REP_3_6: usize = 16;
pub(crate) const REPZ_3_10: usize = 17;
pub(crate) const REPZ_11_138: usize = 18;
/// The order in which the code-length code lengths are sent (RFC 1951, 3.2.7).
pub(crate) const BL_ORDER: [usize; BL_CODES] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
pub(crate) const EXTRA_BL_BITS: [u8; BL_CODES] =
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];

/// The length code (0 to 28) of a match length minus 3.
pub(crate) const LENGTH_CODE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut lc = 0;
    while lc < 256 {
        t[lc] = if lc == 255 {
            28
        } else if lc < 8 {
            lc as u8
        } else {
            let b = 31 - (lc as u32).leading_zeros();
            (4 * (b - 1) + ((lc as u32 >> (b - 2)) & 3)) as u8
        };
        lc += 1;
    }
    t
};

/// Extra bits of each length code.
pub(crate) const fn length_extra(code: usize) -> u32 {
    if code < 8 || code == 28 {
        0
    } else {
        code as u32 / 4 - 1
    }
}

/// The smallest length minus 3 of each length code.
pub(crate) const fn length_base(code: usize) -> u32 {
    match code {
        0..8 => code as u32,
        28 => 255,
        _ => (4 + (code as u32 & 3)) << (code / 4 - 1),
    }
}

/// The distance code of a distance minus 1.
pub(crate) fn dist_code(d: usize) -> usize {
    if d < 4 {
        d
    } else {
        let b = (usize::BITS - 1 - d.leading_zeros()) as usize;
        2 * b + ((d >> (b - 1)) & 1)
    }
}

pub(crate) const fn dist_extra(code: usize) -> u32 {
    if code < 4 { 0 } else { code as u32 / 2 - 1 }
}

pub(crate) const fn dist_base(code: usize) -> u32 {
    if code < 4 {
        code as u32
    } else {
        (2 + (code as u32 & 1)) << (code / 2 - 1)
    }
}

/// A prefix code: the bits, reversed to be sent least significant first, and their count.
#[derive(Clone, Copy, Default)]
pub(crate) struct Code {
    pub(crate) bits: u16,
    pub(crate) len: u8,
}

/// The fixed literal/length code of RFC 1951 (3.2.6); its lengths also price a static block.
pub(crate) const STATIC_L: [Code; L_CODES + 2] = {
    let mut lens = [0u8; L_CODES + 2];
    let mut n = 0;
    while n < L_CODES + 2 {
        lens[n] = match n {
            0..144 => 8,
            144..256 => 9,
            256..280 => 7,
            _ => 8,
        };
        n += 1;
    }
    canonical_codes(&lens)
};

/// The fixed distance code: 5 bits.
pub(crate) const STATIC_D: [Code; D_CODES] = canonical_codes(&[5; D_CODES]);

/// Canonical codes for `lens` (what zlib's `gen_codes` makes).
pub(crate) const fn canonical_codes<const N: usize>(lens: &[u8; N]) -> [Code; N] {
    let mut count = [0u16; MAX_BITS as usize + 1];
    let mut n = 0;
    while n < N {
        count[lens[n] as usize] += 1;
        n += 1;
    }
    count[0] = 0;
    let mut next = [0u16; MAX_BITS as usize + 1];
    let mut code = 0u16;
    let mut bits = 1;
    while bits <= MAX_BITS as usize {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
        bits += 1;
    }
    let mut out = [Code { bits: 0, len: 0 }; N];
    let mut n = 0;
    while n < N {
        let len = lens[n];
        if len != 0 {
            out[n] = Code {
                bits: next[len as usize].reverse_bits() >> (16 - len),
                len,
            };
            next[len as usize] += 1;
        }
        n += 1;
    }
    out
}
