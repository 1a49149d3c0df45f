//! Lists: Go decodes a repeated key's list items over the earlier list's, keeping the last
//! list's length, and notes the items it then drops (see [`Shadowed`](super::Shadowed)).

use super::{DeError, Flavor, NodeDe, Occ, Path, State};
use crate::tree::{Node, Value};
use crate::yaml::is_null;
use serde::de::{self, DeserializeSeed, Visitor};

impl<'de> NodeDe<'_, '_, '_> {
    /// Notes the items of `layers` from index `from` on as dropped (see [`Shadowed`](super::Shadowed)).
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

    /// Go's decoding of a list: the items of every decoding of the value in turn, as
    /// layers over one backing array.
    pub(super) fn sequence<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
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
}

/// The items serde reads of a list, taken from each layer in turn.
struct Seq<'a, 'p, 'g> {
    /// The lists decoded in turn (the last gives the length).
    layers: Vec<Occ<'a, 'p>>,
    next: usize,
    st: &'a State<'g>,
}

/// The items of a decoding that is a list (none for any other value).
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
