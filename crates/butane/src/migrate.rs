//! `flint migrate`: the Butane config (`variant: flatcar`, version 1.1.0) equivalent to an
//! Ignition config of any version flint reads (spec 1 and 2.x translated as Flatcar does),
//! so that a legacy config can be moved to Butane once and maintained there.
//!
//! The Butane document mirrors the Ignition one with Butane's snake_case keys; `data:` URLs
//! whose contents are text become `inline` (decompressed), everything else is kept as
//! written. Translating the result with `butane` gives a config equivalent to the input: the
//! same entries with the same values, contents equal once decoded (Butane may compress them
//! differently), at version 3.4.0.

use crate::emit::{self, Quoting, Y};
use flint_ignition::{self as ignition, Config};
use serde_json::{Map, Value};

/// Why a config cannot be migrated.
#[derive(Debug, Clone, PartialEq)]
pub struct MigrateError(pub String);

impl std::fmt::Display for MigrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads an Ignition config of any supported version into the 3.x model.
pub fn read(bytes: &[u8]) -> Result<Config, MigrateError> {
    if let Some((tree, version)) = ignition::legacy_tree(bytes) {
        let src = flint_go::tree::Source::new(bytes);
        let version = version.map_err(MigrateError)?;
        let parsed =
            ignition::legacy::read(tree, &src, version).map_err(|d| MigrateError(d.to_string()))?;
        return parsed
            .translate(&mut ignition::legacy::Counters::default())
            .map_err(|e| match e.path {
                Some(p) => MigrateError(format!("{p}: {}", e.message)),
                None => MigrateError(e.message),
            });
    }
    let parsed = ignition::parse(bytes).map_err(|d| MigrateError(d.to_string()))?;
    let issues = ignition::validate::validate(&parsed.config, parsed.version);
    if let Some(e) = issues
        .iter()
        .find(|i| i.severity == flint_go::diag::Severity::Error)
    {
        return Err(MigrateError(format!("{}: {}", e.path, e.message)));
    }
    Ok(parsed.config)
}

/// The Butane document for `config`.
pub fn to_butane(config: &Config) -> Result<String, MigrateError> {
    if config
        .storage
        .luks
        .iter()
        .any(|l| l.clevis != Default::default())
    {
        return Err(MigrateError(
            "storage.luks: Clevis is not supported by Butane's flatcar variant".into(),
        ));
    }
    let json = flint_go::json::to_vec(config, false);
    let mut v: Value = serde_json::from_slice(&json).map_err(|e| MigrateError(e.to_string()))?;
    if let Some(ig) = v.get_mut("ignition").and_then(Value::as_object_mut) {
        ig.remove("version");
    }
    inline_contents(&mut v);
    let mut doc = Map::new();
    if let Value::Object(m) = snake_keys(v) {
        for (k, val) in m {
            if !(k == "ignition" && val.as_object().is_some_and(Map::is_empty)) {
                doc.insert(k, val);
            }
        }
    }
    // `variant` and `version` first, as Butane configs are written.
    let mut entries = vec![
        ("variant".to_string(), Y::Str("flatcar".into())),
        ("version".to_string(), Y::Token("1.1.0".into())),
    ];
    if let Y::Map(rest) = yaml(Value::Object(doc), "") {
        entries.extend(rest);
    }
    String::from_utf8(emit::to_yaml(&Y::Map(entries), Quoting::Readable))
        .map_err(|e| MigrateError(e.to_string()))
}

/// Butane's name for an Ignition key: snake_case, with `MiB` as one word.
fn snake(key: &str) -> String {
    let key = key.replace("MiB", "Mib");
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn snake_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (snake(&k), snake_keys(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// The text a `data:` URL resource holds, when it is text and nothing else (no hash) needs
/// the URL itself.
fn inline_text(res: &Map<String, Value>) -> Option<String> {
    let src = res.get("source")?.as_str()?;
    if !src.starts_with("data:")
        || res.contains_key("verification")
        || res.contains_key("httpHeaders")
    {
        return None;
    }
    let mut bytes = ignition::dataurl::decode(src).ok()?;
    match res.get("compression").and_then(Value::as_str) {
        None | Some("") => {}
        Some("gzip") => {
            let mut d = flate2::read::GzDecoder::new(&bytes[..]);
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut d, &mut out).ok()?;
            bytes = out;
        }
        Some(_) => return None,
    }
    String::from_utf8(bytes).ok()
}

/// Replaces text `data:` URLs of file contents and appends by `inline`.
fn inline_contents(v: &mut Value) {
    let Some(files) = v
        .get_mut("storage")
        .and_then(|s| s.get_mut("files"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let mut resources: Vec<&mut Value> = Vec::new();
    for f in files.iter_mut() {
        let Some(f) = f.as_object_mut() else { continue };
        for (k, r) in f.iter_mut() {
            match k.as_str() {
                "contents" => resources.push(r),
                "append" => resources.extend(r.as_array_mut().into_iter().flatten()),
                _ => {}
            }
        }
    }
    for r in resources {
        let Some(m) = r.as_object_mut() else { continue };
        if let Some(text) = inline_text(m) {
            m.remove("source");
            m.remove("compression");
            m.insert("inline".into(), Value::String(text));
        }
    }
}

/// The document as the YAML writer's values: keys in the order the JSON map keeps them,
/// modes in octal as people write them (YAML 1.1 reads `0644` as octal), other numbers as
/// JSON writes them.
fn yaml(v: Value, key: &str) -> Y {
    match v {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(b),
        Value::Number(n) => match n.as_i64() {
            Some(m) if key == "mode" && m > 0 => Y::Token(format!("0{m:o}")),
            _ => Y::Token(n.to_string()),
        },
        Value::String(s) => Y::Str(s),
        Value::Array(a) => Y::Seq(
            a.into_iter()
                .map(|item| match item {
                    // An empty entry is left empty (`- `), as migrate has always written it.
                    Value::Object(m) if m.is_empty() => Y::Token(String::new()),
                    Value::Array(l) if l.is_empty() => Y::Token(String::new()),
                    item => yaml(item, ""),
                })
                .collect(),
        ),
        Value::Object(m) => Y::Map(
            m.into_iter()
                .map(|(k, v)| {
                    let y = yaml(v, &k);
                    (k, y)
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butane_key_names() {
        assert_eq!(snake("sizeMiB"), "size_mib");
        assert_eq!(snake("sshAuthorizedKeys"), "ssh_authorized_keys");
        assert_eq!(snake("httpResponseHeaders"), "http_response_headers");
        assert_eq!(snake("tpm2"), "tpm2");
    }
}
