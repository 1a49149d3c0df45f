//! Huffman codes: the length-limited code of a block's frequencies, and the costs zlib
//! weighs to choose a block.
//!
//! zlib's heap breaks ties between equal weights by its layout; emulating it was a third of
//! the time, so the codes here are built another way (see [`TreeBuilder`]): as short for
//! the data, sent in the same way, with ties broken by symbol.

use crate::tables::{
    Code, D_CODES, EXTRA_BL_BITS, L_CODES, LENGTH_CODES, LITERALS, MAX_BITS, MAX_BL_BITS, REP_3_6,
    REPZ_3_10, REPZ_11_138, STATIC_L, dist_extra, length_extra,
};

/// The frequencies of the symbols of a code, and the set of the symbols used, to go over
/// these without testing every symbol (a branch mispredicted for many of them).
#[derive(Clone)]
pub(crate) struct Histogram<const N: usize> {
    pub(crate) freq: [u16; N],
    used: [u64; 5],
}

impl<const N: usize> Histogram<N> {
    pub(crate) fn new() -> Self {
        Self {
            freq: [0; N],
            used: [0; 5],
        }
    }

    pub(crate) fn add(&mut self, sym: usize) {
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

/// The costs zlib weighs to choose the kind of block, in bits.
#[derive(Default)]
pub(crate) struct Costs {
    /// With the dynamic trees (their representation included once built).
    pub(crate) opt_len: usize,
    /// With the static trees.
    pub(crate) static_len: usize,
}

/// What tree is built: its extra bits, static code, and length limit.
pub(crate) struct TreeKind {
    /// Extra bits of each symbol.
    extra: &'static [u8],
    /// The static code's lengths, to price a static block (empty for the bit-length tree).
    static_lens: &'static [u8],
    max_length: u16,
}

pub(crate) const LIT_TREE: TreeKind = TreeKind {
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
pub(crate) const DIST_TREE: TreeKind = TreeKind {
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
pub(crate) const BL_TREE: TreeKind = TreeKind {
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
pub(crate) struct TreeBuilder {
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
    pub(crate) fn new() -> Self {
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
    pub(crate) fn build<const N: usize>(
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
pub(crate) struct Tree<const N: usize> {
    pub(crate) codes: [Code; N],
    /// In increasing order.
    syms: [u16; N],
    count: usize,
}

impl<const N: usize> Tree<N> {
    pub(crate) fn new() -> Self {
        Self {
            codes: [Code::default(); N],
            syms: [0; N],
            count: 0,
        }
    }

    /// The largest symbol with a code (zlib's `max_code`).
    pub(crate) fn max_code(&self) -> usize {
        usize::from(self.syms[self.count - 1])
    }

    /// zlib's `scan_tree`/`send_tree` (one walk for both): the code lengths of the symbols
    /// up to [`Self::max_code`] as code-length symbols and their extra bits.
    ///
    /// zlib goes symbol by symbol, cutting runs of a length in pieces; here the same pieces
    /// are cut out of whole runs: runs of zeros between the symbols that have a code, and
    /// runs of one length among adjacent ones.
    pub(crate) fn run_lengths(&self, mut emit: impl FnMut(usize, u32)) {
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
