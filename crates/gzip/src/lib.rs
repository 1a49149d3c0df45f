//! Gzip at the best level, as Butane writes it: [`gzip_best`]. Small inputs take
//! [`gzip_small`], zlib's algorithm with Huffman codes of its own, for a fraction of
//! zlib-rs's time; larger ones zlib-rs itself ([`gzip_zlib`]). Butane compresses every
//! embedded file, mostly a few hundred bytes each, where zlib-rs's costs per stream dominate
//! (a 128 KiB hash table cleared on each reset, trees built over every symbol, the streaming
//! machinery); here every cost follows the input.
//!
//! The matching is zlib-rs's level 9 (lazy matching, chains of 4096, the rolling 3-byte
//! hash, zlib-ng's search along the most distant of the chains of a match's substrings),
//! and so are the symbols of the block and the choice between a stored, a static and a
//! dynamic block. The Huffman codes are built differently (see `huffman`): zlib's
//! heap breaks ties by its layout, and emulating it was a third of the time. The codes are
//! as short for the data, and their lengths are sent in the same way, so the stream is the
//! same size as zlib-rs's but for the codes' description, where ties broken otherwise make
//! it a byte shorter or longer now and then (measured on 50,000 inputs: 95% the same size,
//! 1% one byte longer, 4% shorter). What is the same as zlib's holds only where zlib-rs emits
//! a single block and never slides its window, which the window size and memory level
//! [`gzip_zlib`] picks guarantee up to [`SMALL_LIMIT`] bytes (see there).
//!
//! [`gzip_small`] is made of: `scratch` (the state kept between calls on a thread, and the
//! gzip member around the block), `lz77` (the matching), `huffman` (the codes and the costs
//! zlib weighs), `block` (the choice of block and its writing), `bits` (the bit writer) and
//! `tables` (deflate's alphabets and fixed codes).

mod bits;
mod block;
mod huffman;
mod lz77;
mod scratch;
mod tables;
mod zlib;

pub use zlib::gzip_zlib;

use scratch::Scratch;
use std::cell::RefCell;

/// Gzip at best compression with the header Go writes (no name, mtime 0, XFL 2, OS unknown),
/// so that output matches the upstream tools wherever the deflate streams agree. Small
/// inputs (most embedded files) take [`gzip_small`], this crate's version of zlib's algorithm,
/// without zlib's fixed costs per stream.
pub fn gzip_best(data: &[u8]) -> Vec<u8> {
    gzip_small(data).unwrap_or_else(|| gzip_zlib(data))
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

#[cfg(test)]
mod tests;
