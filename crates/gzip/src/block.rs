//! The block: zlib's `zng_tr_flush_block` for the last (and only) block, choosing between a
//! stored, a static and a dynamic block by the sizes zlib counts for them, and writing it.

use crate::bits::BitWriter;
use crate::huffman::{BL_TREE, Costs, DIST_TREE, Histogram, LIT_TREE, Tree, TreeBuilder};
use crate::lz77::Freqs;
use crate::tables::{
    BL_CODES, BL_ORDER, Code, D_CODES, END_BLOCK, EXTRA_BL_BITS, L_CODES, LENGTH_CODE, LITERALS,
    STATIC_D, STATIC_L, dist_base, dist_code, dist_extra, length_base, length_extra,
};

/// The dynamic trees of the block and what zlib needs of them to send them.
pub(crate) struct DynamicTrees {
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
    pub(crate) fn new() -> Self {
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
pub(crate) struct Block {
    kind: BlockKind,
    pub(crate) bytes: usize,
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
pub(crate) fn plan_block(
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
pub(crate) fn write_block(
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
