//! `--debug`: where each part of the output came from, printed as upstream's translation
//! set is (`TranslationSet: yaml → json`, then one `$.source → $.output` line per output
//! path, sorted by output path).

use super::pathmap::PathMap;
use crate::tree::{JsonPath, Node};

/// Every path of `value` (objects, arrays and their members), depth first.
fn paths(value: &serde_json::Value, at: &JsonPath, out: &mut Vec<JsonPath>) {
    out.push(at.clone());
    match value {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                paths(v, &at.key(k), out);
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
/// `root` the Butane document.
pub fn translations(json: &[u8], map: &PathMap, root: &Node) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(json) else {
        return String::new();
    };
    let mut all = Vec::new();
    paths(&value, &JsonPath::root(), &mut all);
    let mut lines: Vec<(String, String)> = all
        .iter()
        .filter(|p| !p.is_root())
        .map(|p| (p.to_string(), format!("{} → {}", source(map, p, root), p)))
        .collect();
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
