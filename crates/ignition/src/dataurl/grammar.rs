//! The grammar of the decoder upstream uses for `data:` URLs (RFC 2397: media type,
//! parameters, `;base64`, then the data, percent-escaped or standard base64), with its
//! verdicts and messages. The first problem in reading order is the one reported. The
//! header is read byte by byte: everything it may hold is ASCII, and the first byte beyond
//! ASCII is refused with the message its character would get.

/// Token characters of media types and parameter names (RFC 2045).
fn is_token(c: u8) -> bool {
    // A match, not a search in a string of specials: this runs on every character of
    // every data URL of a config.
    c.is_ascii()
        && !c.is_ascii_control()
        && !matches!(
            c,
            b' ' | b'('
                | b')'
                | b'<'
                | b'>'
                | b'@'
                | b','
                | b';'
                | b':'
                | b'\\'
                | b'"'
                | b'/'
                | b'['
                | b']'
                | b'?'
                | b'='
        )
}

/// Characters allowed unescaped in the data part (what [`URL_CHARS`] holds).
#[cfg(test)]
fn is_url_char(c: char) -> bool {
    c.is_ascii()
        && !c.is_ascii_control()
        && !matches!(
            c,
            ' ' | '<' | '>' | '#' | '"' | '{' | '}' | '|' | '\\' | '^' | '[' | ']' | '`'
        )
}

fn is_base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '\n')
}

/// RFC 2396 unescaping of a parameter value or of the data.
fn unescape(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    if !s.is_ascii() {
        return Err("rfc2396: non-ASCII char detected".into());
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            for k in 1..=2 {
                match b.get(i + k) {
                    None => return Err("rfc2396: unexpected end of unescape sequence".into()),
                    // The decoder names the '%', not the offending character.
                    Some(c) if !c.is_ascii_hexdigit() => {
                        return Err("rfc2396: invalid char 0x25 in unescape sequence".into());
                    }
                    Some(_) => {}
                }
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Go's `strconv.Unquote` of a quoted parameter value, reduced to its verdict.
fn unquote(s: &str) -> Result<(), String> {
    const BAD: &str = "invalid syntax";
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\n' => return Err(BAD.into()),
            '\\' => match chars.next() {
                Some('a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' | '\\' | '"') => {}
                Some('x') => {
                    if !(0..2).all(|_| chars.next().is_some_and(|h| h.is_ascii_hexdigit())) {
                        return Err(BAD.into());
                    }
                }
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match chars.next().and_then(|o| o.to_digit(8)) {
                            Some(o) => v = v * 8 + o,
                            None => return Err(BAD.into()),
                        }
                    }
                    if v > 255 {
                        return Err(BAD.into());
                    }
                }
                Some(u @ ('u' | 'U')) => {
                    let n = if u == 'u' { 4 } else { 8 };
                    let mut v = 0u32;
                    for _ in 0..n {
                        match chars.next().and_then(|h| h.to_digit(16)) {
                            Some(h) => v = v * 16 + h,
                            None => return Err(BAD.into()),
                        }
                    }
                    if char::from_u32(v).is_none() {
                        return Err(BAD.into());
                    }
                }
                _ => return Err(BAD.into()),
            },
            _ => {}
        }
    }
    Ok(())
}

/// Whether `b` is base64 as an encoder writes it (whole quanta of the standard alphabet, the
/// last one padded, no line breaks), which the decoder below always accepts: a test of the
/// bytes alone, for the URLs of large files.
fn plain_base64(b: &[u8]) -> bool {
    // Ranges joined without short-circuits, so that the scan is vectorized.
    fn alphabet(c: u8) -> bool {
        (c.wrapping_sub(b'A') < 26)
            | (c.wrapping_sub(b'a') < 26)
            | (c.wrapping_sub(b'0') < 10)
            | (c == b'+')
            | (c == b'/')
    }
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let body = match b {
        [rest @ .., x, b'=', b'='] if alphabet(*x) => rest,
        [rest @ .., x, b'='] if alphabet(*x) => rest,
        _ => b,
    };
    !flint_go::bytes::any_byte(body, |c| !alphabet(c))
}

/// Go's standard base64 decoding (padding required, CR and LF skipped), reduced to its
/// verdict: the offset of the first byte it refuses.
fn base64(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let bad = |at: usize| Err(format!("illegal base64 data at input byte {at}"));
    let is_nl = |c: u8| c == b'\n' || c == b'\r';
    let mut si = 0;
    loop {
        let mut j = 0;
        while j < 4 {
            if si == b.len() {
                return match j {
                    0 => Ok(()),
                    _ => bad(si - j),
                };
            }
            let c = b[si];
            si += 1;
            if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' {
                j += 1;
                continue;
            }
            if is_nl(c) {
                continue;
            }
            if c != b'=' {
                return bad(si - 1);
            }
            // Padding: only after two or three characters of a quantum.
            match j {
                0 | 1 => return bad(si - 1),
                2 => {
                    while si < b.len() && is_nl(b[si]) {
                        si += 1;
                    }
                    if si == b.len() {
                        return bad(b.len());
                    }
                    if b[si] != b'=' {
                        return bad(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < b.len() && is_nl(b[si]) {
                si += 1;
            }
            return if si < b.len() { bad(si) } else { Ok(()) };
        }
    }
}

/// The media type at the start of `s` (what follows `data:`): empty, or type `/` subtype.
/// Returns where it ends (at the `;` or `,` after it).
pub(super) fn media_type(s: &[u8]) -> Result<usize, String> {
    let err = |m: &str| Err(m.to_string());
    let c = match s.first() {
        None => return err("missing comma before data"),
        Some(b';' | b',') => return Ok(0),
        Some(&c) if is_token(c) => c,
        Some(_) => return err("invalid character after data prefix"),
    };
    let x = c == b'x' || c == b'X';
    let x_token = x && s.get(1) == Some(&b'-');
    // After an `x` the decoder consumes the next character unchecked, dash or not (a
    // whole character: it reads them, not bytes).
    let mut i = if x {
        1 + s.get(1).map_or(0, |&b| utf8_len(b))
    } else {
        1
    };
    loop {
        match s.get(i) {
            Some(b'/') => break,
            None => return err("missing media type slash"),
            Some(&c) if is_token(c) => i += 1,
            Some(_) => return err("invalid character for media type"),
        }
    }
    const KNOWN: [&[u8]; 7] = [
        b"text",
        b"image",
        b"audio",
        b"video",
        b"application",
        b"message",
        b"multipart",
    ];
    if !x_token && !KNOWN.iter().any(|k| s[..i].starts_with(k)) {
        return err("invalid media type");
    }
    i += 1;
    loop {
        match s.get(i) {
            Some(b';' | b',') => return Ok(i),
            None => return err("incomplete media type"),
            Some(&c) if is_token(c) => i += 1,
            Some(_) => return err("invalid character for media subtype"),
        }
    }
}

/// The length of the UTF-8 character that byte `b` starts (1 for any other byte).
fn utf8_len(b: u8) -> usize {
    match b {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// One parameter, `attr=value` from offset `i` (after its `;`), or `base64` right before
/// the comma. Returns where it ends (at the `;` or `,` after it), and whether it was
/// `base64`.
pub(super) fn parameter(s: &[u8], mut i: usize) -> Result<(usize, bool), String> {
    let err = |m: &str| Err(m.to_string());
    match s.get(i) {
        None | Some(b'=' | b',') => return err("unterminated parameter sequence"),
        Some(&c) if is_token(c) => {}
        Some(_) => return err("invalid character for parameter attribute"),
    }
    let start = i;
    loop {
        match s.get(i) {
            Some(b'=') => break,
            Some(b',') if &s[start..i] == b"base64" => return Ok((i, true)),
            Some(b',') => {
                let attr = String::from_utf8_lossy(&s[start..i]);
                return Err(format!("expected base64, got {attr}"));
            }
            None => return err("unterminated parameter sequence"),
            Some(&c) if is_token(c) => i += 1,
            Some(_) => return err("invalid character for parameter attribute"),
        }
    }
    let i = value(s, i + 1)?;
    match s.get(i) {
        Some(b';' | b',') => Ok((i, false)),
        None => err("missing comma before data"),
        Some(_) => err("expected semicolon or comma"),
    }
}

/// A parameter's value from offset `i`, quoted or a token; returns where it ends.
fn value(s: &[u8], mut i: usize) -> Result<usize, String> {
    let err = |m: &str| Err(m.to_string());
    // (What is read is ASCII: a byte beyond it ends the value with an error.)
    let text = |from: usize, to: usize| std::str::from_utf8(&s[from..to]).unwrap_or_default();
    match s.get(i) {
        Some(b'"') => {
            i += 1;
            let start = i;
            loop {
                match s.get(i) {
                    None => return err("unclosed quoted string"),
                    Some(b'\\') => match s.get(i + 1) {
                        None => return err("unexpected eof"),
                        Some(c) if c.is_ascii() => i += 2,
                        Some(_) => return err("invalid escaped character"),
                    },
                    Some(b'"') => break,
                    Some(c) if c.is_ascii() => i += 1,
                    Some(_) => return err("invalid character for parameter value"),
                }
            }
            unquote(text(start, i))?;
            Ok(i + 1)
        }
        None => err("missing comma before data"),
        Some(&c) if is_token(c) => {
            let start = i;
            loop {
                match s.get(i) {
                    Some(b';' | b',') => break,
                    None => return err("missing comma before data"),
                    Some(&c) if is_token(c) => i += 1,
                    Some(_) => return err("invalid character for parameter value"),
                }
            }
            unescape(text(start, i))?;
            Ok(i)
        }
        Some(_) => err("invalid character for parameter value"),
    }
}

/// [`is_url_char`] as a table: the data check reads every inline file of a config.
const fn url_chars() -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0x21;
    while c < 0x7f {
        t[c] = !matches!(
            c as u8,
            b'<' | b'>' | b'#' | b'"' | b'{' | b'}' | b'|' | b'\\' | b'^' | b'[' | b']' | b'`'
        );
        c += 1;
    }
    t
}
static URL_CHARS: [bool; 256] = url_chars();

/// Checks the data part of a URL, base64 or percent-escaped.
pub(super) fn check_data(data: &str, base64_data: bool) -> Result<(), String> {
    let err = |m: &str| Err(m.to_string());
    if base64_data && plain_base64(data.as_bytes()) {
        return Ok(());
    }
    if base64_data {
        if !data.bytes().all(|b| is_base64_char(char::from(b))) {
            return err("invalid data character");
        }
        base64(data)
    } else {
        if !data.bytes().all(|b| URL_CHARS[usize::from(b)]) {
            return err("invalid data character");
        }
        // Only escapes can be wrong now (every character is ASCII).
        if data.contains('%') {
            unescape(data)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check;

    /// The quick test of encoder-written base64 never accepts what the decoder refuses,
    /// and accepts the usual shapes.
    #[test]
    fn url_char_table_is_the_character_test() {
        for b in 0..=255u8 {
            assert_eq!(
                super::URL_CHARS[usize::from(b)],
                super::is_url_char(char::from(b)),
                "{b}"
            );
        }
    }

    #[test]
    fn plain_base64_is_accepted_by_the_decoder() {
        let alphabet = [b'A', b'z', b'+', b'=', b'\n', b'!'];
        for len in 0..=6u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut k = n;
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        let c = alphabet[k % alphabet.len()];
                        k /= alphabet.len();
                        c
                    })
                    .collect();
                let s = String::from_utf8(s).unwrap();
                if super::plain_base64(s.as_bytes()) {
                    assert_eq!(super::base64(&s), Ok(()), "{s:?}");
                }
            }
        }
        for ok in ["", "aGk=", "aGlq", "aA==", "AAAAaGk="] {
            assert!(super::plain_base64(ok.as_bytes()), "{ok}");
        }
    }

    #[test]
    fn decodes_like_upstream() {
        for ok in [
            "data:,",
            "data:,hello%20world",
            "data:text/plain;charset=utf-8;base64,aGk=",
            "data:;base64,aGk=",
            "data:application/json,%7B%7D",
            "data:x-custom/y,a",
            "data:text/plain;a=\"q\\\"x\",b",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for (bad, msg) in [
            ("DATA:,x", "missing data prefix"),
            ("data:", "missing comma before data"),
            ("data:x", "missing media type slash"),
            ("data:x,y", "missing media type slash"),
            ("data:x,y/z,a", "invalid media type"),
            ("data:foo/bar,x", "invalid media type"),
            ("data:text/plain", "incomplete media type"),
            (
                "data:,%zz",
                "rfc2396: invalid char 0x25 in unescape sequence",
            ),
            ("data:,%4", "rfc2396: unexpected end of unescape sequence"),
            ("data:,a b", "invalid data character"),
            ("data:;base64,!!", "invalid data character"),
            ("data:;base64,aGk", "illegal base64 data at input byte 0"),
            ("data:;base64,a===", "illegal base64 data at input byte 1"),
            ("data:;base64,aGk=x", "illegal base64 data at input byte 4"),
            ("data:;charset,x", "expected base64, got charset"),
            ("data:;=x,a", "unterminated parameter sequence"),
            ("data:text/plain;a=\"x,a", "unclosed quoted string"),
            ("data:é,x", "invalid character after data prefix"),
        ] {
            assert_eq!(check(bad), Err(msg.to_string()), "{bad}");
        }
    }
}
