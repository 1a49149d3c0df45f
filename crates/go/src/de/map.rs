//! Objects: a struct's or a map's entries from every decoding of the value, each key
//! matched to its field (ignoring case for JSON), repeated keys decoded in turn at the last
//! of them, and the keys the model does not take noted as unused.

use super::{BAD_MERGE, DeError, Flavor, NodeDe, Occ, Path, State, Unused, refusal};
use crate::tree::{JsonPath, Value};
use crate::yaml::{TagNote, is_null};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use std::collections::HashMap;

/// The maps of a struct's fields are made for each object decoded, and hashed for each key:
/// SipHash's cost showed in translating thousands of files.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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

impl<'de> NodeDe<'_, '_, '_> {
    /// Go's decoding of an object into a struct (`ty`: its name and fields) or a map.
    pub(super) fn object<V: Visitor<'de>>(
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

/// An object's entry, with where the object is and whether its keys are reported.
#[derive(Clone, Copy)]
struct Keyed<'a, 'p> {
    entry: &'a crate::tree::Entry,
    parent: &'p Path<'p>,
    report: bool,
}

/// Objects of up to this many keys are indexed by comparing keys pairwise.
pub(super) const SMALL_OBJECT: usize = 16;

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
