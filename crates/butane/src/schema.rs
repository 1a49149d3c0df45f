//! JSON Schemas for editors, generated from the model types so they cannot drift from what
//! the parser accepts.

use crate::{REGISTRY, Variant};
use flint_ignition::{Config, Version};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The schema names `flint schema` knows.
pub fn names() -> Vec<String> {
    let ignition = Version::ALL.iter().map(|v| format!("ignition-{v}"));
    let butane = REGISTRY.iter().map(Variant::schema_name);
    ignition.chain(butane).collect()
}

/// The schema called `name`, if there is one.
pub fn by_name(name: &str) -> Option<Value> {
    if let Some(v) = name.strip_prefix("ignition-") {
        return Version::parse(v).ok().map(ignition);
    }
    REGISTRY
        .iter()
        .find(|s| s.schema_name() == name)
        .map(butane)
}

/// Keys a variant refuses although its base has them: an editor should flag them as the
/// translator does.
fn refused(spec: &Variant, ty: &str, key: &str) -> bool {
    use crate::Family;
    match spec.family {
        Family::Flatcar => {
            (spec.refuses_clevis() && (ty, key) == ("Luks", "clevis"))
                || (spec.refuses_cex() && (ty, key) == ("Luks", "cex"))
        }
        Family::R4e | Family::Fiot => matches!(
            (ty, key),
            ("Config", "kernel_arguments") | ("Storage", "disks" | "filesystems" | "luks" | "raid")
        ),
        Family::OpenShift => {
            matches!(
                (ty, key),
                ("Passwd", "groups")
                    | ("Storage", "directories" | "links")
                    | ("File", "append")
                    | ("Resource", "http_headers")
                    | (
                        "PasswdUser",
                        "gecos"
                            | "groups"
                            | "home_dir"
                            | "no_create_home"
                            | "no_log_init"
                            | "no_user_group"
                            | "primary_group"
                            | "shell"
                            | "should_exist"
                            | "system"
                            | "uid"
                    )
            ) || (spec.refuses_password_hash() && (ty, key) == ("PasswdUser", "password_hash"))
                || (spec.refuses_kernel_arguments_section()
                    && (ty, key) == ("Config", "kernel_arguments"))
        }
        Family::Fcos => false,
    }
}

/// The JSON Schema (draft-07) of a Butane spec, for yaml-language-server.
pub fn butane(spec: &Variant) -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let mut root = generator
        .into_root_schema_for::<crate::base::types::Config>()
        .to_value();
    let obj = root.as_object_mut().expect("a root schema is an object");
    obj.insert(
        "$id".into(),
        Value::String(format!(
            "https://flint.invalid/schemas/{}.json",
            spec.schema_name()
        )),
    );
    obj.insert(
        "title".into(),
        Value::String(format!("Butane config, {} {}", spec.name, spec.version)),
    );
    let has = |ty: &str, key: &str| spec.has_key(ty, key) && !refused(spec, ty, key);
    restrict(obj, "Config", &has);
    if let Some(Value::Object(defs)) = obj.get_mut("definitions") {
        for (name, def) in defs.iter_mut() {
            if let Value::Object(d) = def {
                restrict(d, name, &has);
            }
        }
    }
    prune(obj);
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        pin(props, "variant", spec.name);
        pin(props, "version", spec.version);
    }
    obj.insert("required".into(), serde_json::json!(["variant", "version"]));
    root
}

/// Fixes property `key` to `value`, keeping its description.
fn pin(props: &mut Map<String, Value>, key: &str, value: &str) {
    let mut fixed = Map::new();
    if let Some(d) = props.get(key).and_then(|p| p.get("description")) {
        fixed.insert("description".into(), d.clone());
    }
    fixed.insert("const".into(), Value::String(value.into()));
    props.insert(key.into(), Value::Object(fixed));
}

/// Drops the definitions no property refers to any more.
fn prune(root: &mut Map<String, Value>) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref")
                    && let Some(name) = r.strip_prefix("#/definitions/")
                {
                    out.push(name.to_string());
                }
                for (k, x) in m {
                    if k != "definitions" {
                        refs(x, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let Some(Value::Object(defs)) = root.get("definitions").cloned() else {
        return;
    };
    let mut keep: Vec<String> = Vec::new();
    let mut todo = Vec::new();
    refs(&Value::Object(root.clone()), &mut todo);
    while let Some(name) = todo.pop() {
        if keep.contains(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            refs(def, &mut todo);
        }
        keep.push(name);
    }
    if let Some(Value::Object(defs)) = root.get_mut("definitions") {
        defs.retain(|name, _| keep.contains(name));
    }
}

/// The JSON Schema (draft-07) of Ignition spec `version`.
pub fn ignition(version: Version) -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let schema = generator.into_root_schema_for::<Config>();
    let mut root = schema.to_value();
    let obj = root.as_object_mut().expect("a root schema is an object");
    obj.insert(
        "$id".into(),
        Value::String(format!(
            "https://flint.invalid/schemas/ignition-{version}.json"
        )),
    );
    obj.insert(
        "title".into(),
        Value::String(format!("Ignition config, spec {version}")),
    );
    let has = |ty: &str, key: &str| version.has_key(ty, key);
    restrict(obj, "Config", &has);
    if let Some(Value::Object(defs)) = obj.get_mut("definitions") {
        for (name, def) in defs.iter_mut() {
            if let Value::Object(d) = def {
                restrict(d, name, &has);
            }
        }
        // The version is fixed for a version's schema.
        if let Some(Value::Object(ig)) = defs.get_mut("Ignition")
            && let Some(Value::Object(props)) = ig.get_mut("properties")
        {
            let mut v = Map::new();
            v.insert("const".into(), Value::String(version.to_string()));
            if let Some(d) = props.get("version").and_then(|p| p.get("description")) {
                v.insert("description".into(), d.clone());
            }
            v.insert("type".into(), Value::String("string".into()));
            props.insert("version".into(), Value::Object(v));
            ig.insert(
                "required".into(),
                Value::Array(vec![Value::String("version".into())]),
            );
        }
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props.retain(|k, _| version.has_key("Config", k));
    }
    obj.insert(
        "required".into(),
        Value::Array(vec![Value::String("ignition".into())]),
    );
    prune_definitions(obj);
    root
}

/// Drops the definitions no longer referenced once a version's keys are gone (3.4.0 has no
/// `Cex`, 3.0.0 no `Luks`), so a schema shows only what its version has.
fn prune_definitions(root: &mut Map<String, Value>) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("$ref", Value::String(r)) => out.push(
                            r.trim_start_matches("#/definitions/")
                                .trim_start_matches("#/$defs/")
                                .to_string(),
                        ),
                        _ => refs(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let Some(Value::Object(defs)) = root.remove("definitions") else {
        return;
    };
    let mut todo = Vec::new();
    refs(&Value::Object(root.clone()), &mut todo);
    let mut keep = std::collections::BTreeSet::new();
    while let Some(name) = todo.pop() {
        if keep.insert(name.clone())
            && let Some(d) = defs.get(&name)
        {
            refs(d, &mut todo);
        }
    }
    let kept: Map<String, Value> = defs.into_iter().filter(|(k, _)| keep.contains(k)).collect();
    root.insert("definitions".into(), Value::Object(kept));
}

/// Drops the keys `version` does not have and refuses unknown keys, so editors flag typos.
/// Every key may be `null`, which the parser (like Go's decoder) reads as "not set".
fn restrict(def: &mut Map<String, Value>, type_name: &str, has: &dyn Fn(&str, &str) -> bool) {
    if let Some(Value::Object(props)) = def.get_mut("properties") {
        props.retain(|k, _| has(type_name, k));
        for prop in props.values_mut() {
            allow_null(prop);
        }
        def.insert("additionalProperties".into(), Value::Bool(false));
    }
}

fn allow_null(prop: &mut Value) {
    let Value::Object(p) = prop else { return };
    // A property with a description of its own refers to its type through `allOf`.
    if let Some(Value::Array(all)) = p.get("allOf")
        && let [Value::Object(only)] = all.as_slice()
        && only.len() == 1
        && let Some(r) = only.get("$ref").cloned()
    {
        p.remove("allOf");
        p.insert("$ref".into(), r);
    }
    if let Some(r) = p.remove("$ref") {
        let mut reference = Map::new();
        reference.insert("$ref".into(), r);
        let null = serde_json::json!({"type": "null"});
        p.insert(
            "anyOf".into(),
            Value::Array(vec![Value::Object(reference), null]),
        );
    } else if let Some(Value::String(t)) = p.get("type").cloned() {
        p.insert("type".into(), serde_json::json!([t, "null"]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_gates_apply() {
        // A key as a property (descriptions may name keys a version lacks).
        let has = |schema: &str, k: &str| schema.contains(&format!("\"{k}\":"));
        let s33 = ignition(Version::V3_3).to_string();
        let s34 = ignition(Version::V3_4).to_string();
        assert!(!has(&s33, "openOptions"));
        assert!(has(&s34, "openOptions"));
        assert!(s33.contains("\"const\":\"3.3.0\""));
        let s30 = ignition(Version::V3_0).to_string();
        assert!(!has(&s30, "kernelArguments") && !has(&s30, "httpHeaders"));
        assert!(!has(&s34, "cex"));
        let s35 = ignition(Version::V3_5).to_string();
        assert!(has(&s35, "cex"));
        assert!(by_name("ignition-3.7.0-experimental").is_some());
        assert!(by_name("ignition-3.0.0").is_some());
        assert!(by_name("ignition-3.4.0").is_some());
        assert!(by_name("ignition-9.9.9").is_none());
        let b10 = by_name("butane-flatcar-1.0.0").unwrap().to_string();
        let b11 = by_name("butane-flatcar-1.1.0").unwrap().to_string();
        assert!(!has(&b10, "contents_local") && has(&b11, "contents_local"));
        assert!(!has(&b11, "clevis"));
    }
}
