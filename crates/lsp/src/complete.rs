//! Completion: the keys valid at the cursor for the document's variant and version, and the
//! values of keys whose values are a known set.

use crate::context::{Cursor, Seg};
use crate::doc::{Doc, Kind, Spec, newest};
use crate::hover::cursor_at;
use crate::knowledge::{self, Schemas};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, Position, TextEdit,
};

pub(crate) fn complete(doc: &Doc, schemas: &mut Schemas, pos: Position) -> Vec<CompletionItem> {
    let Some(kind) = doc.kind().or_else(|| butane_by_name(doc)) else {
        return Vec::new();
    };
    // A Butane document that names no variant yet is completed as the newest fcos spec,
    // so that `variant` and `version` themselves are offered.
    let spec = doc.spec().or_else(|| {
        newest("fcos")
            .filter(|_| kind == Kind::Butane)
            .map(Spec::Butane)
    });
    let Some(spec) = spec else {
        return Vec::new();
    };
    let cur = cursor_at(doc, kind, pos);
    if cur.opaque {
        return Vec::new();
    }
    let range = doc.text.range(cur.word.0, cur.word.1);
    if cur.in_value {
        let key = cur.key.clone().unwrap_or_default();
        return value_items(schemas, spec, &cur, &key)
            .into_iter()
            .map(|v| {
                let quoted = kind == Kind::Ignition && !is_literal(&v) && !in_string(doc, &cur);
                let new_text = if quoted {
                    format!("\"{v}\"")
                } else {
                    v.clone()
                };
                CompletionItem {
                    label: v,
                    kind: Some(CompletionItemKind::VALUE),
                    text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
                    ..Default::default()
                }
            })
            .collect();
    }
    let root = schemas.get(spec);
    knowledge::keys(root, &cur.parent)
        .into_iter()
        .filter(|(k, _)| !cur.siblings.iter().any(|s| s == k))
        .map(|(k, prop)| {
            let new_text = match kind {
                Kind::Butane => format!("{k}: "),
                Kind::Ignition if in_string(doc, &cur) => k.to_string(),
                Kind::Ignition => format!("\"{k}\": "),
            };
            CompletionItem {
                label: k.to_string(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some(knowledge::type_name(root, prop)),
                documentation: knowledge::description(root, prop).map(|d| {
                    Documentation::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: d,
                    })
                }),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
                ..Default::default()
            }
        })
        .collect()
}

/// A `.bu` document with nothing in it yet is still Butane.
fn butane_by_name(doc: &Doc) -> Option<Kind> {
    let ext = doc.path.as_deref()?.extension()?;
    (ext == "bu").then_some(Kind::Butane)
}

fn value_items(schemas: &mut Schemas, spec: Spec, cur: &Cursor, key: &str) -> Vec<String> {
    let n = cur.parent.len();
    let under = |k: &str| {
        n >= 2 && cur.parent[n - 2] == Seg::Key(k.into()) && cur.parent[n - 1] == Seg::Item
    };
    if key == "name" && (under("units") || under("dropins")) {
        return knowledge::unit_names(&cur.typed, under("dropins"));
    }
    knowledge::values(schemas, spec, &cur.parent, key)
}

fn is_literal(v: &str) -> bool {
    matches!(v, "true" | "false")
}

/// Whether the cursor's word is inside a JSON string's quotes.
fn in_string(doc: &Doc, cur: &Cursor) -> bool {
    cur.word.0 > 0 && doc.text.as_str().as_bytes().get(cur.word.0 - 1) == Some(&b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(uri: &str, text: &str) -> Vec<String> {
        let off = text.find('|').unwrap();
        let doc = Doc::new(uri, text.replacen('|', "", 1));
        let pos = doc.text.position(off);
        complete(&doc, &mut Schemas::default(), pos)
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn keys_for_the_documents_spec() {
        let bu = "variant: fcos\nversion: 1.1.0\nstorage:\n  files:\n    - path: /a\n      |\n";
        let got = labels("file:///a.bu", bu);
        assert!(got.contains(&"contents".to_string()), "{got:?}");
        assert!(!got.contains(&"path".to_string()), "{got:?}");
        // fcos 1.1.0 has no storage.luks; 1.6.0 has.
        let st = "variant: fcos\nversion: 1.1.0\nstorage:\n  |\n";
        assert!(!labels("file:///a.bu", st).contains(&"luks".to_string()));
        let st = st.replace("1.1.0", "1.6.0");
        assert!(labels("file:///a.bu", &st).contains(&"luks".to_string()));
        let root = labels("file:///new.bu", "|");
        assert!(root.contains(&"variant".to_string()) && root.contains(&"version".to_string()));
    }

    #[test]
    fn values_of_known_sets() {
        let v = labels("file:///a.bu", "variant: flatcar\nversion: |\n");
        assert_eq!(v, ["1.0.0", "1.1.0", "1.2.0-experimental"]);
        let fs = "variant: flatcar\nversion: 1.1.0\nstorage:\n  filesystems:\n    - format: |\n";
        assert!(labels("file:///a.bu", fs).contains(&"btrfs".to_string()));
        let u = "variant: flatcar\nversion: 1.1.0\nsystemd:\n  units:\n    - name: web|\n";
        assert!(labels("file:///a.bu", u).contains(&"web.timer".to_string()));
        let ign = "{\"ignition\": {\"version\": \"3.4.0\"}, \"storage\": {\"files\": [{\"|\"}]}}";
        assert!(labels("file:///a.ign", ign).contains(&"overwrite".to_string()));
    }
}
