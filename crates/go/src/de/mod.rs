//! Deserializes the typed model from a positioned [`Node`] tree with Go `encoding/json`
//! semantics: `null` leaves a value as it was (a pointer or a list it empties), a repeated
//! key (matched ignoring case) is decoded again into what the earlier ones left (objects
//! merge, list items are decoded over the earlier list's), numbers must be integers where
//! the model wants one, and the first type mismatch in the document is the one reported. Unknown keys (and keys the document's version
//! does not have) are not errors but are collected, with their positions, for "unused key"
//! warnings; type errors carry the offset Go would report and the JSON path.

use crate::tree::{JsonPath, Node, Seg, Value};
use crate::yaml::resolve::{Resolved, plain_tag, resolve, resolve_bool};
use crate::yaml::{TagNote, is_null};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use std::cell::RefCell;
use std::collections::HashMap;

/// The maps of a struct's fields are made for each object decoded, and hashed for each key:
/// SipHash's cost showed in translating thousands of files.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
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

/// The words go-yaml stops with at a `<<` it cannot merge.
/// Longest number quoted whole in a type error, as Go quotes it; a longer (hostile) one is
/// clipped to its first 32 characters and its length (see differences.md).
pub const MAX_QUOTED_NUMBER: usize = 1024;

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

/// Go's `encoding/json` matches a key to a field ignoring case with Unicode simple folding
/// (`ſ` is `s`, the Kelvin sign is `k`); `field` is ASCII.
pub fn folds_to(key: &str, field: &str) -> bool {
    let fold = |c: char| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    };
    key.chars()
        .map(fold)
        .eq(field.chars().map(|c| c.to_ascii_lowercase()))
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

/// go-yaml shortens long scalars in its messages.
/// go-yaml's cut of a long value: over 10 bytes, the first 7 bytes. A character the cut
/// splits is one U+FFFD here, where go-yaml prints its first bytes as they are.
fn short(text: &str) -> String {
    if text.len() <= 10 {
        return text.to_string();
    }
    let mut end = 7;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let split = if end < 7 { "\u{FFFD}" } else { "" };
    format!("{}{split}...", &text[..end])
}

/// How go-yaml names a value it could not decode: by its tag (as written, else as resolved)
/// and its text, shortened.
pub fn yaml_found(node: &Node, tags: Option<&HashMap<u32, TagNote>>) -> String {
    let named = tags.and_then(|t| t.get(&node.start)).and_then(|n| match n {
        TagNote::Named {
            tag,
            text,
            collection,
        } if *collection == node.is_container() => Some((tag, text)),
        _ => None,
    });
    match (named, &node.value) {
        // After these two go-yaml writes the text whole, with no space or quotes.
        (Some((tag, text)), _) if tag == "!!seq" || tag == "!!map" => format!("{tag}{text}"),
        (Some((tag, text)), _) => format!("{tag} `{}`", short(text)),
        (_, Value::Plain(t)) => format!("{} `{}`", plain_tag(t), short(t)),
        (_, Value::String(t)) => format!("!!str `{}`", short(t)),
        (_, Value::Array(_)) => "!!seq".to_string(),
        (_, Value::Object(_)) => "!!map".to_string(),
        (_, v) => v.kind_name().to_string(),
    }
}

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

    /// Notes the items of `layers` from index `from` on as dropped (see [`Shadowed`]).
    fn shadow(&self, layers: &[Occ<'_, '_>], from: usize) {
        if self.st.flavor != Flavor::Json {
            return;
        }
        let mut shadowed = self.st.shadowed.borrow_mut();
        for l in layers {
            for (i, item) in items(l).iter().enumerate().skip(from) {
                shadowed.push((Path::Index(l.path, i).to_json_path(), item.start));
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

    /// The integer the decodings leave (`None`: only nulls).
    fn integer<T: TryFrom<i128>>(&self, want: &str) -> Result<Option<T>, DeError> {
        self.refused()?;
        let mut out = None;
        for o in self.occs() {
            let wide: Option<i128> = match &o.node.value {
                Value::Null => continue,
                Value::Number(n) => n.parse::<i128>().ok(),
                Value::Plain(t) => match resolve(t) {
                    Resolved::Null => continue,
                    Resolved::Int(i) => Some(i),
                    Resolved::Float(f) => go_int_of_float(f),
                    _ => None,
                },
                _ => None,
            };
            match wide.and_then(|v| T::try_from(v).ok()) {
                Some(v) => out = Some(v),
                None => self.fail(o, want)?,
            }
        }
        Ok(out)
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

/// go-yaml puts a float into an integer field as Go converts one: truncated toward zero,
/// and, out of range, the x86 "integer indefinite" (MinInt64). It refuses only NaN and what
/// is above MaxInt64 as a float (2^63 itself passes its test).
fn go_int_of_float(f: f64) -> Option<i128> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || f > TWO_63 {
        None
    } else if (-TWO_63..TWO_63).contains(&f) {
        Some(f.trunc() as i128)
    } else {
        Some(i128::from(i64::MIN))
    }
}

macro_rules! ints {
    ($($method:ident $t:ty => $visit:ident $name:literal),*) => {
        $(fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
            let n: $t = self.integer($name)?.unwrap_or_default();
            v.$visit(n).map_err(|e| self.locate(e))
        })*
    };
}

impl<'de> de::Deserializer<'de> for NodeDe<'_, '_, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let r = match &self.node.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Number(n) => {
                if let Ok(i) = n.parse::<i64>() {
                    v.visit_i64(i)
                } else if let Ok(u) = n.parse::<u64>() {
                    v.visit_u64(u)
                } else {
                    v.visit_f64(n.parse::<f64>().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => v.visit_str(s),
            Value::Plain(t) => match resolve(t) {
                Resolved::Null => v.visit_unit(),
                Resolved::Bool(b) => v.visit_bool(b),
                Resolved::Int(i) => match i64::try_from(i) {
                    Ok(i) => v.visit_i64(i),
                    Err(_) => v.visit_u64(i as u64),
                },
                Resolved::Float(f) => v.visit_f64(f),
                Resolved::Str => v.visit_str(t),
            },
            Value::Array(_) => return self.deserialize_seq(v),
            Value::Object(_) => return self.deserialize_map(v),
        };
        r.map_err(|e| self.locate(e))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut b = false;
        for o in self.occs() {
            match &o.node.value {
                Value::Bool(x) => b = *x,
                _ if is_null(o.node) => {}
                Value::Plain(t) => match resolve_bool(t) {
                    Some(x) => b = x,
                    None => self.fail(o, "bool")?,
                },
                Value::String(t) if self.st.flavor == Flavor::Yaml => {
                    match crate::yaml::resolve::yaml_1_1_bool(t) {
                        Some(x) => b = x,
                        None => self.fail(o, "bool")?,
                    }
                }
                _ => self.fail(o, "bool")?,
            }
        }
        v.visit_bool(b).map_err(|e| self.locate(e))
    }

    ints!(
        deserialize_i8 i8 => visit_i8 "int8",
        deserialize_i16 i16 => visit_i16 "int16",
        deserialize_i32 i32 => visit_i32 "int32",
        deserialize_i64 i64 => visit_i64 "int",
        deserialize_u8 u8 => visit_u8 "uint8",
        deserialize_u16 u16 => visit_u16 "uint16",
        deserialize_u32 u32 => visit_u32 "uint32",
        deserialize_u64 u64 => visit_u64 "uint64"
    );

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(v)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut f = 0.0;
        for o in self.occs() {
            match &o.node.value {
                Value::Number(n) => match n.parse::<f64>() {
                    Ok(x) => f = x,
                    Err(_) => self.fail(o, "float64")?,
                },
                _ if is_null(o.node) => {}
                Value::Plain(t) => match resolve(t) {
                    Resolved::Int(i) => f = i as f64,
                    Resolved::Float(x) => f = x,
                    _ => self.fail(o, "float64")?,
                },
                _ => self.fail(o, "float64")?,
            }
        }
        v.visit_f64(f).map_err(|e| self.locate(e))
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut s = "";
        for o in self.occs() {
            match &o.node.value {
                Value::String(x) => s = x,
                _ if is_null(o.node) => {}
                Value::Plain(t) => s = t,
                _ => self.fail(o, "string")?,
            }
        }
        v.visit_str(s).map_err(|e| self.locate(e))
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        if is_null(self.node) {
            return v.visit_none();
        }
        // A null sets a pointer to nil: what came before it is gone.
        let mut me = self;
        if let Some(i) = me.prior.iter().rposition(|o| is_null(o.node)) {
            me.prior.drain(..=i);
        }
        v.visit_some(me)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        // Go decodes a list's items over the earlier list's (its backing array), keeping
        // the last list's length; null and `[]` start afresh.
        let mut layers: Vec<Occ<'_, '_>> = Vec::new();
        for o in self.occs() {
            match &o.node.value {
                Value::Array(items) if items.is_empty() => {
                    self.shadow(&layers, 0);
                    layers.clear();
                }
                Value::Array(_) => layers.push(o),
                _ if is_null(o.node) => {
                    self.shadow(&layers, 0);
                    layers.clear();
                }
                _ => self.fail(o, "array")?,
            }
        }
        if let [earlier @ .., last] = &layers[..] {
            // Items of earlier lists past the last one's length.
            self.shadow(earlier, items(last).len());
        }
        let access = Seq {
            layers,
            next: 0,
            st: self.st,
        };
        v.visit_seq(access).map_err(|e| self.locate(e))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.object(None, v)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.object(Some((name, fields)), v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.refused()?;
        match &self.node.value {
            Value::String(s) | Value::Plain(s) => v
                .visit_enum(s.as_str().into_deserializer())
                .map_err(|e: DeError| self.locate(e)),
            _ => Err(self.type_error("string")),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        // Only reached for keys the model has no field for.
        if let Some(offset) = self.key_offset
            && self.report
        {
            self.st.unused.borrow_mut().push(Unused {
                path: self.path.to_json_path(),
                offset,
            });
        }
        v.visit_unit()
    }
}

impl<'de> NodeDe<'_, '_, '_> {
    fn object<V: Visitor<'de>>(
        self,
        ty: Option<(&'static str, &'static [&'static str])>,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.refused()?;
        // Go decodes a repeated object into the struct the earlier ones filled: their
        // keys are read in turn, as one object's.
        let mut entries = Small::new();
        for o in self.occs() {
            match &o.node.value {
                Value::Object(es) => entries.extend(es.iter().map(|e| Keyed {
                    entry: e,
                    parent: o.path,
                    report: o.report,
                })),
                _ if is_null(o.node) => {}
                _ => self.fail(o, "object")?,
            }
        }
        // go-yaml merges (or refuses to) once the mapping's own keys are decoded.
        let merge_refused = (self.node.is_container()
            && self.st.bad_merges.contains(&self.node.start))
        .then(|| (self.node.start, self.path.to_json_path()));
        let mut access = Map {
            entries,
            fields: Small::new(),
            marks: Small::new(),
            next: 0,
            ty,
            merge_refused,
            st: self.st,
        };
        access.index();
        v.visit_map(access).map_err(|e| self.locate(e))
    }
}

struct Seq<'a, 'p, 'g> {
    /// The lists decoded in turn (the last gives the length).
    layers: Vec<Occ<'a, 'p>>,
    next: usize,
    st: &'a State<'g>,
}

fn items<'a>(o: &Occ<'a, '_>) -> &'a [Node] {
    match &o.node.value {
        Value::Array(items) => items,
        _ => &[],
    }
}

impl<'de> de::SeqAccess<'de> for Seq<'_, '_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(last) = self.layers.last() else {
            return Ok(None);
        };
        let i = self.next;
        let Some(node) = items(last).get(i) else {
            return Ok(None);
        };
        self.next += 1;
        if self.layers.len() == 1 {
            let path = Path::Index(last.path, i);
            return seed
                .deserialize(NodeDe {
                    node,
                    path: &path,
                    key_offset: None,
                    report: last.report,
                    prior: Vec::new(),
                    st: self.st,
                })
                .map(Some);
        }
        let paths: Vec<Path<'_>> = self.layers.iter().map(|l| Path::Index(l.path, i)).collect();
        let mut occs: Vec<Occ<'_, '_>> = self
            .layers
            .iter()
            .zip(&paths)
            .filter_map(|(l, path)| {
                items(l).get(i).map(|node| Occ {
                    node,
                    path,
                    report: l.report,
                })
            })
            .collect();
        let me = occs.pop().expect("the last list has the item");
        seed.deserialize(NodeDe {
            node: me.node,
            path: me.path,
            key_offset: None,
            report: me.report,
            prior: occs,
            st: self.st,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        self.layers
            .last()
            .map(|l| items(l).len().saturating_sub(self.next))
    }
}

/// An object's entry, with where the object is and whether its keys are reported.
#[derive(Clone, Copy)]
struct Keyed<'a, 'p> {
    entry: &'a crate::tree::Entry,
    parent: &'p Path<'p>,
    report: bool,
}

/// Objects of up to this many keys are indexed by comparing keys pairwise.
const SMALL_OBJECT: usize = 16;

/// What an entry of an object is among the others.
#[derive(Clone, Copy)]
struct Marks {
    first_of_field: bool,
    last_of_field: bool,
    /// Reported, and no later reported entry has the same key text.
    last_reported_of_key: bool,
}

/// The lists kept for each object decoded: most objects have a few keys, and allocating
/// three lists for each showed in the profile of a large document.
type Small<T> = smallvec::SmallVec<[T; 8]>;

struct Map<'a, 'p, 'g> {
    entries: Small<Keyed<'a, 'p>>,
    /// The field each entry fills.
    fields: Small<&'a str>,
    /// What each entry is among the entries of its field and of its key text.
    marks: Small<Marks>,
    next: usize,
    /// The struct's name and its fields' names, when reading a struct.
    ty: Option<(&'static str, &'static [&'static str])>,
    /// Where the mapping is, if go-yaml refuses its `<<` value after its keys.
    merge_refused: Option<(u32, JsonPath)>,
    st: &'a State<'g>,
}

impl<'a> Map<'a, '_, '_> {
    /// Notes each entry's field, and which entries are the first and last of their field
    /// and the last reported one of their key text.
    fn index(&mut self) {
        self.fields = self
            .entries
            .iter()
            .map(|k| self.field_for(&k.entry.key))
            .collect();
        let n = self.entries.len();
        let mut marks: Small<Marks> = (self.entries.iter())
            .map(|k| Marks {
                first_of_field: true,
                last_of_field: true,
                last_reported_of_key: k.report,
            })
            .collect();
        let key = |i: usize| self.entries[i].entry.key.as_str();
        let reported = |i: usize| self.entries[i].report;
        if n <= SMALL_OBJECT {
            // Pairwise: cheaper than hashing for the few keys of an ordinary object.
            for i in 1..n {
                for j in 0..i {
                    if self.fields[j] == self.fields[i] {
                        marks[i].first_of_field = false;
                        marks[j].last_of_field = false;
                    }
                    if reported(i) && reported(j) && key(j) == key(i) {
                        marks[j].last_reported_of_key = false;
                    }
                }
            }
        } else {
            // A hostile object has many thousand keys: no pairwise comparing.
            let mut first: FastMap<&str, usize> = FastMap::default();
            let mut last: FastMap<&str, usize> = FastMap::default();
            let mut last_reported: FastMap<&str, usize> = FastMap::default();
            for (i, f) in self.fields.iter().enumerate() {
                first.entry(f).or_insert(i);
                last.insert(f, i);
                if reported(i) {
                    last_reported.insert(key(i), i);
                }
            }
            for (i, (m, f)) in marks.iter_mut().zip(&self.fields).enumerate() {
                m.first_of_field = first[f] == i;
                m.last_of_field = last[f] == i;
                m.last_reported_of_key = reported(i) && last_reported[key(i)] == i;
            }
        }
        self.marks = marks;
    }

    /// The struct field a key fills: Go's JSON decoder matches field names exactly, or else
    /// case-insensitively; YAML matches exactly.
    fn field_for(&self, key: &'a str) -> &'a str {
        match self.ty {
            Some((_, fields)) if self.st.flavor == Flavor::Json && !fields.contains(&key) => fields
                .iter()
                .find(|f| folds_to(key, f))
                .copied()
                .unwrap_or(key),
            _ => key,
        }
    }
}

impl<'de> de::MapAccess<'de> for Map<'_, '_, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        while let Some(&k) = self.entries.get(self.next) {
            let e = k.entry;
            // go-yaml decodes every key of a struct's mapping, known or not.
            if let Some(TagNote::Refused(m)) = self.st.tags.and_then(|t| t.get(&e.key_start)) {
                return Err(refusal(
                    e.key_start,
                    Path::Key(k.parent, &e.key).to_json_path(),
                    m,
                ));
            }
            let field = self.fields[self.next];
            let n = self.next;
            // A key upstream's context tree holds but its model does not take is reported
            // once, where it last appears.
            let unused = |st: &State<'_>| {
                if self.marks[n].last_reported_of_key {
                    st.unused.borrow_mut().push(Unused {
                        path: Path::Key(k.parent, &e.key).to_json_path(),
                        offset: e.key_start,
                    });
                }
            };
            // Repeated keys (matched case-insensitively, for JSON) are decoded in turn, at
            // the last of them.
            if !self.marks[n].last_of_field {
                if field != e.key {
                    unused(self.st);
                }
                self.next += 1;
                continue;
            }
            if let Some((ty, _)) = self.ty
                && !(self.st.gate)(ty, field)
            {
                unused(self.st);
                self.next += 1;
                continue;
            }
            if field != e.key {
                // Decoded into the field, yet not the field's exact name: upstream's
                // unused-key pass still reports it.
                unused(self.st);
            }
            let de: de::value::StrDeserializer<'_, DeError> = field.into_deserializer();
            return seed.deserialize(de).map(Some);
        }
        if let Some((at, path)) = self.merge_refused.take() {
            return Err(refusal(at, path, BAD_MERGE));
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let k = self.entries[self.next];
        let e = k.entry;
        self.next += 1;
        let field = self.fields[self.next - 1];
        // Below a key matched only case-insensitively upstream's unused-key pass finds no
        // JSON for the struct (it looks by exact name) and reports nothing.
        let repeated = !self.marks[self.next - 1].first_of_field;
        let earlier: Vec<Keyed<'_, '_>> = if repeated {
            (self.entries[..self.next - 1].iter().zip(&self.fields))
                .filter(|(_, f)| **f == field)
                .map(|(l, _)| *l)
                .collect()
        } else {
            Vec::new()
        };
        if earlier.is_empty() {
            let path = Path::Key(k.parent, &e.key);
            return seed.deserialize(NodeDe {
                node: &e.value,
                path: &path,
                key_offset: Some(e.key_start),
                report: k.report && field == e.key,
                prior: Vec::new(),
                st: self.st,
            });
        }
        let all: Vec<Keyed<'_, '_>> = earlier.into_iter().chain(std::iter::once(k)).collect();
        let paths: Vec<Path<'_>> = all
            .iter()
            .map(|l| Path::Key(l.parent, &l.entry.key))
            .collect();
        let mut occs: Vec<Occ<'_, '_>> = all
            .iter()
            .zip(&paths)
            .enumerate()
            .map(|(n, (l, path))| Occ {
                node: &l.entry.value,
                path,
                // The context tree keeps the last key written exactly as the field.
                report: l.report
                    && l.entry.key == field
                    && !all[n + 1..]
                        .iter()
                        .any(|m| m.report && m.entry.key == field),
            })
            .collect();
        let me = occs.pop().expect("the key itself");
        seed.deserialize(NodeDe {
            node: me.node,
            path: me.path,
            key_offset: Some(e.key_start),
            report: me.report,
            prior: occs,
            st: self.st,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn cuts_long_values_by_bytes_as_go_yaml() {
        assert_eq!(short("0123456789"), "0123456789");
        assert_eq!(short("0123456789a"), "0123456...");
        // Ten bytes, five characters: whole. Twelve bytes: cut inside the fourth.
        assert_eq!(short("ééééé"), "ééééé");
        assert_eq!(short("éééééé"), "ééé\u{FFFD}...");
        assert_eq!(short("a€€€"), "a€€€");
        assert_eq!(short("a€€€€"), "a€€...");
    }

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
