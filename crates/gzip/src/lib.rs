//! Gzip at the best level, as Butane writes it: [`gzip_best`]. Small inputs take
//! [`gzip_small`], zlib's algorithm with Huffman codes of its own, for a fraction of
//! zlib-rs's time; larger ones zlib-rs itself ([`gzip_zlib`]). Butane compresses every embedded file, mostly a few
//! hundred bytes each, where zlib-rs's costs per stream dominate (a 128 KiB hash table
//! cleared on each reset, trees built over every symbol, the streaming machinery); here
//! every cost follows the input.
//!
//! The matching is zlib-rs's level 9 (lazy matching, chains of 4096, the rolling 3-byte
//! hash, zlib-ng's search along the most distant of the chains of a match's substrings),
//! and so are the symbols of the block and the choice between a stored, a static and a
//! dynamic block. The Huffman codes are built differently (see [`TreeBuilder`]): zlib's
//! heap breaks ties by its layout, and emulating it was a third of the time. The codes are
//! as short for the data, and their lengths are sent in the same way, so the stream is the
//! same size as zlib-rs's but for the codes' description, where ties broken otherwise make
//! it a byte shorter or longer now and then (measured on 50,000 inputs: 95% the same size,
//! 1% one byte longer, 4% shorter). What is the same as zlib's holds only where zlib-rs emits
//! a single block and never slides its window, which the window size and memory level
//! [`gzip_zlib`] picks guarantee up to [`SMALL_LIMIT`] bytes (see there).
//!

use std::cell::RefCell;

/// Gzip at best compression with the header Go writes (no name, mtime 0, XFL 2, OS unknown),
/// so that output matches the upstream tools wherever the deflate streams agree. Small
/// inputs (most embedded files) take [`gzip_small`], this crate's version of zlib's algorithm,
/// without zlib's fixed costs per stream.
pub fn gzip_best(data: &[u8]) -> Vec<u8> {
    gzip_small(data).unwrap_or_else(|| gzip_zlib(data))
}

/// [`gzip_best`] through zlib-rs, for any size.
pub fn gzip_zlib(data: &[u8]) -> Vec<u8> {
    use std::cell::RefCell;
    use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Status};
    thread_local! {
        // One deflater per window size, reset between inputs: setting one up allocates and
        // clears a few hundred KiB, which dominated translating thousands of small files.
        static DEFLATERS: RefCell<[Option<Deflate>; 7]> = const { RefCell::new([const { None }; 7]) };
    }
    // A window no larger than the input compresses it the same and is cheaper to reset.
    let bits = (usize::BITS - data.len().max(1).leading_zeros()).clamp(9, 15) as u8;
    let mut out: Vec<u8> = Vec::with_capacity(data.len() / 2 + 64);
    DEFLATERS.with_borrow_mut(|cache| {
        // zlib's own gzip wrapper (window bits + 16): it checksums the input as it reads it,
        // instead of a second pass over it. `mem_level` sizes only the buffer of symbols
        // (1 << (mem_level + 6) of them; the hash table is fixed): up to 13 window bits it
        // holds twice the input and never fills before the end, and from 14 bits it is the
        // default's; so the blocks, and the bytes, are those of the default level 8, while
        // each block's start of a small input clears a few KiB instead of 48.
        let d = cache[usize::from(bits - 9)].get_or_insert_with(|| {
            Deflate::new_with_config(DeflateConfig {
                level: 9,
                window_bits: i32::from(bits) + 16,
                mem_level: (i32::from(bits) - 5).min(8),
                ..DeflateConfig::default()
            })
        });
        d.reset();
        loop {
            let consumed = d.total_in() as usize;
            let before = d.total_out();
            out.reserve(data.len() / 2 + 64);
            // Compressing into memory has no failure mode but a full buffer, handled by
            // looping with more room.
            let status = d.compress_uninit(
                &data[consumed..],
                out.spare_capacity_mut(),
                DeflateFlush::Finish,
            );
            let written = (d.total_out() - before) as usize;
            // SAFETY: the deflater initialised the `written` bytes after the old length.
            unsafe { out.set_len(out.len() + written) };
            match status {
                Ok(Status::StreamEnd) => break,
                Ok(_) => continue,
                Err(e) => unreachable!("in-memory deflate failed: {e:?}"),
            }
        }
    });
    // zlib writes its own OS code; Go writes "unknown".
    out[9] = 0xff;
    out
}

/// The largest input [`gzip_small`] compresses, 16382 bytes.
///
/// For `n` bytes, [`gzip_zlib`] takes a window of `2^b` bytes,
/// `b = clamp(bit length of n, 9, 15)`, so `n < 2^b`: zlib reads the whole input into its
/// window (of twice the window size) at once, and would slide it only once the position
/// reaches `2^b + max_dist`, which it never does. It cuts a block early when its buffer of
/// symbols holds `lit_bufsize - 1` of them, `lit_bufsize = 2^(min(b - 5, 8) + 6)`: `2^(b+1)`
/// for `b <= 13`, far above `n`, and `2^14` for `b` = 14 and 15. A block has at most `n`
/// symbols (one per byte, fewer with matches), so below `2^14 - 1 = 16383` bytes the buffer
/// never fills and the stream is a single block. At 16383 bytes of literals it would fill on
/// the last one (and an empty block would follow), and above, with `b = 15`, blocks can be
/// cut anywhere.
pub const SMALL_LIMIT: usize = 16382;

/// `data` gzipped, or `None` if `data` is longer than [`SMALL_LIMIT`].
pub fn gzip_small(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() > SMALL_LIMIT {
        return None;
    }
    thread_local! {
        static STATE: RefCell<Option<Box<Scratch>>> = const { RefCell::new(None) };
    }
    Some(STATE.with_borrow_mut(|s| s.get_or_insert_with(Scratch::new).gzip(data)))
}

// ------------------------------------------------------------------------------------------
// Constants of deflate and of zlib's level 9.

const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;
/// zlib keeps this much lookahead; the farthest match is `w_size - MIN_LOOKAHEAD` away.
const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// zlib-ng looks for a match only with 4 bytes ahead (its other hashes read 4).
const WANT_MIN_MATCH: usize = 4;
/// Level 9: search no further along a chain, and no lazy search from a match this long.
const MAX_CHAIN: usize = 4096;
const MAX_LAZY: usize = 258;
/// Level 9: a quarter of the chain once the previous match is this long.
const GOOD_MATCH: usize = 32;
/// Level 9: stop searching on a match this long.
const NICE_MATCH: usize = 258;

/// The rolling hash of level 9 keeps 15 bits (zlib-rs's table has 64K entries, half used).
const HASH_MASK: usize = (1 << 15) - 1;

const LITERALS: usize = 256;
const END_BLOCK: usize = 256;
const LENGTH_CODES: usize = 29;
const L_CODES: usize = LITERALS + 1 + LENGTH_CODES;
const D_CODES: usize = 30;
const BL_CODES: usize = 19;
const MAX_BITS: u16 = 15;
const MAX_BL_BITS: u16 = 7;

const REP_3_6: usize = 16;
const REPZ_3_10: usize = 17;
const REPZ_11_138: usize = 18;
/// The order in which the code-length code lengths are sent (RFC 1951, 3.2.7).
const BL_ORDER: [usize; BL_CODES] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
const EXTRA_BL_BITS: [u8; BL_CODES] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];

/// The length code (0 to 28) of a match length minus 3.
const LENGTH_CODE: [u8; 256] = {
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
const fn length_extra(code: usize) -> u32 {
    if code < 8 || code == 28 {
        0
    } else {
        code as u32 / 4 - 1
    }
}

/// The smallest length minus 3 of each length code.
const fn length_base(code: usize) -> u32 {
    match code {
        0..8 => code as u32,
        28 => 255,
        _ => (4 + (code as u32 & 3)) << (code / 4 - 1),
    }
}

/// The distance code of a distance minus 1.
fn dist_code(d: usize) -> usize {
    if d < 4 {
        d
    } else {
        let b = (usize::BITS - 1 - d.leading_zeros()) as usize;
        2 * b + ((d >> (b - 1)) & 1)
    }
}

const fn dist_extra(code: usize) -> u32 {
    if code < 4 { 0 } else { code as u32 / 2 - 1 }
}

const fn dist_base(code: usize) -> u32 {
    if code < 4 {
        code as u32
    } else {
        (2 + (code as u32 & 1)) << (code / 2 - 1)
    }
}

/// A prefix code: the bits, reversed to be sent least significant first, and their count.
#[derive(Clone, Copy, Default)]
struct Code {
    bits: u16,
    len: u8,
}

/// The fixed literal/length code of RFC 1951 (3.2.6); its lengths also price a static block.
const STATIC_L: [Code; L_CODES + 2] = {
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
const STATIC_D: [Code; D_CODES] = canonical_codes(&[5; D_CODES]);

/// Canonical codes for `lens` (what zlib's `gen_codes` makes).
const fn canonical_codes<const N: usize>(lens: &[u8; N]) -> [Code; N] {
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

// ------------------------------------------------------------------------------------------
// The state kept between calls (per thread), so that a call costs what its input does.

struct Scratch {
    /// zlib's `head`: per hash, the last position inserted (0 for none). Only the entries of
    /// the input's hashes are written, and they are cleared after each call.
    head: Box<[u16]>,
    /// Set while `head` holds entries: a call that did not finish (a panic) left them, and
    /// the next one clears the whole table.
    head_dirty: bool,
    /// zlib's `prev`: for each position, the previous one with the same hash. Every entry
    /// read was written by the same call (see [`Lz77::insert`]), so it is never cleared.
    prev: Box<[u16]>,
    /// The hash of the 3 bytes at each position of the input.
    hashes: Vec<u16>,
    /// The symbols of the block: a literal byte, or a distance (high 16 bits) and a length
    /// minus 3 (low 8 bits).
    syms: Vec<u32>,
    trees: Box<TreeBuilder>,
    dynamic: Box<DynamicTrees>,
}

impl Scratch {
    fn new() -> Box<Self> {
        Box::new(Self {
            head: vec![0; HASH_MASK + 1].into_boxed_slice(),
            head_dirty: false,
            prev: vec![0; SMALL_LIMIT + 1].into_boxed_slice(),
            hashes: Vec::new(),
            syms: Vec::new(),
            trees: Box::new(TreeBuilder::new()),
            dynamic: Box::new(DynamicTrees::new()),
        })
    }

    fn gzip(&mut self, data: &[u8]) -> Vec<u8> {
        let mut freqs = Freqs::new();
        self.find_matches(data, &mut freqs);
        let block = plan_block(
            data.len(),
            &self.syms,
            &mut freqs,
            &mut self.trees,
            &mut self.dynamic,
        );

        // Header (no name, mtime 0, XFL 2 for the best level, OS unknown as Go writes it),
        // the block, CRC-32 and length; and room for the bit writer's whole words.
        let mut out = vec![0; 10 + block.bytes + 8 + BitWriter::SLACK];
        out[..10].copy_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
        let end = 10 + write_block(&mut out[10..], &block, data, &self.syms, &self.dynamic);
        debug_assert_eq!(end, 10 + block.bytes);
        out[end..end + 4].copy_from_slice(&zlib_rs::crc32::crc32(0, data).to_le_bytes());
        out[end + 4..end + 8].copy_from_slice(&(data.len() as u32).to_le_bytes());
        out.truncate(end + 8);
        out
    }

    /// zlib's matching of `data` into `self.syms`, tallied in `freqs`.
    fn find_matches(&mut self, data: &[u8], freqs: &mut Freqs) {
        self.link_chains(data);
        let bits = (usize::BITS - data.len().max(1).leading_zeros()).clamp(9, 15);
        self.syms.clear();
        Lz77 {
            data,
            max_dist: (1 << bits) - MIN_LOOKAHEAD,
            prev: &self.prev,
        }
        .run(&mut self.syms, freqs);
    }

    /// Fills `prev` for every position of `data` that has 3 bytes, as zlib's insertions
    /// leave it (see [`Lz77`]).
    ///
    /// zlib rolls its hash on at each position it inserts; as it inserts positions in order
    /// from 0, that is the hash of the 3 bytes there. At position 0 the head of its chain is
    /// 0, the position itself, and zlib leaves `prev[0]` alone: 0 here, read as "none".
    fn link_chains(&mut self, data: &[u8]) {
        if self.head_dirty {
            self.head.fill(0);
        }
        self.head_dirty = true;
        self.hashes.clear();
        self.hashes
            .extend(data.windows(MIN_MATCH).map(|w| hash(w[0], w[1], w[2])));
        for (pos, &h) in self.hashes.iter().enumerate() {
            let head = &mut self.head[usize::from(h)];
            self.prev[pos] = *head;
            *head = pos as u16;
        }
        for &h in &self.hashes {
            self.head[usize::from(h)] = 0;
        }
        self.head_dirty = false;
    }
}

/// zlib's rolling hash of 3 bytes (as it stands after rolling in the third one).
fn hash(a: u8, b: u8, c: u8) -> u16 {
    (((usize::from(a) << 10) ^ (usize::from(b) << 5) ^ usize::from(c)) & HASH_MASK) as u16
}

// ------------------------------------------------------------------------------------------
// Matching: zlib-rs's `deflate_slow` and `longest_match_slow`, on the input in place of a
// window (it is never slid, and positions are offsets in the input).

/// Symbol frequencies of the block, as zlib tallies them.
struct Freqs {
    lit: Histogram<L_CODES>,
    dist: Histogram<D_CODES>,
}

impl Freqs {
    fn new() -> Self {
        let mut lit = Histogram::new();
        lit.add(END_BLOCK);
        Self {
            lit,
            dist: Histogram::new(),
        }
    }
}

/// The frequencies of the symbols of a code, and the set of the symbols used, to go over
/// these without testing every symbol (a branch mispredicted for many of them).
#[derive(Clone)]
struct Histogram<const N: usize> {
    freq: [u16; N],
    used: [u64; 5],
}

impl<const N: usize> Histogram<N> {
    fn new() -> Self {
        Self {
            freq: [0; N],
            used: [0; 5],
        }
    }

    fn add(&mut self, sym: usize) {
        self.freq[sym] += 1;
        self.used[sym / 64] |= 1 << (sym % 64);
    }

    /// The symbols used, in increasing order.
    fn used(&self) -> impl Iterator<Item = usize> + '_ {
        self.used.iter().enumerate().flat_map(|(w, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let n = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + n
                })
            })
        })
    }
}

/// zlib's matching, from chains linked beforehand.
///
/// zlib inserts each position in the chain of its hash as it goes: when it looks for a
/// match at `strstart`, all positions up to `strstart` are in (and no other). So the head of
/// the chain of `strstart` before inserting it is `prev[strstart]`, and the head of the chain
/// of a later position `x` (a string within a match) is the first of `prev[x]`,
/// `prev[prev[x]]`... that is not after `strstart`. Matching then reads `prev` only, in the
/// neighbourhood of the positions it compares, instead of a table of 64 KiB at random.
struct Lz77<'a> {
    data: &'a [u8],
    /// Matches are no farther than this (zlib's `MAX_DIST`, for the small window).
    max_dist: usize,
    prev: &'a [u16],
}

impl Lz77<'_> {
    /// zlib's `head` for the string at `x` (`x > strstart`, 3 bytes before the end at most)
    /// when it searches at `strstart`: the last position up to `strstart` with the same hash,
    /// or 0 for none.
    fn head_at(&self, x: usize, strstart: usize) -> usize {
        let mut pos = usize::from(self.prev[x]);
        while pos > strstart {
            pos = usize::from(self.prev[pos]);
        }
        pos
    }

    fn run(&self, syms: &mut Vec<u32>, freqs: &mut Freqs) {
        let data = self.data;
        let n = data.len();
        let mut strstart = 0;
        // The match found at the previous position, not yet emitted (lazy evaluation).
        let mut prev_length = 0;
        let mut match_start = 0;
        let mut match_available = false;
        while strstart < n {
            let lookahead = n - strstart;
            // zlib inserts `strstart` here, and takes the chain's previous head.
            let hash_head = if lookahead >= WANT_MIN_MATCH {
                usize::from(self.prev[strstart])
            } else {
                0
            };
            // The start of the previous position's match, if it is emitted now.
            let prev_match = match_start;
            let mut match_len = MIN_MATCH - 1;
            let dist = strstart - hash_head;
            // Position 0 is never a match (0 stands for an empty chain).
            if (1..=self.max_dist).contains(&dist) && prev_length < MAX_LAZY && hash_head != 0 {
                (match_len, match_start) =
                    self.longest_match(strstart, hash_head, prev_length, match_start);
            }
            if prev_length >= MIN_MATCH && match_len <= prev_length {
                // The previous match is at least as good: emit it (zlib inserts the strings it
                // covers, but those within 3 bytes of the end, where it looks no more).
                tally_match(syms, freqs, strstart - 1 - prev_match, prev_length);
                strstart += prev_length - 1;
                prev_length = 0;
                match_available = false;
            } else {
                if match_available {
                    // The match here is longer: the previous byte goes as a literal.
                    tally_literal(syms, freqs, data[strstart - 1]);
                }
                prev_length = match_len;
                match_available = true;
                strstart += 1;
            }
        }
        if match_available {
            tally_literal(syms, freqs, data[strstart - 1]);
        }
    }

    /// zlib-rs's `longest_match_slow` from `strstart`, whose chain starts at `cur_match`:
    /// the length and start of the first match found longer than `prev_length`, or
    /// `prev_length` (at least 2) and `match_start` unchanged.
    ///
    /// Beyond a match's first candidate, zlib-ng follows not the chain of the string at
    /// `strstart` but, of the chains of the 3-byte strings inside the match so far, the one
    /// that reaches farthest back (at `offset` into the match), and it gives up as soon as
    /// one of those chains ends (its head reads 0) or leaves the window.
    fn longest_match(
        &self,
        strstart: usize,
        mut cur_match: usize,
        prev_length: usize,
        mut match_start: usize,
    ) -> (usize, usize) {
        let data = self.data;
        let lookahead = data.len() - strstart;
        let mut best_len = prev_length.max(MIN_MATCH - 1);
        // zlib compares bytes past the end of the input (left over in its window), so what
        // it finds then depends on them; but only where the previous match reaches the end
        // already, and then whatever it finds is no longer than that match, which
        // deflate_slow emits. Here the same outcome, without the search.
        if best_len >= lookahead {
            return (best_len, match_start);
        }
        let max_len = lookahead.min(MAX_MATCH);
        let mut chain = if best_len >= GOOD_MATCH {
            MAX_CHAIN >> 2
        } else {
            MAX_CHAIN
        };
        // Candidates are farther than `limit_base`, by `offset` for the chain followed.
        let limit_base = strstart.saturating_sub(self.max_dist);
        let mut offset = 0;
        if best_len >= MIN_MATCH {
            // Continuing a lazy search: start on the chain of the string within the previous
            // match length whose last occurrence is the oldest.
            // zlib gives up as soon as one is out of the window, which happens if and only
            // if the oldest is (each older one is further into the match).
            //
            // Where `prev` of a string leads inside the match, to a string met before in
            // this loop, the head is that string's: kept in `heads` (0 is not read).
            let mut heads = [0u16; MAX_MATCH];
            for i in 1..=best_len - 2 {
                let p = usize::from(self.prev[strstart + i]);
                let inside = p > strstart;
                let pos = if inside {
                    usize::from(heads[p - strstart])
                } else {
                    p
                };
                heads[i] = pos as u16;
                // The first oldest, without a branch.
                let older = pos < cur_match;
                offset = if older { i } else { offset };
                cur_match = if older { pos } else { cur_match };
            }
            if cur_match <= limit_base + offset {
                return (best_len, match_start);
            }
        }
        let mut limit = limit_base + offset;
        while cur_match < strstart {
            let candidate = cur_match - offset;
            // A longer match must agree on the byte just past the best one.
            if data[candidate + best_len] == data[strstart + best_len] {
                let len = common_prefix(data, candidate, strstart, max_len);
                if len > best_len {
                    match_start = candidate;
                    if len >= lookahead {
                        return (lookahead, match_start);
                    }
                    best_len = len;
                    if best_len >= NICE_MATCH {
                        return (best_len, match_start);
                    }
                    if len > MIN_MATCH && candidate + len < strstart {
                        match self.farthest_chain(strstart, candidate, len, limit_base) {
                            Some((next, next_offset)) => {
                                cur_match = next;
                                offset = next_offset;
                                limit = limit_base + offset;
                                // The new chain's first entry is tried without counting.
                                continue;
                            }
                            None => return (best_len, match_start),
                        }
                    }
                }
            }
            chain -= 1;
            if chain == 0 {
                break;
            }
            cur_match = usize::from(self.prev[cur_match]);
            if cur_match <= limit {
                break;
            }
        }
        (best_len, match_start)
    }

    /// After a new best match of `len` at `candidate` (not overlapping `strstart`), the chain
    /// to follow next and its offset: of the strings at `candidate + i` (i up to `len - 3`),
    /// the one whose previous occurrence is the oldest, then the head of the string ending
    /// one byte short of the match at `strstart` if older still. `None` (give up) when one
    /// of those ends its chain or leaves the window.
    fn farthest_chain(
        &self,
        strstart: usize,
        candidate: usize,
        len: usize,
        limit_base: usize,
    ) -> Option<(usize, usize)> {
        // zlib gives up as soon as one is out of the window, which happens if and only if
        // the oldest is (each older one is further into the match). The oldest, the first
        // time it occurs, is found with a minimum (vectorised) and a search.
        let prevs = &self.prev[candidate..=candidate + len - MIN_MATCH];
        let oldest = prevs.iter().copied().min().unwrap_or(u16::MAX);
        let (next, offset) = if usize::from(oldest) < candidate {
            let offset = prevs.iter().position(|&p| p == oldest).unwrap_or(0);
            if usize::from(oldest) <= limit_base + offset {
                return None;
            }
            (usize::from(oldest), offset)
        } else {
            (candidate, 0)
        };
        let end = len - (MIN_MATCH + 1);
        let pos = self.head_at(strstart + end, strstart);
        if pos < next {
            if pos <= limit_base + end {
                return None;
            }
            return Some((pos, end));
        }
        Some((next, offset))
    }
}

/// How many bytes (up to `max`) at `a` and `b` agree; `b + max` is within `data`.
fn common_prefix(data: &[u8], a: usize, b: usize, max: usize) -> usize {
    let (x, y) = (&data[a..a + max], &data[b..b + max]);
    let mut i = 0;
    while i + 8 <= max {
        let u = u64::from_le_bytes(x[i..i + 8].try_into().unwrap());
        let v = u64::from_le_bytes(y[i..i + 8].try_into().unwrap());
        if u != v {
            return i + ((u ^ v).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < max && x[i] == y[i] {
        i += 1;
    }
    i
}

fn tally_literal(syms: &mut Vec<u32>, freqs: &mut Freqs, byte: u8) {
    syms.push(u32::from(byte));
    freqs.lit.add(usize::from(byte));
}

fn tally_match(syms: &mut Vec<u32>, freqs: &mut Freqs, dist: usize, len: usize) {
    let lc = len - MIN_MATCH;
    syms.push(((dist as u32) << 16) | lc as u32);
    freqs.lit.add(LITERALS + 1 + usize::from(LENGTH_CODE[lc]));
    freqs.dist.add(dist_code(dist - 1));
}

// ------------------------------------------------------------------------------------------
// Huffman trees, and the costs zlib weighs to choose a block.

/// The costs zlib weighs to choose the kind of block, in bits.
#[derive(Default)]
struct Costs {
    /// With the dynamic trees (their representation included once built).
    opt_len: usize,
    /// With the static trees.
    static_len: usize,
}

/// What tree is built: its extra bits, static code, and length limit.
struct TreeKind {
    /// Extra bits of each symbol.
    extra: &'static [u8],
    /// The static code's lengths, to price a static block (empty for the bit-length tree).
    static_lens: &'static [u8],
    max_length: u16,
}

const LIT_TREE: TreeKind = TreeKind {
    extra: &{
        let mut t = [0u8; L_CODES];
        let mut code = 0;
        while code < LENGTH_CODES {
            t[LITERALS + 1 + code] = length_extra(code) as u8;
            code += 1;
        }
        t
    },
    static_lens: &{
        let mut t = [0u8; L_CODES];
        let mut n = 0;
        while n < L_CODES {
            t[n] = STATIC_L[n].len;
            n += 1;
        }
        t
    },
    max_length: MAX_BITS,
};
const DIST_TREE: TreeKind = TreeKind {
    extra: &{
        let mut t = [0u8; D_CODES];
        let mut code = 0;
        while code < D_CODES {
            t[code] = dist_extra(code) as u8;
            code += 1;
        }
        t
    },
    static_lens: &[5; D_CODES],
    max_length: MAX_BITS,
};
const BL_TREE: TreeKind = TreeKind {
    extra: &EXTRA_BL_BITS,
    static_lens: &[],
    max_length: MAX_BL_BITS,
};

/// The tree builder's scratch space, kept between calls: every entry read is written first
/// in the same build.
///
/// The code is a Huffman code (of least cost for the frequencies), built by merging the two
/// lightest nodes in turn, taken from two queues: the leaves sorted by frequency (then
/// symbol), and the merged nodes in the order they are made, whose weights only grow. Its
/// lengths are handed out longest first to the leaves by increasing frequency, so ties are
/// broken by symbol, and the result depends on the frequencies alone. Where a length would
/// pass the limit, the code is reshaped into one within it (see [`limit_lengths`]).
struct TreeBuilder {
    /// The symbols with a code, in increasing order.
    leaves: [u16; L_CODES],
    leaves_len: usize,
    /// The leaves by increasing frequency: the frequency above the symbol.
    by_freq: [u32; L_CODES],
    /// The weight of each merged node, in the order they are made.
    weight: [u32; L_CODES],
    /// The merged node each sorted leaf, then each merged node, hangs from.
    parent: [u16; 2 * L_CODES],
    /// The depth of each merged node.
    depth: [u16; L_CODES],
    /// The code length of each symbol (read for the symbols with a code only).
    len: [u16; L_CODES],
}

impl TreeBuilder {
    fn new() -> Self {
        Self {
            leaves: [0; L_CODES],
            leaves_len: 0,
            by_freq: [0; L_CODES],
            weight: [0; L_CODES],
            parent: [0; 2 * L_CODES],
            depth: [0; L_CODES],
            len: [0; L_CODES],
        }
    }

    /// Builds the length-limited code for `hist` (of the symbols of `kind`) into `tree`,
    /// and adds its costs. `hist` gets the frequency 1 of the symbols zlib adds (see below).
    fn build<const N: usize>(
        &mut self,
        kind: &TreeKind,
        hist: &mut Histogram<N>,
        tree: &mut Tree<N>,
        costs: &mut Costs,
    ) {
        self.leaves_len = 0;
        let mut max_code: isize = -1;
        for n in hist.used() {
            self.push_leaf(n);
            max_code = n as isize;
        }
        // Deflate wants two codes at least: zlib adds symbols 0 or 1 (or the next one up),
        // at frequency 1, discounted from the costs.
        while self.leaves_len < 2 {
            let node = if max_code < 2 {
                max_code += 1;
                max_code as usize
            } else {
                0
            };
            self.push_leaf(node);
            self.leaves[..self.leaves_len].sort_unstable();
            hist.freq[node] = 1;
            costs.opt_len = costs.opt_len.wrapping_sub(1);
            if let Some(&l) = kind.static_lens.get(node) {
                costs.static_len = costs.static_len.wrapping_sub(usize::from(l));
            }
        }
        let n = self.leaves_len;
        for (k, &s) in self.by_freq[..n].iter_mut().zip(&self.leaves[..n]) {
            *k = (u32::from(hist.freq[usize::from(s)]) << 16) | u32::from(s);
        }
        self.by_freq[..n].sort_unstable();
        let bl_count = self.lengths(usize::from(kind.max_length));
        self.add_costs(kind, &hist.freq, costs);
        self.assign_codes(&bl_count, &mut tree.codes);
        tree.syms[..n].copy_from_slice(&self.leaves[..n]);
        tree.count = n;
    }

    fn push_leaf(&mut self, n: usize) {
        self.leaves[self.leaves_len] = n as u16;
        self.leaves_len += 1;
    }

    /// The code lengths of the sorted leaves (in `len`, by symbol), at most `max`; returns
    /// the count per length.
    fn lengths(&mut self, max: usize) -> [u16; MAX_BITS as usize + 1] {
        let n = self.leaves_len;
        let freq = |k: u32| k >> 16;
        // Two queues: sorted leaves from `leaf`, merged nodes from `merged`. Each step takes
        // the lighter front twice (a leaf on a tie).
        let (mut leaf, mut merged) = (0, 0);
        for made in 0..n - 1 {
            let mut w = 0;
            for _ in 0..2 {
                if leaf < n && (merged == made || freq(self.by_freq[leaf]) <= self.weight[merged]) {
                    w += freq(self.by_freq[leaf]);
                    self.parent[leaf] = made as u16;
                    leaf += 1;
                } else {
                    w += self.weight[merged];
                    self.parent[n + merged] = made as u16;
                    merged += 1;
                }
            }
            self.weight[made] = w;
        }
        // Depths from the root (made last) down: a node is made after those below it.
        let root = n - 2;
        self.depth[root] = 0;
        for m in (0..root).rev() {
            self.depth[m] = self.depth[usize::from(self.parent[n + m])] + 1;
        }
        // Leaves per depth (a depth may pass the limit, and the count of leaves).
        let mut counts = [0u16; L_CODES + 1];
        let mut deepest = 0;
        for i in 0..n {
            let d = usize::from(self.depth[usize::from(self.parent[i])]) + 1;
            deepest = deepest.max(d);
            counts[d] += 1;
        }
        if deepest > max {
            limit_lengths(&mut counts, deepest, max);
        }
        let mut bl_count = [0u16; MAX_BITS as usize + 1];
        bl_count[..=max].copy_from_slice(&counts[..=max]);
        // Longest lengths to the lightest leaves.
        let mut i = 0;
        for bits in (1..=max).rev() {
            for _ in 0..bl_count[bits] {
                self.len[usize::from(self.by_freq[i] as u16)] = bits as u16;
                i += 1;
            }
        }
        bl_count
    }

    /// Adds the cost of the symbols with their codes (and with the static code).
    fn add_costs(&self, kind: &TreeKind, freq: &[u16], costs: &mut Costs) {
        for &s in &self.leaves[..self.leaves_len] {
            let s = usize::from(s);
            let f = usize::from(freq[s]);
            let xbits = usize::from(kind.extra[s]);
            costs.opt_len = costs
                .opt_len
                .wrapping_add(f * (usize::from(self.len[s]) + xbits));
            if let Some(&l) = kind.static_lens.get(s) {
                costs.static_len += f * (usize::from(l) + xbits);
            }
        }
    }

    /// The canonical code of the lengths, given their count per length (`bl_count`), in
    /// `codes` (where symbols without a code are left alone).
    fn assign_codes(&self, bl_count: &[u16; MAX_BITS as usize + 1], codes: &mut [Code]) {
        let mut next = [0u16; MAX_BITS as usize + 1];
        let mut code = 0u16;
        for bits in 1..=MAX_BITS as usize {
            code = (code + bl_count[bits - 1]) << 1;
            next[bits] = code;
        }
        for &n in &self.leaves[..self.leaves_len] {
            let len = self.len[usize::from(n)];
            codes[usize::from(n)] = Code {
                bits: next[usize::from(len)].reverse_bits() >> (16 - len),
                len: len as u8,
            };
            next[usize::from(len)] += 1;
        }
    }
}

/// Reshapes the count of leaves per depth (`counts`, up to `deepest`) into a complete code
/// with no length above `max`: the leaves below `max` are lifted to it, which makes the
/// code over-full; then, while it is, one leaf at `max` goes down a level under a leaf
/// that is moved from the deepest level above `max` that has one (that leaf and the one
/// moved becoming two leaves one level further down).
fn limit_lengths(counts: &mut [u16], deepest: usize, max: usize) {
    for d in max + 1..=deepest {
        counts[max] += counts[d];
        counts[d] = 0;
    }
    // The Kraft sum, in units of 2^-max.
    let mut total: u32 = (1..=max).map(|d| u32::from(counts[d]) << (max - d)).sum();
    while total > 1 << max {
        counts[max] -= 1;
        for d in (1..max).rev() {
            if counts[d] != 0 {
                counts[d] -= 1;
                counts[d + 1] += 2;
                break;
            }
        }
        total -= 1;
    }
}

/// A code as built: the code of each symbol, and the symbols that have one (the codes of
/// the others are not read).
struct Tree<const N: usize> {
    codes: [Code; N],
    /// In increasing order.
    syms: [u16; N],
    count: usize,
}

impl<const N: usize> Tree<N> {
    fn new() -> Self {
        Self {
            codes: [Code::default(); N],
            syms: [0; N],
            count: 0,
        }
    }

    /// The largest symbol with a code (zlib's `max_code`).
    fn max_code(&self) -> usize {
        usize::from(self.syms[self.count - 1])
    }

    /// zlib's `scan_tree`/`send_tree` (one walk for both): the code lengths of the symbols
    /// up to [`Self::max_code`] as code-length symbols and their extra bits.
    ///
    /// zlib goes symbol by symbol, cutting runs of a length in pieces; here the same pieces
    /// are cut out of whole runs: runs of zeros between the symbols that have a code, and
    /// runs of one length among adjacent ones.
    fn run_lengths(&self, mut emit: impl FnMut(usize, u32)) {
        let syms = &self.syms[..self.count];
        let mut next = 0;
        let mut i = 0;
        while i < syms.len() {
            let sym = usize::from(syms[i]);
            if sym > next {
                zero_run(sym - next, &mut emit);
            }
            let len = self.codes[sym].len;
            let mut run = 1;
            while i + run < syms.len()
                && usize::from(syms[i + run]) == sym + run
                && self.codes[sym + run].len == len
            {
                run += 1;
            }
            length_run(usize::from(len), run, &mut emit);
            next = sym + run;
            i += run;
        }
    }
}

/// A run of `count` zero lengths, as zlib cuts it: pieces of 138 at most, as 18 (11 or
/// more), 17 (3 to 10) or single zeros.
fn zero_run(mut count: usize, emit: &mut impl FnMut(usize, u32)) {
    while count > 0 {
        let piece = count.min(138);
        match piece {
            0..3 => (0..piece).for_each(|_| emit(0, 0)),
            3..=10 => emit(REPZ_3_10, piece as u32 - 3),
            _ => emit(REPZ_11_138, piece as u32 - 11),
        }
        count -= piece;
    }
}

/// A run of `count` lengths `len` (not 0), following another length, as zlib cuts it: a
/// first piece of 7 at most, sent as the length then 16 (repeat 3 to 6 times) if of 4 or
/// more; then pieces of 6 at most, as 16 if of 3 or more; smaller pieces as single lengths.
fn length_run(len: usize, mut count: usize, emit: &mut impl FnMut(usize, u32)) {
    let first = count.min(7);
    if first < 4 {
        (0..first).for_each(|_| emit(len, 0));
    } else {
        emit(len, 0);
        emit(REP_3_6, first as u32 - 4);
    }
    count -= first;
    while count > 0 {
        let piece = count.min(6);
        if piece < 3 {
            (0..piece).for_each(|_| emit(len, 0));
        } else {
            emit(REP_3_6, piece as u32 - 3);
        }
        count -= piece;
    }
}

// ------------------------------------------------------------------------------------------
// The block: zlib's `zng_tr_flush_block` for the last (and only) block, and the bit writer.

/// The dynamic trees of the block and what zlib needs of them to send them.
struct DynamicTrees {
    lit: Tree<L_CODES>,
    dist: Tree<D_CODES>,
    bl: Tree<BL_CODES>,
    /// The last index in [`BL_ORDER`] whose code-length code is sent.
    max_blindex: usize,
    /// The code lengths of both trees in code-length symbols: the symbol, and its extra
    /// bits above.
    lengths: [u16; L_CODES + D_CODES],
    lengths_len: usize,
}

impl DynamicTrees {
    fn new() -> Self {
        Self {
            lit: Tree::new(),
            dist: Tree::new(),
            bl: Tree::new(),
            max_blindex: 0,
            lengths: [0; L_CODES + D_CODES],
            lengths_len: 0,
        }
    }
}

/// The kind of block zlib picks, and its size in bytes (to the end of its last byte).
struct Block {
    kind: BlockKind,
    bytes: usize,
}

enum BlockKind {
    Stored,
    Static,
    Dynamic,
}

/// Builds the trees into `t` as zlib does for every non-empty block, adding up their costs.
fn build_trees(freqs: &mut Freqs, tb: &mut TreeBuilder, t: &mut DynamicTrees, costs: &mut Costs) {
    tb.build(&LIT_TREE, &mut freqs.lit, &mut t.lit, costs);
    tb.build(&DIST_TREE, &mut freqs.dist, &mut t.dist, costs);
    let mut bl_freq = Histogram::<BL_CODES>::new();
    let mut count = 0;
    let mut push = |sym: usize, extra: u32| {
        bl_freq.add(sym);
        t.lengths[count] = sym as u16 | (extra as u16) << 5;
        count += 1;
    };
    t.lit.run_lengths(&mut push);
    t.dist.run_lengths(&mut push);
    t.lengths_len = count;
    // The code-length symbols sent are read whether used or not.
    t.bl.codes = [Code::default(); BL_CODES];
    tb.build(&BL_TREE, &mut bl_freq, &mut t.bl, costs);
    // At least 4 code-length codes are sent.
    t.max_blindex = BL_CODES - 1;
    while t.max_blindex >= 3 && t.bl.codes[BL_ORDER[t.max_blindex]].len == 0 {
        t.max_blindex -= 1;
    }
    costs.opt_len = costs
        .opt_len
        .wrapping_add(3 * (t.max_blindex + 1) + 5 + 5 + 4);
}

/// The block zlib makes of `syms` (of `n` bytes): stored, with static codes or with dynamic
/// ones, whichever it counts the smallest.
fn plan_block(
    n: usize,
    syms: &[u32],
    freqs: &mut Freqs,
    tb: &mut TreeBuilder,
    trees: &mut DynamicTrees,
) -> Block {
    if syms.is_empty() {
        // zlib's empty block: static, as its costs are equal (3 bits of header, 7 of end).
        return Block {
            kind: BlockKind::Static,
            bytes: 2,
        };
    }
    let mut costs = Costs::default();
    build_trees(freqs, tb, trees, &mut costs);
    // The sizes include the 3 bits of the block's header.
    let opt_lenb = (costs.opt_len.wrapping_add(3 + 7)) >> 3;
    let static_lenb = (costs.static_len + 3 + 7) >> 3;
    if n + 4 <= opt_lenb.min(static_lenb) {
        // The header's byte, the length and its complement, the bytes.
        Block {
            kind: BlockKind::Stored,
            bytes: 1 + 4 + n,
        }
    } else if static_lenb <= opt_lenb {
        Block {
            kind: BlockKind::Static,
            bytes: static_lenb,
        }
    } else {
        Block {
            kind: BlockKind::Dynamic,
            bytes: opt_lenb,
        }
    }
}

/// Writes `block` for `syms` (of `data`, with the `dynamic` trees if it has them) at the
/// start of `out`, which has room for it and [`BitWriter::SLACK`] more bytes; returns its
/// length.
fn write_block(
    out: &mut [u8],
    block: &Block,
    data: &[u8],
    syms: &[u32],
    dynamic: &DynamicTrees,
) -> usize {
    let mut w = BitWriter::new(out);
    match block.kind {
        BlockKind::Stored => {
            // The header's bits, padding to a byte, the length and its complement.
            w.put(0b001, 3);
            let at = w.finish();
            let out = w.out;
            let len = data.len() as u16;
            out[at..at + 2].copy_from_slice(&len.to_le_bytes());
            out[at + 2..at + 4].copy_from_slice(&(!len).to_le_bytes());
            out[at + 4..at + 4 + data.len()].copy_from_slice(data);
            at + 4 + data.len()
        }
        BlockKind::Static => {
            w.put(0b011, 3);
            write_symbols(&mut w, syms, &STATIC_L, &STATIC_D);
            w.finish()
        }
        BlockKind::Dynamic => {
            w.put(0b101, 3);
            write_trees(&mut w, dynamic);
            write_symbols(&mut w, syms, &dynamic.lit.codes, &dynamic.dist.codes);
            w.finish()
        }
    }
}

/// The dynamic block's header after its type: counts, code-length code, code lengths.
fn write_trees(w: &mut BitWriter, t: &DynamicTrees) {
    w.put((t.lit.max_code() + 1 - 257) as u64, 5);
    w.put((t.dist.max_code() + 1 - 1) as u64, 5);
    w.put((t.max_blindex + 1 - 4) as u64, 4);
    for &sym in &BL_ORDER[..=t.max_blindex] {
        w.put(u64::from(t.bl.codes[sym].len), 3);
    }
    for &item in &t.lengths[..t.lengths_len] {
        let sym = usize::from(item & 31);
        let code = t.bl.codes[sym];
        let extra = u64::from(item >> 5);
        w.put(
            u64::from(code.bits) | extra << code.len,
            u32::from(code.len) + u32::from(EXTRA_BL_BITS[sym]),
        );
    }
}

/// The symbols with the codes `lit` and `dist`, and the end of block.
fn write_symbols(w: &mut BitWriter, syms: &[u32], lit: &[Code], dist: &[Code]) {
    for &s in syms {
        let d = (s >> 16) as usize;
        let lc = (s & 0xff) as usize;
        if d == 0 {
            let c = lit[lc];
            w.put(u64::from(c.bits), u32::from(c.len));
            continue;
        }
        // The length's code and extra bits, then the distance's, at once.
        let code = usize::from(LENGTH_CODE[lc]);
        let c = lit[LITERALS + 1 + code];
        let mut bits = u64::from(c.bits);
        let mut len = u32::from(c.len);
        bits |= u64::from(lc as u32 - length_base(code)) << len;
        len += length_extra(code);
        let code = dist_code(d - 1);
        let c = dist[code];
        bits |= u64::from(c.bits) << len;
        len += u32::from(c.len);
        bits |= u64::from((d - 1) as u32 - dist_base(code)) << len;
        len += dist_extra(code);
        w.put(bits, len);
    }
    let c = lit[END_BLOCK];
    w.put(u64::from(c.bits), u32::from(c.len));
}

/// Bits into bytes, least significant first. Each write stores a whole word and moves on
/// by the bytes completed, without a branch.
struct BitWriter<'a> {
    out: &'a mut [u8],
    /// The next byte to write.
    at: usize,
    acc: u64,
    /// Bits in `acc`, less than 8 between calls.
    n: u32,
}

impl<'a> BitWriter<'a> {
    /// Bytes written past the end (and then overwritten or cut off).
    const SLACK: usize = 8;

    fn new(out: &'a mut [u8]) -> Self {
        Self {
            out,
            at: 0,
            acc: 0,
            n: 0,
        }
    }

    /// Appends the low `len` (at most 56) bits of `bits`.
    fn put(&mut self, bits: u64, len: u32) {
        self.acc |= bits << self.n;
        self.n += len;
        self.out[self.at..self.at + 8].copy_from_slice(&self.acc.to_le_bytes());
        let bytes = self.n / 8;
        self.at += bytes as usize;
        self.acc >>= bytes * 8;
        self.n %= 8;
    }

    /// Pads the bits left to a byte, and returns the length written.
    fn finish(&mut self) -> usize {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
        self.at
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn byte(&mut self) -> u8 {
            self.next() as u8
        }
    }

    /// Lengths where something changes: tiny inputs, the longest match, the window sizes and
    /// the limit.
    fn edge_lengths() -> Vec<usize> {
        let mut v = vec![
            0, 1, 2, 3, 4, 5, 257, 258, 259, 261, 262, 263, 511, 512, 513,
        ];
        for k in 2..=14 {
            let p = 1usize << k;
            v.extend([p - 1, p, p + 1]);
        }
        // Around the largest distance of each window size (2^b - 262).
        for b in 9..=14 {
            let max_dist = (1usize << b) - MIN_LOOKAHEAD;
            v.extend([max_dist - 1, max_dist, max_dist + 1, max_dist + 4]);
        }
        v.extend([SMALL_LIMIT - 1, SMALL_LIMIT]);
        v.retain(|&n| n <= SMALL_LIMIT);
        v
    }

    fn input_length(rng: &mut Rng, edges: &[usize]) -> usize {
        match rng.below(10) {
            0..=4 => rng.below(601),
            5 | 6 => edges[rng.below(edges.len())],
            7 => rng.below(4097),
            _ => rng.below(SMALL_LIMIT + 1),
        }
    }

    /// The kinds of content [`input`] makes.
    const KINDS: usize = 10;

    const WORDS: [&str; 12] = [
        "listen",
        " = ",
        "10.0.0.1",
        "\n",
        "workers",
        "# comment ",
        "[Unit]",
        "a",
        "true",
        "/var/lib/",
        "ExecStart=",
        "  ",
    ];

    /// Text like the small files Butane embeds.
    fn config_text(rng: &mut Rng, len: usize) -> Vec<u8> {
        let mut t = Vec::with_capacity(len + 200);
        while t.len() < len {
            let i = rng.below(1000);
            let line = match rng.below(6) {
                0 => format!("# generated settings for instance {i}\n"),
                1 => format!("listen = 10.{}.0.0:{}\n", i % 256, 8000 + i),
                2 => format!("workers = {}\nlog_level = info\n", i % 64),
                3 => format!("cache_dir = /var/cache/app/{i}\n"),
                4 => format!("token = {:016x}\n", rng.next()),
                _ => format!("[section.{i}]\nenabled = {}\n", i.is_multiple_of(2)),
            };
            t.extend_from_slice(line.as_bytes());
        }
        t.truncate(len);
        t
    }

    /// Random data with copies from just below, at and just above the largest distance of
    /// the window size of its length.
    fn far_repeats(rng: &mut Rng, len: usize) -> Vec<u8> {
        let bits = (usize::BITS - len.max(1).leading_zeros()).clamp(9, 15);
        let max_dist = (1usize << bits) - MIN_LOOKAHEAD;
        let alphabet = [4, 16, 256][rng.below(3)];
        let mut t: Vec<u8> = (0..len).map(|_| rng.below(alphabet) as u8).collect();
        let mut pos = max_dist.saturating_sub(2);
        while pos < len {
            let dist = (max_dist + rng.below(5)).saturating_sub(2).max(1);
            let run = (3 + rng.below(40)).min(len - pos);
            for k in pos..pos + run {
                if k >= dist {
                    t[k] = t[k - dist];
                }
            }
            pos += run + rng.below(64);
        }
        t
    }

    /// Bytes with Fibonacci-like frequencies (shuffled): the Huffman lengths overflow.
    fn skewed(rng: &mut Rng, len: usize) -> Vec<u8> {
        let (mut a, mut b) = (1usize, 1usize);
        let mut t = Vec::with_capacity(len);
        let mut sym = rng.byte();
        while t.len() < len {
            t.extend(std::iter::repeat_n(sym, a.min(len - t.len())));
            (a, b) = (b, a + b);
            sym = sym.wrapping_add(1 + rng.below(3) as u8);
        }
        for i in (1..t.len()).rev() {
            t.swap(i, rng.below(i + 1));
        }
        t
    }

    /// Literals of Fibonacci frequencies (1 for the end of block, then 1, 2, 3, 5, ..., as
    /// bytes from 128 up), each followed by a two-digit counter (bytes below 128) so that
    /// no 3 bytes repeat and there is no match: the literal code is then as deep as 16382
    /// bytes allow (16 bits), and its lengths overflow 15.
    fn skewed_literals(rng: &mut Rng, len: usize) -> Vec<u8> {
        let count = len / 3 + 1;
        let mut symbols = Vec::with_capacity(count);
        let (mut a, mut b) = (1usize, 2usize);
        let mut sym = 128u8;
        while symbols.len() < count {
            symbols.extend(std::iter::repeat_n(sym, a));
            (a, b) = (b, a + b);
            sym = sym.saturating_add(1);
        }
        symbols.truncate(count);
        for i in (1..symbols.len()).rev() {
            symbols.swap(i, rng.below(i + 1));
        }
        // Digits in base `radix`, with `radix^2 >= count` (and below 128).
        let radix = (1..128).find(|r| r * r >= count).unwrap_or(127);
        let mut t = Vec::with_capacity(3 * count);
        for (i, &s) in symbols.iter().enumerate() {
            t.extend([s, (i % radix) as u8, (i / radix % radix) as u8]);
        }
        t.truncate(len);
        t
    }

    fn input(rng: &mut Rng, len: usize, kind: usize) -> Vec<u8> {
        match kind {
            0 => (0..len).map(|_| rng.byte()).collect(),
            1 => config_text(rng, len),
            // One byte, with a few others here and there.
            2 => {
                let b = rng.byte();
                let mut t = vec![b; len];
                for _ in 0..rng.below(4) {
                    if len > 0 {
                        t[rng.below(len)] = rng.byte();
                    }
                }
                t
            }
            // Two bytes, alternating or in runs.
            3 => {
                let (x, y) = (rng.byte(), rng.byte());
                let mut t = Vec::with_capacity(len);
                let period = 1 + rng.below(8);
                while t.len() < len {
                    t.extend(std::iter::repeat_n(x, period.min(len - t.len())));
                    let run = (1 + rng.below(period + 3)).min(len - t.len());
                    t.extend(std::iter::repeat_n(y, run));
                }
                t
            }
            4 => {
                let mut t = Vec::with_capacity(len + 16);
                let vocabulary = 1 + rng.below(WORDS.len());
                while t.len() < len {
                    t.extend_from_slice(WORDS[rng.below(vocabulary)].as_bytes());
                }
                t.truncate(len);
                t
            }
            5 => far_repeats(rng, len),
            // All byte values, in order, shuffled or with a small alphabet in between.
            6 => {
                let start = rng.byte();
                let mut t: Vec<u8> = (0..len).map(|i| start.wrapping_add(i as u8)).collect();
                if rng.below(2) == 0 {
                    for i in (1..t.len()).rev() {
                        t.swap(i, rng.below(i + 1));
                    }
                }
                t
            }
            7 => skewed(rng, len),
            8 => skewed_literals(rng, len),
            _ => {
                let alphabet = 1 + rng.below(4);
                (0..len).map(|_| b'a' + rng.below(alphabet) as u8).collect()
            }
        }
    }

    /// The number of generated inputs: `GZIP_SMALL_CASES` or a default that runs in a
    /// couple of seconds.
    fn case_count() -> usize {
        let default = if cfg!(debug_assertions) {
            1_500
        } else {
            20_000
        };
        std::env::var("GZIP_SMALL_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// `data` compressed reads back as `data`, and is no more than a few bytes longer than
    /// zlib-rs's stream. Returns the difference in bytes.
    fn check(data: &[u8], what: &str) -> isize {
        use std::io::Read;
        let got = gzip_small(data).expect("within the limit");
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&got[..])
            .read_to_end(&mut back)
            .unwrap_or_else(|e| panic!("{what}: {} bytes: unreadable: {e}", data.len()));
        assert!(
            back == data,
            "{what}: {} bytes: read back differs",
            data.len()
        );
        let diff = got.len() as isize - gzip_zlib(data).len() as isize;
        assert!(
            diff <= 4,
            "{what}: {} bytes: {diff} bytes more than zlib-rs",
            data.len()
        );
        diff
    }

    #[test]
    fn reads_back_and_sizes_as_zlib_rs() {
        let edges = edge_lengths();
        let mut diffs = std::collections::BTreeMap::<isize, usize>::new();
        let mut tally = |d: isize| *diffs.entry(d).or_default() += 1;
        // Every edge length with every kind of content first.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for &len in &edges {
            for kind in 0..KINDS {
                tally(check(
                    &input(&mut rng, len, kind),
                    &format!("edge, kind {kind}"),
                ));
            }
        }
        let cases = case_count();
        for case in 0..cases {
            let len = input_length(&mut rng, &edges);
            let kind = rng.below(KINDS);
            tally(check(
                &input(&mut rng, len, kind),
                &format!("case {case}, kind {kind}"),
            ));
        }
        eprintln!("size against zlib-rs (bytes: cases): {diffs:?}");
    }

    #[test]
    fn the_examples() {
        let config = b"# generated settings for instance 42\nlisten = 10.42.0.0:8042\n\
            workers = 11\nlog_level = info\ncache_dir = /var/cache/app/42\n\
            token = 9e3779b97f4a7c15\n";
        for data in [&b""[..], b"a", b"ab", b"abc", b"abcd", b"aaaa", config] {
            check(data, "example");
        }
        check(&b"x".repeat(SMALL_LIMIT), "run");
        // The literal code's lengths overflow 15 bits, and are redistributed.
        check(&skewed_literals(&mut Rng(1), SMALL_LIMIT), "skewed");
        check(
            &(0..=255u8).cycle().take(SMALL_LIMIT).collect::<Vec<_>>(),
            "cycle",
        );
    }

    /// After 65535 calls on a thread the tags of the hash table start over: the table is
    /// cleared then, and the calls around agree with zlib-rs (with inputs alike, so that a
    /// stale entry would be found).
    #[test]
    fn survives_the_tags_starting_over() {
        std::thread::spawn(|| {
            let mut rng = Rng(0x2545_f491_4f6c_dd1d);
            for call in 0..65_600u32 {
                let data = config_text(&mut rng, 40 + (call % 50) as usize);
                if (65_500..65_560).contains(&call) {
                    check(&data, &format!("call {call}"));
                } else {
                    gzip_small(&data);
                }
            }
        })
        .join()
        .unwrap();
    }

    /// Frequencies that would make codes longer than 15 bits get codes of 15 bits at most,
    /// still a complete code (the Kraft sum is 1).
    #[test]
    fn code_lengths_are_limited() {
        let mut hist = Histogram::<L_CODES>::new();
        let (mut a, mut b) = (1, 1);
        for sym in 0..20 {
            for _ in 0..a {
                hist.add(sym);
            }
            (a, b) = (b, a + b);
        }
        let mut tree = Tree::new();
        TreeBuilder::new().build(&LIT_TREE, &mut hist, &mut tree, &mut Costs::default());
        assert_eq!(tree.max_code(), 19);
        let lens: Vec<u32> = tree.codes[..20].iter().map(|c| u32::from(c.len)).collect();
        assert_eq!(lens.iter().max(), Some(&15));
        assert_eq!(lens.iter().map(|&l| 1u32 << (15 - l)).sum::<u32>(), 1 << 15);
    }

    /// The code-length code (7 bits at most) over skewed frequencies: every symbol gets a
    /// length within the limit, the code is complete, and the costs are those lengths'.
    #[test]
    fn code_length_codes_are_limited() {
        let mut rng = Rng(7);
        for _ in 0..2_000 {
            let mut hist = Histogram::<BL_CODES>::new();
            let used = 2 + rng.below(BL_CODES - 1);
            let mut f = 1;
            for sym in 0..used {
                for _ in 0..f {
                    hist.add(sym);
                }
                f = (f * (2 + rng.below(3))).min(3000);
            }
            let mut tree = Tree::new();
            let mut costs = Costs::default();
            TreeBuilder::new().build(&BL_TREE, &mut hist, &mut tree, &mut costs);
            let lens: Vec<u32> = (0..used).map(|s| u32::from(tree.codes[s].len)).collect();
            assert!(lens.iter().all(|&l| (1..=7).contains(&l)), "{lens:?}");
            assert_eq!(lens.iter().map(|&l| 1u32 << (7 - l)).sum::<u32>(), 1 << 7);
            let cost: usize = (0..used)
                .map(|s| {
                    usize::from(hist.freq[s]) * (lens[s] as usize + usize::from(EXTRA_BL_BITS[s]))
                })
                .sum();
            assert_eq!(costs.opt_len, cost);
        }
    }

    #[test]
    fn none_above_the_limit() {
        assert!(gzip_small(&vec![7; SMALL_LIMIT + 1]).is_none());
        assert!(gzip_small(&vec![7; 100_000]).is_none());
        assert!(gzip_small(&vec![7; SMALL_LIMIT]).is_some());
    }

    /// Time per call of `gzip_zlib` and `gzip_small`, alternated, median of 7 rounds:
    /// `cargo test --release --lib gzip_small_speed -- --ignored --nocapture`.
    #[test]
    #[ignore = "a benchmark"]
    fn gzip_small_speed() {
        use std::time::Instant;
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let small: Vec<Vec<u8>> = (0..10_000)
            .map(|i| {
                format!(
                    "# generated settings for instance {i}\nlisten = 10.{}.0.0:{}\n\
                     workers = {}\nlog_level = info\ncache_dir = /var/cache/app/{i}\n\
                     token = {:016x}\nuser = app{i}\nretries = 3\n",
                    i % 256,
                    8000 + i,
                    i % 64,
                    rng.next()
                )
                .into_bytes()
            })
            .collect();
        let kib: Vec<Vec<u8>> = (0..1_000).map(|_| config_text(&mut rng, 1024)).collect();
        let four: Vec<Vec<u8>> = (0..200).map(|_| config_text(&mut rng, 4096)).collect();
        let mean_len = small.iter().map(Vec::len).sum::<usize>() / small.len();
        for (name, set) in [
            (format!("10000 x ~{mean_len} B"), &small),
            ("1000 x 1 KiB".to_string(), &kib),
            ("200 x 4 KiB".to_string(), &four),
        ] {
            if std::env::var("BENCH_SET").is_ok_and(|v| !name.contains(&v)) {
                continue;
            }
            let (mut best, mut ours) = (Vec::new(), Vec::new());
            for _ in 0..7 {
                let t = Instant::now();
                let a: usize = set.iter().map(|d| gzip_zlib(d).len()).sum();
                best.push(t.elapsed().as_secs_f64() / set.len() as f64);
                let t = Instant::now();
                let b: usize = set.iter().map(|d| gzip_small(d).unwrap().len()).sum();
                ours.push(t.elapsed().as_secs_f64() / set.len() as f64);
                // Same work on both sides: no more than a few bytes apart per call.
                assert!(b <= a + 4 * set.len());
            }
            best.sort_by(f64::total_cmp);
            ours.sort_by(f64::total_cmp);
            let (b, o) = (best[3] * 1e6, ours[3] * 1e6);
            println!(
                "{name}: gzip_zlib {b:.2} µs, gzip_small {o:.2} µs per call, {:.1}x",
                b / o
            );
        }
    }
}
