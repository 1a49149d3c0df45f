//! Reading an Ignition config of any supported version into the newest model.
//!
//! The steps and their failures follow the upstream validator: an empty document, JSON syntax,
//! the version stub (`ignition.version`), the version itself, then the full model with type
//! errors; keys the model (or the document's version) does not have become warnings.

use super::gotype;
use super::types::Config;
use super::version::Version;
use flint_go::de::{self, DeError};
use flint_go::diag::Diagnostic;
use flint_go::json;
use flint_go::tree::{JsonPath, LineCol, Lines, Node, Source, Value};
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

/// The `ignition.version` upstream's decoder leaves in its version stub: keys matched to
/// `ignition` and `version` as Go matches them (ignoring case), applied in turn, a null
/// leaving what was there (the stub's field is a string). `None`: none was given.
pub fn go_version(tree: &Node) -> Option<&Value> {
    let Value::Object(root) = &tree.value else {
        return None;
    };
    let mut out = None;
    for e in root.iter().filter(|e| de::folds_to(&e.key, "ignition")) {
        let Value::Object(ignition) = &e.value.value else {
            continue;
        };
        for v in ignition.iter().filter(|v| de::folds_to(&v.key, "version")) {
            if !matches!(v.value.value, Value::Null) {
                out = Some(&v.value.value);
            }
        }
    }
    out
}

/// Where upstream places an error reported at byte `offset` (Go's offset: just after the
/// offending value or character). Upstream's locator finds no line for an offset at the
/// very end of the input and prints line 0 col 0.
fn go_locate(lines: &Lines, offset: u32) -> LineCol {
    if offset as usize >= lines.len() {
        LineCol { line: 0, col: 0 }
    } else {
        lines.locate(offset)
    }
}

/// A type error as Go's decoder words it (no JSON path: upstream prints none), when it is
/// one; `version` is `None` while reading the version stub.
fn go_de_error(lines: &Lines, tree: &Node, e: DeError, version: Option<Version>) -> Diagnostic {
    let pos = e.offset.map(|o| go_locate(lines, o));
    if let Some(path) = &e.path
        && let Some(message) = gotype::type_error(
            path,
            e.found.as_ref().unwrap_or(&tree.deepest(path).value),
            version,
        )
    {
        return Diagnostic::error(None, pos, message);
    }
    Diagnostic::error(e.path, pos, e.message)
}

/// Decodes `tree` as Go's decoder does, the list items it reads and then drops included
/// (see `de::Shadowed`): each is decoded again on its own, at its path, and the first type
/// error in the document is the one reported, wherever it is.
fn decode_config(tree: &Node, gate: de::KeyGate<'_>) -> de::Decoded<Config> {
    let (result, shadowed) = de::from_node_shadowed::<Config>(tree, gate);
    let at = |e: &DeError| e.offset.unwrap_or(u32::MAX);
    let mut first = result.as_ref().err().cloned();
    for (path, start) in shadowed {
        let Some(item) = starting_at(tree, start) else {
            continue;
        };
        if let Err(e) = decode_config(&alone_at(&path, item), gate)
            && first.as_ref().is_none_or(|f| at(&e) < at(f))
        {
            first = Some(e);
        }
    }
    match first {
        Some(e) => Err(e),
        None => result,
    }
}

/// The deepest node of `tree` that starts at byte `start`.
fn starting_at(tree: &Node, start: u32) -> Option<&Node> {
    let inside = |n: &&Node| n.start <= start && start < n.end;
    let child = match &tree.value {
        Value::Array(items) => items.iter().find(inside),
        Value::Object(entries) => entries.iter().map(|e| &e.value).find(inside),
        _ => None,
    };
    match child {
        Some(c) => starting_at(c, start),
        None => (tree.start == start).then_some(tree),
    }
}

/// A document holding only `item`, at `path` (earlier list items null); every node keeps
/// its place in the original text, so errors are placed as there.
fn alone_at(path: &JsonPath, item: &Node) -> Node {
    use flint_go::tree::{Entry, Seg};
    let (start, end) = (item.start, item.end);
    let null = || Node {
        value: Value::Null,
        start,
        end: start,
    };
    let mut node = item.clone();
    for seg in path.segs().iter().rev() {
        let value = match seg {
            Seg::Index(i) => Value::Array((0..*i).map(|_| null()).chain([node]).collect()),
            Seg::Key(k) => Value::Object(vec![Entry {
                key: k.to_string(),
                key_start: start,
                value: node,
            }]),
        };
        node = Node { value, start, end };
    }
    node
}

/// A decoding error as it is, at its JSON path (legacy configs, whose validator words its
/// own).
pub(crate) fn de_error(src: &Source, e: DeError) -> Diagnostic {
    Diagnostic::error(e.path, e.offset.map(|o| src.locate(o)), e.message)
}

/// Reads `bytes` as a JSON tree, with Go's syntax error positions.
pub fn read_json(bytes: &[u8]) -> Result<Node, Diagnostic> {
    json::parse(bytes).map_err(|e| {
        // Lines are indexed only for an error: a 10 MB config is read in a few passes.
        let lines = Lines::new(bytes);
        // Go reports a syntax error after reading the offending byte; an unexpected end of
        // input has no position and prints as line 0 col 0.
        let pos = match e.at {
            Some(at) => go_locate(&lines, at.wrapping_add(1)),
            None => LineCol { line: 0, col: 0 },
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
    parse_tree(bytes, read_json(bytes)?)
}

/// [`parse`], for a caller that already read `bytes` into `tree` (to look at its version).
pub fn parse_tree(bytes: &[u8], tree: Node) -> Result<Parsed, Diagnostic> {
    parse_lines(&Lines::new(bytes), tree)
}

/// [`parse_tree`], letting go of the text before the config is decoded: the text, its tree
/// and the config each hold every inline file, and the provisioner needs only two of them
/// at once.
pub fn parse_tree_owned(bytes: Vec<u8>, tree: Node) -> Result<Parsed, Diagnostic> {
    let lines = Lines::new(&bytes);
    drop(bytes);
    parse_lines(&lines, tree)
}

/// [`parse_tree`] of a text known by its lines.
fn parse_lines(src: &Lines, tree: Node) -> Result<Parsed, Diagnostic> {
    let all_keys = |_: &'static str, _: &str| true;
    let (stub, _) =
        de::from_node::<Stub>(&tree, &all_keys).map_err(|e| go_de_error(src, &tree, e, None))?;
    // (The stub above decoded, its type errors reported: the version is what Go left.)
    let _ = stub;
    let version_text = match go_version(&tree) {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(Diagnostic::fatal(
                super::version::VersionError::Invalid.to_string(),
            ));
        }
    };
    let version = Version::parse(&version_text).map_err(|e| Diagnostic::fatal(e.to_string()))?;
    decode_as(src, tree, version)
}

/// Reads `bytes` into the config of `version` whatever version it names, as Go decodes a
/// document into one version's types (Butane's check of an inline config): no version stub
/// first, and no look at the version field. A JSON syntax or type error is the one error.
pub fn parse_as(bytes: &[u8], version: Version) -> Result<Parsed, Diagnostic> {
    let tree = read_json(bytes)?;
    decode_as(&Lines::new(bytes), tree, version)
}

/// The config of `version` that `tree` holds, with the warnings of upstream's unused-key pass.
fn decode_as(src: &Lines, tree: Node, version: Version) -> Result<Parsed, Diagnostic> {
    let gate = |ty: &'static str, key: &str| version.has_key(ty, key);
    // 3.0.0's references have no `compression`: whatever it holds is never decoded.
    let stripped = (version == Version::V3_0)
        .then(|| strip_reference_compression(&tree))
        .flatten();
    let (mut config, mut unused) = decode_config(stripped.as_ref().unwrap_or(&tree), &gate)
        .map_err(|e| go_de_error(src, &tree, e, Some(version)))?;
    if version == Version::V3_0 {
        drop_reference_compression(&mut config, &tree, &mut unused);
    }
    if version == Version::V3_2 {
        mark_custom_objects(&mut config, &tree);
    }
    let unused_paths: std::collections::HashSet<JsonPath> =
        unused.iter().map(|u| u.path.clone()).collect();
    // Ordered as upstream's walk reaches them: by the struct they are found in (an unused
    // key's parent, a null struct itself), then in the document's order.
    type WalkKey = Vec<(u8, usize, String)>;
    let mut found: Vec<(WalkKey, u32, Diagnostic)> = unused
        .into_iter()
        .map(|u| {
            let offset = u.offset;
            let mut parent = u.path.clone();
            parent.pop();
            let walk = gotype::walk_position(&parent, version);
            (walk, offset, u.warning(src.locate(offset)))
        })
        .collect();
    null_structs(
        &tree,
        &JsonPath::root(),
        version,
        &unused_paths,
        &mut |path, node| {
            found.push((
            gotype::walk_position(path, version),
            node.start,
            Diagnostic::warning(
                Some(path.clone()),
                Some(src.locate(node.start)),
                format!(
                    "context tree does not match content tree at {path}. Line and column reporting may be inconsistent. Unused keys may not be reported"
                ),
            ),
        ));
        },
    );
    found.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let warnings = found.into_iter().map(|(_, _, d)| d).collect();
    Ok(Parsed {
        config,
        version,
        tree,
        warnings,
    })
}

/// Calls `report` for every `null` that stands where the model has a struct: upstream's
/// unused-key pass walks every struct of the decoded config and, finding no JSON object for
/// it, warns that its context tree does not match the content. Keys the version does not
/// have (`unused`) are not part of the model and are skipped.
fn null_structs(
    node: &Node,
    path: &JsonPath,
    version: Version,
    unused: &std::collections::HashSet<JsonPath>,
    report: &mut dyn FnMut(&JsonPath, &Node),
) {
    // Most configs hold no null at all: one look, no paths made.
    if path.is_root() && !has_null(node) {
        return;
    }
    match &node.value {
        // (A null document reaches this only through `parse_as`: a version stub stops it.)
        Value::Null if gotype::is_walked_struct(path, version) => report(path, node),
        Value::Object(entries) => {
            // Go keeps the last of repeated keys.
            let last: std::collections::HashMap<&str, usize> = (entries.iter().enumerate())
                .map(|(i, e)| (e.key.as_str(), i))
                .collect();
            for (i, e) in entries.iter().enumerate() {
                if last.get(e.key.as_str()) != Some(&i) {
                    continue;
                }
                let p = path.key(e.key.clone());
                if !unused.contains(&p) {
                    null_structs(&e.value, &p, version, unused, report);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                null_structs(item, &path.index(i), version, unused, report);
            }
        }
        _ => {}
    }
}

fn has_null(node: &Node) -> bool {
    match &node.value {
        Value::Null => true,
        Value::Object(entries) => entries.iter().any(|e| has_null(&e.value)),
        Value::Array(items) => items.iter().any(has_null),
        _ => false,
    }
}

/// 3.0.0's config and CA references had no `compression` (the shared model does): there it
/// is an unused key, and ignored.
fn drop_reference_compression(config: &mut Config, tree: &Node, unused: &mut Vec<de::Unused>) {
    for (place, r) in config.resources_mut().filter(|(p, _)| p.is_reference()) {
        let key = place.path().key("compression");
        if let Some(offset) = tree.key_marker(&key) {
            r.compression = None;
            unused.push(de::Unused { path: key, offset });
        }
    }
}

/// `tree` without the `compression` keys of its config and CA references (3.0.0 had none:
/// a value there of any type is only an unused key), when it has any.
fn strip_reference_compression(tree: &Node) -> Option<Node> {
    fn refs(node: &mut Node, path: &[&str]) -> bool {
        let Some((first, rest)) = path.split_first() else {
            let strip = |n: &mut Node| match &mut n.value {
                Value::Object(es) => {
                    let before = es.len();
                    es.retain(|e| !e.key.eq_ignore_ascii_case("compression"));
                    es.len() != before
                }
                _ => false,
            };
            return match &mut node.value {
                Value::Array(items) => items.iter_mut().fold(false, |a, n| strip(n) | a),
                _ => strip(node),
            };
        };
        match &mut node.value {
            Value::Object(es) => es
                .iter_mut()
                .filter(|e| e.key == *first)
                .fold(false, |a, e| refs(&mut e.value, rest) | a),
            _ => false,
        }
    }
    let mut copy = tree.clone();
    let mut changed = false;
    for path in [
        &["ignition", "config", "merge"][..],
        &["ignition", "config", "replace"],
        &["ignition", "security", "tls", "certificateAuthorities"],
    ] {
        changed |= refs(&mut copy, path);
    }
    changed.then_some(copy)
}

/// 3.2.0 held `clevis.custom` by pointer, so an empty `custom: {}` was still "given" (and
/// clashes with tpm2, tang or threshold). The shared model cannot tell `{}` from absent;
/// `needsNetwork: false`, which means the same as absent, marks it.
fn mark_custom_objects(config: &mut Config, tree: &Node) {
    let luks = JsonPath::root().key("storage").key("luks");
    for (i, l) in config.storage.luks.iter_mut().enumerate() {
        let custom = luks.index(i).key("clevis").key("custom");
        let node = tree.deepest(&custom);
        let is_custom =
            tree.key_marker(&custom).is_some() && matches!(node.value, Value::Object(_));
        if is_custom && l.clevis.custom.needs_network.is_none() {
            l.clevis.custom.needs_network = Some(false);
        }
    }
}
