//! JSON output byte-identical to what the upstream Go tools print: Go's HTML-safe string
//! escaping, `json.Marshal` compact form or `json.MarshalIndent(v, "", "  ")`, and a trailing
//! newline. Field order and omission of empty values come from the model's serde attributes.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};
use std::io::{self, Write};

/// Serializes `value` as the Go tools would, with a trailing newline.
pub fn to_vec<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    let result = if pretty {
        let fmt = GoFormatter {
            inner: PrettyFormatter::with_indent(b"  "),
        };
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
    } else {
        let fmt = GoFormatter { inner: Compact };
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
    };
    // Serializing our own types into memory has no failure mode: every map key is a string.
    result.expect("serializing the config model cannot fail");
    out.push(b'\n');
    out
}

struct Compact;
impl Formatter for Compact {}

/// Delegates layout to `inner` and does string escaping the Go way.
struct GoFormatter<F> {
    inner: F,
}

fn write_escaped_fragment<W: ?Sized + Write>(w: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    // Most strings (data URLs above all) have nothing to escape.
    if !crate::bytes::any_byte(bytes, |b| matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
        return w.write_all(bytes);
    }
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let esc: Option<&[u8]> = match bytes[i] {
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8.
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                Some(b"\\u2028")
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                Some(b"\\u2029")
            }
            _ => None,
        };
        if let Some(e) = esc {
            w.write_all(&bytes[run..i])?;
            w.write_all(e)?;
            i += if bytes[i] == 0xE2 { 3 } else { 1 };
            run = i;
        } else {
            i += 1;
        }
    }
    w.write_all(&bytes[run..])
}

macro_rules! delegate {
    ($($name:ident),*) => {
        $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.$name(w)
        })*
    };
}

impl<F: Formatter> Formatter for GoFormatter<F> {
    delegate!(
        begin_array,
        end_array,
        end_array_value,
        begin_object,
        end_object,
        end_object_key,
        begin_object_value,
        end_object_value
    );

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.inner.begin_array_value(w, first)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.inner.begin_object_key(w, first)
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        write_escaped_fragment(w, s)
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, e: CharEscape) -> io::Result<()> {
        let s: &[u8] = match e {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"/",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            // Go has no short forms for these two.
            CharEscape::Backspace => b"\\u0008",
            CharEscape::FormFeed => b"\\u000c",
            CharEscape::AsciiControl(c) => {
                return write!(w, "\\u{:04x}", c);
            }
        };
        w.write_all(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_like_go() {
        let v = json!({"s": "<a&b>\u{2028}\u{2029}\u{8}\u{c}\u{1}\t\"\\é/"});
        let out = String::from_utf8(to_vec(&v, false)).unwrap();
        assert_eq!(
            out,
            "{\"s\":\"\\u003ca\\u0026b\\u003e\\u2028\\u2029\\u0008\\u000c\\u0001\\t\\\"\\\\é/\"}\n"
        );
    }

    #[test]
    fn pretty_matches_marshal_indent() {
        let v = json!({"a": [1, {"b": true}], "c": {}, "d": []});
        let out = String::from_utf8(to_vec(&v, true)).unwrap();
        assert_eq!(
            out,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": true\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}\n"
        );
    }
}
