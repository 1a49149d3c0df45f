//! The state kept between calls (per thread), so that a call costs what its input does,
//! and the gzip member (header, block, trailer) made with it.

use crate::SMALL_LIMIT;
use crate::bits::BitWriter;
use crate::block::{DynamicTrees, plan_block, write_block};
use crate::huffman::TreeBuilder;
use crate::lz77::{Freqs, Lz77, MIN_LOOKAHEAD};
use crate::tables::MIN_MATCH;

/// The rolling hash of level 9 keeps 15 bits (zlib-rs's table has 64K entries, half used).
const HASH_MASK: usize = (1 << 15) - 1;

pub(crate) struct Scratch {
    /// zlib's `head`: per hash, the last position inserted (0 for none). Only the entries of
    /// the input's hashes are written, and they are cleared after each call.
    head: Box<[u16]>,
    /// Set while `head` holds entries: a call that did not finish (a panic) left them, and
    /// the next one clears the whole table.
    head_dirty: bool,
    /// zlib's `prev`: for each position, the previous one with the same hash. Every entry
    /// read was written by the same call (see [`Self::link_chains`]), so it is never cleared.
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
    pub(crate) fn new() -> Box<Self> {
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

    pub(crate) fn gzip(&mut self, data: &[u8]) -> Vec<u8> {
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
