//! The JSON Schemas under spec/ are generated from the model, current, and accept the valid
//! configs we know of while flagging mistakes an editor should show.
mod common;

use flint::ignition::Version;
use serde_json::Value;

fn schema_file(v: Version) -> std::path::PathBuf {
    common::repo().join(format!("spec/ignition-{v}.json"))
}

#[test]
fn committed_schemas_are_current() {
    for v in [Version::V3_3, Version::V3_4] {
        let generated = flint::json::to_vec(&flint::schema::ignition(v), true);
        let committed = std::fs::read(schema_file(v)).expect("spec/ schema committed");
        assert!(
            generated == committed,
            "spec/ignition-{v}.json is stale: run `flint schema ignition-{v} > spec/ignition-{v}.json`"
        );
    }
}

/// Every config that validates cleanly and declares 3.3.0 or 3.4.0.
fn valid_configs() -> Vec<(std::path::PathBuf, Value)> {
    let mut dirs = common::case_dirs(&common::repo().join("fixtures/validate"));
    dirs.extend(common::case_dirs(
        &common::shared().join("conformance-ignition"),
    ));
    let mut files: Vec<_> = dirs.into_iter().map(|d| d.join("in.ign")).collect();
    files.extend(
        common::case_dirs(&common::shared().join("conformance"))
            .into_iter()
            .map(|d| d.join("expected.ign")),
    );
    let mut out = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let diags = flint::ignition::check(&bytes);
        if !diags.is_empty() {
            continue;
        }
        let parsed = flint::ignition::parse(&bytes).unwrap();
        if parsed.version >= Version::V3_3 {
            out.push((f, serde_json::from_slice(&bytes).unwrap()));
        }
    }
    out
}

fn validator(v: Version) -> jsonschema::Validator {
    let schema: Value = serde_json::from_slice(&std::fs::read(schema_file(v)).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

#[test]
fn valid_configs_satisfy_their_schema() {
    let configs = valid_configs();
    assert!(
        configs.len() >= 50,
        "only {} valid configs found",
        configs.len()
    );
    let (v33, v34) = (validator(Version::V3_3), validator(Version::V3_4));
    for (path, value) in configs {
        let version = value["ignition"]["version"].as_str().unwrap();
        let v = if version == "3.3.0" { &v33 } else { &v34 };
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn schema_reports_typos_wrong_types_and_version_gated_keys() {
    let v33 = validator(Version::V3_3);
    let typo = serde_json::json!({"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "contnets": {}}]}});
    assert!(!v33.is_valid(&typo));
    let wrong = serde_json::json!({"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "mode": "0644"}]}});
    assert!(!v33.is_valid(&wrong));
    let newer = serde_json::json!({"ignition": {"version": "3.3.0"}, "storage": {"luks": [{"name": "a", "discard": true}]}});
    assert!(!v33.is_valid(&newer));
    let wrong_version = serde_json::json!({"ignition": {"version": "3.4.0"}});
    assert!(!v33.is_valid(&wrong_version));
    assert!(validator(Version::V3_4).is_valid(&serde_json::json!({"ignition": {"version": "3.4.0"}, "storage": {"luks": [{"name": "a", "discard": true}]}})));
}
