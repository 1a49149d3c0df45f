//! Upstream's first decoding: the document into its common fields (`variant`, `version`),
//! which stops at what go-yaml refuses at the top, and the spec version they name.

use super::{LazySource, key_failure};
use crate::outcome::Outcome;
use crate::registry::{Variant, lookup};
use flint_go::de;
use flint_go::diag::Diagnostic;
use flint_go::tree::{Node, Value};
use flint_go::yaml::{self, resolve::is_null};
use std::collections::HashMap;

/// What the parser noted for go-yaml's decoding.
#[derive(Clone, Copy)]
pub(super) struct Notes<'a> {
    pub tags: &'a HashMap<u32, yaml::TagNote>,
    pub bad_merges: &'a [u32],
}

/// Whether the first decoding gets through: no refused key at the top, no refused tag or
/// merge where it looks, a mapping (or nothing), and strings for the variant and version.
#[allow(clippy::result_large_err)]
pub(super) fn first_decoding(
    root: &Node,
    top: &[yaml::KeyError],
    notes: Notes<'_>,
    src: &LazySource,
) -> Result<(), Outcome> {
    if !top.is_empty() {
        let (failure, located) = key_failure(src, top);
        return Err(Outcome::failed(
            format!("Error unmarshaling yaml: {failure}"),
            located,
        ));
    }
    if let Some((at, m)) = first_refused(root, notes) {
        let located = Diagnostic::error(None, Some(src.locate(at)), m.to_string());
        return Err(Outcome::failed(
            format!("Error unmarshaling yaml: yaml: {m}"),
            vec![located],
        ));
    }
    // A document that is null (in any of its spellings) decodes as no fields at all.
    if !matches!(root.value, Value::Object(_) | Value::Null)
        && !matches!(&root.value, Value::Plain(s) if s.is_empty() || is_null(s))
    {
        let found = de::yaml_found(root, Some(notes.tags));
        let line = src.locate(root.start).line;
        return Err(Outcome::failed(
            format!(
                "Error unmarshaling yaml: yaml: unmarshal errors:\n  line {line}: cannot unmarshal {found} into config.commonFields"
            ),
            Vec::new(),
        ));
    }
    common_fields_are_strings(root, src)
}

/// Where the first decoding stops, and go-yaml's words: at a tag it refuses (on a key at the
/// top, on the variant or version, or on the document itself), or then at the top mapping's
/// `<<` if it cannot merge it.
fn first_refused<'a>(root: &Node, notes: Notes<'a>) -> Option<(u32, &'a str)> {
    let refused = |at: u32| match notes.tags.get(&at) {
        Some(yaml::TagNote::Refused(m)) => Some((at, m.as_str())),
        _ => None,
    };
    let tag = match &root.value {
        Value::Object(entries) => entries.iter().find_map(|e| {
            refused(e.key_start).or_else(|| {
                (matches!(e.key.as_str(), "variant" | "version") && !e.value.is_container())
                    .then(|| refused(e.value.start))
                    .flatten()
            })
        }),
        Value::Array(_) => None,
        _ => refused(root.start),
    };
    tag.or_else(|| {
        (root.is_container() && notes.bad_merges.contains(&root.start))
            .then_some((root.start, de::BAD_MERGE))
    })
}

/// Upstream's first decoding reads `variant` and `version` into strings: a mapping or a
/// sequence there is a type error, one line each, in document order.
#[allow(clippy::result_large_err)]
fn common_fields_are_strings(root: &Node, src: &LazySource) -> Result<(), Outcome> {
    let Value::Object(entries) = &root.value else {
        return Ok(());
    };
    let wrong: Vec<String> = (entries.iter())
        .filter(|e| e.key == "variant" || e.key == "version")
        .filter_map(|e| {
            match &e.value.value {
                Value::Object(_) => Some("!!map"),
                Value::Array(_) => Some("!!seq"),
                _ => None,
            }
            .map(|kind| {
                let line = src.locate(e.value.start).line;
                format!("\n  line {line}: cannot unmarshal {kind} into string")
            })
        })
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(Outcome::failed(
        format!(
            "Error unmarshaling yaml: yaml: unmarshal errors:{}",
            wrong.concat()
        ),
        Vec::new(),
    ))
}

/// The spec version the document names, as upstream reads the version (leading zeros, an
/// empty pre-release or build) and names it from then on.
#[allow(clippy::result_large_err)]
pub(super) fn spec_version(root: &Node) -> Result<&'static Variant, Outcome> {
    let fail = |message: String| Err(Outcome::failed(message, Vec::new()));
    let variant = scalar(root, "variant");
    if variant.is_empty() {
        return fail("error parsing variant; must be specified".into());
    }
    let Some(version) = flint_ignition::version::GoSemver::parse(&scalar(root, "version")) else {
        return fail("error parsing version; must be a valid semver".into());
    };
    let version = version.to_string();
    if variant == "rhcos" && version == "0.1.0" {
        return fail("rhcos variant has been removed; use openshift variant instead: https://coreos.github.io/butane/upgrading-openshift/".into());
    }
    match lookup(&variant, &version) {
        Some(spec) => Ok(spec),
        None => fail(format!(
            "No translator exists for variant {variant} with version {version}"
        )),
    }
}

/// The text of a top-level scalar field, "" when absent or null.
fn scalar(root: &Node, key: &str) -> String {
    match root.get(key).map(|e| &e.value.value) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Plain(s)) if !is_null(s) => s.clone(),
        _ => String::new(),
    }
}
