//! What a provider handed over: an Ignition config, nothing, or user data meant for
//! another tool. Flatcar's Ignition leaves `#cloud-config`, `#!` scripts and multipart MIME
//! messages (also gzip'd) to coreos-cloudinit and goes on as if there were no config; so
//! does flint. Also the decodings providers share (base64, "gzip if it looks gzip'd").

use base64::Engine;

/// The kind of user data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Zero bytes: no config.
    Empty,
    CloudConfig,
    Script,
    MultipartMime,
    /// Anything else: read as a config (and refused if it is none).
    Config,
}

impl Kind {
    /// For the one line that says why the user data was skipped.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Empty => "empty",
            Kind::CloudConfig => "a #cloud-config",
            Kind::Script => "a #! script",
            Kind::MultipartMime => "a multipart MIME message",
            Kind::Config => "a config",
        }
    }
}

/// Classifies user data the way Flatcar's patched Ignition does before parsing it.
pub(crate) fn classify(data: &[u8]) -> Kind {
    if data.is_empty() {
        return Kind::Empty;
    }
    let plain = gunzip_or_same(data);
    let first = plain.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    if first.trim_end() == "#cloud-config" {
        Kind::CloudConfig
    } else if first.starts_with("#!") {
        Kind::Script
    } else if is_multipart_mime(&plain) {
        Kind::MultipartMime
    } else {
        Kind::Config
    }
}

/// The decompressed data when `data` is a complete gzip stream, else `data` itself.
fn gunzip_or_same(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if data.starts_with(&[0x1f, 0x8b])
        && let Ok(d) = crate::fetch::gunzip(data, 64 << 20)
    {
        return std::borrow::Cow::Owned(d);
    }
    std::borrow::Cow::Borrowed(data)
}

/// A MIME header block (ended by an empty line) whose Content-Type names multipart/mixed.
/// Header lines must be `Name: value` with a token name; continuation lines start with a
/// blank; a block that never ends, or a malformed line, is no MIME header.
fn is_multipart_mime(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let mut content_type: Option<String> = None;
    let mut current_is_ct = false;
    let mut first = true;
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        // An empty piece after the last newline is the end of the data, not a line.
        if i + 1 == lines.len() && raw.is_empty() {
            break;
        }
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.is_empty() {
            return content_type.is_some_and(|v| v.contains("multipart/mixed"));
        }
        if line.starts_with([' ', '\t']) {
            if first {
                return false;
            }
            if current_is_ct && let Some(v) = content_type.as_mut() {
                v.push(' ');
                v.push_str(line.trim());
            }
            continue;
        }
        first = false;
        let Some((name, value)) = line.split_once(':') else {
            return false;
        };
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return false;
        }
        current_is_ct = name.eq_ignore_ascii_case("content-type");
        if current_is_ct && content_type.is_none() {
            content_type = Some(value.trim().to_string());
        }
    }
    // The data ended inside the header block.
    false
}

/// Standard base64 (padding required), as Go's StdEncoding.
pub(crate) fn base64_decode(data: &[u8]) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("decoding base64: {e}"))
}

/// gzip data decompressed, anything else as it is (upstream's TryUnzip: decided by the
/// gzip magic bytes).
pub(crate) fn try_gunzip(data: Vec<u8>) -> Result<Vec<u8>, String> {
    if data.starts_with(&[0x1f, 0x8b, 0x08]) {
        crate::fetch::gunzip(&data, crate::fetch::IN_MEMORY_LIMIT)
    } else {
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_like_flatcar() {
        assert_eq!(classify(b""), Kind::Empty);
        assert_eq!(classify(b"#cloud-config\nhostname: a\n"), Kind::CloudConfig);
        assert_eq!(classify(b"#cloud-config  \r\nx: 1"), Kind::CloudConfig);
        assert_eq!(classify(b"#cloud-config"), Kind::CloudConfig);
        assert_eq!(classify(b"#cloud-configx\n"), Kind::Config);
        assert_eq!(classify(b" #cloud-config\n"), Kind::Config);
        assert_eq!(classify(b"#!/bin/sh\necho\n"), Kind::Script);
        assert_eq!(classify(b"#! x"), Kind::Script);
        let gz = flint_ignition::dataurl::gzip_best(b"#cloud-config\nx: 1\n");
        assert_eq!(classify(&gz), Kind::CloudConfig);
        let mime =
            b"Content-Type: multipart/mixed; boundary=\"X\"\r\nMIME-Version: 1.0\r\n\r\n--X\r\n";
        assert_eq!(classify(mime), Kind::MultipartMime);
        let gz = flint_ignition::dataurl::gzip_best(mime);
        assert_eq!(classify(&gz), Kind::MultipartMime);
        assert_eq!(
            classify(b"content-type: multipart/mixed\n\nbody"),
            Kind::MultipartMime
        );
        assert_eq!(
            classify(b"MIME-Version: 1.0\nContent-Type:\n multipart/mixed\n\n"),
            Kind::MultipartMime
        );
        // No blank line ending the header block, a JSON config, other types.
        assert_eq!(classify(b"Content-Type: multipart/mixed\n"), Kind::Config);
        assert_eq!(
            classify(br#"{"ignition": {"version": "3.4.0"}}"#),
            Kind::Config
        );
        assert_eq!(classify(b"Content-Type: text/plain\n\n"), Kind::Config);
        assert_eq!(classify(b"Bad Name: multipart/mixed\n\n"), Kind::Config);
        assert_eq!(classify(b"  \n"), Kind::Config);
    }

    #[test]
    fn decodes() {
        assert_eq!(base64_decode(b"aGk=").unwrap(), b"hi");
        assert!(base64_decode(b"aGk").is_err());
        let gz = flint_ignition::dataurl::gzip_best(b"{}");
        assert_eq!(try_gunzip(gz).unwrap(), b"{}");
        assert_eq!(try_gunzip(b"{}".to_vec()).unwrap(), b"{}");
    }
}
