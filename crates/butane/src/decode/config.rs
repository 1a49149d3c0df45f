//! Upstream's second decoding: the tree into the Butane config of the spec version, with
//! go-yaml's type errors and the keys it refuses, and the keys the spec lacks (unused).

use super::{LazySource, Read, key_failure};
use crate::base::types as bu;
use crate::gotype;
use crate::outcome::Outcome;
use flint_go::de::{self, Flavor};
use flint_go::diag::Diagnostic;
use flint_go::tree::{JsonPath, Node, Value};
use flint_go::yaml::{self, is_null};

/// The Butane config decoded, and what the decoding left aside.
pub(crate) struct Decoded {
    pub config: bu::Config,
    /// The keys the spec version lacks, at their paths in the tree decoded.
    pub unused: Vec<de::Unused>,
    /// The tree decoded when it is not the document as written: without its null list
    /// items, which go-yaml leaves out.
    pub compacted: Option<Node>,
}

/// Decodes the document into the Butane config of its spec version; `None` when go-yaml
/// would fail (the outcome then says why).
pub(crate) fn config(doc: &Read, src: &LazySource, outcome: &mut Outcome) -> Option<Decoded> {
    let spec = doc.spec;
    let gate = |ty: &'static str, key: &str| spec.has_key(ty, key);
    // go-yaml leaves out null list items (every Butane list holds structs or strings), but
    // finds what it reports in the document as written: the list indices shift.
    let compacted = if doc.has_nulls {
        without_null_items(&doc.root)
    } else {
        None
    };
    let tree = compacted.as_ref().unwrap_or(&doc.root);
    let notes = de::YamlNotes {
        tags: &doc.tags,
        bad_merges: &doc.bad_merges,
    };
    let (config, unused) =
        match de::from_tagged_tree::<bu::Config>(tree, &gate, Flavor::Yaml, Some(notes)) {
            Ok(v) => v,
            Err(e) => {
                type_errors(e, doc, src, outcome);
                return None;
            }
        };
    // Key errors in mappings the decoding went through (not below unused keys or aliases).
    let reached: Vec<yaml::KeyError> = (doc.key_errors.iter())
        .filter(|e| {
            let under = |p: &JsonPath| e.path.segs().starts_with(p.segs());
            !unused.iter().any(|u| under(&u.path)) && !doc.aliases.iter().any(under)
        })
        .cloned()
        .collect();
    if !reached.is_empty() {
        let (failure, located) = key_failure(src, &reached);
        outcome.diagnostics.extend(located);
        outcome.fail(failure);
        return None;
    }
    Some(Decoded {
        config,
        unused,
        compacted,
    })
}

/// The decoding's failure as go-yaml reports it: a tag it refuses stops it alone, type
/// errors are listed (in upstream's words for the Go types) with their lines.
fn type_errors(mut e: de::DeError, doc: &Read, src: &LazySource, outcome: &mut Outcome) {
    if e.fatal {
        let pos = e.offset.map(|o| src.locate(o));
        outcome.fail(format!("yaml: {}", e.message));
        (outcome.diagnostics).push(Diagnostic::error(e.path, pos, e.message));
        return;
    }
    let also = std::mem::take(&mut e.also);
    let mut failure = String::from("yaml: unmarshal errors:");
    for mut e in std::iter::once(e).chain(also) {
        if let Some(m) = gotype::reword(&e.message, e.path.as_ref(), doc.spec) {
            e.message = m;
        }
        let pos = e.offset.map(|o| src.locate(o));
        // go-yaml names the line of an alias's anchor.
        let at = e
            .offset
            .map(|o| doc.anchor_of.get(&o).copied().unwrap_or(o));
        let line = at.map_or(0, |o| src.locate(o).line);
        failure.push_str(&format!("\n  line {line}: {}", e.message));
        outcome
            .diagnostics
            .push(Diagnostic::error(e.path, pos, e.message));
    }
    outcome.fail(failure);
}

/// The tree without null list items, if it has any.
fn without_null_items(root: &Node) -> Option<Node> {
    fn any(n: &Node) -> bool {
        match &n.value {
            Value::Array(items) => items.iter().any(|x| is_null(x) || any(x)),
            Value::Object(entries) => entries.iter().any(|e| any(&e.value)),
            _ => false,
        }
    }
    fn strip(n: &mut Node) {
        match &mut n.value {
            Value::Array(items) => {
                items.retain(|x| !is_null(x));
                items.iter_mut().for_each(strip);
            }
            Value::Object(entries) => entries.iter_mut().for_each(|e| strip(&mut e.value)),
            _ => {}
        }
    }
    if !any(root) {
        return None;
    }
    let mut copy = root.clone();
    strip(&mut copy);
    Some(copy)
}
