//! YAML read into the positioned [`Node`] tree, with the semantics Butane users rely on
//! (go-yaml v3's): only the first document counts, plain scalars stay untyped until they meet
//! a target type (see [`resolve`]), anchors and aliases expand, `<<` merge keys merge (and are
//! reported, since the upstream spec does not define them). Tags act as go-yaml's do: `!!str`
//! makes text, `!!binary` decodes, a core-schema tag its text does not fit stops the decoding
//! where it is met, and any tag names its node in type errors ([`TagNote`]).
//!
//! The text is read as go-yaml reads it ([`scanner`] and [`parser`] follow its behaviour:
//! what it accepts, scalar values, errors and the lines it names); `build` makes the tree
//! of the events and adds the limits that keep hostile input bounded.

mod build;
mod data;
mod parser;
pub mod resolve;
mod scanner;
mod tags;

pub use data::{is_null, to_json};
pub use tags::binary_data;

use crate::tree::{JsonPath, Node};
use build::Builder;
use parser::Parser;
use scanner::Mark;
use std::collections::HashMap;

/// Aliases may not expand the document beyond this many nodes (a "billion laughs" document
/// would otherwise take the machine's memory).
pub const MAX_NODES: usize = 1_000_000;
/// Collections nested deeper than this are refused.
pub const MAX_DEPTH: usize = 10_000;

/// A document that is not well-formed YAML.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// 1-based line and column (in characters) of the problem.
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The line go-yaml names (0: none): the line where the enclosing production began if
    /// that is not the first, else the problem's; counted from 0 for parser errors and from
    /// 1 for scanner errors (a go-yaml quirk that scripts may match on).
    pub upstream_line: u32,
}

/// A mapping key go-yaml refuses only when it decodes the mapping (a repeated key, or one
/// that is not a scalar), which it does not do for mappings under keys the target type
/// lacks: the reader decides.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyError {
    /// The mapping holding the key.
    pub path: JsonPath,
    /// Byte offset of the key, and its 1-based line.
    pub offset: u32,
    pub line: u32,
    /// go-yaml's words: `mapping key "a" already defined at line 3`, `cannot unmarshal
    /// !!seq into string`.
    pub message: String,
}

/// What a tag written on a scalar means beyond its value (see [`resolve::check_explicit`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TagNote {
    /// go-yaml stops decoding the whole document at this scalar, with these words, if it
    /// decodes it at all (not below keys the target type lacks).
    Refused(String),
    /// Type errors name the node by this tag (short) and text, as go-yaml prints them: the
    /// tag as written, the text as written (before `!!binary` decoding; empty for a
    /// collection, which a block mapping's first key would otherwise share the place of).
    Named {
        tag: String,
        text: String,
        collection: bool,
    },
}

/// A successfully read document.
#[derive(Debug)]
pub struct Document {
    pub root: Node,
    /// Byte offsets of `<<` merge keys that were applied.
    pub merge_keys: Vec<u32>,
    /// Where aliases (`*name`) start and end: the nodes there are copies of their anchors.
    /// (A block mapping whose first key is an alias starts where it does.)
    pub aliases: Vec<(u32, u32)>,
    /// The byte offset of each alias's anchored node, by the alias's: go-yaml names the
    /// anchor's line in errors about the value.
    pub anchor_of: HashMap<u32, u32>,
    /// Keys refused when their mapping is decoded, in go-yaml's order (a mapping's repeated
    /// keys, then what is inside it). Only the first of repeated keys is in the tree; a
    /// key that is not a scalar is left out with its value.
    pub key_errors: Vec<KeyError>,
    /// Scalars (and keys) with a tag that matters, by the byte offset where they start.
    pub tags: HashMap<u32, TagNote>,
    /// Where the mappings start whose `<<` value go-yaml refuses to merge (a scalar, an
    /// alias of a sequence, a sequence with an item that is not a mapping): it stops
    /// decoding there once their other keys are decoded.
    pub bad_merges: Vec<u32>,
    /// Whether any null was read (aliases and merges only copy what was): without one,
    /// the walks over the tree looking for nulls have nothing to find.
    pub has_nulls: bool,
}

/// Reads the first YAML document of `text`.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    parse_watching(text, "", &mut |_| {})
}

/// [`parse`], handing `watch` each string value of a mapping key named `key` as soon as it is
/// read (before the document is complete; values merged in with `<<` are not handed over).
pub fn parse_watching(
    text: &str,
    key: &str,
    watch: &mut dyn FnMut(&str),
) -> Result<Document, SyntaxError> {
    let mut b = Builder::new(text, key, watch);
    let mut parser = Parser::new(text);
    loop {
        match parser.next() {
            Ok(Some(ev)) => {
                if b.event(ev)? {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                let mut at = e.problem_mark;
                if e.reader {
                    // Placed at the character go-yaml's reader refused.
                    at = mark_of(text, text.find(scanner::control).unwrap_or(0));
                }
                return Err(SyntaxError {
                    line: at.line as u32 + 1,
                    col: at.column as u32 + 1,
                    message: e.problem.clone(),
                    upstream_line: e.line() as u32,
                });
            }
        }
    }
    Ok(b.finish())
}

/// go-yaml's words for the malformed UTF-8 sequence starting at byte `at` of `bytes` (its
/// reader's checks, in its order: the leading byte, a sequence cut short, a trailing byte, an
/// overlong form, a code point outside Unicode).
pub fn utf8_problem(bytes: &[u8], at: usize) -> &'static str {
    let rest = &bytes[at.min(bytes.len())..];
    let Some(&lead) = rest.first() else {
        return "incomplete UTF-8 octet sequence";
    };
    let (width, mut value) = match lead {
        b if b & 0x80 == 0 => (1, u32::from(b)),
        b if b & 0xE0 == 0xC0 => (2, u32::from(b & 0x1F)),
        b if b & 0xF0 == 0xE0 => (3, u32::from(b & 0x0F)),
        b if b & 0xF8 == 0xF0 => (4, u32::from(b & 0x07)),
        _ => return "invalid leading UTF-8 octet",
    };
    if rest.len() < width {
        return "incomplete UTF-8 octet sequence";
    }
    for &b in &rest[1..width] {
        if b & 0xC0 != 0x80 {
            return "invalid trailing UTF-8 octet";
        }
        value = (value << 6) | u32::from(b & 0x3F);
    }
    let shortest = match width {
        1 => true,
        2 => value >= 0x80,
        3 => value >= 0x800,
        _ => value >= 0x10000,
    };
    if !shortest {
        return "invalid length of a UTF-8 sequence";
    }
    if (0xD800..=0xDFFF).contains(&value) || value > 0x10FFFF {
        return "invalid Unicode character";
    }
    "invalid leading UTF-8 octet"
}

/// The mark of byte offset `pos` (lines counted at `\n`).
fn mark_of(text: &str, pos: usize) -> Mark {
    let before = &text[..pos];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Mark {
        pos,
        index: before.chars().count(),
        line: before.matches('\n').count(),
        column: before[line_start..].chars().count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Value;

    fn root(s: &str) -> Node {
        parse(s).unwrap().root
    }

    #[test]
    fn notes_whether_any_null_was_read() {
        let nulls = |s: &str| parse(s).unwrap().has_nulls;
        for with in [
            "a:\n",
            "a: ~\n",
            "a: NULL\n",
            "a: [x, null]\n",
            "a: !!null ''\n",
            "",
            "- a: &x\n- b: *x\n",
            "a: {b: }\n",
            "a: &a [*a]\n",
            "? x\n",
        ] {
            assert!(nulls(with), "{with:?}");
        }
        for without in [
            "a: 1\n",
            "a: 'null'\n",
            "a: [x, \"~\"]\n",
            "a: |\n  null\n",
            "a: {}\n",
        ] {
            assert!(!nulls(without), "{without:?}");
        }
    }

    #[test]
    fn builds_positioned_tree() {
        let n = root("a:\n  - x: 1\n    y: \"s\"\nb: text\n");
        let a = n.get("a").unwrap();
        assert_eq!(a.key_start, 0);
        assert_eq!(
            a.value.start, 5,
            "a block sequence starts at its first dash"
        );
        let item = a.value.index(0).unwrap();
        assert_eq!(item.start, 7, "a block mapping starts at its first key");
        assert_eq!(item.get("x").unwrap().value.value, Value::Plain("1".into()));
        assert_eq!(
            item.get("y").unwrap().value.value,
            Value::String("s".into())
        );
    }

    #[test]
    fn only_the_first_document_counts() {
        let n = root("a: 1\n---\nb: 2\n");
        assert!(n.get("a").is_some());
        assert!(n.get("b").is_none());
    }

    #[test]
    fn aliases_and_merge_keys() {
        let d = parse("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n").unwrap();
        let u = &d.root.get("use").unwrap().value;
        assert_eq!(u.get("x").unwrap().value.value, Value::Plain("1".into()));
        assert_eq!(u.get("y").unwrap().value.value, Value::Plain("3".into()));
        assert_eq!(d.merge_keys.len(), 1);
    }

    #[test]
    fn bombs_and_duplicates_are_refused() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(parse(&bomb).unwrap_err().message.contains("too large"));
    }

    #[test]
    fn refused_keys_are_left_to_the_reader() {
        // Repeated keys first (for each mapping), then keys that are not scalars.
        let d = parse("a: 1\nb: {x: 1, x: 2}\n? [k]\n: v\na: 3\n").unwrap();
        let found: Vec<(String, u32, &str)> = d
            .key_errors
            .iter()
            .map(|e| (e.path.to_string(), e.line, e.message.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("$".into(), 5, "mapping key \"a\" already defined at line 1"),
                (
                    "$.b".into(),
                    2,
                    "mapping key \"x\" already defined at line 2"
                ),
                ("$".into(), 3, "cannot unmarshal !!seq into string"),
            ]
        );
        // The first of repeated keys stays; a refused key is left out with its value.
        assert_eq!(
            d.root.get("a").unwrap().value.value,
            Value::Plain("1".into())
        );
        assert!(matches!(&d.root.value, Value::Object(e) if e.len() == 2));
    }

    fn value(text: &str) -> Value {
        root(text).get("a").unwrap().value.value.clone()
    }

    fn error(text: &str) -> (u32, String) {
        let e = parse(text).unwrap_err();
        (e.upstream_line, e.message)
    }

    #[test]
    fn block_scalars_read_like_go_yaml() {
        let s = |t: &str| Value::String(t.into());
        // No line break at the end of input: none in the value.
        assert_eq!(value("a: |\n  line"), s("line"));
        assert_eq!(value("a: |+\n  line"), s("line"));
        assert_eq!(value("a: |\n  line\n"), s("line\n"));
        // Trailing blanks at the end count as (kept) breaks only with keep.
        assert_eq!(value("a: >\n\n  folded\n  "), s("\nfolded\n"));
        assert_eq!(value("a: |+\n  x\n\n  "), s("x\n\n"));
        assert_eq!(value("a: |-\n  x\n\n"), s("x"));
        // Folding joins lines, keeps more-indented ones and blank-separated ones apart.
        assert_eq!(
            value("a: >\n  a\n  b\n\n  c\n   d\n  e\n"),
            s("a b\nc\n d\ne\n")
        );
        // An explicit indentation keeps the extra spaces; it counts from the collection's.
        assert_eq!(value("a: |2\n    text"), s("  text"));
        assert_eq!(root("- |1\n  x\n").index(0).unwrap().value, s(" x\n"));
        // CR LF becomes LF; a comment may follow the header.
        assert_eq!(value("a: |\r\n  x\r\n  y\r\n"), s("x\ny\n"));
        assert_eq!(value("a: |- # c\n  x\n"), s("x"));
        // Refusals, with go-yaml's line: the indicator's if not the first, else the
        // problem's, counted from 1 (none when both are on the first line).
        let tab = "found a tab character where an indentation space is expected";
        assert_eq!(error("a: |\n\tx\n"), (2, tab.into()));
        assert_eq!(
            error("a: |x\n"),
            (0, "did not find expected comment or line break".into())
        );
        assert_eq!(
            error("a: |0\n"),
            (0, "found an indentation indicator equal to 0".into())
        );
    }

    #[test]
    fn scalars_and_errors_as_go_yaml_has_them() {
        let s = |t: &str| Value::String(t.into());
        // Quoted scalars: escapes, folding, no indentation rule for continuation lines.
        assert_eq!(value("a: \"\\t\\x41\\u00e9\""), s("\tA\u{e9}"));
        assert_eq!(value("a: \"x\n\n   y\"\n"), s("x\ny"));
        assert_eq!(value("a: 'it''s'"), s("it's"));
        assert_eq!(value("a: !!binary aGVsbG8="), s("hello"));
        assert_eq!(value("a: !!str 12"), s("12"));
        // A run of comment lines may hold tabs where indentation would be.
        assert_eq!(value("a: 1\n# c\n\t# d\n"), Value::Plain("1".into()));
        // Errors name the line where the enclosing collection began if not the first, else
        // the problem's: counted from 0 for parser errors, from 1 for scanner errors, none
        // for the first line.
        assert_eq!(
            error("a:\n  b: 1\n c: 2\n"),
            (2, "did not find expected key".into())
        );
        assert_eq!(
            error("a: [1, 2\nb: 3\n"),
            (1, "did not find expected ',' or ']'".into())
        );
        assert_eq!(
            error("a: b: c\n"),
            (0, "mapping values are not allowed in this context".into())
        );
        assert_eq!(
            error("a: *x\n"),
            (0, "unknown anchor 'x' referenced".into())
        );
        assert_eq!(
            error("%YAML 1.2\n---\na: 1\n"),
            (0, "found incompatible YAML document".into())
        );
        assert_eq!(
            error("a: !e!x 1\n"),
            (0, "found undefined tag handle".into())
        );
        assert_eq!(
            error("a: \u{1}\n"),
            (0, "control characters are not allowed".into())
        );
        // Nothing after the first document is read beyond the token that ends it.
        assert!(parse("a: 1\n---\n[broken\n").is_ok());
    }

    #[test]
    fn utf8_problems_in_go_yaml_words() {
        let at = |b: &[u8]| utf8_problem(b, 0);
        assert_eq!(at(b"\xff"), "invalid leading UTF-8 octet");
        assert_eq!(at(b"\xc3"), "incomplete UTF-8 octet sequence");
        assert_eq!(at(b"\xc3\x28"), "invalid trailing UTF-8 octet");
        assert_eq!(at(b"\xc0\x80"), "invalid length of a UTF-8 sequence");
        assert_eq!(at(b"\xed\xa0\x80"), "invalid Unicode character");
        assert_eq!(at(b"\xf4\x90\x80\x80"), "invalid Unicode character");
    }

    #[test]
    fn byte_order_marks_as_go_yaml_sees_them() {
        // Dropped at the start; elsewhere part of the text.
        assert!(root("\u{feff}a: 1\n").get("a").is_some());
        assert!(root("a: 1\n\u{feff}b: 2\n").get("\u{feff}b").is_some());
        // go-yaml looks for one at the start of its buffer: after two, it skips the first
        // character of each line.
        let n = root("\u{feff}\u{feff}a: 1\nxb: 2\n");
        assert!(n.get("a").is_some() && n.get("b").is_some());
    }

    #[test]
    fn syntax_errors_name_line_and_upstream_line() {
        let e =
            parse("storage:\n  files:\n    - path: /etc/x\n     contents:\n        inline: x\n")
                .unwrap_err();
        assert_eq!((e.line, e.col), (4, 6));
        assert_eq!(
            e.upstream_line, 2,
            "go-yaml names the 0-based line of the sequence"
        );
    }

    #[test]
    fn non_ascii_offsets_are_bytes() {
        let n = root("é: ü\nb: x\n");
        let b = n.get("b").unwrap();
        assert_eq!(b.key_start, 7);
    }
}
