//! YAML read into the positioned [`Node`] tree, with the semantics Butane users rely on
//! (go-yaml v3's): only the first document counts, plain scalars stay untyped until they meet
//! a target type (see [`resolve`]), anchors and aliases expand, `<<` merge keys merge (and are
//! reported, since the upstream spec does not define them). Tags act as go-yaml's do: `!!str`
//! makes text, `!!binary` decodes, a core-schema tag its text does not fit stops the decoding
//! where it is met, and any tag names its node in type errors ([`TagNote`]).
//!
//! The text is read as go-yaml reads it ([`scanner`] and [`parser`] follow its behaviour:
//! what it accepts, scalar values, errors and the lines it names); this module builds the
//! tree from the events and adds the limits that keep hostile input bounded.

mod parser;
pub mod resolve;
mod scanner;

use crate::tree::{Entry, JsonPath, Node, Value};
use parser::{Event, EventKind, Parser};
use scanner::{Mark, Style};
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
    let mut b = Builder {
        watch: (key, watch),
        text,
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        root: None,
        merge_keys: Vec::new(),
        aliases: Vec::new(),
        anchor_of: HashMap::new(),
        key_errors: Vec::new(),
        tags: HashMap::new(),
        bad_merges: Vec::new(),
        has_nulls: false,
        loops: Vec::new(),
    };
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
    // go-yaml checks a mapping's keys before decoding what is inside it.
    b.key_errors.sort_by_key(|(order, _)| *order);
    let root = b.root.unwrap_or(Node {
        value: Value::Null,
        start: 0,
        end: 0,
    });
    let has_nulls = b.has_nulls || is_null(&root);
    Ok(Document {
        root,
        merge_keys: b.merge_keys,
        aliases: b.aliases,
        anchor_of: b.anchor_of,
        key_errors: b.key_errors.into_iter().map(|(_, e)| e).collect(),
        tags: b.tags,
        bad_merges: b.bad_merges,
        has_nulls,
    })
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

/// A collection being built.
struct Open {
    node: Node,
    anchor: Option<String>,
    /// For mappings: a key waiting for its value (`None` as its name: a key that is not a
    /// scalar, whose value is dropped).
    key: Option<(Option<String>, Mark)>,
    /// Where it starts.
    mark: Mark,
    /// For mappings: the number of its key errors that are repeated keys.
    repeats: usize,
    /// For mappings: keys that came from a `<<` merge, which explicit keys override.
    merged: Vec<String>,
    /// For mappings: the key waiting for its value is a merge key (a plain `<<`, or one
    /// tagged `!!merge`; a quoted one is an ordinary key).
    key_merge: bool,
}

struct Builder<'a> {
    /// A key whose string values are handed to the function as they are read.
    watch: (&'a str, &'a mut dyn FnMut(&str)),
    text: &'a str,
    stack: Vec<Open>,
    anchors: HashMap<String, Node>,
    nodes: usize,
    root: Option<Node>,
    merge_keys: Vec<u32>,
    aliases: Vec<(u32, u32)>,
    anchor_of: HashMap<u32, u32>,
    /// With the place of each in go-yaml's order: a mapping's repeated keys come first
    /// (placed at its start), then the errors inside it in document order.
    key_errors: Vec<((usize, usize, usize), KeyError)>,
    tags: HashMap<u32, TagNote>,
    bad_merges: Vec<u32>,
    has_nulls: bool,
    /// Aliases of a collection still being read (its anchor, the alias's start and end):
    /// null until that collection is complete.
    loops: Vec<(String, u32, u32)>,
}

/// The 1-based line of byte offset `pos`, as go-yaml counts lines.
fn line_of(text: &str, pos: u32) -> u32 {
    crate::tree::Source::new(&text.as_bytes()[..pos as usize])
        .locate_chars(pos)
        .line
}

/// Replaces the null nodes of `node` placed at one of `spots` with copies of `original`
/// placed there; returns how many.
fn fill_loops(node: &mut Node, spots: &[(u32, u32)], original: &Node) -> usize {
    let children: Box<dyn Iterator<Item = &mut Node>> = match &mut node.value {
        Value::Array(items) => Box::new(items.iter_mut()),
        Value::Object(entries) => Box::new(entries.iter_mut().map(|e| &mut e.value)),
        _ => return 0,
    };
    let mut copies = 0;
    for child in children {
        if matches!(child.value, Value::Null) && spots.contains(&(child.start, child.end)) {
            let (start, end) = (child.start, child.end);
            *child = original.clone();
            child.start = start;
            child.end = end;
            copies += 1;
        } else {
            copies += fill_loops(child, spots, original);
        }
    }
    copies
}

fn count(n: &Node) -> usize {
    1 + match &n.value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(entries) => entries.iter().map(|e| count(&e.value)).sum(),
        _ => 0,
    }
}

fn err(at: Mark, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        line: at.line as u32 + 1,
        col: at.column as u32 + 1,
        message: message.into(),
        upstream_line: at.line as u32 + 1,
    }
}

impl Builder<'_> {
    fn grow(&mut self, n: usize, at: Mark) -> Result<(), SyntaxError> {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            return Err(err(
                at,
                format!("document too large: more than {MAX_NODES} nodes after expanding aliases"),
            ));
        }
        Ok(())
    }

    /// Handles one event; returns true once the first document is complete.
    fn event(&mut self, ev: Event) -> Result<bool, SyntaxError> {
        let start = ev.start.pos as u32;
        let end = ev.end.pos as u32;
        let sequence = matches!(ev.kind, EventKind::SequenceStart { .. });
        match ev.kind {
            EventKind::DocumentEnd | EventKind::StreamEnd => return Ok(true),
            EventKind::StreamStart | EventKind::DocumentStart => {}
            EventKind::Scalar {
                value,
                style,
                anchor,
                tag,
            } => {
                self.grow(1, ev.start)?;
                let (value, note) = scalar_value(value, style, tag.as_deref());
                if let Some(note) = note {
                    self.tags.insert(start, note);
                }
                let node = Node { value, start, end };
                self.has_nulls |= is_null(&node);
                self.complete(node, anchor, ev.start);
            }
            EventKind::Alias(name) => {
                let Some(n) = self.anchors.get(&name) else {
                    if self
                        .stack
                        .iter()
                        .any(|o| o.anchor.as_deref() == Some(&name))
                    {
                        // go-yaml knows the anchor (its node is being read) and refuses the
                        // loop only if it decodes it: the alias stands for that collection
                        // once it is complete (see `close_loops`).
                        self.aliases.push((start, end));
                        self.loops.push((name, start, end));
                        self.has_nulls = true;
                        let node = Node {
                            value: Value::Null,
                            start,
                            end,
                        };
                        self.complete(node, None, ev.start);
                        return Ok(false);
                    }
                    // Reported by name, without a line.
                    let mut e = err(ev.start, format!("unknown anchor '{name}' referenced"));
                    e.upstream_line = 0;
                    return Err(e);
                };
                let size = count(n);
                let mut node = n.clone();
                self.grow(size, ev.start)?;
                self.alias_of(start, node.start);
                // The alias stands where it is written.
                node.start = start;
                node.end = end;
                self.aliases.push((start, end));
                self.complete(node, None, ev.start);
            }
            EventKind::SequenceStart { anchor, tag, .. }
            | EventKind::MappingStart { anchor, tag, .. } => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(err(
                        ev.start,
                        format!("nesting deeper than {MAX_DEPTH} levels"),
                    ));
                }
                self.grow(1, ev.start)?;
                let value = if sequence {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(Vec::new())
                };
                // go-yaml names a tagged collection by its tag in type errors, with the
                // empty text of a collection.
                if let Some(tag) = tag.filter(|t| t != "!").map(|t| resolve::short_tag(&t)) {
                    let note = TagNote::Named {
                        tag,
                        text: String::new(),
                        collection: true,
                    };
                    self.tags.insert(start, note);
                }
                if let Some(a) = &anchor {
                    // A new node under this name: aliases from here on mean it.
                    self.anchors.remove(a);
                }
                self.stack.push(Open {
                    node: Node { value, start, end },
                    anchor,
                    key: None,
                    merged: Vec::new(),
                    key_merge: false,
                    repeats: 0,
                    mark: ev.start,
                });
            }
            EventKind::SequenceEnd | EventKind::MappingEnd => {
                let mut open = self.stack.pop().expect("the parser balances collections");
                open.node.end = end.max(open.node.start);
                if let Some(a) = &open.anchor {
                    self.close_loops(&mut open.node, a, ev.start)?;
                }
                self.complete(open.node, open.anchor, open.mark);
            }
        }
        Ok(false)
    }

    /// Notes that the alias at `start` stands for the node anchored at `anchored`: go-yaml
    /// decodes and names it as that node (its tag), and names that node's line.
    fn alias_of(&mut self, start: u32, anchored: u32) {
        if let Some(note) = self.tags.get(&anchored).cloned() {
            self.tags.insert(start, note);
        }
        self.anchor_of.insert(start, anchored);
    }

    /// Fills the aliases of `node` written inside it (`&a [*a]`) with a copy of it as read
    /// so far, in which those aliases stay null. go-yaml decodes such an alias as the
    /// collection it names, so a type error shows at the first level; no Butane type nests
    /// itself, so a decoding that would go deeper meets a key it ignores first.
    fn close_loops(&mut self, node: &mut Node, anchor: &str, at: Mark) -> Result<(), SyntaxError> {
        let mut spots = Vec::new();
        self.loops.retain(|(name, start, end)| {
            let mine = name == anchor;
            if mine {
                spots.push((*start, *end));
            }
            !mine
        });
        if spots.is_empty() {
            return Ok(());
        }
        let original = node.clone();
        for &(start, _) in &spots {
            self.alias_of(start, original.start);
        }
        let copies = fill_loops(node, &spots, &original);
        self.grow(copies * count(&original), at)
    }

    /// The path of the innermost open collection.
    fn path(&self) -> JsonPath {
        let mut path = JsonPath::root();
        for pair in self.stack.windows(2) {
            path = match &pair[0].node.value {
                Value::Array(items) => path.index(items.len()),
                _ => match &pair[0].key {
                    Some((Some(k), _)) => path.key(k.clone()),
                    _ => path.key(""),
                },
            };
        }
        path
    }

    /// Drops the key errors inside `start..end`.
    fn forget(&mut self, start: u32, end: u32) {
        self.key_errors
            .retain(|(_, e)| e.offset < start || e.offset >= end.max(start + 1));
    }

    fn key_error(&mut self, at: Mark, message: String, repeat: bool) {
        let path = self.path();
        let parent = self.stack.last_mut().expect("a mapping is open");
        let order = if repeat {
            parent.repeats += 1;
            (parent.node.start as usize, 0, parent.repeats)
        } else {
            (at.pos, 1, 0)
        };
        self.key_errors.push((
            order,
            KeyError {
                path,
                offset: at.pos as u32,
                line: at.line as u32 + 1,
                message,
            },
        ));
    }

    /// Places a finished node into its parent (or as the document root).
    fn complete(&mut self, node: Node, anchor: Option<String>, mark: Mark) {
        if let Some(a) = anchor {
            self.anchors.insert(a, node.clone());
        }
        let text = self.text;
        let Some(parent) = self.stack.last_mut() else {
            if self.root.is_none() {
                self.root = Some(node);
            }
            return;
        };
        match &mut parent.node.value {
            Value::Array(items) => items.push(node),
            Value::Object(entries) => match parent.key.take() {
                None => {
                    parent.key_merge = match &node.value {
                        Value::Plain(k) => k == "<<",
                        _ => matches!(self.tags.get(&node.start),
                            Some(TagNote::Named { tag, text, .. }) if tag == "!!merge" && text == "<<"),
                    };
                    let kind = match node.value {
                        Value::String(s) | Value::Plain(s) => Ok(s),
                        Value::Array(_) => Err("!!seq"),
                        Value::Object(_) => Err("!!map"),
                        _ => Ok(String::new()),
                    };
                    match kind {
                        Ok(key) => parent.key = Some((Some(key), mark)),
                        Err(kind) => {
                            parent.key = Some((None, mark));
                            // What is inside the key is never decoded.
                            self.forget(node.start, node.end);
                            let message = format!("cannot unmarshal {kind} into string");
                            self.key_error(mark, message, false);
                            // go-yaml names the line of an alias's anchor.
                            if let Some(&anchor) = self.anchor_of.get(&node.start)
                                && let Some((_, e)) = self.key_errors.last_mut()
                            {
                                e.line = line_of(text, anchor);
                            }
                        }
                    }
                }
                // The value of a key that could not be decoded is not decoded either.
                Some((None, _)) => self.forget(node.start, node.end),
                Some((Some(key), key_mark)) => {
                    if key == self.watch.0
                        && let Value::String(v) | Value::Plain(v) = &node.value
                    {
                        (self.watch.1)(v);
                    }
                    let key_start = key_mark.pos as u32;
                    // A second `<<` is a repeated key (go-yaml compares keys by text).
                    if parent.key_merge && !entries.iter().any(|e| e.key == key) {
                        // Merged, and kept so that the key is reported: it is not part of
                        // the Butane spec.
                        self.merge_keys.push(key_start);
                        if !mergeable(&node, &self.aliases) {
                            self.bad_merges.push(parent.node.start);
                        }
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
                        let line = line_of(text, prev.key_start);
                        let message = format!("mapping key {key:?} already defined at line {line}");
                        self.key_error(key_mark, message, true);
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
    }
}

/// Whether go-yaml merges `node` as the value of a `<<` key: a mapping (or an alias of one),
/// or a sequence written out whose items are mappings (or aliases of mappings).
fn mergeable(node: &Node, aliases: &[(u32, u32)]) -> bool {
    match &node.value {
        Value::Object(_) => true,
        Value::Array(items) => {
            !aliases.contains(&(node.start, node.end))
                && items.iter().all(|i| matches!(i.value, Value::Object(_)))
        }
        _ => false,
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
/// Whether `node` means null: a null, or a plain scalar go-yaml reads as one (`~`, `null`,
/// nothing). A JSON tree has no plain scalars: only its nulls are.
pub fn is_null(node: &Node) -> bool {
    match &node.value {
        Value::Null => true,
        Value::Plain(s) => resolve::is_null(s),
        _ => false,
    }
}

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
            Resolved::Int(i) => i64::try_from(i).map_or_else(|_| J::from(i as u64), J::from),
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

/// The data of a `!!binary` scalar written as `text` (base64; line breaks in it ignored, as
/// go-yaml ignores them), or `None` if it is not base64.
pub fn binary_data(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

/// The value of a scalar with its tag applied, and what else the tag means.
fn scalar_value(text: String, style: Style, tag: Option<&str>) -> (Value, Option<TagNote>) {
    // `!` alone is no tag: the scalar resolves as if untagged.
    let Some(tag) = tag.filter(|t| *t != "!").map(resolve::short_tag) else {
        return match style {
            Style::Plain => (Value::Plain(text), None),
            _ => (Value::String(text), None),
        };
    };
    let named = |text: &str| TagNote::Named {
        tag: tag.clone(),
        text: text.to_string(),
        collection: false,
    };
    match tag.as_str() {
        "!!str" => (Value::String(text), None),
        // go-yaml decodes binary data given to a string (line breaks in the data ignored).
        "!!binary" => {
            match binary_data(&text) {
                // Text as Go makes it of the bytes; embedded contents take the bytes
                // themselves (see `spec::base::BinaryValues`).
                Some(data) => {
                    let note = named(&text);
                    (
                        Value::String(crate::bytes::go_lossy(&data).into_owned()),
                        Some(note),
                    )
                }
                None => (
                    Value::String(text),
                    Some(TagNote::Refused(
                        "!!binary value contains invalid base64 data".into(),
                    )),
                ),
            }
        }
        "!!null" | "!!bool" | "!!int" | "!!float" | "!!timestamp" => {
            match resolve::check_explicit(&tag, &text) {
                // Text, so that no walk over the tree takes it for a null (go-yaml's
                // decoding stops at it, a null or not).
                Err(m) => (Value::String(text), Some(TagNote::Refused(m))),
                Ok(()) if tag == "!!null" => (Value::Null, None),
                // A timestamp decodes into a string only, as its text.
                Ok(()) if tag == "!!timestamp" => {
                    let note = named(&text);
                    (Value::String(text), Some(note))
                }
                Ok(()) => {
                    let note = named(&text);
                    (Value::Plain(text), Some(note))
                }
            }
        }
        // Any other tag leaves the text a string that go-yaml names by the tag.
        _ => {
            let note = named(&text);
            (Value::String(text), Some(note))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
