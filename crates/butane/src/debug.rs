//! `--debug`: where each part of the output came from, printed as upstream's translation
//! set is (`TranslationSet: yaml → json`, then one `$.source → $.output` line per output
//! path, sorted by output path).

use super::openshift::MachineConfig;
use super::pathmap::PathMap;
use flint_go::tree::{JsonPath, Node};

/// Every path of `value` (objects, arrays and their members), depth first.
fn paths(value: &serde_json::Value, at: &JsonPath, out: &mut Vec<JsonPath>) {
    out.push(at.clone());
    match value {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                paths(v, &at.key(k.clone()), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                paths(v, &at.index(i), out);
            }
        }
        _ => {}
    }
}

/// The translation listing for the output `json` (the Ignition config as written), with
/// `root` the Butane document; `wrapper` is the MachineConfig around it for OpenShift
/// (`Some(None)` with `--raw`, where upstream still lists the root).
pub(crate) fn translations(
    json: &[u8],
    map: &PathMap,
    root: &Node,
    wrapper: Option<Option<&MachineConfig>>,
) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(json) else {
        return String::new();
    };
    let mut all = Vec::new();
    paths(&value, &JsonPath::root(), &mut all);
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut add = |from: String, to: String| {
        let line = format!("{from} → {to}");
        lines.push((to, line));
    };
    let config_at = match wrapper {
        Some(Some(mc)) => {
            // The MachineConfig's own fields, then the config under `spec.config`.
            let version = "$.version".to_string();
            for to in ["$.apiVersion", "$.kind", "$.spec"] {
                add(version.clone(), to.into());
            }
            for p in ["$.metadata", "$.metadata.labels", "$.metadata.name"] {
                add(p.into(), p.into());
            }
            for k in mc.labels.keys() {
                let p = format!("$.metadata.labels.{k}");
                add(p.clone(), p);
            }
            let mut list = |from: &str, to: &str, items: &[String]| {
                if !items.is_empty() {
                    add(format!("$.openshift.{from}"), format!("$.spec.{to}"));
                    for i in 0..items.len() {
                        add(
                            format!("$.openshift.{from}.{i}"),
                            format!("$.spec.{to}.{i}"),
                        );
                    }
                }
            };
            list("extensions", "extensions", &mc.spec.extensions);
            list(
                "kernel_arguments",
                "kernelArguments",
                &mc.spec.kernel_arguments,
            );
            if mc.spec.fips.is_some() {
                add("$.openshift.fips".into(), "$.spec.fips".into());
            }
            if mc.spec.kernel_type.is_some() {
                add("$.openshift.kernel_type".into(), "$.spec.kernelType".into());
            }
            Some("$.spec.config")
        }
        Some(None) => Some("$"),
        None => None,
    };
    if let Some(at) = config_at {
        add("$".into(), at.into());
    }
    let prefix = match config_at {
        Some("$.spec.config") => "$.spec.config",
        _ => "$",
    };
    for p in all.iter().filter(|p| !p.is_root()) {
        let to = format!("{prefix}{}", &p.to_string()[1..]);
        add(source(map, p, root).to_string(), to);
    }
    lines.sort();
    let mut out = String::from("TranslationSet: yaml → json\n");
    for (_, line) in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn source(map: &PathMap, p: &JsonPath, root: &Node) -> JsonPath {
    // The version is the one output field with no source of its own.
    if p.to_string() == "$.ignition.version" {
        return JsonPath::root().key("version");
    }
    let s = map.source_of(p);
    // A data URL made from `inline` or `local` comes from that key.
    if let Some(last @ ("source" | "compression")) = s.last_key() {
        let _ = last;
        let mut parent = s.clone();
        parent.pop();
        for sugar in ["inline", "local"] {
            let candidate = parent.key(sugar);
            if root.key_marker(&candidate).is_some() {
                return candidate;
            }
        }
    }
    s
}
