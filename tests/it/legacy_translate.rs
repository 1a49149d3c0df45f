//! Spec 1 and 2.x configs translated to 3.x as Flatcar's Ignition translates them: every case
//! of `conformance/legacy-translate/` goes through `flint plan --stage fetch --config-cache`,
//! and the rendered config must equal the one the reference rendered (or both must refuse).
use crate::common;

use serde_json::Value;
use std::path::Path;

/// Differences that carry no meaning: empty objects and lists (the reference writes Go's
/// empty structs), the version (the reference renders to its newest), the resolved
/// references (the reference keeps them, flint drops them), unit order (the reference's is
/// random) and special mode bits (3.x before 3.6 drops them when applying; the reference drops
/// them when rendering).
fn normalize(v: &mut Value, key: &str) {
    match v {
        Value::Object(m) => {
            if key == "ignition" {
                m.remove("version");
                m.remove("config");
            }
            for (k, child) in m.iter_mut() {
                normalize(child, k);
            }
            if let Some(mode) = m.get("mode").and_then(Value::as_i64) {
                m.insert("mode".into(), (mode & 0o777).into());
            }
            m.retain(|_, c| !is_empty(c));
        }
        Value::Array(a) => {
            for child in a.iter_mut() {
                normalize(child, "");
            }
            if key == "units" {
                a.sort_by_key(|u| u["name"].as_str().unwrap_or_default().to_string());
            }
        }
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn normalized(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap();
    normalize(&mut v, "");
    v
}

fn render(case: &Path, work: &Path) -> Result<String, String> {
    let cache = work.join("cache.json");
    let root = work.join("root");
    let _ = std::fs::remove_file(&cache);
    std::fs::create_dir_all(&root).unwrap();
    let out = common::run_in(
        work,
        &common::flint(),
        &[
            "plan",
            "--stage",
            "fetch",
            "--config-cache",
            cache.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
            case.join("config.ign").to_str().unwrap(),
        ],
    );
    if out.status.success() {
        Ok(std::fs::read_to_string(&cache).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn legacy_configs_render_like_flatcar() {
    let corpus = common::corpus("legacy-translate");
    let work = std::env::temp_dir().join(format!("flint-legacy-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let (mut passed, mut failed) = (0, Vec::new());
    for case in common::case_dirs(&corpus) {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let got = render(&case, &work);
        let verdict = match (std::fs::read_to_string(case.join("expected.ign")), got) {
            (Ok(want), Ok(got)) => {
                let (w, g) = (normalized(&want), normalized(&got));
                (w == g)
                    .then_some(())
                    .ok_or(format!("rendered\n  {g}\nwant\n  {w}"))
            }
            (Err(_), Err(_)) => Ok(()),
            (Ok(_), Err(e)) => Err(format!("refused, the reference renders it: {e}")),
            (Err(_), Ok(got)) => Err(format!("rendered, the reference refuses it: {got}")),
        };
        match verdict {
            Ok(()) => passed += 1,
            Err(why) => failed.push(format!("{name}: {why}")),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        failed.is_empty(),
        "{} passed, {} failed:\n{}",
        passed,
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(passed, common::corpus_cases(&corpus).len(), "cases checked");
}
