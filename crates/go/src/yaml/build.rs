//! The tree made of the parser's events: anchors kept and aliases expanded (loops
//! included), `<<` merge keys applied, the keys go-yaml refuses only when it decodes their
//! mapping set aside for the reader, and the limits on nodes and depth that keep a hostile
//! document bounded.

use super::parser::{Event, EventKind};
use super::scanner::Mark;
use super::tags::scalar_value;
use super::{Document, KeyError, MAX_DEPTH, MAX_NODES, SyntaxError, TagNote, is_null, resolve};
use crate::tree::{Entry, JsonPath, Node, Value};
use std::collections::HashMap;

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

/// The tree of the first document as its events come, and what go-yaml's decoding of it
/// will meet beside the tree (see [`Document`]).
pub(super) struct Builder<'a> {
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

impl<'a> Builder<'a> {
    /// A builder for `text`, handing `watch` the string values of keys named `key`.
    pub(super) fn new(text: &'a str, key: &'a str, watch: &'a mut dyn FnMut(&str)) -> Self {
        Builder {
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
        }
    }

    /// The document read so far (an empty one is a null), with what was noted on the way.
    pub(super) fn finish(mut self) -> Document {
        // go-yaml checks a mapping's keys before decoding what is inside it.
        self.key_errors.sort_by_key(|(order, _)| *order);
        let root = self.root.unwrap_or(Node {
            value: Value::Null,
            start: 0,
            end: 0,
        });
        let has_nulls = self.has_nulls || is_null(&root);
        Document {
            root,
            merge_keys: self.merge_keys,
            aliases: self.aliases,
            anchor_of: self.anchor_of,
            key_errors: self.key_errors.into_iter().map(|(_, e)| e).collect(),
            tags: self.tags,
            bad_merges: self.bad_merges,
            has_nulls,
        }
    }
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
    pub(super) fn event(&mut self, ev: Event) -> Result<bool, SyntaxError> {
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
