//! JSON output byte-identical to what the upstream Go tools print: Go's HTML-safe string
//! escaping, `json.Marshal` compact form or `json.MarshalIndent(v, "", "  ")`, and a trailing
//! newline. Field order and omission of empty values come from the model's serde attributes.
//!
//! The serializer is our own rather than serde_json's with a formatter: a rendered config is
//! mostly data URLs, and serde_json looks at every byte of a string through a table before
//! the formatter sees it, which was most of the time of writing a large config. Here a string
//! is tested for anything to escape in one vectorized pass and then copied whole.

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

    /// Starts an array or object (`[` or `{`); inside `{"variant": …}` for a variant.
    fn begin(&mut self, bracket: u8, variant: Option<&str>) -> Compound<'_> {
        if let Some(name) = variant {
            self.open(b'{');
            self.item(true);
            self.string(name);
            self.colon();
        }
        self.open(bracket);
        Compound {
            w: self,
            first: true,
            variant: variant.is_some(),
        }
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

/// An array or object being written.
pub struct Compound<'a> {
    w: &'a mut Writer,
    /// Nothing written inside it yet.
    first: bool,
    /// For variants written as `{"Name": …}`: the outer object to close too.
    variant: bool,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.w.item(self.first);
        self.first = false;
        value.serialize(&mut *self.w)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.w.item(self.first);
        self.first = false;
        self.w.string(key);
        self.w.colon();
        value.serialize(&mut *self.w)
    }

    fn close(self, bracket: u8) -> Result<(), Error> {
        self.w.close(bracket, !self.first);
        if self.variant {
            self.w.close(b'}', true);
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.integer(v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.float(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.element(b)?;
        }
        seq.close(b']')
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.string(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut map = self.serialize_map(Some(1))?;
        map.field(variant, value)?;
        map.close(b'}')
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.begin(b'[', None))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.begin(b'[', Some(variant)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.begin(b'{', None))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.begin(b'{', Some(variant)))
    }
}

macro_rules! array_like {
    ($($trait:ident :: $method:ident),*) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close(b']')
            }
        })*
    };
}
array_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

macro_rules! object_like {
    ($($trait:ident),*) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close(b'}')
            }
        })*
    };
}
object_like!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.w.item(self.first);
        self.first = false;
        key.serialize(KeyWriter(&mut *self.w))?;
        self.w.colon();
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b'}')
    }
}

/// Writes a map key: strings, and numbers and booleans quoted, as serde_json takes them.
struct KeyWriter<'a>(&'a mut Writer);

fn not_a_key() -> Error {
    Error("a map key must be a string".into())
}

impl KeyWriter<'_> {
    fn quoted(self, text: &str) -> Result<(), Error> {
        self.0.string(text);
        Ok(())
    }
}

macro_rules! quoted_keys {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method(self, v: $ty) -> Result<(), Error> {
            self.quoted(&v.to_string())
        })*
    };
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    quoted_keys!(
        serialize_bool: bool,
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64,
        serialize_u128: u128,
        serialize_char: char
    );
    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.quoted(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_key())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_key())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(not_a_key())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_like_go() {
        let v = json!({"s": "<a&b>\u{2028}\u{2029}\u{8}\u{c}\u{1}\t\"\\é/\u{7f}\u{2027}"});
        let out = String::from_utf8(to_vec(&v, false)).unwrap();
        assert_eq!(
            out,
            "{\"s\":\"\\u003ca\\u0026b\\u003e\\u2028\\u2029\\u0008\\u000c\\u0001\\t\\\"\\\\é/\u{7f}\u{2027}\"}\n"
        );
    }

    #[test]
    fn pretty_matches_marshal_indent() {
        let v = json!({"a": [1, {"b": true}], "c": {}, "d": [], "e": [[], {}, [[]]], "f": null});
        let out = String::from_utf8(to_vec(&v, true)).unwrap();
        assert_eq!(
            out,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": true\n    }\n  ],\n  \"c\": {},\n  \"d\": [],\n  \"e\": [\n    [],\n    {},\n    [\n      []\n    ]\n  ],\n  \"f\": null\n}\n"
        );
    }

    /// What serde_json writes through a formatter doing Go's escaping: the way this module
    /// wrote JSON before it had a serializer of its own, kept to compare against.
    mod before {
        use serde::Serialize;
        use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};
        use std::io::{self, Write};

        pub fn to_vec<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Vec<u8> {
            let mut out = Vec::new();
            if pretty {
                let fmt = Go(PrettyFormatter::with_indent(b"  "));
                value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
            } else {
                let fmt = Go(Compact);
                value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
            }
            .unwrap();
            out.push(b'\n');
            out
        }

        struct Compact;
        impl Formatter for Compact {}
        struct Go<F>(F);

        macro_rules! delegate {
            ($($name:ident),*) => {
                $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
                    self.0.$name(w)
                })*
            };
        }

        impl<F: Formatter> Formatter for Go<F> {
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
            fn begin_array_value<W: ?Sized + Write>(
                &mut self,
                w: &mut W,
                first: bool,
            ) -> io::Result<()> {
                self.0.begin_array_value(w, first)
            }
            fn begin_object_key<W: ?Sized + Write>(
                &mut self,
                w: &mut W,
                first: bool,
            ) -> io::Result<()> {
                self.0.begin_object_key(w, first)
            }
            fn write_string_fragment<W: ?Sized + Write>(
                &mut self,
                w: &mut W,
                s: &str,
            ) -> io::Result<()> {
                let s = s
                    .replace('<', "\\u003c")
                    .replace('>', "\\u003e")
                    .replace('&', "\\u0026")
                    .replace('\u{2028}', "\\u2028")
                    .replace('\u{2029}', "\\u2029");
                w.write_all(s.as_bytes())
            }
            fn write_char_escape<W: ?Sized + Write>(
                &mut self,
                w: &mut W,
                e: CharEscape,
            ) -> io::Result<()> {
                let s: &[u8] = match e {
                    CharEscape::Quote => b"\\\"",
                    CharEscape::ReverseSolidus => b"\\\\",
                    CharEscape::Solidus => b"/",
                    CharEscape::LineFeed => b"\\n",
                    CharEscape::CarriageReturn => b"\\r",
                    CharEscape::Tab => b"\\t",
                    CharEscape::Backspace => b"\\u0008",
                    CharEscape::FormFeed => b"\\u000c",
                    CharEscape::AsciiControl(c) => return write!(w, "\\u{:04x}", c),
                };
                w.write_all(s)
            }
        }
    }

    /// Random JSON values, strings drawn from the characters that matter.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn random_value(seed: &mut u64, depth: usize) -> serde_json::Value {
        let pieces = [
            "a",
            "<",
            ">",
            "&",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "é",
            "\u{2028}",
            "\u{2029}",
            "\u{2027}",
            "\u{20ac}",
            "/",
            " ",
            "data:;base64,H4sI",
        ];
        let piece = |seed: &mut u64| pieces[(next(seed) % pieces.len() as u64) as usize];
        match next(seed) % if depth > 3 { 5 } else { 7 } {
            0 => serde_json::Value::Null,
            1 => serde_json::Value::Bool(next(seed).is_multiple_of(2)),
            2 => {
                let shift = next(seed) % 64;
                json!(next(seed) as i64 >> shift)
            }
            3 => json!((next(seed) % 1000) as f64 / 7.0),
            4 => {
                let n = next(seed) % 40;
                serde_json::Value::String((0..n).map(|_| piece(seed)).collect())
            }
            5 => {
                let n = next(seed) % 4;
                serde_json::Value::Array((0..n).map(|_| random_value(seed, depth + 1)).collect())
            }
            _ => {
                let n = next(seed) % 4;
                let mut m = serde_json::Map::new();
                for i in 0..n {
                    let key = format!("{}{i}", piece(seed));
                    m.insert(key, random_value(seed, depth + 1));
                }
                serde_json::Value::Object(m)
            }
        }
    }

    #[test]
    fn writes_what_serde_json_with_go_escaping_wrote() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3000 {
            let v = random_value(&mut seed, 0);
            for pretty in [false, true] {
                assert_eq!(
                    String::from_utf8(to_vec(&v, pretty)).unwrap(),
                    String::from_utf8(before::to_vec(&v, pretty)).unwrap(),
                    "{v:?}"
                );
            }
        }
    }

    #[test]
    fn enums_and_odd_shapes_write_as_before() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(i32, String),
            Struct { a: bool, b: Vec<u8> },
            EmptyTuple(),
            EmptyStruct {},
        }
        #[derive(serde::Serialize)]
        struct Unit;
        #[derive(serde::Serialize)]
        struct Pair(u8, char);
        let mut keys = std::collections::BTreeMap::new();
        keys.insert(3u32, "three");
        keys.insert(10, "<ten>");
        let value = (
            vec![
                E::Unit,
                E::New(7),
                E::Tuple(-1, "x&y".into()),
                E::Struct { a: true, b: vec![] },
                E::Struct {
                    a: false,
                    b: vec![1, 2],
                },
                E::EmptyTuple(),
                E::EmptyStruct {},
            ],
            (
                Unit,
                Pair(0, '\u{2028}'),
                (),
                Option::<u8>::None,
                Some(1.5f32),
            ),
            (keys, serde_bytes_like(), i128::MIN, u128::MAX, f64::NAN),
        );
        for pretty in [false, true] {
            assert_eq!(
                String::from_utf8(to_vec(&value, pretty)).unwrap(),
                String::from_utf8(before::to_vec(&value, pretty)).unwrap()
            );
        }
    }

    /// Bytes serialized as bytes (an array of numbers in JSON).
    fn serde_bytes_like() -> impl serde::Serialize {
        struct B;
        impl serde::Serialize for B {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&[0, 255, 60])
            }
        }
        B
    }

    #[test]
    fn a_config_document_writes_as_before() {
        let text = r#"{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"http://a/<b>","verification":{"hash":"sha512-00"}}]}},
            "storage":{"files":[{"path":"/a","mode":420,"overwrite":true,"contents":{"source":"data:,%3Cx%3E&y","compression":""},
            "append":[{"source":"data:;base64,H4sIAAAAAAAC/w=="}]}],"directories":[{"path":"/d","user":{"id":0},"group":{"name":"g"}}],
            "links":[{"path":"/l","target":"/t","hard":false}]},
            "systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Unit]\nA=<\u2028>","dropins":[{"name":"x.conf","contents":""}]}]},
            "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA a@b"],"uid":1000}]},
            "kernelArguments":{"shouldExist":["a=b"]}}"#;
        // (The typed model's own output is checked byte for byte by the Butane and Ignition
        // corpora, above this crate; here its document as a value.)
        let cfg: serde_json::Value = serde_json::from_str(text).unwrap();
        for pretty in [false, true] {
            assert_eq!(to_vec(&cfg, pretty), before::to_vec(&cfg, pretty));
        }
    }
}
