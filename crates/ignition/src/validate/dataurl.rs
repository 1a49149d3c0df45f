//! Whether a `data:` URL decodes, with the verdict and message of the decoder upstream uses
//! (an RFC 2397 grammar: media type, parameters, `;base64`, then the data, percent-escaped
//! or standard base64). The first problem in reading order is the one reported.

/// Token characters of media types and parameter names (RFC 2045).
fn is_token(c: char) -> bool {
    // A match, not a search in a string of specials: this runs on every character of
    // every data URL of a config.
    c.is_ascii()
        && !c.is_ascii_control()
        && !matches!(
            c,
            ' ' | '('
                | ')'
                | '<'
                | '>'
                | '@'
                | ','
                | ';'
                | ':'
                | '\\'
                | '"'
                | '/'
                | '['
                | ']'
                | '?'
                | '='
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

/// Checks `url` (the whole URL, scheme included) as upstream's data URL decoder does.
pub fn check(url: &str) -> Result<(), String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Err("missing data prefix".into());
    };
    // The two headers Butane writes, read as the grammar below would, without going through
    // the URL character by character.
    if let Some(data) = rest.strip_prefix(";base64,") {
        return check_data(data, true);
    }
    if let Some(data) = rest.strip_prefix(',') {
        return check_data(data, false);
    }
    let s: Vec<char> = rest.chars().collect();
    let mut i = 0;
    let err = |m: &str| Err(m.to_string());
    // Media type: empty, or type "/" subtype.
    match s.first() {
        None => return err("missing comma before data"),
        Some(';' | ',') => {}
        Some(&c) if is_token(c) => {
            let start = i;
            let x = c == 'x' || c == 'X';
            let x_token = x && s.get(1) == Some(&'-');
            // After an `x` the decoder consumes the next character unchecked, dash or not.
            i += if x { 2.min(s.len()) } else { 1 };
            loop {
                match s.get(i) {
                    Some('/') => break,
                    None => return err("missing media type slash"),
                    Some(&c) if is_token(c) => i += 1,
                    Some(_) => return err("invalid character for media type"),
                }
            }
            if !x_token {
                let ty: String = s[start..i].iter().collect();
                let known = [
                    "text",
                    "image",
                    "audio",
                    "video",
                    "application",
                    "message",
                    "multipart",
                ];
                if !known.iter().any(|k| ty.starts_with(k)) {
                    return err("invalid media type");
                }
            }
            i += 1;
            loop {
                match s.get(i) {
                    Some(';' | ',') => break,
                    None => return err("incomplete media type"),
                    Some(&c) if is_token(c) => i += 1,
                    Some(_) => return err("invalid character for media subtype"),
                }
            }
        }
        Some(_) => return err("invalid character after data prefix"),
    }
    // Parameters, each `;attr=value`, or `;base64` right before the comma.
    let mut base64_data = false;
    while s.get(i) == Some(&';') {
        i += 1;
        match s.get(i) {
            None | Some('=' | ',') => return err("unterminated parameter sequence"),
            Some(&c) if is_token(c) => {}
            Some(_) => return err("invalid character for parameter attribute"),
        }
        let start = i;
        loop {
            match s.get(i) {
                Some('=') => break,
                Some(',') => {
                    let attr: String = s[start..i].iter().collect();
                    if attr != "base64" {
                        return Err(format!("expected base64, got {attr}"));
                    }
                    base64_data = true;
                    break;
                }
                None => return err("unterminated parameter sequence"),
                Some(&c) if is_token(c) => i += 1,
                Some(_) => return err("invalid character for parameter attribute"),
            }
        }
        if base64_data {
            break;
        }
        i += 1; // '='
        match s.get(i) {
            Some('"') => {
                i += 1;
                let start = i;
                loop {
                    match s.get(i) {
                        None => return err("unclosed quoted string"),
                        Some('\\') => match s.get(i + 1) {
                            None => return err("unexpected eof"),
                            Some(c) if c.is_ascii() => i += 2,
                            Some(_) => return err("invalid escaped character"),
                        },
                        Some('"') => break,
                        Some(c) if c.is_ascii() => i += 1,
                        Some(_) => return err("invalid character for parameter value"),
                    }
                }
                let value: String = s[start..i].iter().collect();
                unquote(&value)?;
                i += 1;
            }
            None => return err("missing comma before data"),
            Some(&c) if is_token(c) => {
                let start = i;
                loop {
                    match s.get(i) {
                        Some(';' | ',') => break,
                        None => return err("missing comma before data"),
                        Some(&c) if is_token(c) => i += 1,
                        Some(_) => return err("invalid character for parameter value"),
                    }
                }
                let value: String = s[start..i].iter().collect();
                unescape(&value)?;
            }
            Some(_) => return err("invalid character for parameter value"),
        }
        match s.get(i) {
            Some(';' | ',') => {}
            None => return err("missing comma before data"),
            Some(_) => return err("expected semicolon or comma"),
        }
    }
    match s.get(i) {
        Some(',') => i += 1,
        None => return err("missing comma before data"),
        Some(_) => return err("expected semicolon or comma"),
    }
    // The data as a slice of the URL (it is most of a large file's URL).
    let data = &rest[s[..i].iter().map(|c| c.len_utf8()).sum::<usize>()..];
    check_data(data, base64_data)
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
fn check_data(data: &str, base64_data: bool) -> Result<(), String> {
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
    use super::check;

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
