//! Code actions, offered only where the fix is certain: each edit is checked before it is
//! offered (the edited document translates to the same Ignition config, or holds what the
//! action says), so applying one never changes a machine by surprise.

use crate::doc::{Doc, Kind, Spec, file_uri, newest, top_level_line};
use flint_go::tree::{Entry, Node, Value};
use lsp_types::{
    CodeAction, CodeActionKind, CreateFile, CreateFileOptions, DocumentChangeOperation,
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, Range, ResourceOp,
    TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};
use std::path::Path;
use std::str::FromStr;

pub(crate) fn actions(
    doc: &Doc,
    uri: &Uri,
    range: Range,
    files_dir: Option<&Path>,
) -> Vec<CodeAction> {
    if doc.kind() != Some(Kind::Butane) {
        return Vec::new();
    }
    let mut out = Vec::new();
    out.extend(upgrade(doc, uri, files_dir));
    let Ok(parsed) = flint_go::yaml::parse(doc.text.as_str()) else {
        return out;
    };
    let offset = doc.text.offset(range.start);
    let chain = chain(&parsed.root, offset);
    out.extend(overwrite(doc, uri, &chain));
    if let Some(dir) = files_dir {
        out.extend(inline_to_local(doc, uri, &chain, dir));
        out.extend(local_to_inline(doc, uri, &chain, dir));
    }
    out
}

/// The entries from the root down to the innermost one around `offset`.
fn chain(root: &Node, offset: usize) -> Vec<&Entry> {
    let mut out = Vec::new();
    let mut node = root;
    'down: loop {
        match &node.value {
            Value::Object(entries) => {
                for e in entries {
                    if (e.key_start as usize) <= offset && offset <= e.value.end as usize {
                        out.push(e);
                        node = &e.value;
                        continue 'down;
                    }
                }
            }
            Value::Array(items) => {
                for i in items {
                    if (i.start as usize) <= offset && offset <= i.end as usize {
                        node = i;
                        continue 'down;
                    }
                }
            }
            _ => {}
        }
        return out;
    }
}

// lsp-types keys a workspace edit's changes by `Uri`, which caches its own parse inside:
// the key is never changed here.
#[allow(clippy::mutable_key_type)]
fn edit(uri: &Uri, title: String, kind: CodeActionKind, edits: Vec<TextEdit>) -> CodeAction {
    let changes = [(uri.clone(), edits)].into_iter().collect();
    CodeAction {
        title,
        kind: Some(kind),
        edit: Some(WorkspaceEdit {
            changes: Some(changes),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The Ignition config a Butane text translates to, and how many findings it has.
fn translated(
    doc: &Doc,
    text: &str,
    files_dir: Option<&Path>,
) -> Option<(flint_ignition::Config, usize)> {
    let o = flint_butane::translate(
        text.as_bytes(),
        flint_butane::Options {
            files_dir,
            memo: Some(&doc.memo),
            ..Default::default()
        },
    );
    Some((o.config?, o.diagnostics.len()))
}

/// `version` raised to the newest stable version of the variant, when the document then
/// gives the same config (but for the Ignition version) with no new finding.
fn upgrade(doc: &Doc, uri: &Uri, files_dir: Option<&Path>) -> Option<CodeAction> {
    let Spec::Butane(spec) = doc.spec()? else {
        return None;
    };
    let target = newest(spec.name)?;
    let text = &doc.text;
    let (n, current) = top_level_line(text, "version")?;
    if current == target.version || spec.version != current || spec.experimental {
        return None;
    }
    let line = text.line(n);
    let at = line.find(current.as_str())?;
    let start = text.line_start(n) + at;
    let range = text.range(start, start + current.len());
    let mut new = text.as_str().to_string();
    new.replace_range(start..start + current.len(), target.version);
    let (mut before, found_before) = translated(doc, text.as_str(), files_dir)?;
    let (after, found_after) = translated(doc, &new, files_dir)?;
    before.ignition.version = after.ignition.version.clone();
    (before == after && found_after <= found_before).then(|| {
        edit(
            uri,
            format!(
                "Upgrade to {} {} (the same config)",
                spec.name, target.version
            ),
            CodeActionKind::REFACTOR_REWRITE,
            vec![TextEdit::new(range, target.version.to_string())],
        )
    })
}

/// `overwrite: true` added to a file entry with contents and no `overwrite`, after its
/// `path` line.
fn overwrite(doc: &Doc, uri: &Uri, chain: &[&Entry]) -> Option<CodeAction> {
    let item = file_entry(chain)?;
    if item.get("overwrite").is_some() || item.get("contents").is_none() {
        return None;
    }
    let path = item.get("path")?;
    let text = &doc.text;
    let key_pos = text.position(path.key_start as usize);
    let end_line = text.position(path.value.end as usize).line as usize;
    let eol = text.line_start(end_line) + text.line(end_line).len();
    let indent = " ".repeat(key_pos.character as usize);
    let new_text = format!("\n{indent}overwrite: true");
    Some(edit(
        uri,
        "Add overwrite: true (replace the file if it exists)".into(),
        CodeActionKind::QUICKFIX,
        vec![TextEdit::new(text.range(eol, eol), new_text)],
    ))
}

fn text_of(node: &Node) -> Option<&str> {
    match &node.value {
        Value::String(s) | Value::Plain(s) => Some(s),
        _ => None,
    }
}

/// An `inline:` text moved into a new file of the files directory (`local:`).
fn inline_to_local(doc: &Doc, uri: &Uri, chain: &[&Entry], dir: &Path) -> Option<CodeAction> {
    let entry = chain.last().filter(|e| e.key == "inline")?;
    let content = text_of(&entry.value)?;
    let base = file_entry(chain)
        .and_then(|item| text_of(&item.get("path")?.value))
        .and_then(|p| p.rsplit('/').next().map(str::to_string))
        .filter(|b| !b.is_empty() && b != "." && b != "..")
        .unwrap_or_else(|| "inline.txt".into());
    // A name not taken (or taken by the same bytes, then only referred to).
    let (name, exists) = (0..100).find_map(|i| {
        let name = if i == 0 {
            base.clone()
        } else {
            format!("{base}.{i}")
        };
        match std::fs::read(dir.join(&name)) {
            Ok(b) if b == content.as_bytes() => Some((name, true)),
            Ok(_) => None,
            Err(_) => Some((name, false)),
        }
    })?;
    let replace = replace_value(doc, entry, &format!("local: {name}"));
    let file = Uri::from_str(&file_uri(&dir.join(&name))).ok()?;
    let mut ops = Vec::new();
    if !exists {
        ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
            CreateFile {
                uri: file.clone(),
                options: Some(CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(false),
                }),
                annotation_id: None,
            },
        )));
        ops.push(document_edit(
            &file,
            TextEdit::new(Range::default(), content.to_string()),
        ));
    }
    ops.push(document_edit(uri, replace));
    Some(CodeAction {
        title: format!("Move the inline contents to the file {name} (local)"),
        kind: Some(CodeActionKind::REFACTOR_REWRITE),
        edit: Some(WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(ops)),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn document_edit(uri: &Uri, e: TextEdit) -> DocumentChangeOperation {
    DocumentChangeOperation::Edit(TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier {
            uri: uri.clone(),
            version: None,
        },
        edits: vec![OneOf::Left(e)],
    })
}

/// The `storage.files` entry the chain goes through: the array element around the chain's
/// next entry.
fn file_entry<'a>(chain: &[&'a Entry]) -> Option<&'a Node> {
    let [storage, files, next, ..] = chain else {
        return None;
    };
    if (storage.key.as_str(), files.key.as_str()) != ("storage", "files") {
        return None;
    }
    let Value::Array(items) = &files.value.value else {
        return None;
    };
    items
        .iter()
        .find(|i| i.start <= next.key_start && next.key_start <= i.end)
}

/// The edit replacing `entry` (key and value) with `new`, keeping the line break a block
/// value ends with.
fn replace_value(doc: &Doc, entry: &Entry, new: &str) -> TextEdit {
    let (start, end) = (entry.key_start as usize, entry.value.end as usize);
    let s = doc.text.as_str();
    let keeps_break = end > start && s.as_bytes().get(end - 1) == Some(&b'\n');
    let mut new = new.to_string();
    if keeps_break {
        new.push('\n');
    }
    TextEdit::new(doc.text.range(start, end), new)
}

/// A `local:` file's text brought into the document (`inline:`), when it is text a YAML
/// scalar can hold and the document then translates to the same config.
fn local_to_inline(doc: &Doc, uri: &Uri, chain: &[&Entry], dir: &Path) -> Option<CodeAction> {
    let entry = chain.last().filter(|e| e.key == "local")?;
    let name = text_of(&entry.value)?;
    let bytes = std::fs::read(dir.join(name)).ok()?;
    let content = String::from_utf8(bytes).ok()?;
    let col = doc.text.position(entry.key_start as usize).character as usize;
    let scalar = yaml_scalar(&content, col)?;
    let change = replace_value(doc, entry, &format!("inline:{scalar}"));
    let mut new = doc.text.as_str().to_string();
    let (a, b) = (entry.key_start as usize, entry.value.end as usize);
    new.replace_range(a..b, &change.new_text);
    let (before, _) = translated(doc, doc.text.as_str(), Some(dir))?;
    let (after, _) = translated(doc, &new, Some(dir))?;
    (before == after).then(|| {
        edit(
            uri,
            format!("Put the contents of {name} inline"),
            CodeActionKind::REFACTOR_REWRITE,
            vec![change],
        )
    })
}

/// `content` as a YAML value after `inline:` at column `col`: a quoted string for one line,
/// a literal block (with the chomping that keeps its final line breaks) for several.
fn yaml_scalar(content: &str, col: usize) -> Option<String> {
    if content
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return None;
    }
    if !content.contains('\n') {
        return serde_json::to_string(content).ok().map(|q| format!(" {q}"));
    }
    let body = content.trim_end_matches('\n');
    let breaks = content.len() - body.len();
    let chomp = match breaks {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let indicator = if body.starts_with([' ', '\t']) || body.is_empty() {
        "2"
    } else {
        ""
    };
    if body.is_empty() || body.starts_with('\t') {
        return serde_json::to_string(content).ok().map(|q| format!(" {q}"));
    }
    let indent = " ".repeat(col + 2);
    let mut out = format!(" |{indicator}{chomp}");
    for line in content.strip_suffix('\n').unwrap_or(content).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&indent);
            out.push_str(line);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_for_inline_text() {
        assert_eq!(yaml_scalar("one line", 4).unwrap(), " \"one line\"");
        assert_eq!(yaml_scalar("a\nb\n", 2).unwrap(), " |\n    a\n    b");
        assert_eq!(yaml_scalar("a\n\nb", 0).unwrap(), " |-\n  a\n\n  b");
        assert_eq!(yaml_scalar(" x\n\n", 0).unwrap(), " |2+\n   x\n");
        assert_eq!(yaml_scalar("bell\u{7}\n", 0), None);
    }
}
