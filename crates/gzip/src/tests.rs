use super::*;
use crate::huffman::{BL_TREE, Costs, Histogram, LIT_TREE, Tree, TreeBuilder};
use crate::lz77::MIN_LOOKAHEAD;
use crate::tables::{BL_CODES, EXTRA_BL_BITS, L_CODES};

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
            .map(|s| usize::from(hist.freq[s]) * (lens[s] as usize + usize::from(EXTRA_BL_BITS[s])))
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
