//! RFC 2397 data URLs: `data:[<mediatype>][;base64],<data>`. One reading of them, by the
//! grammar of the decoder upstream uses ([`parse`]), for validation ([`check`]) and for
//! decoding ([`decode`]); and Butane's encoding ([`encode`]).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

mod encode;
mod grammar;

pub use encode::{encode, percent_encode};
pub use flint_gzip::{gzip_best, gzip_zlib};

/// A data URL as its header describes it: whether the data is base64, and the data (what
/// follows the header's comma), as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataUrl<'a> {
    pub base64: bool,
    pub data: &'a str,
}

/// Reads the header of `url` (the whole URL, scheme included) by upstream's grammar; `Err`
/// holds its message for the first problem. The data is not looked at ([`check`] does).
pub fn parse(url: &str) -> Result<DataUrl<'_>, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Err("missing data prefix".into());
    };
    // The two headers Butane writes, read as the grammar would, without going through the
    // URL byte by byte.
    if let Some(data) = rest.strip_prefix(";base64,") {
        return Ok(DataUrl { base64: true, data });
    }
    if let Some(data) = rest.strip_prefix(',') {
        return Ok(DataUrl {
            base64: false,
            data,
        });
    }
    let s = rest.as_bytes();
    let mut i = grammar::media_type(s)?;
    let mut base64 = false;
    while !base64 && s.get(i) == Some(&b';') {
        (i, base64) = grammar::parameter(s, i + 1)?;
    }
    match s.get(i) {
        Some(b',') => Ok(DataUrl {
            base64,
            data: &rest[i + 1..],
        }),
        None => Err("missing comma before data".into()),
        Some(_) => Err("expected semicolon or comma".into()),
    }
}

/// Checks `url` (the whole URL, scheme included) as upstream's data URL decoder does: its
/// header, then its data.
pub fn check(url: &str) -> Result<(), String> {
    let d = parse(url)?;
    grammar::check_data(d.data, d.base64)
}

/// The payload of a `data:` URL (`url` includes the scheme). The header is read by
/// [`parse`]; decoding forgives what validation would not (it runs on URLs from the kernel
/// command line too, which nothing validated): escapes that do not decode are kept as
/// written, base64 may be unpadded or URL-safe, and a header the grammar refuses is read
/// as parameters up to the first comma, base64 when one of them is `base64`.
pub fn decode(url: &str) -> Result<Vec<u8>, String> {
    let body = url.strip_prefix("data:").ok_or("not a data URL")?;
    let d = match parse(url) {
        Ok(d) => d,
        Err(_) => {
            let (header, data) = body.split_once(',').ok_or("missing comma")?;
            DataUrl {
                base64: header.split(';').any(|p| p == "base64"),
                data,
            }
        }
    };
    if d.base64 {
        decode_base64(&String::from_utf8_lossy(&percent_decode(d.data)))
    } else {
        Ok(percent_decode(d.data))
    }
}

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
        // What lies before the next escape is copied as it is, at once.
        let run = memchr::memchr(b'%', &b[i..]).unwrap_or(b.len() - i);
        out.extend_from_slice(&b[i..i + run]);
        i += run;
        if i == b.len() {
            break;
        }
        let hex = |c: u8| (c as char).to_digit(16);
        if let (Some(h), Some(l)) = (
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
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
        // What the grammar refuses is still read.
        assert_eq!(decode("data:foo,a%41").unwrap(), b"aA");
        assert_eq!(decode("data:foo;base64;x,aGk=").unwrap(), b"hi");
        assert!(decode("data:foo").is_err());
        // A quoted comma is part of its parameter, as upstream reads it.
        assert_eq!(
            decode("data:text/plain;a=\"x,y\";base64,aGk=").unwrap(),
            b"hi"
        );
    }

    #[test]
    fn parses_headers() {
        let parsed = |u| parse(u).map(|d| (d.base64, d.data));
        assert_eq!(parsed("data:,a,b"), Ok((false, "a,b")));
        assert_eq!(parsed("data:;base64,aGk="), Ok((true, "aGk=")));
        assert_eq!(parsed("data:text/plain;charset=utf-8,x"), Ok((false, "x")));
        assert_eq!(parsed("data:x-y/z;a=\"1,2\";base64,q"), Ok((true, "q")));
        assert_eq!(
            parsed("data:text/plain;base64;a=b,x").unwrap_err(),
            "invalid character for parameter attribute"
        );
    }
}
