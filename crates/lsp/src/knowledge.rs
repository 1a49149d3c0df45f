//! What the editor is told about keys and values, all of it read from the JSON Schemas that
//! `flint schema` prints (one source for both), plus the value sets the validators accept.

use crate::context::Seg;
use crate::doc::{Spec, family_versions};
use flint_ignition::validate::{UNIT_SUFFIXES, filesystem_formats, hash_functions};
use serde_json::Value;
use std::collections::HashMap;

/// The schemas of the specs met so far (generating one takes a few milliseconds).
#[derive(Default)]
pub(crate) struct Schemas {
    cache: HashMap<String, Value>,
}

impl Schemas {
    pub(crate) fn get(&mut self, spec: Spec) -> &Value {
        let name = spec.schema_name();
        self.cache
            .entry(name)
            .or_insert_with_key(|n| flint_butane::schema::by_name(n).unwrap_or(Value::Null))
    }
}

/// A node of a schema with the references and nullable wrappers around it taken away.
pub(crate) fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/definitions/");
            match root.get("definitions").and_then(|d| d.get(name)) {
                Some(def) => node = def,
                None => return node,
            }
            continue;
        }
        let branches = node
            .get("anyOf")
            .or_else(|| node.get("allOf"))
            .and_then(Value::as_array);
        match branches.and_then(|b| b.iter().find(|x| x.get("type") != Some(&"null".into()))) {
            Some(b) => node = b,
            None => return node,
        }
    }
    node
}

/// The schema of the property at `path`: the unresolved property node (where a field's
/// description is) and the root.
pub(crate) fn at<'a>(root: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    let mut node = root;
    for seg in path {
        let here = resolve(root, node);
        node = match seg {
            Seg::Key(k) => here.get("properties")?.get(k)?,
            Seg::Item => here.get("items")?,
        };
    }
    Some(node)
}

/// The keys an object at `path` may have, with their property nodes.
pub(crate) fn keys<'a>(root: &'a Value, path: &[Seg]) -> Vec<(&'a str, &'a Value)> {
    let Some(node) = at(root, path) else {
        return Vec::new();
    };
    match resolve(root, node)
        .get("properties")
        .and_then(Value::as_object)
    {
        Some(props) => props.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        None => Vec::new(),
    }
}

/// What a property means: its own description, else that of the type it refers to.
pub(crate) fn description(root: &Value, prop: &Value) -> Option<String> {
    let own = prop.get("description").and_then(Value::as_str);
    own.or_else(|| {
        resolve(root, prop)
            .get("description")
            .and_then(Value::as_str)
    })
    .map(str::to_string)
}

/// A property's type in words: `string`, `integer`, `list of File`, `Resource` (an object).
pub(crate) fn type_name(root: &Value, prop: &Value) -> String {
    let named = |n: &Value| -> Option<String> {
        let r = n.get("$ref").and_then(Value::as_str).or_else(|| {
            let b = n.get("anyOf").or_else(|| n.get("allOf"))?.as_array()?;
            b.iter().find_map(|x| x.get("$ref").and_then(Value::as_str))
        })?;
        Some(r.trim_start_matches("#/definitions/").to_string())
    };
    if let Some(n) = named(prop) {
        return format!("{n} (object)");
    }
    let r = resolve(root, prop);
    if let Some(c) = r.get("const").and_then(Value::as_str) {
        return format!("\"{c}\"");
    }
    let types: Vec<&str> = match r.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match types.iter().find(|t| **t != "null") {
        Some(&"array") => {
            let item = r
                .get("items")
                .map(|i| type_name(root, i))
                .unwrap_or_default();
            format!("list of {}", item.trim_end_matches(" (object)"))
        }
        Some(t) => t.to_string(),
        None => "value".into(),
    }
}

pub(crate) fn is_boolean(root: &Value, prop: &Value) -> bool {
    type_name(root, prop) == "boolean"
}

/// The versions of the spec's family in which `path` exists, as a short text: "fcos 1.3.0
/// and later", "ignition 3.0.0 to 3.3.0", or every version listed.
pub(crate) fn versions_having(schemas: &mut Schemas, spec: Spec, path: &[Seg]) -> String {
    let all = family_versions(spec);
    let has: Vec<bool> = all
        .iter()
        .map(|s| at(schemas.get(*s), path).is_some())
        .collect();
    let label = |s: &Spec| match s {
        Spec::Butane(v) => format!("{} {}", v.name, v.version),
        Spec::Ignition(v) => format!("ignition {v}"),
    };
    let first = has.iter().position(|h| *h);
    let last = has.iter().rposition(|h| *h);
    match (first, last) {
        (Some(f), Some(l)) if has[f..=l].iter().all(|h| *h) => {
            if f == 0 && l == all.len() - 1 {
                format!("every {} version", family_label(spec))
            } else if l == all.len() - 1 {
                format!("{} and later", label(&all[f]))
            } else {
                format!("{} to {}", label(&all[f]), label(&all[l]))
            }
        }
        _ => {
            let names: Vec<String> = all
                .iter()
                .zip(&has)
                .filter(|(_, h)| **h)
                .map(|(s, _)| label(s))
                .collect();
            names.join(", ")
        }
    }
}

fn family_label(spec: Spec) -> String {
    match spec {
        Spec::Butane(v) => format!("{} spec", v.name),
        Spec::Ignition(_) => "Ignition spec".into(),
    }
}

/// The values a key takes, where they are a known set: the variant and version names, the
/// filesystem formats and hash functions the validator accepts, booleans.
pub(crate) fn values(schemas: &mut Schemas, spec: Spec, parent: &[Seg], key: &str) -> Vec<String> {
    let last_key = parent.iter().rev().find_map(|s| match s {
        Seg::Key(k) => Some(k.as_str()),
        Seg::Item => None,
    });
    let ignition = match spec {
        Spec::Butane(v) => v.ignition,
        Spec::Ignition(v) => v,
    };
    match (spec, parent.is_empty(), last_key, key) {
        (Spec::Butane(_), true, _, "variant") => {
            let mut names: Vec<String> = flint_butane::REGISTRY
                .iter()
                .map(|v| v.name.to_string())
                .collect();
            names.dedup();
            return names;
        }
        (Spec::Butane(v), true, _, "version") => {
            return family_versions(Spec::Butane(v))
                .into_iter()
                .filter_map(|s| match s {
                    Spec::Butane(x) => Some(x.version.to_string()),
                    Spec::Ignition(_) => None,
                })
                .collect();
        }
        (Spec::Ignition(_), false, Some("ignition"), "version") if parent.len() == 1 => {
            return flint_ignition::Version::ALL
                .iter()
                .map(|v| v.to_string())
                .collect();
        }
        (_, _, Some("filesystems"), "format") => {
            return filesystem_formats(ignition)
                .into_iter()
                .map(String::from)
                .collect();
        }
        (_, _, Some("verification"), "hash") => {
            return hash_functions(ignition)
                .into_iter()
                .map(|f| format!("{f}-"))
                .collect();
        }
        (_, _, _, "compression") => return vec!["gzip".into()],
        _ => {}
    }
    let root = schemas.get(spec);
    let mut path = parent.to_vec();
    path.push(Seg::Key(key.to_string()));
    match at(root, &path) {
        Some(p) if is_boolean(root, p) => vec!["true".into(), "false".into()],
        _ => Vec::new(),
    }
}

/// Unit names completed with each unit type, for a name being typed (`web` → `web.service`).
pub(crate) fn unit_names(typed: &str, dropin: bool) -> Vec<String> {
    let stem = typed.rsplit_once('.').map_or(typed, |(s, _)| s);
    if dropin {
        return vec![format!("{stem}.conf")];
    }
    UNIT_SUFFIXES
        .iter()
        .map(|s| format!("{stem}.{s}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    #[test]
    fn reads_keys_types_and_versions_from_the_schemas() {
        let mut s = Schemas::default();
        let fcos16 = Spec::Butane(flint_butane::lookup("fcos", "1.6.0").unwrap());
        let root = s.get(fcos16).clone();
        let files = [k("storage"), k("files"), Seg::Item];
        let names: Vec<&str> = keys(&root, &files).into_iter().map(|(n, _)| n).collect();
        assert!(
            names.contains(&"path") && names.contains(&"contents"),
            "{names:?}"
        );
        let contents = at(&root, &[k("storage"), k("files"), Seg::Item, k("contents")]).unwrap();
        assert_eq!(type_name(&root, contents), "Resource (object)");
        let f = at(&root, &[k("storage"), k("files")]).unwrap();
        assert_eq!(type_name(&root, f), "list of File");
        let luks = [k("storage"), k("luks")];
        assert_eq!(
            versions_having(&mut s, fcos16, &luks),
            "fcos 1.2.0 and later"
        );
        assert_eq!(
            versions_having(&mut s, fcos16, &[k("storage")]),
            "every fcos spec version"
        );
    }

    #[test]
    fn value_sets() {
        let mut s = Schemas::default();
        let ign = Spec::Ignition(flint_ignition::Version::V3_2);
        let fs = [k("storage"), k("filesystems"), Seg::Item];
        assert_eq!(
            values(&mut s, ign, &fs, "format"),
            ["ext4", "btrfs", "xfs", "swap", "vfat"]
        );
        let wipe = values(&mut s, ign, &fs, "wipeFilesystem");
        assert_eq!(wipe, ["true", "false"]);
        let v = Spec::Butane(flint_butane::lookup("flatcar", "1.0.0").unwrap());
        assert_eq!(
            values(&mut s, v, &[], "version"),
            ["1.0.0", "1.1.0", "1.2.0-experimental"]
        );
        assert_eq!(unit_names("web", false)[0], "web.service");
        assert_eq!(unit_names("web.s", true), ["web.conf"]);
    }
}
