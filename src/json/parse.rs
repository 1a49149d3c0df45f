//! A JSON reader that keeps the byte range of every value and reports syntax errors at the
//! offsets Go's `encoding/json` reports them, because the upstream validator's diagnostics
//! (and so our conformance) are defined by those offsets. serde_json gives neither per-node
//! positions nor Go's error offsets, hence this small reader.

use crate::tree::{Entry, Node, Value};
use std::fmt;

/// Containers nested deeper than this are refused; real configs nest less than ten deep, and
/// the limit keeps hostile input from exhausting the stack.
pub const MAX_DEPTH: usize = 500;

#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// Byte offset of the offending byte; `None` for an unexpected end of input (which the
    /// upstream tools report without a position).
    pub at: Option<u32>,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub fn parse(bytes: &[u8]) -> Result<Node, SyntaxError> {
    let mut p = Parser { b: bytes, i: 0 };
    p.skip_ws();
    let node = p.value(0, "looking for beginning of value")?;
    p.skip_ws();
    if p.i < p.b.len() {
        return Err(p.bad("after top-level value"));
    }
    Ok(node)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

fn describe(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        0x20..=0x7e => format!("'{}'", c as char),
        0x07 => "'\\a'".to_string(),
        0x08 => "'\\b'".to_string(),
        0x0b => "'\\v'".to_string(),
        0x0c => "'\\f'".to_string(),
        _ => format!("'\\x{c:02x}'"),
    }
}

/// A non-ASCII character as Go's `strconv.Quote` shows it: printable ones as they are,
/// others (controls, format characters such as the byte-order mark) escaped.
fn describe_char(r: char) -> String {
    let format_char = matches!(r,
        '\u{ad}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}'
        | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{e000}'..='\u{f8ff}' | '\u{f0000}'..);
    if r.is_control() || format_char {
        if (r as u32) < 0x10000 {
            format!("'\\u{:04x}'", r as u32)
        } else {
            format!("'\\U{:08x}'", r as u32)
        }
    } else {
        format!("'{r}'")
    }
}

impl Parser<'_> {
    fn eof() -> SyntaxError {
        SyntaxError {
            at: None,
            message: "unexpected end of JSON input".into(),
        }
    }

    /// Upstream reads the offending character whole: a UTF-8 one is quoted as a character
    /// and the error lies after its last byte (`at` is that byte).
    fn bad(&self, context: &str) -> SyntaxError {
        let Some(&c) = self.b.get(self.i) else {
            return Self::eof();
        };
        let width = match c {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => 1,
        };
        let rune = self
            .b
            .get(self.i..self.i + width)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.chars().next())
            .filter(|_| width > 1);
        let (what, width) = match rune {
            Some(r) => (describe_char(r), width),
            None => (describe(c), 1),
        };
        SyntaxError {
            at: Some((self.i + width - 1) as u32),
            message: format!("invalid character {what} {context}"),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn value(&mut self, depth: usize, context: &str) -> Result<Node, SyntaxError> {
        let start = self.i as u32;
        let value = match self.peek() {
            None => return Err(Self::eof()),
            Some(b'{') => self.object(depth + 1)?,
            Some(b'[') => self.array(depth + 1)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => self.literal(b"true", Value::Bool(true))?,
            Some(b'f') => self.literal(b"false", Value::Bool(false))?,
            Some(b'n') => self.literal(b"null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.bad(context)),
        };
        Ok(Node {
            value,
            start,
            end: self.i as u32,
        })
    }

    fn enter(&self, depth: usize) -> Result<(), SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(SyntaxError {
                at: Some(self.i as u32),
                message: format!("exceeded max depth of {MAX_DEPTH} nested values"),
            });
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.enter(depth)?;
        self.i += 1;
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(entries));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.bad("looking for beginning of object key string"));
            }
            let key_start = self.i as u32;
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.bad("after object key"));
            }
            self.i += 1;
            self.skip_ws();
            let value = self.value(depth, "looking for beginning of value")?;
            entries.push(Entry {
                key,
                key_start,
                value,
            });
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(entries));
                }
                _ => return Err(self.bad("after object key:value pair")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.enter(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth, "looking for beginning of value")?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.bad("after array element")),
            }
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, SyntaxError> {
        for (k, &expect) in word.iter().enumerate() {
            match self.peek() {
                Some(c) if c == expect => self.i += 1,
                Some(_) => {
                    let ctx = format!(
                        "in literal {} (expecting {})",
                        String::from_utf8_lossy(word),
                        describe(word[k])
                    );
                    return Err(self.bad(&ctx));
                }
                None => return Err(Self::eof()),
            }
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let s = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - s
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.bad("in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.bad("after decimal point in numeric literal"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.bad("in exponent of numeric literal"));
            }
        }
        // The grammar above only admits ASCII.
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        Ok(Value::Number(text.into()))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.bad("in \\u hexadecimal character escape")),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        let mut run = self.i;
        loop {
            match self.peek() {
                None => return Err(Self::eof()),
                Some(b'"') => {
                    out.extend_from_slice(&self.b[run..self.i]);
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    out.extend_from_slice(&self.b[run..self.i]);
                    self.i += 1;
                    self.escape(&mut out)?;
                    run = self.i;
                }
                Some(c) if c < 0x20 => return Err(self.bad("in string literal")),
                Some(_) => self.i += 1,
            }
        }
        // Go replaces invalid UTF-8 with U+FFFD rather than failing.
        Ok(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), SyntaxError> {
        let c = match self.peek() {
            None => return Err(Self::eof()),
            Some(c) => c,
        };
        let simple = match c {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            _ => return Err(self.bad("in string escape code")),
        };
        self.i += 1;
        if let Some(b) = simple {
            out.push(b);
            return Ok(());
        }
        let hi = self.hex4()?;
        let ch = if (0xD800..0xDC00).contains(&hi) {
            // A high surrogate pairs with a following \uDC00-\uDFFF escape; anything else
            // decodes to U+FFFD, as Go does.
            let save = self.i;
            if self.b.get(self.i..self.i + 2) == Some(b"\\u") {
                self.i += 2;
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                } else {
                    self.i = save;
                    None
                }
            } else {
                None
            }
        } else {
            char::from_u32(hi)
        };
        let ch = ch.unwrap_or('\u{FFFD}');
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> SyntaxError {
        parse(s.as_bytes()).unwrap_err()
    }

    #[test]
    fn parses_with_ranges() {
        let n = parse(br#" {"a": [1, "x"], "b": null} "#).unwrap();
        assert_eq!((n.start, n.end), (1, 27));
        let a = n.get("a").unwrap();
        assert_eq!(a.key_start, 2);
        assert_eq!((a.value.start, a.value.end), (7, 15));
        assert_eq!(a.value.index(1).unwrap().value, Value::String("x".into()));
    }

    #[test]
    fn go_error_offsets_and_messages() {
        let e = err(r#"{"a":1} trailing"#);
        assert_eq!(e.at, Some(8));
        assert_eq!(e.message, "invalid character 't' after top-level value");
        assert_eq!(err(r#"{"a":1"#).at, None);
        assert_eq!(err("").message, "unexpected end of JSON input");
        assert_eq!(
            err(r#"{"a" 1}"#).message,
            "invalid character '1' after object key"
        );
        assert_eq!(
            err(r#"{"a":1 "b":2}"#).message,
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(
            err("[01]").message,
            "invalid character '1' after array element"
        );
        assert_eq!(
            err("tru ").message,
            "invalid character ' ' in literal true (expecting 'e')"
        );
    }

    #[test]
    fn strings_decode_escapes_and_bad_utf8() {
        let n = parse(b"\"a\\u00e9\\ud83d\\ude00\\n\xff\"").unwrap();
        assert_eq!(n.value, Value::String("a\u{e9}\u{1F600}\n\u{FFFD}".into()));
        assert!(err("\"\x01\"").message.contains("in string literal"));
    }

    #[test]
    fn depth_is_limited() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(err(&deep).message.contains("max depth"));
    }
}
