//! A parsed document as a tree of values that remember where they stood in the source.
//!
//! Both front ends (Ignition JSON and, for the transpiler, Butane YAML) produce this tree, so
//! the typed model is deserialized from one place and every diagnostic can point back at the
//! bytes it is about.

mod path;
mod source;

pub use path::{JsonPath, Seg};
pub use source::{LineCol, Lines, Source};

/// One value of the document with the byte range it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    /// Byte offset of the first byte of the value (the quote of a string, the bracket of a
    /// container).
    pub start: u32,
    /// Byte offset one past the last byte of the value.
    pub end: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number exactly as written, so integer/float decisions and range checks happen
    /// where the target type is known.
    Number(Box<str>),
    String(String),
    /// A YAML plain (unquoted) scalar, typed only when it meets a target type, as go-yaml
    /// does: `0644` is the integer 420 for a mode and the text "0644" for a name.
    Plain(String),
    Array(Vec<Node>),
    Object(Vec<Entry>),
}

/// A key of an object with the position of the key itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_start: u32,
    pub value: Node,
}

impl Value {
    /// The word the upstream tools use for this kind of value in type errors.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Plain(_) => "scalar",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl Node {
    pub fn is_container(&self) -> bool {
        matches!(self.value, Value::Array(_) | Value::Object(_))
    }

    /// The object entry named `key` (the last one when a key repeats, as Go's decoder keeps
    /// the last value).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        match &self.value {
            Value::Object(entries) => entries.iter().rev().find(|e| e.key == key),
            _ => None,
        }
    }

    pub fn index(&self, i: usize) -> Option<&Node> {
        match &self.value {
            Value::Array(items) => items.get(i),
            _ => None,
        }
    }

    /// The deepest node that exists along `path` (the root when nothing does): where a
    /// diagnostic about `path` points.
    pub fn deepest(&self, path: &JsonPath) -> &Node {
        let mut node = self;
        for seg in path.segs() {
            let next = match seg {
                Seg::Key(k) => node.get(k).map(|e| &e.value),
                Seg::Index(i) => node.index(*i),
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        node
    }

    /// Where the upstream JSON validator marks `path`: scalars at their first byte,
    /// containers one byte inside their bracket.
    pub fn marker(&self, path: &JsonPath) -> u32 {
        self.deepest(path).marker_offset()
    }

    /// The node at `path`, if every step of it exists.
    pub fn at(&self, path: &JsonPath) -> Option<&Node> {
        self.at_segs(path.segs())
    }

    fn at_segs(&self, segs: &[Seg]) -> Option<&Node> {
        let mut node = self;
        for seg in segs {
            node = match seg {
                Seg::Key(k) => &node.get(k)?.value,
                Seg::Index(i) => node.index(*i)?,
            };
        }
        Some(node)
    }

    /// Where an "unused key" warning points: at the key itself.
    pub fn key_marker(&self, path: &JsonPath) -> Option<u32> {
        let (last, parent) = path.segs().split_last()?;
        let node = self.at_segs(parent)?;
        match last {
            Seg::Key(k) => node.get(k).map(|e| e.key_start),
            Seg::Index(i) => node.index(*i).map(|n| n.start),
        }
    }

    pub fn marker_offset(&self) -> u32 {
        if self.is_container() {
            self.start + 1
        } else {
            self.start
        }
    }
}
