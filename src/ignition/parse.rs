//! Reading an Ignition config of any supported version into the newest model.
//!
//! The steps and their failures follow the upstream validator: an empty document, JSON syntax,
//! the version stub (`ignition.version`), the version itself, then the full model with type
//! errors; keys the model (or the document's version) does not have become warnings.

use super::types::Config;
use super::version::Version;
use crate::de::{self, DeError};
use crate::diag::Diagnostic;
use crate::json;
use crate::tree::{Node, Source};
use serde::Deserialize;

/// A config read successfully, with the tree it came from for locating diagnostics.
pub struct Parsed {
    pub config: Config,
    /// The version the document declared; the model is the newest version's.
    pub version: Version,
    pub tree: Node,
    /// Warnings found while reading (unused keys).
    pub warnings: Vec<Diagnostic>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Stub {
    ignition: StubIgnition,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StubIgnition {
    version: Option<String>,
}

pub(crate) fn de_error(src: &Source, e: DeError) -> Diagnostic {
    Diagnostic::error(e.path, e.offset.map(|o| go_position(src, o)), e.message)
}

/// Where upstream places an error Go reports at byte `offset`: an offset at the very end of
/// the document has no line (upstream prints line 0 col 0).
fn go_position(src: &Source, offset: u32) -> crate::tree::LineCol {
    if offset as usize >= src.bytes.len() {
        crate::tree::LineCol { line: 0, col: 0 }
    } else {
        src.locate(offset)
    }
}

/// Reads `bytes` as a JSON tree, with Go's syntax error positions.
pub fn read_json(bytes: &[u8]) -> Result<Node, Diagnostic> {
    let src = Source::new(bytes);
    json::parse(bytes).map_err(|e| {
        // Go reports a syntax error after reading the offending byte; an unexpected end of
        // input has no position and prints as line 0 col 0.
        let pos = match e.at {
            Some(at) => go_position(&src, at + 1),
            None => crate::tree::LineCol { line: 0, col: 0 },
        };
        Diagnostic::error(None, Some(pos), e.message)
    })
}

/// Reads `bytes` as an Ignition config. On failure returns the diagnostics that explain it
/// (exactly one error, as upstream stops at the first).
pub fn parse(bytes: &[u8]) -> Result<Parsed, Diagnostic> {
    if bytes.is_empty() {
        return Err(Diagnostic::fatal("not a config (empty)"));
    }
    let src = Source::new(bytes);
    let tree = read_json(bytes)?;

    let all_keys = |_: &'static str, _: &str| true;
    let (stub, _) = de::from_node::<Stub>(&tree, &all_keys).map_err(|e| de_error(&src, e))?;
    let version_text = stub
        .ignition
        .version
        .ok_or_else(|| Diagnostic::fatal(super::version::VersionError::Invalid.to_string()))?;
    let version = Version::parse(&version_text).map_err(|e| Diagnostic::fatal(e.to_string()))?;

    let gate = |ty: &'static str, key: &str| version.has_key(ty, key);
    let (mut config, mut unused) =
        de::from_node::<Config>(&tree, &gate).map_err(|e| de_error(&src, e))?;
    if version == Version::V3_0 {
        unused.extend(drop_3_0_reference_compression(&mut config, &tree));
        unused.sort_by_key(|u| u.offset);
    }
    let warnings = unused
        .into_iter()
        .map(|u| {
            let pos = src.locate(u.offset);
            u.warning(pos)
        })
        .collect();
    Ok(Parsed {
        config,
        version,
        tree,
        warnings,
    })
}

/// In 3.0.0 the config and CA references are not resources: they have no `compression`
/// (files' contents do, so the key gate cannot tell them apart). Drops it from them and
/// returns the unused-key findings for it.
fn drop_3_0_reference_compression(config: &mut Config, tree: &Node) -> Vec<de::Unused> {
    use crate::tree::{JsonPath, Seg};
    let ign = &mut config.ignition;
    let mut refs: Vec<(Vec<Seg>, &mut super::types::Resource)> = Vec::new();
    let key = |k: &str| Seg::Key(k.to_string());
    for (i, r) in ign.config.merge.iter_mut().enumerate() {
        refs.push((
            vec![key("ignition"), key("config"), key("merge"), Seg::Index(i)],
            r,
        ));
    }
    refs.push((
        vec![key("ignition"), key("config"), key("replace")],
        &mut ign.config.replace,
    ));
    let cas = ign.security.tls.certificate_authorities.iter_mut();
    for (i, r) in cas.enumerate() {
        let segs = ["ignition", "security", "tls", "certificateAuthorities"];
        let mut path: Vec<Seg> = segs.iter().map(|k| key(k)).collect();
        path.push(Seg::Index(i));
        refs.push((path, r));
    }
    let mut out = Vec::new();
    for (segs, r) in refs {
        if r.compression.take().is_none() {
            continue;
        }
        let mut node = Some(tree);
        for seg in &segs {
            node = node.and_then(|n| match seg {
                Seg::Key(k) => n.get(k).map(|e| &e.value),
                Seg::Index(i) => n.index(*i),
            });
        }
        if let Some(e) = node.and_then(|n| n.get("compression")) {
            let mut path = segs.clone();
            path.push(key("compression"));
            out.push(de::Unused {
                path: JsonPath::from(path),
                offset: e.key_start,
                what: de::Unread::Key,
            });
        }
    }
    out
}
