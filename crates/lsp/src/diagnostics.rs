//! A document's diagnostics: exactly what `butane --strict` (for Butane) and `flint
//! validate` (for Ignition, with Flatcar's rules) report, as protocol diagnostics.

use crate::doc::{Doc, Kind, top_level_line};
use crate::text::Text;
use flint_go::diag::{Diagnostic, Severity};
use lsp_types as lsp;
use std::path::Path;

/// Everything wrong with `doc` (nothing for a document that is no config).
pub(crate) fn compute(doc: &Doc, files_dir: Option<&Path>) -> Vec<lsp::Diagnostic> {
    let bytes = doc.text.as_str().as_bytes();
    let (found, failure, chars) = match doc.kind() {
        None => return Vec::new(),
        Some(Kind::Ignition) => (
            flint_ignition::check_with(bytes, flint_ignition::validate::Options::FLATCAR),
            None,
            false,
        ),
        Some(Kind::Butane) => {
            let mut outcome = flint_butane::translate(
                bytes,
                flint_butane::Options {
                    files_dir,
                    memo: Some(&doc.memo),
                    ..Default::default()
                },
            );
            doc.memo.sweep();
            let found = std::mem::take(&mut outcome.diagnostics);
            let failure = outcome.failure.take();
            // A large config takes a while to free: not while the editor waits.
            if outcome.config.is_some() {
                std::thread::spawn(move || drop(outcome));
            }
            (found, failure, true)
        }
    };
    let mut out: Vec<lsp::Diagnostic> =
        found.iter().map(|d| convert(&doc.text, d, chars)).collect();
    // A failure no finding explains (an unknown version, say) still needs a place: the
    // `version` line when it is about the version, else the top.
    if let Some(why) = failure.filter(|_| out.is_empty()) {
        let range = about_version(&doc.text, &why).unwrap_or_default();
        out.push(lsp::Diagnostic {
            range,
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            source: Some("flint".into()),
            message: why,
            ..Default::default()
        });
    }
    out
}

fn about_version(text: &Text, why: &str) -> Option<lsp::Range> {
    let key = if why.contains("version") {
        "version"
    } else if why.contains("variant") {
        "variant"
    } else {
        return None;
    };
    let (n, _) = top_level_line(text, key)?;
    let start = text.line_start(n);
    Some(text.range(start, start + text.line(n).len()))
}

/// One finding as a protocol diagnostic: from its line and column to the next white space,
/// as Butane underlines it (columns count characters in YAML, bytes in JSON).
fn convert(text: &Text, d: &Diagnostic, chars: bool) -> lsp::Diagnostic {
    let range = match d.pos {
        Some(p) if p.line >= 1 && (p.line as usize) <= text.line_count() => {
            let n = p.line as usize - 1;
            let line = text.line(n);
            let col = p.col.max(1) as usize - 1;
            let at = if chars {
                line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
            } else {
                col.min(line.len())
            };
            let at = (0..=at)
                .rev()
                .find(|&i| line.is_char_boundary(i))
                .unwrap_or(0);
            let len = line[at..]
                .find(char::is_whitespace)
                .unwrap_or(line.len() - at);
            let start = text.line_start(n) + at;
            text.range(start, start + len.max(1).min(line.len() - at))
        }
        _ => lsp::Range::default(),
    };
    let mut message = d.message.clone();
    if d.fatal {
        message = format!("couldn't parse config: {message}");
    }
    lsp::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: d
            .path
            .as_ref()
            .filter(|p| !p.is_root())
            .map(|p| lsp::NumberOrString::String(p.to_string())),
        source: Some("flint".into()),
        message,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Position;

    #[test]
    fn butane_findings_with_ranges() {
        let doc = Doc::new(
            "file:///nowhere/a.bu",
            "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n    - path: x\n      bogus: 1\n"
                .into(),
        );
        let d = compute(&doc, None);
        let got: Vec<(&str, u32, u32, u32)> = d
            .iter()
            .map(|d| {
                (
                    d.message.as_str(),
                    d.range.start.line,
                    d.range.start.character,
                    d.range.end.character,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("unused key bogus", 5, 6, 12),
                ("path not absolute", 4, 12, 13)
            ]
        );
        assert_eq!(d[0].severity, Some(lsp::DiagnosticSeverity::WARNING));
        assert_eq!(
            d[1].code,
            Some(lsp::NumberOrString::String("$.storage.files.0.path".into()))
        );
    }

    #[test]
    fn failures_without_findings_and_other_documents() {
        let doc = Doc::new("file:///a.bu", "variant: flatcar\nversion: 9.0.0\n".into());
        let d = compute(&doc, None);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].message.contains("No translator exists"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].range.start, Position::new(1, 0));
        let yaml = Doc::new("file:///k.yaml", "kind: Pod\n".into());
        assert!(compute(&yaml, None).is_empty());
        let ign = Doc::new(
            "file:///c.ign",
            "{\"ignition\": {\"version\": \"3.4.0\"}, \"x\": 1}".into(),
        );
        let d = compute(&ign, None);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].severity, Some(lsp::DiagnosticSeverity::WARNING));
    }
}
