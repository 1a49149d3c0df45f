//! The crate's YAML writer, for both YAML documents it writes: the MachineConfig OpenShift
//! gets (byte for byte as upstream's go-yaml v3 writes it) and the Butane config `migrate`
//! writes for people to maintain.
//!
//! Both are block style with an indent of 2, sequences indented under their key, empty
//! collections in flow style, multi-line strings as literal blocks and lines never folded;
//! they differ only in how a string is quoted ([`Quoting`]). The writer follows go-yaml's
//! emitter state machine closely enough to reproduce its output for the values a config
//! holds (no anchors, tags or comments).

mod chars;
mod number;
mod order;
mod style;
mod writer;

pub(crate) use number::format_float;
pub(crate) use order::key_order;

/// A YAML value: what Go's `interface{}` holds of decoded JSON, and tokens written as given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Y {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A scalar that is no string, written plain as it is (a number in the writer's
    /// user's notation, such as an octal mode).
    Token(String),
    Seq(Vec<Y>),
    Map(Vec<(String, Y)>),
}

impl Y {
    /// Decoded JSON as Go holds it (numbers become float64), every map's keys sorted the
    /// way go-yaml writes them.
    pub(crate) fn from_json(v: &serde_json::Value) -> Y {
        match v {
            serde_json::Value::Null => Y::Null,
            serde_json::Value::Bool(b) => Y::Bool(*b),
            serde_json::Value::Number(n) => Y::Num(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Y::Str(s.clone()),
            serde_json::Value::Array(a) => Y::Seq(a.iter().map(Y::from_json).collect()),
            serde_json::Value::Object(o) => {
                let mut entries: Vec<(String, Y)> = o
                    .iter()
                    .map(|(k, v)| (k.clone(), Y::from_json(v)))
                    .collect();
                entries.sort_by(|a, b| key_order(&a.0, &b.0));
                Y::Map(entries)
            }
        }
    }
}

/// How strings are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// As go-yaml writes them: plain where that reads back as the same string, else
    /// double-quoted (single-quoted where plain is not allowed), multi-line ones as literal
    /// blocks where YAML allows it. Line breaks are YAML 1.1's (also NEL, LS and PS).
    GoYaml,
    /// For people: plain only for simple words and paths, literal blocks for text whose
    /// lines read back unchanged, anything else double-quoted with JSON's escapes (which
    /// are YAML's too). Only `\n` breaks a line.
    Readable,
}

/// The YAML document for `y`, ending with a line break.
pub(crate) fn to_yaml(y: &Y, quoting: Quoting) -> Vec<u8> {
    writer::document(y, quoting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(v: serde_json::Value) -> String {
        String::from_utf8(to_yaml(&Y::from_json(&v), Quoting::GoYaml)).unwrap()
    }

    #[test]
    fn writes_like_go_yaml() {
        let v = serde_json::json!({
            "b": [{"x": "", "y": "yes", "z": "a: b"}, "multi\nline\n"],
            "a": {"n": 1, "t": true, "e": [], "m": {}},
        });
        assert_eq!(
            yaml(v),
            "a:\n  e: []\n  m: {}\n  \"n\": 1\n  t: true\nb:\n  - x: \"\"\n    \"y\": \"yes\"\n    z: 'a: b'\n  - |\n    multi\n    line\n"
        );
    }

    #[test]
    fn writes_readable_butane() {
        let y = Y::Map(vec![
            ("path".into(), Y::Str("/etc/hosts".into())),
            ("mode".into(), Y::Token("0644".into())),
            ("yes".into(), Y::Str("yes".into())),
            ("text".into(), Y::Str("a\n\nb\n".into())),
            ("tab".into(), Y::Str("a\tb\n".into())),
            (
                "list".into(),
                Y::Seq(vec![Y::Token(String::new()), Y::Str("x".into())]),
            ),
            ("empty".into(), Y::Map(Vec::new())),
        ]);
        assert_eq!(
            String::from_utf8(to_yaml(&y, Quoting::Readable)).unwrap(),
            "path: /etc/hosts\nmode: 0644\n\"yes\": \"yes\"\ntext: |\n  a\n\n  b\ntab: \"a\\tb\\n\"\nlist:\n  - \n  - x\nempty: {}\n"
        );
    }
}
