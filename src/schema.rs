//! JSON Schemas for editors, generated from the model types so they cannot drift from what
//! the parser accepts.

use crate::ignition::{Config, Version};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The schema names `flint schema` knows.
pub fn names() -> Vec<String> {
    Version::ALL
        .iter()
        .filter(|v| **v >= Version::V3_3)
        .map(|v| format!("ignition-{v}"))
        .collect()
}

/// The schema called `name`, if there is one.
pub fn by_name(name: &str) -> Option<Value> {
    let v = name.strip_prefix("ignition-")?;
    let version = Version::parse(v).ok()?;
    (version >= Version::V3_3).then(|| ignition(version))
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
    restrict(obj, "Config", version);
    if let Some(Value::Object(defs)) = obj.get_mut("definitions") {
        for (name, def) in defs.iter_mut() {
            if let Value::Object(d) = def {
                restrict(d, name, version);
            }
        }
        // The version is fixed for a version's schema.
        if let Some(Value::Object(ig)) = defs.get_mut("Ignition")
            && let Some(Value::Object(props)) = ig.get_mut("properties")
        {
            let mut v = Map::new();
            v.insert("const".into(), Value::String(version.to_string()));
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
    root
}

/// Drops the keys `version` does not have and refuses unknown keys, so editors flag typos.
/// Every key may be `null`, which the parser (like Go's decoder) reads as "not set".
fn restrict(def: &mut Map<String, Value>, type_name: &str, version: Version) {
    if let Some(Value::Object(props)) = def.get_mut("properties") {
        props.retain(|k, _| version.has_key(type_name, k));
        for prop in props.values_mut() {
            allow_null(prop);
        }
        def.insert("additionalProperties".into(), Value::Bool(false));
    }
}

fn allow_null(prop: &mut Value) {
    let Value::Object(p) = prop else { return };
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
        let s33 = ignition(Version::V3_3).to_string();
        let s34 = ignition(Version::V3_4).to_string();
        assert!(!s33.contains("openOptions"));
        assert!(s34.contains("openOptions"));
        assert!(s33.contains("\"const\":\"3.3.0\""));
        assert!(by_name("ignition-3.4.0").is_some());
        assert!(by_name("ignition-9.9.9").is_none());
    }
}
