//! Deserializes the typed model from a positioned [`Node`] tree with Go `encoding/json`
//! semantics: `null` leaves a value as it was (a pointer or a list it empties), a repeated
//! key (matched ignoring case) is decoded again into what the earlier ones left (objects
//! merge, list items are decoded over the earlier list's), numbers must be integers where
//! the model wants one, and the first type mismatch in the document is the one reported.
//! Unknown keys (and keys the document's version does not have) are not errors but are
//! collected, with their positions, for "unused key" warnings; type errors carry the offset
//! Go would report and the JSON path.
//!
//! This module holds the entry points and what the decoding of one value shares; the serde
//! [`Deserializer`](de::Deserializer) of a value is in `deserializer`, lists in `seq`,
//! objects in `map`, and the wording of go-yaml's type errors in `found`.

mod deserializer;
mod found;
mod map;
mod seq;

pub use found::yaml_found;
pub use map::folds_to;

use crate::tree::{JsonPath, Node, Seg, Value};
use crate::yaml::TagNote;
use serde::de::{self, DeserializeOwned};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

/// Decides whether key `key` exists on struct `ty` (the Rust type name) in the document's
/// version; keys it refuses are reported as unused.
pub type KeyGate<'a> = &'a dyn Fn(&'static str, &str) -> bool;

/// A failure to deserialize: a type mismatch or an out-of-range number.
#[derive(Debug, Clone, PartialEq)]
pub struct DeError {
    /// Byte offset the upstream tools report this error at.
    pub offset: Option<u32>,
    pub path: Option<JsonPath>,
    pub message: String,
    /// The value that did not fit (containers without their contents), for wording the
    /// error as upstream does: with repeated keys it need not be the one the tree holds at
    /// `path`.
    pub found: Option<Value>,
    /// The mismatches found after this one, in decoding order: go-yaml reads on after one
    /// and reports them all.
    pub also: Vec<DeError>,
    /// go-yaml stopped here (a scalar its explicit tag refuses): what it found before is
    /// not reported, and nothing after.
    pub fatal: bool,
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            offset: None,
            path: None,
            message: msg.to_string(),
            found: None,
            also: Vec::new(),
            fatal: false,
        }
    }
}

/// A key the model did not take, at `path`, whose key text starts at `offset`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unused {
    pub path: JsonPath,
    pub offset: u32,
}

/// Which document syntax the tree came from: it decides how scalars are typed and how
/// errors are worded and placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Go `encoding/json`: errors after the offending value.
    Json,
    /// go-yaml v3: plain scalars typed by their target, errors at the value.
    Yaml,
}

impl Unused {
    /// The "unused key" warning, placed at `pos`.
    pub fn warning(self, pos: crate::tree::LineCol) -> crate::diag::Diagnostic {
        let name = self.path.last_key().unwrap_or_default().to_string();
        crate::diag::Diagnostic::warning(Some(self.path), Some(pos), format!("unused key {name}"))
    }
}

/// Deserializes `T` from a JSON tree, returning it with the keys it did not use.
pub fn from_node<T: DeserializeOwned>(
    node: &Node,
    gate: KeyGate<'_>,
) -> Result<(T, Vec<Unused>), DeError> {
    from_tree(node, gate, Flavor::Json)
}

/// Deserializes `T` from a tree of the given flavor.
pub fn from_tree<T: DeserializeOwned>(
    node: &Node,
    gate: KeyGate<'_>,
    flavor: Flavor,
) -> Result<(T, Vec<Unused>), DeError> {
    from_tagged_tree(node, gate, flavor, None)
}

/// What go-yaml's decoding of a YAML tree meets beside the tree (see `yaml::Document`).
#[derive(Clone, Copy)]
pub struct YamlNotes<'a> {
    pub tags: &'a HashMap<u32, TagNote>,
    /// Where the mappings start whose `<<` value go-yaml refuses.
    pub bad_merges: &'a [u32],
}

/// Longest number quoted whole in a type error, as Go quotes it; a longer (hostile) one is
/// clipped to its first 32 characters and its length (see differences.md).
pub const MAX_QUOTED_NUMBER: usize = 1024;

/// The words go-yaml stops with at a `<<` it cannot merge.
pub const BAD_MERGE: &str = "map merge requires map or sequence of maps as the value";

/// [`from_tree`] for a YAML tree with what its decoding meets beside it.
pub fn from_tagged_tree<T: DeserializeOwned>(
    node: &Node,
    gate: KeyGate<'_>,
    flavor: Flavor,
    notes: Option<YamlNotes<'_>>,
) -> Result<(T, Vec<Unused>), DeError> {
    decode(node, gate, flavor, notes).0
}

/// A list item Go's decoder reads and then drops: an item of a repeated key's earlier list
/// that a later `[]` or null empties, or that lies past the last list's length. Its type
/// errors count as any others (Go notes a mismatch and reads on); the caller decodes it on
/// its own to find them. Its path (as Go names it: the index in its own list) and start.
pub type Shadowed = (JsonPath, u32);

/// A value decoded, with the keys it did not use; or what stopped it.
pub type Decoded<T> = Result<(T, Vec<Unused>), DeError>;

/// [`from_node`], with the list items the decoding dropped (JSON only).
pub fn from_node_shadowed<T: DeserializeOwned>(
    node: &Node,
    gate: KeyGate<'_>,
) -> (Decoded<T>, Vec<Shadowed>) {
    decode(node, gate, Flavor::Json, None)
}

fn decode<T: DeserializeOwned>(
    node: &Node,
    gate: KeyGate<'_>,
    flavor: Flavor,
    notes: Option<YamlNotes<'_>>,
) -> (Decoded<T>, Vec<Shadowed>) {
    let state = State {
        gate,
        flavor,
        tags: notes.map(|n| n.tags).filter(|t| !t.is_empty()),
        bad_merges: notes.map_or(&[], |n| n.bad_merges),
        unused: RefCell::new(Vec::new()),
        first: RefCell::new(None),
        all: RefCell::new(Vec::new()),
        shadowed: RefCell::new(Vec::new()),
    };
    let de = NodeDe {
        node,
        path: &Path::Root,
        key_offset: None,
        report: true,
        prior: Vec::new(),
        st: &state,
    };
    let value = T::deserialize(de);
    let shadowed = state.shadowed.take();
    let value = match value {
        Err(e) if e.fatal => return (Err(e), shadowed),
        v => v,
    };
    let mut all = state.all.into_inner();
    if !all.is_empty() {
        // go-yaml: every mismatch, then what stopped the decoding (if anything did).
        all.extend(value.err());
        let mut first = all.remove(0);
        first.also = all;
        return (Err(first), shadowed);
    }
    let at = |e: &DeError| e.offset.unwrap_or(u32::MAX);
    let result = match (value, state.first.into_inner()) {
        (Ok(v), None) => Ok((v, state.unused.into_inner())),
        (Ok(_), Some(noted)) => Err(noted),
        (Err(e), Some(noted)) if at(&noted) <= at(&e) => Err(noted),
        (Err(e), _) => Err(e),
    };
    (result, shadowed)
}

struct State<'g> {
    gate: KeyGate<'g>,
    flavor: Flavor,
    /// The YAML scalars whose tags matter, by offset.
    tags: Option<&'g HashMap<u32, TagNote>>,
    bad_merges: &'g [u32],
    unused: RefCell<Vec<Unused>>,
    /// The first type mismatch in the document (JSON): Go's decoder notes it, leaves the
    /// value as it was and reads on.
    first: RefCell<Option<DeError>>,
    /// Every type mismatch (YAML), in decoding order.
    all: RefCell<Vec<DeError>>,
    /// The list items the decoding dropped (JSON).
    shadowed: RefCell<Vec<Shadowed>>,
}

impl State<'_> {
    fn note(&self, e: DeError) {
        let mut first = self.first.borrow_mut();
        let at = |e: &DeError| e.offset.unwrap_or(u32::MAX);
        if first.as_ref().is_none_or(|f| at(&e) < at(f)) {
            *first = Some(e);
        }
    }
}

/// One decoding of a value: Go decodes a repeated key again into what the earlier
/// occurrences left, so a value may have several, in document order.
#[derive(Clone, Copy)]
struct Occ<'a, 'p> {
    node: &'a Node,
    path: &'p Path<'p>,
    /// Whether this is the node upstream's unused-key pass finds at its path: its context
    /// tree keeps, of the keys written exactly alike, the last.
    report: bool,
}

/// The path to the value being read, kept on the stack as it is walked.
enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn to_json_path(&self) -> JsonPath {
        let mut segs = Vec::new();
        let mut p = self;
        loop {
            match p {
                Path::Root => break,
                Path::Key(parent, k) => {
                    segs.push(Seg::Key((*k).to_string().into()));
                    p = parent;
                }
                Path::Index(parent, i) => {
                    segs.push(Seg::Index(*i));
                    p = parent;
                }
            }
        }
        segs.reverse();
        JsonPath::from(segs)
    }
}

/// The deserializer of one value (and of its earlier decodings, if its key repeats).
struct NodeDe<'a, 'p, 'g> {
    node: &'a Node,
    path: &'p Path<'p>,
    key_offset: Option<u32>,
    /// Whether unused keys below `node` are reported (see [`Occ::report`]).
    report: bool,
    /// Earlier decodings of the same value, in document order (usually none).
    prior: Vec<Occ<'a, 'p>>,
    st: &'a State<'g>,
}

impl<'a, 'p> NodeDe<'a, 'p, '_> {
    /// Every decoding of this value in document order: the earlier ones, then this one.
    fn occs(&self) -> impl Iterator<Item = Occ<'a, 'p>> + '_ {
        self.prior.iter().copied().chain(std::iter::once(Occ {
            node: self.node,
            path: self.path,
            report: self.report,
        }))
    }

    /// A type mismatch in one decoding: JSON notes it and reads on (Go keeps the value as
    /// it was); go-yaml collects it and reads on.
    fn fail(&self, o: Occ<'_, '_>, want: &str) -> Result<(), DeError> {
        let e = self.mismatch(o.node, o.path, want);
        match self.st.flavor {
            Flavor::Yaml => {
                self.st.all.borrow_mut().push(e);
                Ok(())
            }
            Flavor::Json => {
                self.st.note(e);
                Ok(())
            }
        }
    }

    /// Go's JSON decoder reports a mismatch after a scalar, or just inside a container's
    /// bracket; go-yaml reports the value's own position.
    fn go_offset(&self) -> u32 {
        self.offset_of(self.node)
    }

    fn offset_of(&self, node: &Node) -> u32 {
        match self.st.flavor {
            Flavor::Yaml => node.start,
            Flavor::Json if node.is_container() => node.start + 1,
            Flavor::Json => node.end,
        }
    }

    /// go-yaml's stop at a scalar its explicit tag refuses, in any decoding of this value.
    fn refused(&self) -> Result<(), DeError> {
        let Some(tags) = self.st.tags else {
            return Ok(());
        };
        for o in self.occs() {
            if let (false, Some(TagNote::Refused(m))) =
                (o.node.is_container(), tags.get(&o.node.start))
            {
                return Err(refusal(o.node.start, o.path.to_json_path(), m));
            }
        }
        Ok(())
    }

    fn type_error(&self, want: &str) -> DeError {
        self.mismatch(self.node, self.path, want)
    }

    fn mismatch(&self, node: &Node, path: &Path<'_>, want: &str) -> DeError {
        let message = match self.st.flavor {
            Flavor::Json => {
                let found = match &node.value {
                    // Go quotes the number whole; a hostile one is clipped.
                    Value::Number(n) if n.to_string().len() > MAX_QUOTED_NUMBER => {
                        let t = n.to_string();
                        format!("number {}… ({} characters)", &t[..32], t.len())
                    }
                    Value::Number(n) => format!("number {n}"),
                    v => v.kind_name().to_string(),
                };
                format!("cannot unmarshal {found} into a value of type {want}")
            }
            Flavor::Yaml => {
                let found = yaml_found(node, self.st.tags);
                format!("cannot unmarshal {found} into {want}")
            }
        };
        let found = match &node.value {
            Value::Array(_) => Value::Array(Vec::new()),
            Value::Object(_) => Value::Object(Vec::new()),
            v => v.clone(),
        };
        DeError {
            offset: Some(self.offset_of(node)),
            path: Some(path.to_json_path()),
            message,
            found: Some(found),
            also: Vec::new(),
            fatal: false,
        }
    }

    /// Fills in the position of an error raised by a visitor below this value.
    fn locate(&self, mut e: DeError) -> DeError {
        if e.offset.is_none() {
            e.offset = Some(self.go_offset());
            e.path = Some(self.path.to_json_path());
        }
        e
    }
}

/// The error that stops decoding at a refused tag (see [`TagNote::Refused`]).
fn refusal(offset: u32, path: JsonPath, message: &str) -> DeError {
    DeError {
        offset: Some(offset),
        path: Some(path),
        message: message.to_string(),
        found: None,
        also: Vec::new(),
        fatal: true,
    }
}

#[cfg(test)]
mod tests {
    use super::map::SMALL_OBJECT;
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default, rename_all = "camelCase")]
    struct Inner {
        mode: Option<i64>,
        name: String,
        new_key: Option<bool>,
    }

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Outer {
        items: Vec<Inner>,
        flag: bool,
    }

    fn gate(ty: &'static str, key: &str) -> bool {
        !(ty == "Inner" && key == "newKey")
    }

    fn read(s: &str) -> Result<(Outer, Vec<Unused>), DeError> {
        let node = crate::json::parse(s.as_bytes()).unwrap();
        from_node(&node, &gate)
    }

    #[test]
    fn reads_with_go_semantics() {
        let (o, unused) = read(
            r#"{"items":[{"mode":1,"name":null,"mode":2,"bogus":1,"newKey":true}],"flag":null}"#,
        )
        .unwrap();
        assert_eq!(
            o.items,
            vec![Inner {
                mode: Some(2),
                name: String::new(),
                new_key: None
            }]
        );
        let paths: Vec<String> = unused.iter().map(|u| u.path.to_string()).collect();
        assert_eq!(paths, vec!["$.items.0.bogus", "$.items.0.newKey"]);
        assert_eq!(unused[0].offset, 41);
    }

    #[test]
    fn repeated_keys_decode_over_what_came_before() {
        let items = |s: &str| read(s).unwrap().0.items;
        let inner = |mode: Option<i64>, name: &str| Inner {
            mode,
            name: name.into(),
            new_key: None,
        };
        // Objects merge; a null empties an optional value and leaves a plain one.
        assert_eq!(
            items(r#"{"items":[{"mode":1,"name":"a"},{}],"items":[{"mode":null,"name":null}]}"#),
            vec![inner(None, "a")]
        );
        // Items are decoded over the earlier list's, even past a shorter list between.
        assert_eq!(
            items(r#"{"items":[{"name":"a"},{"name":"b"}],"items":[{}],"items":[{},{}]}"#),
            vec![inner(None, "a"), inner(None, "b")]
        );
        // `[]` and null start afresh.
        assert_eq!(
            items(r#"{"items":[{"name":"a"}],"items":[],"items":[{}]}"#),
            vec![inner(None, "")]
        );
        assert_eq!(items(r#"{"items":[{"name":"a"}],"items":null}"#), vec![]);
        assert!(read(r#"{"flag":true,"flag":null}"#).unwrap().0.flag);
    }

    /// Objects of a few keys are indexed pairwise, large ones by hashing: both give the
    /// same values and the same unused keys, where keys repeat (the last of a field
    /// decodes, the last of a key text is reported) on both sides of the size limit.
    #[test]
    fn small_and_large_objects_are_indexed_alike() {
        for pad in [0, SMALL_OBJECT] {
            let filler: String = (0..pad).map(|i| format!(r#""x{i}":1,"#)).collect();
            let doc = format!(
                r#"{{"items":[{{{filler}"mode":1,"bogus":1,"name":"a","mode":2,"bogus":2,"newKey":true,"name":"b"}}]}}"#
            );
            let (o, unused) = read(&doc).unwrap();
            assert_eq!(
                o.items,
                vec![Inner {
                    mode: Some(2),
                    name: "b".into(),
                    new_key: None
                }],
                "{pad}"
            );
            let mut paths: Vec<String> = unused.iter().map(|u| u.path.to_string()).collect();
            paths.retain(|p| !p.starts_with("$.items.0.x"));
            assert_eq!(paths, vec!["$.items.0.bogus", "$.items.0.newKey"], "{pad}");
            let bogus = unused
                .iter()
                .find(|u| u.path.to_string() == "$.items.0.bogus");
            let last = doc.rfind(r#""bogus""#).unwrap() as u32;
            assert_eq!(bogus.map(|u| u.offset), Some(last), "{pad}");
        }
    }

    #[test]
    fn first_type_error_in_the_document_wins() {
        let doc = r#"{"items":[{"mode":"x"}],"flag":1,"items":"y"}"#;
        let e = read(doc).unwrap_err();
        assert_eq!(e.offset, Some(doc.find(r#""x""#).unwrap() as u32 + 3));
        assert_eq!(e.path.unwrap().to_string(), "$.items.0.mode");
        assert_eq!(e.found, Some(Value::String("x".into())));
    }

    #[test]
    fn type_errors_carry_go_offsets() {
        let e = read(r#"{"items":[{"mode":"0644"}]}"#).unwrap_err();
        assert_eq!(e.offset, Some(24));
        assert_eq!(e.path.unwrap().to_string(), "$.items.0.mode");
        let e = read(r#"{"items":{}}"#).unwrap_err();
        assert_eq!(e.offset, Some(10));
        let e = read(r#"{"items":[{"mode":1.5}]}"#).unwrap_err();
        assert!(e.message.contains("number 1.5"), "{}", e.message);
    }
}
