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

    pub(super) fn to_vec<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Vec<u8> {
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
