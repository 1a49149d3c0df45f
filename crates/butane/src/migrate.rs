//! `flint migrate`: the Butane config (`variant: flatcar`, version 1.1.0) equivalent to an
//! Ignition config of any version flint reads (spec 1 and 2.x translated as Flatcar does),
//! so that a legacy config can be moved to Butane once and maintained there.
//!
//! The Butane document mirrors the Ignition one with Butane's snake_case keys; `data:` URLs
//! whose contents are text become `inline` (decompressed), everything else is kept as
//! written. Translating the result with `butane` gives a config equivalent to the input: the
//! same entries with the same values, contents equal once decoded (Butane may compress them
//! differently), at version 3.4.0.

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
    doc.insert("variant".into(), Value::String("flatcar".into()));
    doc.insert("version".into(), Value::String("1.1.0".into()));
    if let Value::Object(m) = snake_keys(v) {
        for (k, val) in m {
            if !(k == "ignition" && val.as_object().is_some_and(Map::is_empty)) {
                doc.insert(k, val);
            }
        }
    }
    // `variant` and `version` first, as Butane configs are written.
    let mut out = String::from("variant: flatcar\nversion: 1.1.0\n");
    doc.remove("variant");
    doc.remove("version");
    emit_map(&mut out, &doc, 0);
    Ok(out)
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

/// A string as a YAML scalar on one line: plain where YAML reads it back as this string,
/// double-quoted (JSON escapes are YAML escapes) otherwise.
fn scalar(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain_ok {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// Whether `s` can be written as a literal block scalar and read back unchanged.
fn block_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\n'])
        && s.chars().all(|c| c == '\n' || !c.is_control())
        && !s.contains('\u{feff}')
        && s.lines()
            .all(|l| l.trim_end() == l && !l.is_empty() || l.is_empty())
        && !s.trim_end_matches('\n').is_empty()
}

fn emit_value(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            out.push('\n');
            emit_map(out, m, indent);
        }
        Value::Array(a) => {
            out.push('\n');
            for item in a {
                out.push_str(&pad);
                out.push_str("- ");
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut inner = String::new();
                        emit_map(&mut inner, m, indent + 2);
                        out.push_str(inner.trim_start());
                    }
                    other => {
                        let mut inner = String::new();
                        emit_value(&mut inner, other, indent + 2);
                        out.push_str(inner.trim_start_matches(' '));
                    }
                }
            }
        }
        Value::String(s) if block_ok(s) => {
            let body = s.trim_end_matches('\n');
            let trailing = s.len() - body.len();
            out.push_str(match trailing {
                0 => " |-\n",
                1 => " |\n",
                _ => " |+\n",
            });
            for line in s[..s.len() - trailing.min(1)].split('\n') {
                if !line.is_empty() {
                    out.push_str(&pad);
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
        Value::String(s) => {
            out.push(' ');
            out.push_str(&scalar(s));
            out.push('\n');
        }
        Value::Null => out.push_str(" null\n"),
        other => {
            out.push(' ');
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

fn emit_map(out: &mut String, m: &Map<String, Value>, indent: usize) {
    let pad = " ".repeat(indent);
    for (k, v) in m {
        out.push_str(&pad);
        out.push_str(&scalar(k));
        out.push(':');
        match v {
            // Modes in octal, as people write them (YAML 1.1 reads `0644` as octal).
            Value::Number(n) if k == "mode" && n.as_i64().is_some_and(|m| m > 0) => {
                out.push_str(&format!(" 0{:o}\n", n.as_i64().unwrap_or_default()));
            }
            Value::Object(o) if o.is_empty() => out.push_str(" {}\n"),
            Value::Array(a) if a.is_empty() => out.push_str(" []\n"),
            _ => emit_value(out, v, indent + 2),
        }
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

    #[test]
    fn scalars_read_back_as_strings() {
        assert_eq!(scalar("/etc/hosts"), "/etc/hosts");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("0644"), "\"0644\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert!(block_ok("[Unit]\nA=b\n"));
        assert!(!block_ok(" lead\n"));
        assert!(!block_ok("tab\there\r\n"));
    }
}
