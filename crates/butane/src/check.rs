//! Checking the source, once decoded: the warnings of upstream's walk over the document
//! (keys the spec version lacks, and where its position tracking gets lost), then the
//! source's own rules.

use crate::base::{self, types as bu};
use crate::decode::{LazySource, Read};
use crate::order;
use crate::outcome::Finding;
use crate::registry::{Family, Variant};
use crate::{fcos, openshift};
use flint_go::de;
use flint_go::diag::Diagnostic;
use flint_go::tree::{JsonPath, Node, Seg, Value};
use flint_go::yaml::is_null;
use flint_ignition::validate::Checker;

/// A warning and where upstream's walk over the config reaches it.
type Placed = (Vec<u64>, Diagnostic);

/// The warnings of upstream's walk, in the order it reaches them: the keys the spec lacks
/// (`unused`, found in the tree decoded, `compacted` when that lacks the null list items),
/// and aliases and nulls where a mapping belongs.
pub(crate) fn walk(
    doc: &Read,
    unused: Vec<de::Unused>,
    compacted: bool,
    src: &LazySource,
) -> Vec<Diagnostic> {
    let mut walk = unused_keys(doc, unused, compacted, src);
    aliases(doc, src, &mut walk);
    if doc.has_nulls {
        nulls(doc, src, &mut walk);
    }
    walk.sort_by(|a, b| a.0.cmp(&b.0));
    walk.into_iter().map(|(_, d)| d).collect()
}

/// The keys the spec lacks, where upstream sees them: below an alias it sees nothing.
fn unused_keys(
    doc: &Read,
    unused: Vec<de::Unused>,
    compacted: bool,
    src: &LazySource,
) -> Vec<Placed> {
    let unused: Vec<de::Unused> = if compacted {
        (unused.into_iter())
            .filter_map(|u| {
                as_written(&doc.root, &u.path).map(|path| de::Unused {
                    path,
                    offset: u.offset,
                })
            })
            .collect()
    } else {
        unused
    };
    unused
        .into_iter()
        .filter(|u| {
            !(doc.aliases.iter()).any(|a| u.path.segs().starts_with(a.segs()) && u.path != *a)
        })
        .map(|u| {
            let pos = src.locate(u.offset);
            (order::walk_position(&u.path), u.warning(pos))
        })
        .collect()
}

/// What upstream says where its position tracking expected something else than it found.
fn lost(path: JsonPath, start: u32, src: &LazySource) -> Placed {
    let message = format!(
        "context tree does not match content tree at {path}. Line and column reporting may be inconsistent. Unused keys may not be reported"
    );
    (
        order::walk_position(&path.key("")),
        Diagnostic::warning(Some(path), Some(src.locate(start)), message),
    )
}

/// An alias where a mapping belongs gets its own warning.
fn aliases(doc: &Read, src: &LazySource, walk: &mut Vec<Placed>) {
    for a in &doc.aliases {
        let node = doc.root.deepest(a);
        if matches!(node.value, Value::Object(_)) && order::struct_at(a) {
            walk.push(lost(a.clone(), node.start, src));
        }
    }
}

/// A null where a struct belongs: upstream's position tracking expected a mapping.
fn nulls(doc: &Read, src: &LazySource, walk: &mut Vec<Placed>) {
    for (path, node) in null_values(&doc.root) {
        if let Some(Seg::Index(i)) = path.segs().last() {
            // A null list item: upstream's walk pairs the items as written with the list
            // decoded without them, so it meets the nulls among the first items only.
            let list = JsonPath::from(path.segs()[..path.segs().len() - 1].to_vec());
            let kept = match &doc.root.deepest(&list).value {
                Value::Array(items) => items.iter().filter(|x| !is_null(x)).count(),
                _ => 0,
            };
            if *i >= kept || !order::struct_list_at(&list) {
                continue;
            }
        } else if !order::single_struct_at(&path) {
            continue;
        }
        let hidden = |p: &JsonPath| path.segs().starts_with(p.segs());
        let below_unused = walk.iter().any(|(_, d)| {
            d.message.starts_with("unused key") && d.path.as_ref().is_some_and(hidden)
        });
        if !doc.aliases.iter().any(hidden) && !below_unused {
            walk.push(lost(path, node.start, src));
        }
    }
}

/// The null values in mappings (`key:` with nothing, `~`, `null`), with their paths.
fn null_values(root: &Node) -> Vec<(JsonPath, &Node)> {
    /// A step of the path walked, borrowed from the tree: a path is made only for the
    /// (rare) nulls.
    enum Step<'a> {
        Key(&'a str),
        Index(usize),
    }
    fn walk<'a>(n: &'a Node, at: &mut Vec<Step<'a>>, out: &mut Vec<(JsonPath, &'a Node)>) {
        let mut visit = |step: Step<'a>, x: &'a Node, at: &mut Vec<Step<'a>>| {
            let null = is_null(x);
            if !null && !matches!(x.value, Value::Object(_) | Value::Array(_)) {
                return;
            }
            at.push(step);
            if null {
                let segs = at.iter().map(|s| match s {
                    Step::Key(k) => Seg::Key((*k).to_string().into()),
                    Step::Index(i) => Seg::Index(*i),
                });
                out.push((JsonPath::from(segs.collect::<Vec<_>>()), x));
            } else {
                walk(x, at, out);
            }
            at.pop();
        };
        match &n.value {
            Value::Object(entries) => {
                for e in entries {
                    visit(Step::Key(&e.key), &e.value, at);
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    visit(Step::Index(i), x, at);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(root, &mut Vec::new(), &mut out);
    out
}

/// Where upstream reports an unused key found in the list items decoded without nulls: at
/// the index the item has as written, if its walk (over as many items as were decoded)
/// gets there.
fn as_written(root: &Node, path: &JsonPath) -> Option<JsonPath> {
    let mut node = root;
    let mut segs = Vec::with_capacity(path.segs().len());
    for s in path.segs() {
        match s {
            Seg::Key(k) => {
                segs.push(s.clone());
                if let Some(e) = node.get(k) {
                    node = &e.value;
                }
            }
            Seg::Index(c) => {
                let Value::Array(items) = &node.value else {
                    segs.push(s.clone());
                    continue;
                };
                let kept = items.iter().filter(|x| !is_null(x)).count();
                let (k, item) = items
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| !is_null(x))
                    .nth(*c)?;
                if k >= kept {
                    return None;
                }
                segs.push(Seg::Index(k));
                node = item;
            }
        }
    }
    Some(JsonPath::from(segs))
}

/// The source rules in upstream's order: the variant's rules on the whole config, the
/// base's fields, then the variant's own sections.
pub(crate) fn source_rules(cfg: &bu::Config, spec: &Variant) -> Vec<Finding> {
    let mut c = Checker::new(spec.ignition);
    match spec.family {
        Family::Fcos => fcos::check_config(&mut c, cfg, spec),
        Family::OpenShift => openshift::check_config(&mut c, cfg, spec),
        _ => {}
    }
    base::validate::check(&mut c, cfg, spec.base);
    if spec.has_fcos_sections() {
        fcos::check_sections(&mut c, cfg, spec);
    }
    if spec.family == Family::OpenShift {
        openshift::check_sections(&mut c, cfg);
    }
    c.issues.into_iter().map(Finding::Source).collect()
}
