//! YAML read into the positioned [`Node`] tree, with the semantics Butane users rely on
//! (go-yaml v3's): only the first document counts, plain scalars stay untyped until they meet
//! a target type (see [`resolve`]), anchors and aliases expand, `<<` merge keys merge (and are
//! reported, since the upstream spec does not define them).
//!
//! Parsing is done by `saphyr-parser` (YAML 1.2, maintained); this module builds the tree
//! from its events and adds the limits that keep hostile input bounded.

mod block;
pub mod resolve;

use crate::tree::{Entry, Node, Value};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::collections::HashMap;

/// Aliases may not expand the document beyond this many nodes (a "billion laughs" document
/// would otherwise take the machine's memory).
pub const MAX_NODES: usize = 1_000_000;
/// Collections nested deeper than this are refused.
pub const MAX_DEPTH: usize = 500;

/// A document that is not well-formed YAML.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// 1-based line and column (in characters) of the problem.
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The line go-yaml would name: for errors inside a collection, the 0-based line of the
    /// collection's start (a go-yaml quirk that scripts may match on).
    pub upstream_line: u32,
    /// A repeated mapping key, which go-yaml reports as a decoding error, not a syntax one.
    pub duplicate_key: bool,
}

/// A successfully read document.
#[derive(Debug)]
pub struct Document {
    pub root: Node,
    /// Byte offsets of `<<` merge keys that were applied.
    pub merge_keys: Vec<u32>,
    /// Byte offsets of aliases (`*name`): the nodes there are copies of their anchors.
    pub aliases: Vec<u32>,
}

/// Reads the first YAML document of `text`.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let offsets = CharOffsets::new(text);
    let mut b = Builder {
        offsets: &offsets,
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        root: None,
        merge_keys: Vec::new(),
        aliases: Vec::new(),
        last_end: 0,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        match next {
            Ok((ev, span)) => {
                if b.event(ev, span)? {
                    break;
                }
            }
            Err(e) => {
                let m = e.marker();
                // go-yaml names the 0-based line of the enclosing collection for errors found
                // while parsing one, and the (1-based) line of the problem otherwise.
                let mut upstream_line = match b.stack.last() {
                    Some(open) if e.info().starts_with("while parsing") => {
                        offsets.line_of(open.node.start).saturating_sub(1)
                    }
                    _ => m.line() as u32,
                };
                let at = offsets.byte(m.index()) as usize;
                let (message, no_line) = go_message(e.info(), text, at);
                if no_line {
                    upstream_line = 0;
                }
                if e.info().starts_with("simple key expect") {
                    // go-yaml names the line the would-be key started on: the last line with
                    // content before this one.
                    upstream_line = text[..at.min(text.len())]
                        .lines()
                        .enumerate()
                        .take(m.line().saturating_sub(1))
                        .filter(|(_, l)| {
                            let t = l.trim();
                            !t.is_empty() && !t.starts_with('#')
                        })
                        .map(|(i, _)| i as u32 + 1)
                        .last()
                        .unwrap_or(upstream_line);
                }
                return Err(SyntaxError {
                    line: m.line() as u32,
                    col: m.col() as u32 + 1,
                    message,
                    upstream_line,
                    duplicate_key: false,
                });
            }
        }
    }
    let root = b.root.unwrap_or(Node {
        value: Value::Null,
        start: 0,
        end: 0,
    });
    Ok(Document {
        root,
        merge_keys: b.merge_keys,
        aliases: b.aliases,
    })
}

/// go-yaml's words for a problem the parser reports in its own (same situation, same
/// place); the flag says go-yaml names no line for it.
fn go_message(info: &str, text: &str, at: usize) -> (String, bool) {
    let same = match info {
        "while parsing node, found unknown anchor" => {
            // go-yaml reports it when decoding, by name and without a line.
            let name: String = text[at.min(text.len())..]
                .trim_start_matches('*')
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
                .collect();
            return (format!("unknown anchor '{name}' referenced"), true);
        }
        "a block scalar content cannot start with a tab" => {
            "found a tab character where an indentation space is expected"
        }
        "while scanning a plain scalar, found a tab" => {
            "found a tab character that violates indentation"
        }
        "simple key expect ':'" | "simple key expected" => "could not find expected ':'",
        "tabs disallowed within this context (block indentation)" => {
            "found character that cannot start any token"
        }
        _ => info
            .trim_start_matches("while scanning a block scalar, ")
            .trim_start_matches("while scanning a quoted scalar, "),
    };
    (same.to_string(), false)
}

/// Character index (what the parser reports) to byte offset (what the tree stores).
struct CharOffsets<'a> {
    text: &'a str,
    /// Byte offset of every character; empty for ASCII text, where they are the same.
    table: Vec<u32>,
}

impl<'a> CharOffsets<'a> {
    fn new(text: &'a str) -> Self {
        let table = if text.is_ascii() {
            Vec::new()
        } else {
            let mut t: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
            t.push(text.len() as u32);
            t
        };
        CharOffsets { text, table }
    }

    fn byte(&self, char_index: usize) -> u32 {
        if self.table.is_empty() {
            char_index.min(self.text.len()) as u32
        } else {
            self.table[char_index.min(self.table.len() - 1)]
        }
    }

    /// 1-based column, in characters, of byte offset `byte`.
    fn col_of(&self, byte: u32) -> u32 {
        let before = &self.text[..byte as usize];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        before[line_start..].chars().count() as u32 + 1
    }

    fn line_of(&self, byte: u32) -> u32 {
        self.text.as_bytes()[..byte as usize]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u32
            + 1
    }
}

/// A collection being built.
struct Open {
    node: Node,
    anchor: usize,
    /// For mappings: a key waiting for its value.
    key: Option<(String, u32)>,
    /// For mappings: keys that came from a `<<` merge, which explicit keys override.
    merged: Vec<String>,
}

struct Builder<'a> {
    offsets: &'a CharOffsets<'a>,
    stack: Vec<Open>,
    anchors: HashMap<usize, Node>,
    nodes: usize,
    root: Option<Node>,
    merge_keys: Vec<u32>,
    aliases: Vec<u32>,
    /// Where the previous event ended (a block scalar's indicator comes after it).
    last_end: u32,
}

/// go-yaml places a block scalar at its `|` or `>` indicator, which the parser's span
/// leaves out: the indicator is the first one between the previous event and the content
/// (outside comments).
fn block_indicator(text: &str, from: u32, content: u32) -> Option<u32> {
    let b = text.as_bytes();
    let mut i = from as usize;
    let mut prev_blank = true;
    while i < content as usize && i < b.len() {
        match b[i] {
            b'|' | b'>' => return Some(i as u32),
            b'#' if prev_blank => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            c => prev_blank = matches!(c, b' ' | b'\t' | b'\n' | b'\r'),
        }
        i += 1;
    }
    None
}

fn count(n: &Node) -> usize {
    1 + match &n.value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(entries) => entries.iter().map(|e| count(&e.value)).sum(),
        _ => 0,
    }
}

impl Builder<'_> {
    fn err(&self, span: &Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: span.start.line() as u32,
            col: span.start.col() as u32 + 1,
            message: message.into(),
            upstream_line: span.start.line() as u32,
            duplicate_key: false,
        }
    }

    fn grow(&mut self, n: usize, span: &Span) -> Result<(), SyntaxError> {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            return Err(self.err(
                span,
                format!("document too large: more than {MAX_NODES} nodes after expanding aliases"),
            ));
        }
        Ok(())
    }

    /// Handles one event; returns true once the first document is complete.
    fn event(&mut self, ev: Event<'_>, span: Span) -> Result<bool, SyntaxError> {
        let done = self.handle(ev, span);
        self.last_end = self.offsets.byte(span.end.index());
        done
    }

    fn handle(&mut self, ev: Event<'_>, span: Span) -> Result<bool, SyntaxError> {
        let start = self.offsets.byte(span.start.index());
        let end = self.offsets.byte(span.end.index());
        match ev {
            Event::DocumentEnd => return Ok(true),
            Event::StreamEnd => return Ok(true),
            Event::Scalar(text, style, anchor, tag) => {
                self.grow(1, &span)?;
                let mut start = start;
                let mut text = text;
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && let Some(at) = block_indicator(self.offsets.text, self.last_end, start)
                {
                    if anchor == 0 && tag.is_none() {
                        start = at;
                    }
                    // The value as go-yaml reads it (see `block`).
                    let parent = match self.stack.last() {
                        Some(open) => i64::from(self.offsets.col_of(open.node.start)) - 1,
                        None => -1,
                    };
                    match block::value(self.offsets.text, at as usize, parent) {
                        Ok(v) => text = v.into(),
                        Err(e) => {
                            let line = self.offsets.line_of(e.at as u32);
                            return Err(SyntaxError {
                                line,
                                col: self.offsets.col_of(e.at as u32),
                                message: e.message.to_string(),
                                upstream_line: self.offsets.line_of(at),
                                duplicate_key: false,
                            });
                        }
                    }
                }
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                let value = scalar_value(text.into_owned(), style, tag.as_deref());
                let node = Node { value, start, end };
                self.complete(node, anchor, &span)?;
            }
            Event::Alias(id) => {
                let Some(n) = self.anchors.get(&id) else {
                    return Err(self.err(&span, "unknown anchor"));
                };
                let size = count(n);
                let mut node = n.clone();
                self.grow(size, &span)?;
                // The alias stands where it is written.
                node.start = start;
                node.end = end;
                self.aliases.push(start);
                self.complete(node, 0, &span)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(self.err(&span, format!("nesting deeper than {MAX_DEPTH} levels")));
                }
                self.grow(1, &span)?;
                let value = if matches!(ev, Event::SequenceStart(..)) {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(Vec::new())
                };
                self.stack.push(Open {
                    node: Node { value, start, end },
                    anchor,
                    key: None,
                    merged: Vec::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let mut open = self.stack.pop().expect("the parser balances collections");
                open.node.end = end.max(open.node.start);
                self.complete(open.node, open.anchor, &span)?;
            }
            _ => {}
        }
        Ok(false)
    }

    /// Places a finished node into its parent (or as the document root).
    fn complete(&mut self, node: Node, anchor: usize, span: &Span) -> Result<(), SyntaxError> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        let Some(parent) = self.stack.last_mut() else {
            if self.root.is_none() {
                self.root = Some(node);
            }
            return Ok(());
        };
        match &mut parent.node.value {
            Value::Array(items) => items.push(node),
            Value::Object(entries) => match parent.key.take() {
                None => {
                    let key = match node.value {
                        Value::String(s) | Value::Plain(s) => s,
                        Value::Null => String::new(),
                        _ => return Err(self.err(span, "mapping keys must be scalars")),
                    };
                    parent.key = Some((key, node.start));
                }
                Some((key, key_start)) => {
                    if key == "<<" {
                        // Merged, and kept so that the key is reported: it is not part of
                        // the Butane spec.
                        self.merge_keys.push(key_start);
                        parent.merged.extend(merge_into(entries, &node));
                        entries.push(Entry {
                            key,
                            key_start,
                            value: node,
                        });
                    } else if let Some(i) = parent.merged.iter().position(|k| *k == key) {
                        parent.merged.swap_remove(i);
                        entries.retain(|e| e.key != key);
                        entries.push(Entry {
                            key,
                            key_start,
                            value: node,
                        });
                    } else if let Some(prev) = entries.iter().find(|e| e.key == key) {
                        let line = self.offsets.line_of(prev.key_start);
                        let here = self.offsets.line_of(key_start);
                        return Err(SyntaxError {
                            line: here,
                            col: self.offsets.col_of(key_start),
                            message: format!("mapping key {key:?} already defined at line {line}"),
                            upstream_line: here,
                            duplicate_key: true,
                        });
                    } else {
                        entries.push(Entry {
                            key,
                            key_start,
                            value: node,
                        });
                    }
                }
            },
            _ => unreachable!("only collections are open"),
        }
        Ok(())
    }
}

/// `<<: *map` (or a list of maps): keys not already present are added; returns them.
fn merge_into(entries: &mut Vec<Entry>, source: &Node) -> Vec<String> {
    let mut added = Vec::new();
    let maps: Vec<&Node> = match &source.value {
        Value::Array(items) => items.iter().collect(),
        _ => vec![source],
    };
    for m in maps {
        if let Value::Object(src) = &m.value {
            for e in src {
                if !entries.iter().any(|x| x.key == e.key) {
                    added.push(e.key.clone());
                    entries.push(e.clone());
                }
            }
        }
    }
    added
}

/// The document as plain JSON data, plain scalars typed the YAML 1.2 way (for checking a
/// document against a JSON Schema, as editors do).
pub fn to_json(node: &Node) -> serde_json::Value {
    use resolve::{Resolved, resolve};
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => n.parse::<i64>().map(J::from).unwrap_or(J::Null),
        Value::String(s) => J::String(s.clone()),
        Value::Plain(s) => match resolve(s) {
            Resolved::Null => J::Null,
            Resolved::Bool(b) => J::Bool(b),
            Resolved::Int(i) => J::from(i as i64),
            Resolved::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
            Resolved::Str => J::String(s.clone()),
        },
        Value::Array(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Object(entries) => J::Object(
            entries
                .iter()
                .map(|e| (e.key.clone(), to_json(&e.value)))
                .collect(),
        ),
    }
}

fn scalar_value(text: String, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("tag:yaml.org,2002:str" | "!!str") => return Value::String(text),
        Some("tag:yaml.org,2002:null" | "!!null") => return Value::Null,
        // go-yaml decodes binary data given to a string (line breaks in the data ignored).
        Some("tag:yaml.org,2002:binary" | "!!binary") => {
            use base64::Engine;
            let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
            if let Ok(data) = base64::engine::general_purpose::STANDARD.decode(compact) {
                return Value::String(String::from_utf8_lossy(&data).into_owned());
            }
            return Value::String(text);
        }
        Some(
            "tag:yaml.org,2002:int"
            | "!!int"
            | "tag:yaml.org,2002:bool"
            | "!!bool"
            | "tag:yaml.org,2002:float"
            | "!!float",
        ) => return Value::Plain(text),
        _ => {}
    }
    match style {
        ScalarStyle::Plain => Value::Plain(text),
        _ => Value::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(s: &str) -> Node {
        parse(s).unwrap().root
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
        let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("already defined at line 1"));
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
