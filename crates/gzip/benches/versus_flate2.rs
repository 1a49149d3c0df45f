//! Whether the hand-written deflate pays: flint-gzip's `gzip_best` (its own deflate up to
//! `SMALL_LIMIT` bytes, zlib-rs above), `gzip_zlib` (zlib-rs alone, with flint-gzip's
//! cached deflaters: what `gzip_best` would be without the hand-written deflate) and the
//! flate2 crate at its best level (a new encoder per input, as a caller would use it), on
//! the same inputs, run in alternation so that drift of the machine hits all alike.
//!
//! Prints, per input set and compressor, the median throughput over the rounds (MB/s of
//! input) and the total output size. `FLINT_BENCH_ROUNDS` sets the number of rounds
//! (default 7). Run with `cargo bench -p flint-gzip --bench versus_flate2`.

use std::io::{Read, Write};
use std::time::Instant;

/// A deterministic xorshift generator, so that every run compresses the same bytes.
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
}

/// Text like the files a Butane config embeds: settings files, systemd units, scripts and
/// keys, with the repetition and the variety such files have.
fn config_text(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut t = String::with_capacity(len + 200);
    while t.len() < len {
        let i = rng.below(1000);
        match rng.below(9) {
            0 => t.push_str(&format!("# generated settings for instance {i}\n")),
            1 => t.push_str(&format!(
                "listen = 10.{}.0.{}:{}\n",
                i % 256,
                i % 7,
                8000 + i
            )),
            2 => t.push_str(&format!("workers = {}\nlog_level = info\n", i % 64)),
            3 => t.push_str(&format!("cache_dir = /var/cache/app/{i}\n")),
            4 => t.push_str(&format!("token = {:016x}{:016x}\n", rng.next(), rng.next())),
            5 => t.push_str(&format!(
                "[Unit]\nDescription=Service {i}\nAfter=network-online.target\n\
                 Wants=network-online.target\n\n[Service]\nType=simple\n\
                 ExecStart=/usr/bin/app{i} --config /etc/app/{i}.conf\nRestart=on-failure\n\n\
                 [Install]\nWantedBy=multi-user.target\n"
            )),
            6 => {
                // A public key: base64, which compresses poorly.
                const B64: &[u8] =
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                let key: String = (0..68).map(|_| B64[rng.below(64)] as char).collect();
                t.push_str(&format!(
                    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{key} user{i}@host\n"
                ));
            }
            7 => t.push_str(&format!(
                "if [ -f /etc/app/{i}.env ]; then\n  . /etc/app/{i}.env\nfi\n\
                 exec /usr/bin/app{i} \"$@\"\n"
            )),
            _ => t.push_str(&format!(
                "[section.{i}]\nenabled = {}\n",
                i.is_multiple_of(2)
            )),
        }
    }
    let mut t = t.into_bytes();
    t.truncate(len);
    t
}

/// Binary content: records of little-endian fields (tables, indexes, machine code), runs
/// of zeros (padding), and stretches of random bytes (already compressed data, keys).
fn binary(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut t = Vec::with_capacity(len + 4096);
    let mut counter = rng.next() as u32;
    while t.len() < len {
        match rng.below(4) {
            0 => {
                for _ in 0..rng.below(64) + 1 {
                    counter = counter.wrapping_add(rng.below(16) as u32);
                    t.extend_from_slice(&counter.to_le_bytes());
                    t.extend_from_slice(&(rng.below(8) as u16).to_le_bytes());
                    t.extend_from_slice(&[0x48, 0x89, 0xe5, rng.below(4) as u8]);
                }
            }
            1 => t.extend(std::iter::repeat_n(0, rng.below(512))),
            _ => t.extend((0..rng.below(1024)).map(|_| rng.next() as u8)),
        }
    }
    t.truncate(len);
    t
}

/// Sizes of embedded files: mostly a few hundred bytes, some kilobytes, a few larger than
/// the hand-written deflate takes.
fn file_size(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0..=11 => 50 + rng.below(950),
        12..=17 => 1024 + rng.below(7 * 1024),
        18 => 8 * 1024 + rng.below(8 * 1024),
        _ => 16 * 1024 + rng.below(48 * 1024),
    }
}

/// Files of `make`'s content and [`file_size`]'s sizes, `total` bytes in all.
fn files(rng: &mut Rng, total: usize, make: fn(&mut Rng, usize) -> Vec<u8>) -> Vec<Vec<u8>> {
    let mut set = Vec::new();
    let mut sum = 0;
    while sum < total {
        let len = file_size(rng);
        sum += len;
        set.push(make(rng, len));
    }
    set
}

fn flate2_best(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::best(),
    );
    e.write_all(data).expect("writing to memory");
    e.finish().expect("writing to memory")
}

type Compressor = (&'static str, fn(&[u8]) -> Vec<u8>);

const COMPRESSORS: [Compressor; 3] = [
    ("flint-gzip gzip_best", flint_gzip::gzip_best),
    ("flint-gzip gzip_zlib", flint_gzip::gzip_zlib),
    ("flate2 best", flate2_best),
];

fn main() {
    let rounds: usize = std::env::var("FLINT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Most embedded files are a few hundred bytes: the case the hand-written deflate is for.
    let small_text: Vec<Vec<u8>> = (0..8000)
        .map(|_| {
            let len = 50 + rng.below(950);
            config_text(&mut rng, len)
        })
        .collect();
    let sets: Vec<(&str, Vec<Vec<u8>>)> = vec![
        ("small text files (50 B to 1 KB)", small_text),
        (
            "embedded text files, 4 MB",
            files(&mut rng, 4 << 20, config_text),
        ),
        (
            "embedded binary files, 1 MB",
            files(&mut rng, 1 << 20, binary),
        ),
        (
            "one text stream, 4 MB",
            vec![config_text(&mut rng, 4 << 20)],
        ),
        ("one binary stream, 2 MB", vec![binary(&mut rng, 2 << 20)]),
    ];
    for (name, set) in &sets {
        let bytes: usize = set.iter().map(Vec::len).sum();
        let small = set
            .iter()
            .filter(|d| d.len() <= flint_gzip::SMALL_LIMIT)
            .count();
        println!(
            "{name}: {} inputs ({small} within SMALL_LIMIT), {bytes} bytes",
            set.len()
        );
        // Every stream reads back, whoever wrote it.
        for (_, compress) in COMPRESSORS {
            for d in set {
                let mut back = Vec::with_capacity(d.len());
                flate2::read::GzDecoder::new(&compress(d)[..])
                    .read_to_end(&mut back)
                    .expect("a readable stream");
                assert!(back == *d, "the stream reads back as its input");
            }
        }
        let mut times = vec![Vec::new(); COMPRESSORS.len()];
        let mut sizes = vec![0; COMPRESSORS.len()];
        for _ in 0..rounds {
            for (k, (_, compress)) in COMPRESSORS.iter().enumerate() {
                let t = Instant::now();
                let out: usize = set.iter().map(|d| compress(d).len()).sum();
                times[k].push(t.elapsed().as_secs_f64());
                sizes[k] = out;
            }
        }
        for (k, (label, _)) in COMPRESSORS.iter().enumerate() {
            times[k].sort_by(f64::total_cmp);
            let median = times[k][times[k].len() / 2];
            println!(
                "  {label:<22} {:>8.1} MB/s  {:>9} bytes out ({:.2}%)",
                bytes as f64 / median / 1e6,
                sizes[k],
                100.0 * sizes[k] as f64 / bytes as f64
            );
        }
    }
}
