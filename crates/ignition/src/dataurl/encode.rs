//! Data URLs as Butane writes them: percent-encoded or base64, gzip'd when that is shorter.

use base64::Engine;

/// Bytes kept as they are in percent-encoding (RFC 2396 unreserved).
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')'
        )
}

pub fn percent_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(percent_len(data));
    percent_encode_into(&mut out, data);
    out
}

fn percent_encode_into(out: &mut String, data: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in data {
        if unreserved(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
}

use flint_gzip::gzip_best;

/// The length of `percent_encode(data)`.
fn percent_len(data: &[u8]) -> usize {
    data.iter()
        .map(|&b| if unreserved(b) { 1 } else { 3 })
        .sum()
}

/// Appends `data` in base64 to `out`.
fn push_base64(out: &mut String, data: &[u8]) {
    base64::engine::general_purpose::STANDARD.encode_string(data, out);
}

/// A size no gzip stream of `data` can be below, to skip compressing what could not win.
/// Around the deflate data are a header and a trailer (18 bytes). In the deflate data, each
/// distinct byte of the input appears once at least as a literal (a match only copies what
/// came before), so the bound depends on the number of distinct bytes only; see
/// [`deflate_bits_at_least`].
fn gzip_lower_bound(data: &[u8]) -> usize {
    let mut seen = [false; 256];
    for &b in data {
        seen[usize::from(b)] = true;
    }
    let d = seen.iter().filter(|&&s| s).count();
    18 + usize::from(DEFLATE_BITS_AT_LEAST[d]).div_ceil(8)
}

/// [`deflate_bits_at_least`] for 0 to 256 distinct literals, worked out once here (a test
/// checks it): working it out at run time took longer than translating a small config.
#[rustfmt::skip]
const DEFLATE_BITS_AT_LEAST: [u16; 257] = [
    9, 17, 25, 33, 40, 44, 48, 52, 57, 62, 67, 72, 77, 82, 87, 92, 98, 104, 109, 115, 121, 127,
    133, 139, 145, 151, 157, 163, 169, 176, 182, 188, 195, 201, 208, 213, 219, 225, 230, 236,
    242, 248, 254, 260, 266, 272, 278, 284, 290, 296, 302, 308, 314, 320, 327, 333, 339, 346,
    352, 357, 363, 369, 375, 381, 387, 393, 399, 405, 411, 417, 423, 429, 435, 441, 447, 453,
    459, 465, 472, 478, 484, 490, 496, 502, 508, 514, 520, 526, 532, 538, 544, 550, 556, 562,
    568, 574, 580, 586, 592, 598, 604, 610, 617, 623, 629, 635, 641, 647, 653, 659, 665, 671,
    677, 683, 689, 695, 701, 707, 713, 719, 725, 731, 737, 743, 749, 756, 762, 768, 774, 780,
    786, 792, 798, 804, 810, 816, 822, 828, 834, 840, 846, 852, 858, 864, 870, 876, 882, 888,
    895, 901, 907, 913, 919, 925, 931, 937, 943, 949, 955, 961, 967, 973, 979, 985, 991, 997,
    1003, 1009, 1015, 1021, 1027, 1033, 1040, 1046, 1052, 1058, 1064, 1070, 1076, 1082, 1088,
    1094, 1100, 1106, 1112, 1118, 1124, 1130, 1136, 1142, 1148, 1154, 1160, 1166, 1172, 1179,
    1185, 1191, 1197, 1203, 1209, 1215, 1221, 1227, 1233, 1239, 1245, 1251, 1257, 1263, 1269,
    1275, 1281, 1287, 1293, 1299, 1305, 1311, 1318, 1324, 1330, 1336, 1342, 1348, 1354, 1360,
    1366, 1372, 1378, 1384, 1390, 1396, 1402, 1408, 1414, 1420, 1426, 1432, 1438, 1444, 1450,
    1457, 1463, 1469, 1475, 1481, 1487, 1493, 1499, 1505, 1511, 1517, 1523, 1529, 1535, 1541,
    1547
];

/// Bits no deflate stream holding `d` distinct literals can be below, for each `d`. A block
/// with fixed codes spends 3 bits on its header, 7 on its end and 8 or more on a literal (a
/// stored block more). A block with its own codes spends 29 bits or more on its header
/// (type, three counts, four 3-bit code-length codes at least), and its prefix code gives
/// the `m` symbols it uses (its literals and its end) `m * log2(m)` bits at least between
/// them (Kraft's inequality). The literals may be spread over blocks of both kinds: the
/// bound is the least over every way of spreading them.
#[cfg(test)]
fn deflate_bits_at_least() -> [u32; 257] {
    // Own codes: r literals over k blocks, at best evenly.
    let own: Vec<f64> = (0..=256usize)
        .map(|r| {
            if r == 0 {
                return 0.0;
            }
            (1..=r + 1)
                .map(|k| {
                    let m = (r + k) as f64;
                    29.0 * k as f64 + m * (m / k as f64).log2()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let fixed = |f: usize| if f == 0 { 0.0 } else { 10.0 + 8.0 * f as f64 };
    std::array::from_fn(|d| {
        // Some block there is, even for no literal: the empty one with fixed codes.
        let least = match d {
            0 => 10.0,
            _ => (0..=d)
                .map(|f| fixed(f) + own[d - f])
                .fold(f64::INFINITY, f64::min),
        };
        // Rounded down, with a margin for the floating point.
        (least - 1e-6).floor().max(0.0) as u32
    })
}

/// The data URL Butane makes for `data`, and the `compression` value to write with it.
///
/// Percent-encoding or base64, whichever is shorter (percent on a tie); when the user set no
/// compression, gzip+base64 if that is more than 4 characters shorter still.
pub fn encode(data: &[u8], user_compression: Option<&str>) -> (String, Option<String>) {
    // Lengths first, so that only the URL chosen is built.
    let pct_len = percent_len(data);
    let b64_len = data.len().div_ceil(3) * 4;
    let use_b64 = 8 + b64_len < 1 + pct_len;
    let best_len = if use_b64 { 8 + b64_len } else { 1 + pct_len };
    let unset = user_compression.is_none_or(str::is_empty);
    let compression = if unset {
        Some(String::new())
    } else {
        user_compression.map(str::to_string)
    };
    // Compressing is skipped only where even the smallest gzip stream could not win.
    if unset && gzip_lower_bound(data).div_ceil(3) * 4 + 8 + 4 < best_len {
        let gz = gzip_best(data);
        if gz.len().div_ceil(3) * 4 + 8 + 4 < best_len {
            let mut url = String::with_capacity(13 + gz.len().div_ceil(3) * 4);
            url.push_str("data:;base64,");
            push_base64(&mut url, &gz);
            return (url, Some("gzip".into()));
        }
    }
    let mut url = String::with_capacity(5 + best_len);
    if use_b64 {
        url.push_str("data:;base64,");
        push_base64(&mut url, data);
    } else {
        url.push_str("data:,");
        percent_encode_into(&mut url, data);
    }
    (url, compression)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataurl::decode;
    use flint_gzip::gzip_zlib;

    /// The table in the code is the one `deflate_bits_at_least` works out.
    #[test]
    fn the_table_of_bounds_is_the_one_worked_out() {
        let worked: Vec<u16> = deflate_bits_at_least().iter().map(|&b| b as u16).collect();
        assert_eq!(worked, DEFLATE_BITS_AT_LEAST);
    }

    /// The bound is one: no input compresses below it (short inputs of few and of many
    /// distinct bytes, runs, text), and for the empty input it is the smallest stream.
    #[test]
    fn no_gzip_stream_is_below_the_lower_bound() {
        assert_eq!(gzip_lower_bound(b""), 20);
        assert_eq!(gzip_best(b"").len(), 20);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in 0..3000usize {
            let len = (next() % 120) as usize;
            let alphabet = 1 + (next() % [2, 4, 16, 64, 256][n % 5]) as u8 as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| ((next() % alphabet as u64) as u8).wrapping_add(b' '))
                .collect();
            assert!(
                gzip_best(&data).len() >= gzip_lower_bound(&data),
                "{data:?}"
            );
        }
        for run in [b"a".repeat(1000), b"ab".repeat(500), (0..=255u8).collect()] {
            assert!(gzip_best(&run).len() >= gzip_lower_bound(&run));
        }
        // A small file of text: compressing it could not win, and is skipped.
        let small = b"# file 17\nvalue = 45131785937\n";
        let best = 1 + percent_len(small);
        assert!(gzip_lower_bound(small).div_ceil(3) * 4 + 12 >= best);
        assert_eq!(encode(small, None).1.as_deref(), Some(""));
    }

    /// Gzip as it was first written here: a raw deflate stream between a header and a
    /// trailer made by hand (CRC in a second pass).
    fn gzip_by_hand(data: &[u8]) -> Vec<u8> {
        use flate2::{Compress, Compression, Crc, FlushCompress, Status};
        let bits = (usize::BITS - data.len().max(1).leading_zeros()).clamp(9, 15) as u8;
        let mut d = Compress::new_with_window_bits(Compression::best(), false, bits);
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff];
        loop {
            let consumed = d.total_in() as usize;
            out.reserve(data.len() + 64);
            match d.compress_vec(&data[consumed..], &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => break,
                Ok(_) => continue,
                Err(e) => panic!("{e}"),
            }
        }
        let mut crc = Crc::new();
        crc.update(data);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out
    }

    /// The gzip wrapper of zlib (reused deflaters, checksum while reading) makes the same
    /// bytes as the hand-made one, on small and large inputs (beyond the 4 KiB where the
    /// chain limit and block splitting start to matter), text, binary and repetitive, one
    /// after the other on the same thread (so the reset deflaters are exercised).
    #[test]
    fn gzip_wrapper_matches_hand_made_gzip() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let words = [
            "listen",
            " = ",
            "10.0.0.1",
            "\n",
            "workers",
            "# comment ",
            "[Unit]",
            "a",
        ];
        let mut inputs: Vec<Vec<u8>> = vec![vec![], b"x".to_vec(), vec![0; 70_000]];
        for round in 0..200 {
            let len = match round % 5 {
                0 => (next() % 64) as usize,
                1 => (next() % 600) as usize,
                2 => (next() % 5_000) as usize,
                3 => 4_000 + (next() % 40_000) as usize,
                _ => 66_000 + (next() % 10_000) as usize,
            };
            let data: Vec<u8> = match round % 3 {
                0 => (0..len).map(|_| next() as u8).collect(),
                1 => {
                    let mut t = Vec::with_capacity(len);
                    while t.len() < len {
                        t.extend_from_slice(words[(next() % 8) as usize].as_bytes());
                    }
                    t.truncate(len);
                    t
                }
                _ => (0..len)
                    .map(|i| b'a' + ((i / 7 + round) % 26) as u8)
                    .collect(),
            };
            inputs.push(data);
        }
        // At the edges of each window size, where the buffer of symbols is the smallest for
        // the input (random bytes: a symbol for each byte).
        for k in 9..=15 {
            for len in [(1usize << k) - 1, 1 << k] {
                inputs.push((0..len).map(|_| next() as u8).collect());
                inputs.push(words.concat().bytes().cycle().take(len).collect());
            }
        }
        for data in &inputs {
            assert_eq!(
                gzip_zlib(data),
                gzip_by_hand(data),
                "input of {} bytes",
                data.len()
            );
        }
    }

    #[test]
    fn encodes_like_butane() {
        assert_eq!(
            encode(b"Hello, world!", None),
            ("data:,Hello%2C%20world!".to_string(), Some(String::new()))
        );
        assert_eq!(encode(b"", None).0, "data:,");
        let (url, c) = encode(b"not-really-gzip", Some("gzip"));
        assert_eq!(
            (url.as_str(), c.as_deref()),
            ("data:,not-really-gzip", Some("gzip"))
        );
        let text = "option_one=yes\n".repeat(16);
        let (url, c) = encode(text.as_bytes(), None);
        assert_eq!(c.as_deref(), Some("gzip"));
        let gz = decode(&url).unwrap();
        assert_eq!(&gz[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
        let mut plain = Vec::new();
        use std::io::Read;
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, text.as_bytes());
        // Binary data is shorter in base64.
        assert!(
            encode(&[0u8, 1, 2, 255, 254, 253], None)
                .0
                .starts_with("data:;base64,")
        );
    }
}
