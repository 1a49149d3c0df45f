//! The Ignition config: the model of every 3.x version, legacy spec 1 and 2.x configs,
//! parsing with positions, merge, the upgrade chain, and validation with upstream's
//! messages.

#![warn(unreachable_pub)]

pub use flint_go::de::MAX_QUOTED_NUMBER;

pub mod dataurl;
mod gotype;
pub mod legacy;
pub mod merge;
pub mod par;
pub mod parse;
pub mod resources;
pub mod types;
pub mod upgrade;
pub mod validate;
pub mod version;

pub use parse::{Parsed, parse};
pub use types::Config;
pub use upgrade::upgrade;
pub use version::Version;

use flint_go::diag::Diagnostic;

/// Everything the upstream validator would report about `bytes`: a read failure, or the
/// validation findings followed by unused-key warnings.
pub fn check(bytes: &[u8]) -> Vec<Diagnostic> {
    check_with(bytes, validate::Options::UPSTREAM)
}

/// [`check`] with the validator `options` name (e.g. Flatcar's, which accepts `oem://`).
pub fn check_with(bytes: &[u8], options: validate::Options) -> Vec<Diagnostic> {
    let tree = parse::read_json(bytes);
    if options == validate::Options::FLATCAR
        && let Ok(tree) = &tree
        && let Some(d) = flatcar_version_error(bytes, tree)
    {
        return vec![d];
    }
    match read_from(bytes, tree) {
        // Upstream's validator knows no spec 1 or 2.x config; Flatcar's translates them.
        Document::Legacy(tree, _) if options == validate::Options::UPSTREAM => {
            vec![Diagnostic::error(None, None, upstream_refusal(&tree))]
        }
        Document::Legacy(tree, version) => legacy::check(bytes, tree, version),
        Document::Current(parsed) => match *parsed {
            Err(d) => vec![d],
            Ok(p) => {
                let src = flint_go::tree::Source::new(bytes);
                let issues = validate::validate_with(&p.config, p.version, options);
                let mut out = validate::locate(issues, &p.tree, &src);
                // Upstream places its findings with a tree of the document whose numbers
                // are float64s: a number beyond that range anywhere leaves it no tree, so
                // its findings come without line and column, and its unused-key pass (over
                // the same tree) reports nothing.
                if overflows_float(&p.tree) {
                    out.iter_mut().for_each(|d| d.pos = None);
                } else {
                    out.extend(p.warnings);
                }
                out
            }
        },
    }
}

/// Whether a number of the document is beyond float64's range (Go's ParseFloat fails).
pub fn overflows_float(n: &flint_go::tree::Node) -> bool {
    use flint_go::tree::Value;
    match &n.value {
        Value::Number(t) => t.parse::<f64>().is_ok_and(f64::is_infinite),
        Value::Array(items) => items.iter().any(overflows_float),
        Value::Object(entries) => entries.iter().any(|e| overflows_float(&e.value)),
        _ => false,
    }
}

/// How Flatcar's validator refuses the version of `bytes`, where it differs from upstream's:
/// its version stub also reads `ignitionVersion` (an integer; anything else is Go's type
/// error), an empty `ignition.version` stands for `ignitionVersion` as `N.0.0`, and every
/// major version but 3 goes to the 2.x parser, whose refusal it wraps.
fn flatcar_version_error(bytes: &[u8], tree: &flint_go::tree::Node) -> Option<Diagnostic> {
    use flint_go::tree::Value;
    // Anything but an object (at the top and under `ignition`) is the stub's type error.
    if !matches!(tree.value, Value::Object(_) | Value::Null)
        || tree
            .get("ignition")
            .is_some_and(|e| !matches!(e.value.value, Value::Object(_) | Value::Null))
    {
        return None;
    }
    let number = match tree.get("ignitionVersion").map(|e| &e.value) {
        None => None,
        Some(n) => match &n.value {
            Value::Null => None,
            Value::Number(t) if t.parse::<i64>().is_ok() => t.parse::<i64>().ok(),
            v => {
                let found = match v {
                    Value::Number(t) => format!("number {t}"),
                    v => v.kind_name().to_string(),
                };
                let pos = if n.end as usize >= bytes.len() {
                    flint_go::tree::LineCol { line: 0, col: 0 }
                } else {
                    flint_go::tree::Source::new(bytes).locate(n.end)
                };
                return Some(Diagnostic::error(
                    None,
                    Some(pos),
                    format!(
                        "json: cannot unmarshal {found} into Go struct field versionStub.ignitionVersion of type int"
                    ),
                ));
            }
        },
    };
    let version = parse::go_version(tree);
    // The 2.x chain ends with the spec 1 decoder: what it cannot decode is "not valid".
    let two_x = |tree: &flint_go::tree::Node| {
        Diagnostic::fatal(if legacy::decodes_as_v1(tree) {
            "unable to parse 2.x ignition: unsupported config version"
        } else {
            "unable to parse 2.x ignition: config is not valid"
        })
    };
    match version {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => {
            // A semantic version of another major than 3 that the 2.x parser does not read.
            let other_major = version::GoSemver::parse(s).is_some_and(|v| v.major != 3);
            return match legacy::detect(tree) {
                Some(Ok(_)) => None,
                _ if other_major => Some(two_x(tree)),
                _ => None,
            };
        }
        Some(_) => return None,
    }
    match number.unwrap_or(0) {
        n if n < 0 => Some(Diagnostic::fatal(
            version::VersionError::Invalid.to_string(),
        )),
        1 | 3 => None,
        _ => Some(two_x(tree)),
    }
}

/// A config document, read once: a legacy (spec 1 or 2.x) config's tree and version, or a
/// 3.x config parsed.
pub enum Document {
    Legacy(flint_go::tree::Node, Result<legacy::LegacyVersion, String>),
    Current(Box<Result<Parsed, Diagnostic>>),
}

/// Reads `bytes` as a [`Document`]: the JSON is read once, for its version and its config.
/// A 3.x config's text is let go before the config is decoded ([`parse::parse_tree_owned`]:
/// text, tree and config each hold every inline file); any other document's text is handed
/// back, for the legacy translator.
pub fn read_owned(bytes: Vec<u8>) -> (Document, Option<Vec<u8>>) {
    match parse::read_json(&bytes) {
        Ok(tree) if legacy::detect(&tree).is_none() => (
            Document::Current(Box::new(parse::parse_tree_owned(bytes, tree))),
            None,
        ),
        tree => (read_from(&bytes, tree), Some(bytes)),
    }
}

/// [`read`], from `tree`, what [`parse::read_json`] gave for `bytes`.
fn read_from(bytes: &[u8], tree: Result<flint_go::tree::Node, Diagnostic>) -> Document {
    match tree {
        Ok(tree) => match legacy::detect(&tree) {
            Some(version) => Document::Legacy(tree, version),
            None => Document::Current(Box::new(parse::parse_tree(bytes, tree))),
        },
        // Not JSON: the parser's own error (and its word for an empty document).
        Err(_) => Document::Current(Box::new(parse(bytes))),
    }
}

/// Why upstream's validator, which knows only spec 3, refuses a legacy config (`tree`).
pub fn upstream_refusal(tree: &flint_go::tree::Node) -> &'static str {
    match parse::go_version(tree) {
        Some(flint_go::tree::Value::String(s)) if version::is_semver(s) => {
            "unsupported config version"
        }
        _ => "invalid config version (couldn't parse)",
    }
}

/// The tree of `bytes` and its version when it is a legacy (spec 1 or 2.x) config.
pub fn legacy_tree(
    bytes: &[u8],
) -> Option<(flint_go::tree::Node, Result<legacy::LegacyVersion, String>)> {
    let tree = parse::read_json(bytes).ok()?;
    let version = legacy::detect(&tree)?;
    Some((tree, version))
}
