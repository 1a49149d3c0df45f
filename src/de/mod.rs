//! Deserializes the typed model from a positioned [`Node`] tree with Go `encoding/json`
//! semantics: `null` leaves a field at its zero value, the last of repeated keys wins, numbers
//! must be integers where the model wants one. Unknown keys (and keys the document's version
//! does not have) are not errors but are collected, with their positions, for "unused key"
//! warnings; type errors carry the offset Go would report and the JSON path.

use crate::tree::{JsonPath, Node, Seg, Value};
use crate::yaml::resolve::{Resolved, resolve, resolve_bool};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use std::cell::RefCell;
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
    let state = State {
        gate,
        flavor,
        unused: RefCell::new(Vec::new()),
        quiet: std::cell::Cell::new(0),
    };
    let de = NodeDe {
        node,
        path: &Path::Root,
        key_offset: None,
        st: &state,
    };
    let value = T::deserialize(de)?;
    Ok((value, state.unused.into_inner()))
}

struct State<'g> {
    gate: KeyGate<'g>,
    flavor: Flavor,
    unused: RefCell<Vec<Unused>>,
    /// Above zero while reading below a case-folded key, where nothing is reported unused.
    quiet: std::cell::Cell<u32>,
}

/// Go's `encoding/json` matches a key to a field ignoring case with Unicode simple folding
/// (`ſ` is `s`, the Kelvin sign is `k`); `field` is ASCII.
fn folds_to(key: &str, field: &str) -> bool {
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
                    segs.push(Seg::Key((*k).to_string()));
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
pub fn short(text: &str) -> String {
    if text.chars().count() > 10 {
        format!("{}...", text.chars().take(7).collect::<String>())
    } else {
        text.to_string()
    }
}

struct NodeDe<'a, 'p, 'g> {
    node: &'a Node,
    path: &'p Path<'p>,
    key_offset: Option<u32>,
    st: &'a State<'g>,
}

impl NodeDe<'_, '_, '_> {
    /// Go's JSON decoder reports a mismatch after a scalar, or just inside a container's
    /// bracket; go-yaml reports the value's own position.
    fn go_offset(&self) -> u32 {
        match self.st.flavor {
            Flavor::Yaml => self.node.start,
            Flavor::Json if self.node.is_container() => self.node.start + 1,
            Flavor::Json => self.node.end,
        }
    }

    fn type_error(&self, want: &str) -> DeError {
        let message = match self.st.flavor {
            Flavor::Json => {
                let found = match &self.node.value {
                    // Go quotes the number whole; a hostile one is clipped.
                    Value::Number(n)
                        if n.to_string().len() > crate::ignition::MAX_QUOTED_NUMBER =>
                    {
                        let t = n.to_string();
                        format!("number {}… ({} characters)", &t[..32], t.len())
                    }
                    Value::Number(n) => format!("number {n}"),
                    v => v.kind_name().to_string(),
                };
                format!("cannot unmarshal {found} into a value of type {want}")
            }
            Flavor::Yaml => {
                let found = match &self.node.value {
                    Value::Plain(t) => format!("{} `{}`", resolve(t).tag(), short(t)),
                    Value::String(t) => format!("!!str `{}`", short(t)),
                    Value::Array(_) => "!!seq".to_string(),
                    Value::Object(_) => "!!map".to_string(),
                    v => v.kind_name().to_string(),
                };
                format!("cannot unmarshal {found} into {want}")
            }
        };
        DeError {
            offset: Some(self.go_offset()),
            path: Some(self.path.to_json_path()),
            message,
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

    /// Whether this is a YAML plain scalar that means null.
    fn plain_null(&self) -> bool {
        matches!(&self.node.value, Value::Plain(t) if resolve(t) == Resolved::Null)
    }

    fn integer<T: TryFrom<i128>>(&self, want: &str) -> Result<Option<T>, DeError> {
        let wide: Option<i128> = match &self.node.value {
            Value::Null => return Ok(None),
            Value::Number(n) => n.parse::<i128>().ok(),
            Value::Plain(t) => match resolve(t) {
                Resolved::Null => return Ok(None),
                Resolved::Int(i) => Some(i),
                Resolved::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(f as i128),
                _ => None,
            },
            _ => None,
        };
        wide.and_then(|v| T::try_from(v).ok())
            .map(Some)
            .ok_or_else(|| self.type_error(want))
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
                Resolved::Int(i) => v.visit_i64(i as i64),
                Resolved::Float(f) => v.visit_f64(f),
                Resolved::Str => v.visit_str(t),
            },
            Value::Array(_) => return self.deserialize_seq(v),
            Value::Object(_) => return self.deserialize_map(v),
        };
        r.map_err(|e| self.locate(e))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let b = match &self.node.value {
            Value::Bool(b) => *b,
            Value::Null => false,
            Value::Plain(_) if self.plain_null() => false,
            Value::Plain(t) => match resolve_bool(t) {
                Some(b) => b,
                None => return Err(self.type_error("bool")),
            },
            _ => return Err(self.type_error("bool")),
        };
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
        let f = match &self.node.value {
            Value::Number(n) => n.parse::<f64>().map_err(|_| self.type_error("float64"))?,
            Value::Null => 0.0,
            Value::Plain(t) => match resolve(t) {
                Resolved::Null => 0.0,
                Resolved::Int(i) => i as f64,
                Resolved::Float(f) => f,
                _ => return Err(self.type_error("float64")),
            },
            _ => return Err(self.type_error("float64")),
        };
        v.visit_f64(f).map_err(|e| self.locate(e))
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let r = match &self.node.value {
            Value::String(s) => v.visit_str(s),
            Value::Null => v.visit_str(""),
            Value::Plain(_) if self.plain_null() => v.visit_str(""),
            Value::Plain(t) => v.visit_str(t),
            _ => return Err(self.type_error("string")),
        };
        r.map_err(|e| self.locate(e))
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
        match self.node.value {
            Value::Null => v.visit_none(),
            Value::Plain(_) if self.plain_null() => v.visit_none(),
            _ => v.visit_some(self),
        }
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
        let items: &[Node] = match &self.node.value {
            Value::Array(items) => items,
            Value::Null => &[],
            Value::Plain(_) if self.plain_null() => &[],
            _ => return Err(self.type_error("array")),
        };
        let access = Seq {
            items,
            next: 0,
            path: self.path,
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
            && self.st.quiet.get() == 0
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
        let entries = match &self.node.value {
            Value::Object(entries) => entries.as_slice(),
            Value::Null => &[],
            Value::Plain(_) if self.plain_null() => &[],
            _ => return Err(self.type_error("object")),
        };
        let access = Map {
            entries,
            next: 0,
            ty,
            path: self.path,
            st: self.st,
        };
        v.visit_map(access).map_err(|e| self.locate(e))
    }
}

struct Seq<'a, 'p, 'g> {
    items: &'a [Node],
    next: usize,
    path: &'p Path<'p>,
    st: &'a State<'g>,
}

impl<'de> de::SeqAccess<'de> for Seq<'_, '_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.get(self.next) else {
            return Ok(None);
        };
        let path = Path::Index(self.path, self.next);
        self.next += 1;
        seed.deserialize(NodeDe {
            node,
            path: &path,
            key_offset: None,
            st: self.st,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

struct Map<'a, 'p, 'g> {
    entries: &'a [crate::tree::Entry],
    next: usize,
    /// The struct's name and its fields' names, when reading a struct.
    ty: Option<(&'static str, &'static [&'static str])>,
    path: &'p Path<'p>,
    st: &'a State<'g>,
}

impl<'a> Map<'a, '_, '_> {
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
        while let Some(e) = self.entries.get(self.next) {
            let field = self.field_for(&e.key);
            // Go decodes repeated keys in turn (matched case-insensitively, for JSON): the
            // last one counts, but a later `null` changes nothing.
            let json = self.st.flavor == Flavor::Json;
            let repeated = self.entries[self.next + 1..].iter().any(|l| {
                self.field_for(&l.key) == field && !(json && matches!(l.value.value, Value::Null))
            }) || (json
                && matches!(e.value.value, Value::Null)
                && self.entries[..self.next]
                    .iter()
                    .any(|l| self.field_for(&l.key) == field));
            let unused = |st: &State<'_>| {
                if st.quiet.get() > 0 {
                    return;
                }
                let path = Path::Key(self.path, &e.key);
                st.unused.borrow_mut().push(Unused {
                    path: path.to_json_path(),
                    offset: e.key_start,
                });
            };
            if repeated {
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
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let e = &self.entries[self.next];
        self.next += 1;
        let path = Path::Key(self.path, &e.key);
        // Below a key matched only case-insensitively upstream's unused-key pass finds no
        // JSON for the struct (it looks by exact name) and reports nothing.
        let folded = self.field_for(&e.key) != e.key;
        if folded {
            self.st.quiet.set(self.st.quiet.get() + 1);
        }
        let r = seed.deserialize(NodeDe {
            node: &e.value,
            path: &path,
            key_offset: Some(e.key_start),
            st: self.st,
        });
        if folded {
            self.st.quiet.set(self.st.quiet.get() - 1);
        }
        r
    }
}

#[cfg(test)]
mod tests {
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
