//! Matching: zlib-rs's `deflate_slow` and `longest_match_slow` at level 9, on the input in
//! place of a window (it is never slid, and positions are offsets in the input).

use crate::huffman::Histogram;
use crate::tables::{
    D_CODES, END_BLOCK, L_CODES, LENGTH_CODE, LITERALS, MAX_MATCH, MIN_MATCH, dist_code,
};

/// zlib keeps this much lookahead; the farthest match is `w_size - MIN_LOOKAHEAD` away.
pub(crate) const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// zlib-ng looks for a match only with 4 bytes ahead (its other hashes read 4).
const WANT_MIN_MATCH: usize = 4;
/// Level 9: search no further along a chain, and no lazy search from a match this long.
const MAX_CHAIN: usize = 4096;
const MAX_LAZY: usize = 258;
/// Level 9: a quarter of the chain once the previous match is this long.
const GOOD_MATCH: usize = 32;
/// Level 9: stop searching on a match this long.
const NICE_MATCH: usize = 258;

/// Symbol frequencies of the block, as zlib tallies them.
pub(crate) struct Freqs {
    pub(crate) lit: Histogram<L_CODES>,
    pub(crate) dist: Histogram<D_CODES>,
}

impl Freqs {
    pub(crate) fn new() -> Self {
        let mut lit = Histogram::new();
        lit.add(END_BLOCK);
        Self {
            lit,
            dist: Histogram::new(),
        }
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
pub(crate) struct Lz77<'a> {
    pub(crate) data: &'a [u8],
    /// Matches are no farther than this (zlib's `MAX_DIST`, for the small window).
    pub(crate) max_dist: usize,
    pub(crate) prev: &'a [u16],
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

    pub(crate) fn run(&self, syms: &mut Vec<u32>, freqs: &mut Freqs) {
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
