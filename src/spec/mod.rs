//! Butane specs: one module per variant and version, each a thin layer over a shared base,
//! and the translation pipeline from Butane YAML to an Ignition config with diagnostics.
//!
//! Adding a spec version is adding a module with a [`Variant`] and listing it in
//! [`REGISTRY`].

pub mod base;
pub mod flatcar;
pub mod pathmap;

use crate::de::{self, Flavor};
use crate::diag::{Diagnostic, Severity};
use crate::ignition::types as ig;
use crate::ignition::validate::Issue;
use crate::ignition::{Version, validate};
use crate::tree::{Node, Source, Value};
use base::BaseVersion;
use base::local::FilesDir;
use std::path::Path;

/// A Butane spec version of a variant.
pub struct Variant {
    pub name: &'static str,
    pub version: &'static str,
    pub base: BaseVersion,
    /// The Ignition spec version the output has.
    pub ignition: Version,
    /// Checks the variant adds on the generated config.
    pub filter: fn(&ig::Config, &mut Vec<Issue>),
}

pub const REGISTRY: &[Variant] = &[flatcar::v1_0::SPEC, flatcar::v1_1::SPEC];

/// How to translate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// The directory `local` references are read from.
    pub files_dir: Option<&'a Path>,
}

/// What translating a document gave.
pub struct Outcome {
    /// The config, when translation succeeded.
    pub config: Option<ig::Config>,
    /// Findings located in the source.
    pub diagnostics: Vec<Diagnostic>,
    /// Why translation failed (printed after "Error translating config: ").
    pub failure: Option<String>,
}

impl Outcome {
    fn failed(message: impl Into<String>, diagnostics: Vec<Diagnostic>) -> Self {
        Outcome {
            config: None,
            diagnostics,
            failure: Some(message.into()),
        }
    }

    pub fn has_warnings(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Warning)
    }
}

/// The text of a top-level scalar field, "" when absent or null.
fn scalar(root: &Node, key: &str) -> String {
    match root.get(key).map(|e| &e.value.value) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Plain(s))
            if crate::yaml::resolve::resolve(s) != crate::yaml::resolve::Resolved::Null =>
        {
            s.clone()
        }
        _ => String::new(),
    }
}

/// Translates the Butane document `bytes`.
pub fn translate(bytes: &[u8], opts: Options<'_>) -> Outcome {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Outcome::failed(
                format!(
                    "Error unmarshaling yaml: yaml: invalid UTF-8 at byte {}",
                    e.valid_up_to()
                ),
                Vec::new(),
            );
        }
    };
    let src = Source::new(bytes);
    let doc = match crate::yaml::parse(text) {
        Ok(d) => d,
        Err(e) => {
            let located = Diagnostic::error(
                None,
                Some(crate::tree::LineCol {
                    line: e.line,
                    col: e.col,
                }),
                e.message.clone(),
            );
            let failure = if e.duplicate_key {
                format!("yaml: unmarshal errors:\n  line {}: {}", e.line, e.message)
            } else {
                let msg = e
                    .message
                    .trim_start_matches("while parsing a block collection, ");
                let msg = msg.trim_start_matches("while parsing a block mapping, ");
                format!(
                    "Error unmarshaling yaml: yaml: line {}: {msg}",
                    e.upstream_line
                )
            };
            return Outcome::failed(failure, vec![located]);
        }
    };
    let root = doc.root;
    if !matches!(root.value, Value::Object(_) | Value::Null)
        && !matches!(&root.value, Value::Plain(s) if s.is_empty())
    {
        let found = match &root.value {
            Value::Plain(t) | Value::String(t) => format!("!!str `{}`", de::short(t)),
            Value::Array(_) => "!!seq".into(),
            _ => "!!map".into(),
        };
        let line = src.locate(root.start).line;
        return Outcome::failed(
            format!(
                "Error unmarshaling yaml: yaml: unmarshal errors:\n  line {line}: cannot unmarshal {found} into a Butane config (a mapping)"
            ),
            Vec::new(),
        );
    }

    let variant = scalar(&root, "variant");
    if variant.is_empty() {
        return Outcome::failed("error parsing variant; must be specified", Vec::new());
    }
    let version = scalar(&root, "version");
    if !crate::ignition::version::is_semver(&version) {
        return Outcome::failed("error parsing version; must be a valid semver", Vec::new());
    }
    let Some(spec) = REGISTRY
        .iter()
        .find(|s| s.name == variant && s.version == version)
    else {
        return Outcome::failed(
            format!("No translator exists for variant {variant} with version {version}"),
            Vec::new(),
        );
    };

    let gate = |ty: &'static str, key: &str| spec.base.has_key(ty, key);
    let (config, unused) = match de::from_tree::<base::types::Config>(&root, &gate, Flavor::Yaml) {
        Ok(v) => v,
        Err(e) => {
            let pos = e.offset.map(|o| src.locate_chars(o));
            let line = pos.map_or(0, |p| p.line);
            let msg = e.message;
            let located = Diagnostic::error(e.path, pos, msg.clone());
            return Outcome::failed(
                format!("yaml: unmarshal errors:\n  line {line}: {msg}"),
                vec![located],
            );
        }
    };

    let locate = |issues: Vec<Issue>, map: Option<&pathmap::PathMap>| -> Vec<Diagnostic> {
        issues
            .into_iter()
            .map(|i| {
                let path = match map {
                    Some(m) => m.source_of(&i.path),
                    None => i.path,
                };
                let pos = src.locate_chars(root.deepest(&path).start);
                Diagnostic {
                    severity: i.severity,
                    path: Some(path),
                    pos: Some(pos),
                    message: i.message,
                    fatal: false,
                }
            })
            .collect()
    };

    let mut diagnostics: Vec<Diagnostic> = unused
        .into_iter()
        .map(|u| {
            let pos = src.locate_chars(u.offset);
            u.warning(pos)
        })
        .collect();

    let files = FilesDir {
        dir: opts.files_dir,
    };
    let t = base::translate(&config, spec.ignition, files);
    diagnostics.extend(locate(t.issues, None));
    if t.source_invalid {
        return Outcome::failed("source config is invalid", diagnostics);
    }
    let mut filtered = Vec::new();
    (spec.filter)(&t.config, &mut filtered);
    let filter_failed = !filtered.is_empty();
    diagnostics.extend(locate(filtered, Some(&t.map)));
    if filter_failed {
        return Outcome::failed("source config is invalid", diagnostics);
    }

    let issues = validate::validate(&t.config, spec.ignition);
    let invalid = issues.iter().any(|i| i.severity == Severity::Error);
    diagnostics.extend(locate(issues, Some(&t.map)));
    if invalid {
        return Outcome::failed("config generated was invalid", diagnostics);
    }
    Outcome {
        config: Some(t.config),
        diagnostics,
        failure: None,
    }
}
