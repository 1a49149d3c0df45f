//! Hover: what a key means, its type and the spec versions that have it; what a `data:` URL
//! holds.

use crate::context::{self, Cursor};
use crate::doc::{Doc, Kind, Spec};
use crate::knowledge::{self, Schemas};
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// Where the cursor is in `doc`, read as the document's kind.
pub(crate) fn cursor_at(doc: &Doc, kind: Kind, pos: Position) -> Cursor {
    let offset = doc.text.offset(pos);
    match kind {
        Kind::Butane => context::yaml(&doc.text, offset),
        Kind::Ignition => context::json(&doc.text, offset),
    }
}

pub(crate) fn hover(doc: &Doc, schemas: &mut Schemas, pos: Position) -> Option<Hover> {
    let spec = doc.spec()?;
    let cur = cursor_at(doc, spec.kind(), pos);
    if cur.opaque {
        return None;
    }
    let word = cur.word(&doc.text);
    let text = if cur.in_value && word.starts_with("data:") {
        data_url(word)
    } else {
        key_text(schemas, spec, &cur)?
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: Some(doc.text.range(cur.word.0, cur.word.1)),
    })
}

/// The key's name, type, meaning and spec versions.
fn key_text(schemas: &mut Schemas, spec: Spec, cur: &Cursor) -> Option<String> {
    let path = cur.key_path()?;
    let root = schemas.get(spec);
    let prop = knowledge::at(root, &path)?;
    let key = cur.key.as_deref().unwrap_or_default();
    let mut out = format!("**{key}**: {}", knowledge::type_name(root, prop));
    if let Some(d) = knowledge::description(root, prop) {
        out.push_str("\n\n");
        out.push_str(&d);
    }
    let versions = knowledge::versions_having(schemas, spec, &path);
    out.push_str(&format!("\n\nIn {versions}."));
    Some(out)
}

/// A `data:` URL's decoded length and first line (or that it is binary).
fn data_url(url: &str) -> String {
    match flint_ignition::dataurl::decode(url) {
        Err(e) => format!("**data URL**: cannot be decoded: {e}"),
        Ok(bytes) => {
            let n = bytes.len();
            let unit = if n == 1 { "byte" } else { "bytes" };
            match std::str::from_utf8(&bytes) {
                Err(_) => format!("**data URL**: {n} {unit} of binary data"),
                Ok(s) => {
                    let first = s.lines().next().unwrap_or_default();
                    let mut shown: String = first.chars().take(120).collect();
                    if shown.len() < first.len() {
                        shown.push('…');
                    }
                    let lines = s.lines().count();
                    format!(
                        "**data URL**: {n} {unit}, {lines} line{}\n\nFirst line: `{}`",
                        if lines == 1 { "" } else { "s" },
                        shown.replace('`', "'")
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hover_text(uri: &str, text: &str, line: u32, ch: u32) -> Option<String> {
        let doc = Doc::new(uri, text.into());
        let h = hover(&doc, &mut Schemas::default(), Position::new(line, ch))?;
        match h.contents {
            HoverContents::Markup(m) => Some(m.value),
            _ => None,
        }
    }

    #[test]
    fn keys_and_data_urls() {
        let bu = "variant: fcos\nversion: 1.6.0\nstorage:\n  luks:\n    - name: x\n";
        let t = hover_text("file:///a.bu", bu, 3, 3).unwrap();
        assert!(t.starts_with("**luks**: list of Luks"), "{t}");
        assert!(t.ends_with("In fcos 1.2.0 and later."), "{t}");
        let ign = "{\"ignition\": {\"version\": \"3.4.0\"}, \"storage\": {\"files\": [{\"path\": \"/a\", \"contents\": {\"source\": \"data:,hello%0Aworld\"}}]}}";
        let at = ign.find("data:").unwrap() as u32 + 2;
        let t = hover_text("file:///a.ign", ign, 0, at).unwrap();
        assert_eq!(t, "**data URL**: 11 bytes, 2 lines\n\nFirst line: `hello`");
        assert_eq!(hover_text("file:///a.bu", bu, 4, 1), None);
    }
}
