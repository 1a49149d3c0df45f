//! The JSON Schemas under spec/ are generated from the model, current, and accept the valid
//! configs we know of while flagging mistakes an editor should show.
use crate::common;

use flint_ignition::Version;
use serde_json::Value;

fn schema_file(v: Version) -> std::path::PathBuf {
    common::repo().join(format!("spec/ignition-{v}.json"))
}

#[test]
fn committed_schemas_are_current() {
    let names = flint_butane::schema::names();
    // Every schema is committed, and every committed schema is one flint makes.
    let mut committed: Vec<String> = std::fs::read_dir(common::repo().join("spec"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").unwrap_or(&name).to_string()
        })
        .collect();
    committed.sort();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(committed, sorted);
    for name in names {
        let generated =
            flint_go::json::to_vec(&flint_butane::schema::by_name(&name).unwrap(), true);
        let file = common::repo().join(format!("spec/{name}.json"));
        let committed = std::fs::read(&file).expect("spec/ schema committed");
        assert!(
            generated == committed,
            "spec/{name}.json is stale: run `flint schema {name} > spec/{name}.json`"
        );
    }
}

fn butane_validator(version: &str) -> jsonschema::Validator {
    variant_validator("flatcar", version)
}

fn variant_validator(variant: &str, version: &str) -> jsonschema::Validator {
    let file = common::repo().join(format!("spec/butane-{variant}-{version}.json"));
    let schema: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// The schema of the document's own variant and version.
fn schema_of(doc: &Value) -> jsonschema::Validator {
    let field = |k: &str| doc[k].as_str().unwrap_or_default().to_string();
    variant_validator(&field("variant"), &field("version"))
}

fn yaml_value(text: &str) -> Value {
    flint_go::yaml::to_json(&flint_go::yaml::parse(text).unwrap().root)
}

#[test]
fn butane_configs_that_translate_cleanly_satisfy_their_schema() {
    let mut dirs = common::case_dirs(&common::corpus("butane"));
    dirs.extend(common::case_dirs(&common::repo().join("translate-tests")));
    // The reference-made corpus of every variant version: each clean case against the
    // schema of its own variant and version.
    for group in common::case_dirs(&common::repo().join("translate-corpus")) {
        dirs.extend(common::case_dirs(&group));
    }
    let mut checked = 0;
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("in.bu")) else {
            continue;
        };
        let files = dir.join("files");
        let outcome = flint_butane::translate(
            text.as_bytes(),
            flint_butane::Options {
                files_dir: files.is_dir().then_some(files.as_path()),
                ..Default::default()
            },
        );
        // The schema is stricter than the translator on purpose, flagging for editors what
        // go-yaml (and so the translator, for compatibility) lets through: YAML 1.1 `yes`/`no`
        // booleans, numbers as names, floats truncated into integer fields, an empty
        // `clevis` on Flatcar, empty sections r4e and fiot refuse, versions spelt with
        // leading zeros, keys of another struct that an alias brings in where go-yaml
        // ignores them.
        const LENIENT: &[&str] = &[
            "132-yaml-alias-inside-its-anchor-list",
            "092-version-leading-zeros-read-as-semver",
            "014-bool-yaml11-spellings",
            "099-bool-from-quoted-yaml-1-1-words",
            "016-number-as-string-field",
            "084-yaml-float-into-int",
            "045-luks-empty-clevis-accepted",
            "1_0-kargs-empty",
            "1_1-kargs-empty",
        ];
        let lenient = LENIENT.iter().any(|n| dir.ends_with(n));
        if outcome.failure.is_some() || !outcome.diagnostics.is_empty() || lenient {
            continue;
        }
        let value = yaml_value(&text);
        let v = schema_of(&value);
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
        checked += 1;
    }
    assert!(checked >= 200, "only {checked} clean Butane configs found");
}

#[test]
fn butane_schema_flags_what_the_translator_warns_about() {
    let (v10, v11) = (butane_validator("1.0.0"), butane_validator("1.1.0"));
    let typo = yaml_value(
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /a\n      contnets: {}\n",
    );
    assert!(!v10.is_valid(&typo));
    let newer = yaml_value(
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  luks:\n    - name: a\n      discard: true\n",
    );
    assert!(!v10.is_valid(&newer));
    let ok = yaml_value(
        "variant: flatcar\nversion: 1.1.0\nstorage:\n  luks:\n    - name: a\n      discard: true\n",
    );
    assert!(v11.is_valid(&ok));
    let clevis = yaml_value(
        "variant: flatcar\nversion: 1.1.0\nstorage:\n  luks:\n    - name: a\n      clevis: {tpm2: true}\n",
    );
    assert!(!v11.is_valid(&clevis));
    let octal = yaml_value(
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /a\n      mode: 0644\n",
    );
    assert!(v10.is_valid(&octal));
    let wrong = yaml_value(
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /a\n      mode: rw-r--r--\n",
    );
    assert!(!v10.is_valid(&wrong));
}

/// Every config that validates cleanly and declares 3.3.0 or 3.4.0.
fn valid_configs() -> Vec<(std::path::PathBuf, Value)> {
    let mut dirs = common::case_dirs(&common::repo().join("fixtures/validate"));
    dirs.extend(common::case_dirs(&common::corpus("ignition")));
    let mut files: Vec<_> = dirs.into_iter().map(|d| d.join("in.ign")).collect();
    files.extend(
        common::case_dirs(&common::corpus("butane"))
            .into_iter()
            .map(|d| d.join("expected.ign")),
    );
    let mut out = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let diags = flint_ignition::check(&bytes);
        if !diags.is_empty() {
            continue;
        }
        // Legacy 2.x configs validate too, but have no 3.x schema.
        let Ok(parsed) = flint_ignition::parse(&bytes) else {
            continue;
        };
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

#[test]
fn shipped_examples_satisfy_the_butane_schema_and_a_typo_does_not() {
    let mut texts: Vec<(String, String)> = Vec::new();
    for e in std::fs::read_dir(common::repo().join("examples")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "bu") {
            texts.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    // The Butane files of the user guide ("```yaml file=NAME.bu" blocks), but for the one
    // that shows a mistake and the one that shows a limit.
    for e in std::fs::read_dir(common::repo().join("docs/guide")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        for chunk in text.split("```yaml file=").skip(1) {
            let (name, rest) = chunk.split_once('\n').unwrap();
            if !name.ends_with(".bu") || name == "bad.bu" || name == "bomb.bu" {
                continue;
            }
            let body = rest.split("```").next().unwrap();
            texts.push((format!("{}:{name}", p.display()), body.to_string()));
        }
    }
    assert!(texts.len() >= 4, "{}", texts.len());
    for (name, text) in &texts {
        let value = yaml_value(text);
        let v = &schema_of(&value);
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        // The same file with a typo'd key is flagged.
        let typo = text
            .replacen("storage:", "storgae:", 1)
            .replacen("systemd:", "systmd:", 1);
        if typo != *text {
            let value = yaml_value(&typo);
            assert!(
                v.iter_errors(&value).next().is_some(),
                "{name}: a typo'd key passed the schema"
            );
        }
    }
}
