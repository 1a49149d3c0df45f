//! A JSON reader that keeps the byte range of every value and reports syntax errors at the
//! offsets Go's `encoding/json` reports them, because the upstream validator's diagnostics
//! (and so our conformance) are defined by those offsets. serde_json gives neither per-node
//! positions nor Go's error offsets, hence this small reader.

use crate::goquote;
use crate::tree::{Entry, Node, Value};
use std::fmt;

/// Containers nested deeper than this are refused, as Go's decoder refuses them (upstream's
/// limit, so that a deep value under an unknown key is only a warning there too); the limit
/// keeps hostile input from exhausting the stack (each level costs a few hundred bytes).
pub const MAX_DEPTH: usize = 10_000;

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
    // Few containers cannot nest deep: parse here. Otherwise parse on a thread whose stack
    // holds MAX_DEPTH levels (the main thread's may not, in an initramfs or a debug build);
    // should no such thread start, a shallower limit keeps this stack safe.
    if bytes.iter().filter(|&&b| b == b'[' || b == b'{').count() <= SHALLOW_DEPTH {
        return parse_with(bytes, SHALLOW_DEPTH);
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("json-parse".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(s, || parse_with(bytes, MAX_DEPTH))
            .ok()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(|| parse_with(bytes, SHALLOW_DEPTH))
    })
}

/// A depth any stack holds; also the limit when no deep-parsing thread can start.
const SHALLOW_DEPTH: usize = 500;

/// Stack for parsing MAX_DEPTH levels, with room to spare (only address space until used).
const DEEP_STACK: usize = 256 << 20;

fn parse_with(bytes: &[u8], max_depth: usize) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        b: bytes,
        i: 0,
        max_depth,
    };
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
    max_depth: usize,
}

/// The character starting at `b[0]` as Go's decoder names it in a syntax error (it reads
/// whole UTF-8 characters), with its length in bytes.
fn describe(b: &[u8]) -> (String, usize) {
    let c = b[0];
    if c < 0x80 {
        let text = match c {
            b'\'' => "'\\''".to_string(),
            b'"' => "'\"'".to_string(),
            _ => format!("'{}'", goquote::escape_char(c as char)),
        };
        return (text, 1);
    }
    let len = match c {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    match b.get(..len).and_then(|s| std::str::from_utf8(s).ok()) {
        Some(s) => {
            let ch = s.chars().next().expect("one character");
            (format!("'{}'", goquote::escape_char(ch)), len)
        }
        // Not UTF-8: Go names the byte.
        None => (format!("'\\x{c:02x}'"), 1),
    }
}

/// An escape sequence as upstream's message shows it: in backquotes when every character is
/// printable (Go's `unicode.IsPrint`; a tab is not) and none is a backquote or a space, else
/// double-quoted with `strconv.Quote`'s escapes (as the reference prints `"\\\x11"`).
fn go_sharp_q(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s)
            if s.chars()
                .all(|c| goquote::is_print(c) && c != '`' && c != ' ') =>
        {
            format!("`{s}`")
        }
        _ => goquote::quote_bytes(bytes),
    }
}

/// Go's `utf8.FullRune`: whether `p` starts with a whole character or with bytes that can
/// never begin one (which decode as one invalid byte); false for a character cut short.
fn full_rune(p: &[u8]) -> bool {
    let Some(&lead) = p.first() else {
        return false;
    };
    let (size, second) = match lead {
        0xC2..=0xDF => (2, 0x80..=0xBF),
        0xE0 => (3, 0xA0..=0xBF),
        0xED => (3, 0x80..=0x9F),
        0xE1..=0xEF => (3, 0x80..=0xBF),
        0xF0 => (4, 0x90..=0xBF),
        0xF4 => (4, 0x80..=0x8F),
        0xF1..=0xF3 => (4, 0x80..=0xBF),
        _ => return true,
    };
    p.len() >= size
        || p.get(1).is_some_and(|b| !second.contains(b))
        || p.get(2).is_some_and(|b| !(0x80..=0xBF).contains(b))
}

impl Parser<'_> {
    fn eof() -> SyntaxError {
        SyntaxError {
            at: None,
            message: "unexpected end of JSON input".into(),
        }
    }

    fn bad(&self, context: &str) -> SyntaxError {
        match self.b.get(self.i) {
            None => Self::eof(),
            Some(_) => {
                let (text, len) = describe(&self.b[self.i..]);
                SyntaxError {
                    // Go reports the position after the whole character.
                    at: Some((self.i + len - 1) as u32),
                    message: format!("invalid character {text} {context}"),
                }
            }
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
        if depth > self.max_depth {
            return Err(SyntaxError {
                at: Some(self.i as u32),
                message: "exceeded max depth".into(),
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
                        describe(&word[k..]).0
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
        // The input ending inside a number (`-`, `1.`, `1e+`): upstream reports the end at
        // the number's first byte (one before it, in `at`'s terms, which wraps for a number
        // at offset 0 and is unwrapped by the reader).
        // Every other fault in a number is "in numeric literal" upstream, after a decimal
        // point and in an exponent too.
        let bad = |p: &Self, context: &str| {
            if p.peek().is_none() {
                SyntaxError {
                    at: Some((start as u32).wrapping_sub(1)),
                    ..Self::eof()
                }
            } else {
                p.bad(context)
            }
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(bad(self, "in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(bad(self, "in numeric literal"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(bad(self, "in numeric literal"));
            }
        }
        // The grammar above only admits ASCII.
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        Ok(Value::Number(text.into()))
    }

    /// The input ends inside an escape or a character cut short: upstream reports this end
    /// at the start of it (byte `start`).
    fn eof_at(start: usize) -> SyntaxError {
        SyntaxError {
            at: Some(start as u32 - 1),
            ..Self::eof()
        }
    }

    /// The input ends inside a string whose text began at `from`. Where it ends in the
    /// middle of a UTF-8 character (a lead byte and only continuations that may follow it,
    /// too few of them), upstream's decoder reports the end at that character's start;
    /// elsewhere at the end, as any other.
    fn eof_in_string(&self, from: usize) -> SyntaxError {
        let len = self.b.len();
        (1..=3)
            .filter(|k| len >= from + k)
            .map(|k| len - k)
            .find(|&at| self.b[at] >= 0xC0 && !full_rune(&self.b[at..]))
            .map_or_else(Self::eof, Self::eof_at)
    }

    /// An escape upstream's decoder refuses: named whole, reported after its last byte.
    fn bad_escape(&self, start: usize, end: usize) -> SyntaxError {
        if end > self.b.len() {
            return Self::eof_at(start);
        }
        SyntaxError {
            at: Some(end as u32 - 1),
            message: format!(
                "invalid escape sequence {} in string",
                go_sharp_q(&self.b[start..end])
            ),
        }
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        // `\uXXXX`: the backslash is two bytes back.
        let start = self.i - 2;
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.bad_escape(start, start + 6)),
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
                None => return Err(self.eof_in_string(run)),
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
                Some(c) if c < 0x20 => return Err(self.bad("in string")),
                // The plain run up to the next quote, escape or control character at once:
                // inline file contents make strings of megabytes.
                Some(_) => {
                    self.i += 1;
                    self.i += self.b[self.i..]
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                        .unwrap_or(self.b.len() - self.i);
                }
            }
        }
        // Go replaces invalid UTF-8 with U+FFFD, byte by byte, rather than failing.
        Ok(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => crate::bytes::go_lossy(e.as_bytes()).into_owned(),
        })
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), SyntaxError> {
        let c = match self.peek() {
            None => return Err(Self::eof_at(self.i - 1)),
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
            // Upstream names a non-ASCII byte alone, Go-quoted.
            c if c >= 0x80 => {
                return Err(SyntaxError {
                    at: Some(self.i as u32),
                    message: format!("invalid escape sequence \"\\\\\\x{c:02x}\" in string"),
                });
            }
            _ => return Err(self.bad_escape(self.i - 1, self.i + 1)),
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

    /// Where the input ends inside a string, as the reference validator places it: at a
    /// character cut short (Go's `utf8.FullRune`), else nowhere (line 0 col 0). Each case
    /// was run through the reference (`at` is its offset less one).
    #[test]
    fn the_end_inside_a_string_is_placed_at_a_character_cut_short() {
        let at = |b: &[u8]| parse(b).unwrap_err().at;
        for (input, want) in [
            (&b"{\"a\":\"\xed"[..], Some(5)),
            (b"{\"a\":\"\xed\x9f", Some(5)),
            (b"{\"a\":\"\xc3", Some(5)),
            (b"{\"a\":\"\xf0\x90\x80", Some(5)),
            (b"{\"a\":\"\xe0\xa0", Some(5)),
            (b"{\"a\":\"x\xed", Some(6)),
            (b"{\"a\":\"\xc3\xa9\xe2\x82", Some(7)),
            (b"{\"\xed", Some(1)),
            (b"\"\xed", Some(0)),
            (b"{\"a\":[\"\xe2\x82", Some(6)),
            (b"{\"a\":\"\\n\xe2", Some(7)),
            // Whole, or never the start of a character: the end itself.
            (b"{\"a\":\"\xc3\xa9", None),
            (b"{\"a\":\"\xff", None),
            (b"{\"a\":\"\xed\xa0", None),
            (b"{\"a\":\"\xf4\x90", None),
            (b"{\"a\":\"\xe0\x80", None),
            (b"{\"a\":\"x", None),
            (b"{\"a\":\"\xed\"", None),
        ] {
            assert_eq!(at(input), want, "{}", input.escape_ascii());
        }
    }

    #[test]
    fn strings_decode_escapes_and_bad_utf8() {
        let n = parse(b"\"a\\u00e9\\ud83d\\ude00\\n\xff\"").unwrap();
        assert_eq!(n.value, Value::String("a\u{e9}\u{1F600}\n\u{FFFD}".into()));
        assert!(err("\"\x01\"").message.contains("in string"));
        assert_eq!(
            err(r#"{"a":"\q"}"#).message,
            "invalid escape sequence `\\q` in string"
        );
        assert_eq!(err(r#"{"a":"\u12x4"}"#).at, Some(11));
        // A control character, a tab or a backquote is not shown in backquotes.
        assert_eq!(
            err("{\"a\":\"\\\u{11}\"}").message,
            r#"invalid escape sequence "\\\x11" in string"#
        );
        assert_eq!(
            err("{\"a\":\"\\`\"}").message,
            r#"invalid escape sequence "\\`" in string"#
        );
        assert_eq!(
            err("{\"a\":\"\\\t\"}").message,
            r#"invalid escape sequence "\\\t" in string"#
        );
    }

    #[test]
    fn depth_is_limited() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        let e = err(&deep);
        assert_eq!(e.message, "exceeded max depth");
        assert_eq!(e.at, Some(MAX_DEPTH as u32));
        // Upstream's limit: as deep as it reads, read here too (on a test thread's stack).
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
    }
}
