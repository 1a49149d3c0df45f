//! The order upstream reports unused keys in: it walks the config's structs depth first,
//! fields in declaration order, and reports a struct's unknown keys when it reaches the
//! struct. The declaration order is read from the types themselves, by deserializing them
//! once from a probe that records each struct's fields.

use serde::de::{self, DeserializeOwned, Visitor};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::OnceLock;

use flint_go::tree::{JsonPath, Seg};

/// Each struct's fields in order, with the struct a field's values are (if any) and whether
/// the field is a list of them.
type Layout = HashMap<&'static str, Vec<(&'static str, Option<&'static str>, bool)>>;

struct Probe<'a> {
    layout: &'a RefCell<Layout>,
    /// Where the struct name met below this value is recorded.
    found: &'a Cell<Option<&'static str>>,
    /// Set when a list is met below this value before any struct.
    list: &'a Cell<bool>,
}

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probe")
    }
}
impl std::error::Error for Never {}
impl de::Error for Never {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Never
    }
}

struct Fields<'a> {
    layout: &'a RefCell<Layout>,
    name: &'static str,
    fields: &'static [&'static str],
    next: usize,
}

impl<'de> de::MapAccess<'de> for Fields<'_> {
    type Error = Never;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Never> {
        let Some(f) = self.fields.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(de::value::StrDeserializer::<Never>::new(f))
            .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Never> {
        let field = self.fields[self.next];
        self.next += 1;
        let found = Cell::new(None);
        let list = Cell::new(false);
        let v = seed.deserialize(Probe {
            layout: self.layout,
            found: &found,
            list: &list,
        })?;
        if let Some(entry) = self.layout.borrow_mut().get_mut(self.name) {
            entry.push((field, found.get(), list.get()));
        }
        Ok(v)
    }
}

struct Empty;

impl<'de> de::MapAccess<'de> for Empty {
    type Error = Never;
    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        _: K,
    ) -> Result<Option<K::Value>, Never> {
        Ok(None)
    }
    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, _: V) -> Result<V::Value, Never> {
        Err(Never)
    }
}

struct One<'a> {
    probe: Option<Probe<'a>>,
}

impl<'de> de::SeqAccess<'de> for One<'_> {
    type Error = Never;
    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Never> {
        match self.probe.take() {
            Some(p) => seed.deserialize(p).map(Some),
            None => Ok(None),
        }
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Never;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_bool(false)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_i64(0)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_str("")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_str("")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        if self.found.get().is_none() {
            self.list.set(true);
        }
        v.visit_seq(One { probe: Some(self) })
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Never> {
        v.visit_map(Empty)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Never> {
        if self.found.get().is_none() {
            self.found.set(Some(name));
        }
        if self.layout.borrow().contains_key(name) {
            return v.visit_map(Empty);
        }
        self.layout.borrow_mut().insert(name, Vec::new());
        v.visit_map(Fields {
            layout: self.layout,
            name,
            fields,
            next: 0,
        })
    }
    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct enum identifier ignored_any
    }
}

fn layout_of<T: DeserializeOwned>() -> Layout {
    let layout = RefCell::new(Layout::new());
    let found = Cell::new(None);
    let list = Cell::new(false);
    let _ = T::deserialize(Probe {
        layout: &layout,
        found: &found,
        list: &list,
    });
    layout.into_inner()
}

fn butane_layout() -> &'static (Layout, &'static str) {
    static L: OnceLock<(Layout, &'static str)> = OnceLock::new();
    L.get_or_init(|| (layout_of::<super::base::types::Config>(), "Config"))
}

/// Whether the Butane config has a struct at `path` (where a mapping is expected).
pub(crate) fn struct_at(path: &JsonPath) -> bool {
    let (layout, root) = butane_layout();
    let mut ty = Some(*root);
    for s in path.segs() {
        if let Seg::Key(k) = s {
            let fields = ty.and_then(|t| layout.get(t));
            ty = fields.and_then(|f| f.iter().find(|x| x.0 == k).and_then(|x| x.1));
        }
    }
    ty.is_some()
}

/// Whether the field at `path` holds a list of structs.
pub(crate) fn struct_list_at(path: &JsonPath) -> bool {
    let (layout, root) = butane_layout();
    let mut ty = Some(*root);
    let mut list = false;
    for s in path.segs() {
        match s {
            Seg::Key(k) => {
                let field = ty
                    .and_then(|t| layout.get(t))
                    .and_then(|f| f.iter().find(|x| x.0 == k));
                ty = field.and_then(|x| x.1);
                list = field.is_some_and(|x| x.2);
            }
            Seg::Index(_) => list = false,
        }
    }
    ty.is_some() && list
}

/// Whether the field at `path` holds a single struct (not a list of them): a null there
/// is what upstream's position tracking does not expect.
pub(crate) fn single_struct_at(path: &JsonPath) -> bool {
    let (layout, root) = butane_layout();
    let mut ty = Some(*root);
    let mut single = false;
    for s in path.segs() {
        match s {
            Seg::Key(k) => {
                let field = ty
                    .and_then(|t| layout.get(t))
                    .and_then(|f| f.iter().find(|x| x.0 == k));
                ty = field.and_then(|x| x.1);
                single = field.is_some_and(|x| !x.2);
            }
            Seg::Index(_) => single = false,
        }
    }
    ty.is_some() && single
}

/// Where upstream's walk reaches the unused key at `path`: comparing these keys orders
/// the keys as upstream reports them.
pub(crate) fn walk_position(path: &JsonPath) -> Vec<u64> {
    let (layout, root) = butane_layout();
    let segs = path.segs();
    let mut key = Vec::with_capacity(segs.len() + 1);
    let mut ty = Some(*root);
    for s in &segs[..segs.len().saturating_sub(1)] {
        match s {
            Seg::Index(i) => key.push(*i as u64 + 1),
            Seg::Key(k) => {
                let fields = ty.and_then(|t| layout.get(t));
                let found = fields.and_then(|f| f.iter().position(|x| x.0 == k));
                key.push(found.map_or(u64::MAX, |i| i as u64 + 1));
                ty = fields.and_then(|f| found.and_then(|i| f[i].1));
            }
        }
    }
    // The struct's own unknown keys come before anything below it.
    key.push(0);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_like_the_struct_walk() {
        let p = |s: &[&str]| {
            let mut j = JsonPath::root();
            for x in s {
                match x.parse::<usize>() {
                    Ok(i) => j.push(Seg::Index(i)),
                    Err(_) => j.push(Seg::Key(x.to_string().into())),
                }
            }
            j
        };
        let top = walk_position(&p(&["kernel_arguments"]));
        let proxy = walk_position(&p(&["ignition", "proxy"]));
        let trees = walk_position(&p(&["storage", "trees"]));
        let headers = walk_position(&p(&["storage", "files", "0", "contents", "http_headers"]));
        let mount = walk_position(&p(&["storage", "filesystems", "0", "mount_options"]));
        assert!(top < proxy && proxy < trees && trees < headers && headers < mount);
    }
}
