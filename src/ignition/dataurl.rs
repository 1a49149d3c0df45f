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
