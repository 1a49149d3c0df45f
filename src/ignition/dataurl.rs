//! RFC 2397 data URLs: `data:[<mediatype>][;base64],<data>`.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

/// Decodes base64 the way Go's data-URL decoder accepts it (standard or URL alphabet, padded
/// or not).
pub fn decode_base64(data: &str) -> Result<Vec<u8>, String> {
    let engines = [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD];
    let mut last = String::new();
    for e in engines {
        match e.decode(data) {
            Ok(v) => return Ok(v),
            Err(err) => last = err.to_string(),
        }
    }
    Err(format!("illegal base64 data: {last}"))
}

/// Percent-decodes `data` (invalid escapes are left as written).
pub fn percent_decode(data: &str) -> Vec<u8> {
    let b = data.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The payload of a `data:` URL (`url` includes the scheme).
pub fn decode(url: &str) -> Result<Vec<u8>, String> {
    let body = url.strip_prefix("data:").ok_or("not a data URL")?;
    let (header, data) = body.split_once(',').ok_or("missing comma")?;
    if header.split(';').any(|p| p == "base64") {
        decode_base64(&String::from_utf8_lossy(&percent_decode(data)))
    } else {
        Ok(percent_decode(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        assert_eq!(decode("data:,Hello%2C%20world!").unwrap(), b"Hello, world!");
        assert_eq!(decode("data:;base64,aGk=").unwrap(), b"hi");
        assert_eq!(decode("data:text/plain;base64,aGk").unwrap(), b"hi");
        assert!(decode("data:;base64,***").is_err());
    }
}

/// Bytes kept as they are in percent-encoding (RFC 2396 unreserved).
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')'
        )
}

pub fn percent_encode(data: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(data.len() * 3);
    for &b in data {
        if unreserved(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    out
}

/// Gzip at best compression with the header Go writes (no name, mtime 0, XFL 2, OS unknown),
/// so that output matches the upstream tools wherever the deflate streams agree.
pub fn gzip_best(data: &[u8]) -> Vec<u8> {
    use flate2::{Compress, Compression, Crc, FlushCompress, Status};
    use std::cell::RefCell;
    thread_local! {
        // One deflater per window size, reset between inputs: setting one up allocates and
        // clears a few hundred KiB, which dominated translating thousands of small files.
        static DEFLATERS: RefCell<[Option<Compress>; 7]> = const { RefCell::new([const { None }; 7]) };
    }
    // A window no larger than the input compresses it the same and is cheaper to reset.
    let bits = (usize::BITS - data.len().max(1).leading_zeros()).clamp(9, 15) as u8;
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
    DEFLATERS.with_borrow_mut(|cache| {
        let d = cache[usize::from(bits - 9)].get_or_insert_with(|| {
            Compress::new_with_window_bits(Compression::best(), false, bits)
        });
        d.reset();
        loop {
            let consumed = d.total_in() as usize;
            out.reserve(data.len() / 2 + 64);
            // Compressing into memory has no failure mode but a full buffer, handled by
            // looping with more room.
            match d.compress_vec(&data[consumed..], &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => break,
                Ok(_) => continue,
                Err(e) => unreachable!("in-memory deflate failed: {e}"),
            }
        }
    });
    let mut crc = Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// The data URL Butane makes for `data`, and the `compression` value to write with it.
///
/// Percent-encoding or base64, whichever is shorter (percent on a tie); when the user set no
/// compression, gzip+base64 if that is more than 4 characters shorter still.
pub fn encode(data: &[u8], user_compression: Option<&str>) -> (String, Option<String>) {
    use base64::Engine;
    let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let pct = percent_encode(data);
    // Lengths first: building the longer candidate is wasted work on large files.
    let b64_len = data.len().div_ceil(3) * 4;
    let mut best = if 8 + b64_len < 1 + pct.len() {
        format!(";base64,{}", b64(data))
    } else {
        format!(",{pct}")
    };
    let unset = user_compression.is_none_or(str::is_empty);
    let mut compression = if unset {
        Some(String::new())
    } else {
        user_compression.map(str::to_string)
    };
    if unset {
        let gz = gzip_best(data);
        if gz.len().div_ceil(3) * 4 + 8 + 4 < best.len() {
            best = format!(";base64,{}", b64(&gz));
            compression = Some("gzip".into());
        }
    }
    (format!("data:{best}"), compression)
}

#[cfg(test)]
mod encode_tests {
    use super::*;

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
