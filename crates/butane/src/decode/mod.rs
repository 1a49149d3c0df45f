//! Decoding, the first phases: the source's bytes into a YAML tree whose variant and
//! version name a spec we know (`read`, upstream's first decoding, of the common fields),
//! then the tree into that spec's Butane config (`config`, the second decoding).

mod config;
mod header;
mod utf16;

pub(crate) use config::{Decoded, config};
pub use utf16::{source_utf8, utf16_as_utf8};

use crate::outcome::Outcome;
use crate::registry::Variant;
use flint_go::diag::Diagnostic;
use flint_go::tree::{JsonPath, LineCol, Node, Source, Value};
use flint_go::yaml;
use std::collections::HashMap;

/// The document's line index, made when a finding first needs a place: a large document
/// that translates cleanly never needs it.
pub(crate) struct LazySource<'a> {
    bytes: &'a [u8],
    index: std::cell::OnceCell<Source<'a>>,
}

impl<'a> LazySource<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LazySource {
            bytes,
            index: std::cell::OnceCell::new(),
        }
    }

    /// Line and column of the byte at `offset`, as go-yaml counts them.
    pub(crate) fn locate(&self, offset: u32) -> LineCol {
        (self.index.get_or_init(|| Source::new(self.bytes))).locate_chars(offset)
    }
}

/// A document read, with what go-yaml's decoding of it will meet.
pub(crate) struct Read {
    pub root: Node,
    /// The paths of its aliases.
    pub aliases: Vec<JsonPath>,
    /// The mapping keys go-yaml refuses if it decodes them (below the top).
    pub key_errors: Vec<yaml::KeyError>,
    pub tags: HashMap<u32, yaml::TagNote>,
    pub bad_merges: Vec<u32>,
    /// Where each alias's anchored node starts, by the alias's offset.
    pub anchor_of: HashMap<u32, u32>,
    /// Whether the document holds a null anywhere (see `config` and `check::walk`).
    pub has_nulls: bool,
    pub spec: &'static Variant,
}

/// Reads the document: YAML, a mapping, with a variant and version we know. `watch` is
/// handed each embedded content as soon as it is read (see `ahead`).
// The error is the translation's outcome itself, returned once.
#[allow(clippy::result_large_err)]
pub(crate) fn read(bytes: &[u8], watch: &mut dyn FnMut(&str)) -> Result<Read, Outcome> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let problem = yaml::utf8_problem(bytes, e.valid_up_to());
        Outcome::failed(
            format!("Error unmarshaling yaml: yaml: {problem}"),
            Vec::new(),
        )
    })?;
    let src = LazySource::new(bytes);
    let doc = parse(text, watch)?;
    let aliases = alias_paths(&doc.root, &doc.aliases);
    // The first decoding (variant and version) goes through the keys at the top.
    let (top, key_errors): (Vec<_>, Vec<_>) =
        (doc.key_errors.into_iter()).partition(|e| e.path.is_root());
    let notes = header::Notes {
        tags: &doc.tags,
        bad_merges: &doc.bad_merges,
    };
    header::first_decoding(&doc.root, &top, notes, &src)?;
    let spec = header::spec_version(&doc.root)?;
    Ok(Read {
        root: doc.root,
        aliases,
        key_errors,
        tags: doc.tags,
        bad_merges: doc.bad_merges,
        anchor_of: doc.anchor_of,
        has_nulls: doc.has_nulls,
        spec,
    })
}

/// The YAML tree, or go-yaml's syntax error (placed, and in upstream's words).
#[allow(clippy::result_large_err)]
fn parse(text: &str, watch: &mut dyn FnMut(&str)) -> Result<yaml::Document, Outcome> {
    flint_go::yaml::parse_watching(text, "inline", watch).map_err(|e| {
        let at = LineCol {
            line: e.line,
            col: e.col,
        };
        let located = Diagnostic::error(None, Some(at), e.message.clone());
        let msg = e
            .message
            .trim_start_matches("while parsing a block collection, ");
        let msg = msg.trim_start_matches("while parsing a block mapping, ");
        let failure = match e.upstream_line {
            0 => format!("Error unmarshaling yaml: yaml: {msg}"),
            n => format!("Error unmarshaling yaml: yaml: line {n}: {msg}"),
        };
        Outcome::failed(failure, vec![located])
    })
}

/// go-yaml's decoding errors for refused mapping keys, and the same placed.
pub(crate) fn key_failure(
    src: &LazySource,
    errors: &[yaml::KeyError],
) -> (String, Vec<Diagnostic>) {
    let mut failure = String::from("yaml: unmarshal errors:");
    let mut located = Vec::new();
    for e in errors {
        failure.push_str(&format!("\n  line {}: {}", e.line, e.message));
        let pos = src.locate(e.offset);
        located.push(Diagnostic::error(
            Some(e.path.clone()),
            Some(pos),
            e.message.clone(),
        ));
    }
    (failure, located)
}

/// The paths of the aliases (outermost ones) in the document: upstream sees an alias as a
/// leaf and cannot look inside.
fn alias_paths(root: &Node, aliases: &[(u32, u32)]) -> Vec<JsonPath> {
    fn walk(n: &Node, at: &JsonPath, aliases: &[(u32, u32)], out: &mut Vec<JsonPath>) {
        if aliases.contains(&(n.start, n.end)) {
            out.push(at.clone());
            return;
        }
        match &n.value {
            Value::Object(entries) => {
                for e in entries {
                    walk(&e.value, &at.key(e.key.clone()), aliases, out);
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, &at.index(i), aliases, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if !aliases.is_empty() {
        walk(root, &JsonPath::root(), aliases, &mut out);
    }
    out
}
