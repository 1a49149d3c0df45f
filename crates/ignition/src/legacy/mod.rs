//! Legacy Ignition configs: spec 2.0.0–2.4.0 and spec 1 (`"ignitionVersion": 1`), which
//! Flatcar's Ignition still reads by translating them to 3.x. Here they are read (with the
//! document's version gating its keys), validated by the 2.x rules, and translated into the
//! 3.x model exactly as Flatcar translates them.
//!
//! - `types`: the 2.x model (2.4.0, the others are subsets); `version`: the versions, their
//!   keys, and what each older version's values mean in 2.4.0;
//! - `v1`: the spec 1 model and its conversion to 2.0.0;
//! - `validate`: the 2.x rules; `translate`: 2.4.0 → 3.1.0.

pub mod translate;
pub mod types;
pub mod v1;
pub mod validate;
pub mod version;

pub use translate::{Counters, TranslateError};
pub use version::LegacyVersion;

use crate::validate::Issue;
use flint_go::de;
use flint_go::diag::{Diagnostic, Severity};
use flint_go::tree::{JsonPath, Node, Seg, Source, Value};

/// How a document announces a legacy version: `Ok` with the version, or `Err` with the
/// upstream message when it is a legacy form Flatcar does not read (`2.5.0`,
/// `2.4.0-experimental`, `"ignitionVersion": 2`).
pub fn detect(tree: &Node) -> Option<Result<LegacyVersion, String>> {
    const UNKNOWN: &str = "unsupported config version";
    // Found as Go's decoder finds it (keys in any letter case, nulls skipped).
    let version = match crate::parse::go_version(tree) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let number = tree
        .get("ignitionVersion")
        .and_then(|e| match &e.value.value {
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    match (version, number) {
        (Some(v), n) => {
            let semver = crate::version::GoSemver::parse(&v)?;
            let major = semver.major;
            if major >= 3 {
                return None;
            }
            if let Some(l) = LegacyVersion::parse_2x(&semver.to_string()) {
                return Some(Ok(l));
            }
            // Below 2.0.0 the old parsers fall back to spec 1.
            if major < 2 && n.as_deref() == Some("1") {
                return Some(Ok(LegacyVersion::V1));
            }
            Some(Err(UNKNOWN.into()))
        }
        (None, Some(n)) if n == "1" => Some(Ok(LegacyVersion::V1)),
        (None, Some(_)) => Some(Err(UNKNOWN.into())),
        (None, None) => None,
    }
}

/// A legacy config read and brought to 2.4.0's meaning.
pub struct Parsed {
    pub config: types::Config,
    pub version: LegacyVersion,
    pub tree: Node,
    /// Unused-key warnings.
    pub warnings: Vec<Diagnostic>,
    /// For spec 1: where each 2.x file came from (filesystem index, file index).
    v1_files: Vec<(usize, usize)>,
}

/// Reads a legacy config of version `version` from `tree`.
pub fn read(tree: Node, src: &Source, version: LegacyVersion) -> Result<Parsed, Diagnostic> {
    if let Some(e) = negative_unsigned(&tree, version) {
        return Err(crate::parse::de_error(src, e));
    }
    let mut v1_files = Vec::new();
    let (mut config, unused) = if version == LegacyVersion::V1 {
        let all = |_: &'static str, _: &str| true;
        let (c, unused) = de::from_node::<v1::V1Config>(&tree, &all)
            .map_err(|e| crate::parse::de_error(src, e))?;
        for (i, fs) in c.storage.filesystems.iter().enumerate() {
            v1_files.extend((0..fs.files.len()).map(|j| (i, j)));
        }
        (v1::to_v2_0(c), unused)
    } else {
        let gate = |ty: &'static str, key: &str| version.has_key(ty, key);
        de::from_node::<types::Config>(&tree, &gate).map_err(|e| crate::parse::de_error(src, e))?
    };
    version.max(LegacyVersion::V2_0).upgrade(&mut config);
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
        v1_files,
    })
}

/// The fields spec 1 and 2.0 hold unsigned (Go's `uint`), by path (`*` any list item): a
/// negative number there (`-0` too: Go reads no sign into an unsigned number) fails the
/// decoding, as upstream's does; from 2.1 they are signed.
fn negative_unsigned(tree: &Node, version: LegacyVersion) -> Option<de::DeError> {
    const V1: &[&[&str]] = &[
        &["passwd", "users", "*", "create", "uid"],
        &["passwd", "groups", "*", "gid"],
        &["storage", "filesystems", "*", "files", "*", "mode"],
        &["storage", "disks", "*", "partitions", "*", "start"],
        &["storage", "disks", "*", "partitions", "*", "size"],
    ];
    const V2_0: &[&[&str]] = &[
        &["passwd", "users", "*", "create", "uid"],
        &["passwd", "groups", "*", "gid"],
        &["storage", "files", "*", "mode"],
        &["storage", "disks", "*", "partitions", "*", "start"],
        &["storage", "disks", "*", "partitions", "*", "size"],
    ];
    let patterns = match version {
        LegacyVersion::V1 => V1,
        LegacyVersion::V2_0 => V2_0,
        _ => return None,
    };
    let mut found: Option<(JsonPath, &Node)> = None;
    for pattern in patterns {
        negative_at(tree, pattern, JsonPath::root(), &mut |path, node| {
            if found.as_ref().is_none_or(|(_, f)| node.start < f.start) {
                found = Some((path, node));
            }
        });
    }
    let (path, node) = found?;
    let flint_go::tree::Value::Number(n) = &node.value else {
        return None;
    };
    Some(de::DeError {
        offset: Some(node.end),
        path: Some(path),
        message: format!("cannot unmarshal number {n} into a value of type uint"),
        found: Some(node.value.clone()),
        also: Vec::new(),
        fatal: false,
    })
}

/// Calls `hit` with each negative number at `pattern` below `node` (keys as Go matches
/// them, ignoring case).
fn negative_at<'a>(
    node: &'a Node,
    pattern: &[&str],
    path: JsonPath,
    hit: &mut dyn FnMut(JsonPath, &'a Node),
) {
    use flint_go::tree::Value;
    let Some((first, rest)) = pattern.split_first() else {
        if let Value::Number(n) = &node.value
            && n.starts_with('-')
        {
            hit(path, node);
        }
        return;
    };
    match (&node.value, *first) {
        (Value::Array(items), "*") => {
            for (i, item) in items.iter().enumerate() {
                negative_at(item, rest, path.index(i), hit);
            }
        }
        (Value::Object(entries), key) => {
            for e in entries.iter().filter(|e| de::folds_to(&e.key, key)) {
                negative_at(&e.value, rest, path.key(e.key.clone()), hit);
            }
        }
        _ => {}
    }
}

impl Parsed {
    /// A path in the 2.x model as a path in the document (they differ for spec 1, whose
    /// files stand inside their filesystem and whose filesystems have no `mount`).
    fn document_path(&self, p: JsonPath) -> JsonPath {
        if self.version != LegacyVersion::V1 {
            return p;
        }
        let segs = p.segs();
        let key = |i: usize| match segs.get(i) {
            Some(Seg::Key(k)) => Some(k.as_ref()),
            _ => None,
        };
        let idx = |i: usize| match segs.get(i) {
            Some(Seg::Index(n)) => Some(*n),
            _ => None,
        };
        let mut out: Vec<Seg> = segs.to_vec();
        if key(0) == Some("storage") {
            if key(1) == Some("files")
                && let Some(&(fs, j)) = idx(2).and_then(|n| self.v1_files.get(n))
            {
                out = vec![
                    Seg::Key("storage".into()),
                    Seg::Key("filesystems".into()),
                    Seg::Index(fs),
                    Seg::Key("files".into()),
                    Seg::Index(j),
                ];
                out.extend(segs[3..].iter().cloned());
            } else if key(1) == Some("filesystems") && key(3) == Some("mount") {
                out.remove(3);
            }
        }
        JsonPath::from(out)
    }

    /// The 2.x rules' findings.
    pub fn issues(&self) -> Vec<Issue> {
        validate::validate(&self.config, self.version)
            .into_iter()
            .map(|i| Issue {
                path: self.document_path(i.path),
                ..i
            })
            .collect()
    }

    /// The 3.1.0 config Flatcar's Ignition would make of this one, or why it refuses it
    /// (including the 2.x validation errors).
    pub fn translate(&self, counters: &mut Counters) -> Result<crate::Config, TranslateError> {
        if let Some(e) = self
            .issues()
            .into_iter()
            .find(|i| i.severity == Severity::Error)
        {
            return Err(TranslateError {
                path: Some(e.path),
                message: e.message,
            });
        }
        let out = translate::translate(&self.config, counters).map_err(|e| TranslateError {
            path: e.path.map(|p| self.document_path(p)),
            message: e.message,
        })?;
        check_translated(&out)?;
        Ok(out)
    }
}

/// The translated config must be valid 3.1.0 (Flatcar's build also takes `oem://` URLs).
fn check_translated(c: &crate::Config) -> Result<(), TranslateError> {
    let issues = crate::validate::validate(c, crate::Version::V3_1);
    let first = issues.into_iter().find(|i| {
        i.severity == Severity::Error
            && !(i.message == "invalid url scheme" && oem_source_at(c, &i.path))
    });
    match first {
        None => Ok(()),
        Some(i) => Err(TranslateError {
            path: None,
            message: format!(
                "the translated 3.1.0 config is invalid: {}: {}",
                i.path, i.message
            ),
        }),
    }
}

/// Whether the source at (or in the resource at) `path` of `c` is an `oem://` URL.
fn oem_source_at(c: &crate::Config, path: &JsonPath) -> bool {
    let json = flint_go::json::to_vec(c, false);
    let Ok(tree) = flint_go::json::parse(&json) else {
        return false;
    };
    let node = tree.deepest(path);
    let src = match &node.value {
        Value::String(s) => Some(s.clone()),
        _ => node.get("source").and_then(|e| match &e.value.value {
            Value::String(s) => Some(s.clone()),
            _ => None,
        }),
    };
    // In any letter case: Go's URL parser lowers the scheme.
    src.is_some_and(|s| s.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("oem:")))
}

/// Everything `flint validate` reports about a legacy document: a read failure, or the 2.x
/// rules' findings, unused keys and, when those pass, why the translation to 3.x fails.
pub fn check(bytes: &[u8], tree: Node, version: Result<LegacyVersion, String>) -> Vec<Diagnostic> {
    let src = Source::new(bytes);
    let version = match version {
        Ok(v) => v,
        Err(msg) => return vec![Diagnostic::fatal(msg)],
    };
    let parsed = match read(tree, &src, version) {
        Ok(p) => p,
        Err(d) => return vec![d],
    };
    let issues = parsed.issues();
    let failed = issues.iter().any(|i| i.severity == Severity::Error);
    let mut out = crate::validate::locate(issues, &parsed.tree, &src);
    if !failed && let Err(e) = parsed.translate(&mut Counters::default()) {
        let pos = e.path.as_ref().map(|p| src.locate(parsed.tree.marker(p)));
        out.push(Diagnostic::error(e.path, pos, e.message));
    }
    out.extend(parsed.warnings);
    out
}

/// Reads a legacy document and translates it (for provisioning), with the process-wide
/// counters as Flatcar's Ignition has them.
pub fn translate_bytes(
    bytes: &[u8],
    tree: Node,
    version: Result<LegacyVersion, String>,
) -> Result<crate::Config, TranslateError> {
    let src = Source::new(bytes);
    let version = version.map_err(|m| TranslateError {
        path: None,
        message: m,
    })?;
    let parsed = read(tree, &src, version).map_err(|d| TranslateError {
        path: d.path,
        message: d.message,
    })?;
    let mut counters = translate::PROCESS_COUNTERS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    parsed.translate(&mut counters)
}

/// Whether `tree` decodes as a spec 1 config: the last parser Flatcar's 2.x chain tries on a
/// config of no version it knows, whose decoding error it reports as an invalid config.
pub fn decodes_as_v1(tree: &Node) -> bool {
    let all = |_: &'static str, _: &str| true;
    de::from_node::<v1::V1Config>(tree, &all).is_ok()
}
