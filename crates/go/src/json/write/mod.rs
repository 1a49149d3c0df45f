//! JSON output byte-identical to what the upstream Go tools print: Go's HTML-safe string
//! escaping, `json.Marshal` compact form or `json.MarshalIndent(v, "", "  ")`, and a trailing
//! newline. Field order and omission of empty values come from the model's serde attributes.
//!
//! The serializer is our own rather than serde_json's with a formatter: a rendered config is
//! mostly data URLs, and serde_json looks at every byte of a string through a table before
//! the formatter sees it, which was most of the time of writing a large config. Here a string
//! is tested for anything to escape in one vectorized pass and then copied whole.
//!
//! The writer's primitives (brackets, indentation, string escaping) are here; the serde
//! [`Serializer`](ser::Serializer) on top of them is in `serializer`, and map keys in `key`.

mod key;
mod serializer;

use serde::Serialize;
use serde::ser;
use std::fmt;

/// Serializes `value` as the Go tools would, with a trailing newline.
pub fn to_vec<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(4096),
        pretty,
        depth: 0,
    };
    // Serializing our own types into memory has no failure mode: every map key is a string.
    value
        .serialize(&mut w)
        .expect("serializing the config model cannot fail");
    w.out.push(b'\n');
    w.out
}

/// A value that cannot be written as JSON (a map key that is not a string or a number).
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The output being written, and where in its nesting the writer is.
struct Writer {
    out: Vec<u8>,
    pretty: bool,
    /// Nesting of the arrays and objects open (for indenting).
    depth: usize,
}

/// Whether Go writes byte `b` of a string other than as itself: quotes, backslashes,
/// control characters, the HTML-sensitive `<`, `>` and `&`, and the first byte of U+2028
/// and U+2029 (checked further where it is found).
// Without short-circuits, so that a scan over many bytes is vectorized.
#[inline]
fn special(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\') | (b == b'<') | (b == b'>') | (b == b'&') | (b == 0xE2)
}

impl Writer {
    fn newline(&mut self) {
        self.out.push(b'\n');
        for _ in 0..self.depth {
            self.out.extend_from_slice(b"  ");
        }
    }

    /// Opens an array or object (`[` or `{`).
    fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.depth += 1;
    }

    /// Before an array item or an object key: a comma after the first, and the indent.
    fn item(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
        if self.pretty {
            self.newline();
        }
    }

    /// Closes an array or object; `any` if it held an item (an empty one stays `[]`/`{}`).
    fn close(&mut self, bracket: u8, any: bool) {
        self.depth -= 1;
        if any && self.pretty {
            self.newline();
        }
        self.out.push(bracket);
    }

    fn colon(&mut self) {
        self.out
            .extend_from_slice(if self.pretty { b": " } else { b":" });
    }

    fn string(&mut self, s: &str) {
        let bytes = s.as_bytes();
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        if !crate::bytes::any_byte(bytes, special) {
            self.out.extend_from_slice(bytes);
        } else {
            self.escaped(bytes);
        }
        self.out.push(b'"');
    }

    fn escaped(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut run = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let line_sep = b == 0xE2
                && bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9));
            if !special(b) || (b == 0xE2 && !line_sep) {
                i += 1;
                continue;
            }
            self.out.extend_from_slice(&bytes[run..i]);
            match b {
                b'"' => self.out.extend_from_slice(b"\\\""),
                b'\\' => self.out.extend_from_slice(b"\\\\"),
                b'\n' => self.out.extend_from_slice(b"\\n"),
                b'\r' => self.out.extend_from_slice(b"\\r"),
                b'\t' => self.out.extend_from_slice(b"\\t"),
                0xE2 => {
                    let last = if bytes[i + 2] == 0xA8 { b'8' } else { b'9' };
                    self.out.extend_from_slice(b"\\u202");
                    self.out.push(last);
                    i += 2;
                }
                // Control characters and `<`, `>`, `&`: Go's \u00XX, in lowercase.
                _ => {
                    self.out.extend_from_slice(b"\\u00");
                    self.out.push(HEX[usize::from(b >> 4)]);
                    self.out.push(HEX[usize::from(b & 15)]);
                }
            }
            i += 1;
            run = i;
        }
        self.out.extend_from_slice(&bytes[run..]);
    }

    fn integer(&mut self, n: impl itoa::Integer) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// Floats as serde_json writes them (none of the models has one; a JSON value may).
    fn float<F: Serialize>(&mut self, f: F) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &f).map_err(|e| Error(e.to_string()))
    }
}

#[cfg(test)]
mod tests;
