//! The source's encoding: go-yaml reads UTF-8, and UTF-16 from a byte order mark on.

/// The document as UTF-8 text: go-yaml also reads UTF-16, little or big endian, from a byte
/// order mark on (the mark itself is not text). Upstream's words when that is malformed.
pub fn source_utf8(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, &'static str> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return Ok(bytes.into()),
    };
    let body = &bytes[2..];
    if body.len() % 2 == 1 {
        return Err("incomplete UTF-16 character");
    }
    let mut units = body.chunks_exact(2).map(|p| {
        let pair = [p[0], p[1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    let mut text = String::with_capacity(body.len());
    while let Some(u) = units.next() {
        let c = match u {
            0xDC00..=0xDFFF => return Err("unexpected low surrogate area"),
            0xD800..=0xDBFF => match units.next() {
                None => return Err("incomplete UTF-16 surrogate pair"),
                Some(low @ 0xDC00..=0xDFFF) => {
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                }
                Some(_) => return Err("expected low surrogate area"),
            },
            u => u32::from(u),
        };
        text.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Ok(text.into_bytes().into())
}

/// A UTF-16 document made UTF-8 (`None` for any other, or one malformed).
pub fn utf16_as_utf8(bytes: &[u8]) -> Option<Vec<u8>> {
    match source_utf8(bytes) {
        Ok(std::borrow::Cow::Owned(b)) => Some(b),
        _ => None,
    }
}
