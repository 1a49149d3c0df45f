//! How `flint validate` (and `ignition-validate`) show what validating each file found:
//! the upstream validator's lines, Butane's snippets (coloured or not), JSON lines, GitHub
//! annotations and SARIF. They render per file (what failed and the source it quotes), which
//! is the command's notion, not the diagnostics' own: so here, not in `flint_go::diag`.

use flint_go::diag::{Diagnostic, Severity};
use serde_json::json;
use std::io::{self, IsTerminal, Write};

/// When output is coloured (and, in `flint validate`, shown as source snippets): the
/// `--color` of `flint validate` and of `butane`/`flint translate`. (The variants' comments
/// are `flint validate`'s help; translate reads the flag with [`parse_color`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Color {
    /// When standard output is a terminal and NO_COLOR is not set.
    #[default]
    Auto,
    /// Always.
    #[value(alias = "yes")]
    Always,
    /// Never: the upstream validator's plain lines.
    #[value(alias = "no")]
    Never,
}

impl Color {
    /// Whether to colour what is written to `out`.
    pub fn enabled(self, out: &impl IsTerminal) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::env::var_os("NO_COLOR").is_none() && out.is_terminal(),
        }
    }
}

/// `--color`'s value as `butane` reads it (`yes` and `no` too), with its own message.
pub fn parse_color(s: &str) -> Result<Color, String> {
    match s {
        "auto" => Ok(Color::Auto),
        "always" | "yes" => Ok(Color::Always),
        "never" | "no" => Ok(Color::Never),
        _ => Err(format!("invalid color {s:?}: use auto, always or never")),
    }
}

/// What validating one file found.
pub(crate) struct Outcome {
    pub(crate) file: String,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Whether the file was read as Butane.
    pub(crate) butane: bool,
    /// The source, kept when there is something to show against it (for snippets).
    pub(crate) text: Option<String>,
    /// Why a Butane translation failed, if it did.
    pub(crate) failure: Option<String>,
}

impl Outcome {
    pub(crate) fn failed(&self, strict: bool) -> bool {
        self.failure.is_some()
            || self
                .diagnostics
                .iter()
                .any(|d| d.is_error() || d.fatal || strict)
    }

    /// A failure no located error explains (e.g. an unknown variant) is printed on its own.
    pub(crate) fn unexplained_failure(&self) -> Option<&str> {
        self.failure
            .as_deref()
            .filter(|_| !self.diagnostics.iter().any(|d| d.is_error()))
    }

    /// The diagnostics, plus an unexplained failure as an unlocated error: what the
    /// machine-readable formats report.
    fn reported(&self) -> Vec<Diagnostic> {
        let mut all = self.diagnostics.clone();
        if let Some(f) = self.unexplained_failure() {
            all.push(Diagnostic::error(
                None,
                None,
                format!("Error translating config: {f}"),
            ));
        }
        all
    }
}

/// A diagnostic's message as the machine formats give it.
fn message(d: &Diagnostic) -> String {
    if d.fatal {
        format!("couldn't parse config: {}", d.message)
    } else {
        d.message.clone()
    }
}

pub(crate) fn print_json(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    for d in &o.reported() {
        writeln!(out, "{}", d.to_json(&o.file))?;
    }
    Ok(())
}

/// Butane's own rendering, for one Butane file.
pub(crate) fn print_pretty(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    let text = o.text.as_deref().unwrap_or("");
    let blocks: Vec<String> = o
        .diagnostics
        .iter()
        .map(|d| flint_go::diag::render::pretty(d, &o.file, text, false))
        .collect();
    out.write_all(blocks.join("\n").as_bytes())?;
    if let Some(f) = &o.failure {
        writeln!(out, "Error translating config: {f}")?;
    }
    Ok(())
}

/// Butane's rendering for any file, in colour, for a terminal: each diagnostic with the
/// source around it (the snippet names the file); one without a position on one line,
/// prefixed with the file when there are several.
pub(crate) fn print_snippets(out: &mut impl Write, o: &Outcome, prefixed: bool) -> io::Result<()> {
    use flint_go::diag::render::pretty;
    let text = o.text.as_deref().unwrap_or("");
    let prefix = if prefixed {
        format!("{}: ", o.file)
    } else {
        String::new()
    };
    let blocks: Vec<String> = o
        .diagnostics
        .iter()
        .map(|d| {
            let block = pretty(d, &o.file, text, true);
            let plain = format!("{d}\n");
            if block != plain {
                return block;
            }
            // No usable position: the one-line form, the severity coloured as in snippets.
            let (code, word) = match d.severity {
                Severity::Error => ("\x1b[1;31m", "error"),
                Severity::Warning => ("\x1b[1;33m", "warning"),
            };
            match plain.strip_prefix(word) {
                Some(rest) if !d.fatal => format!("{prefix}{code}{word}\x1b[0m{rest}"),
                _ => format!("{prefix}{plain}"),
            }
        })
        .collect();
    out.write_all(blocks.join("\n").as_bytes())?;
    if let Some(f) = &o.failure {
        writeln!(
            out,
            "{prefix}\x1b[1;31mError translating config\x1b[0m: {f}"
        )?;
    }
    if prefixed && (!blocks.is_empty() || o.failure.is_some()) {
        // A blank line between files.
        writeln!(out)?;
    }
    Ok(())
}

/// The upstream validator's lines, prefixed with the file when there are several.
pub(crate) fn print_lines(
    out: &mut impl Write,
    stderr: &mut impl Write,
    o: &Outcome,
    prefix: Option<&str>,
) -> io::Result<()> {
    for d in &o.diagnostics {
        match prefix {
            Some(f) => writeln!(out, "{f}: {d}")?,
            // As upstream: the report on stdout, a failure to read the config on stderr.
            None if d.fatal => writeln!(stderr, "{d}")?,
            None => writeln!(out, "{d}")?,
        }
    }
    if let Some(f) = o.unexplained_failure() {
        match prefix {
            Some(p) => writeln!(out, "{p}: error: {f}")?,
            None => writeln!(out, "error: {f}")?,
        }
    }
    Ok(())
}

/// Escapes workflow-command data (the message) as the GitHub Actions runner expects.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (`file=…`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One GitHub Actions annotation per diagnostic:
/// `::error file=a.bu,line=3,col=5::message`.
pub(crate) fn print_github(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    let file = escape_property(&o.file);
    for d in &o.reported() {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let at = match d.pos.filter(|p| p.line >= 1) {
            Some(p) if p.col >= 1 => format!(",line={},col={}", p.line, p.col),
            Some(p) => format!(",line={}", p.line),
            None => String::new(),
        };
        writeln!(
            out,
            "::{kind} file={file}{at}::{}",
            escape_data(&message(d))
        )?;
    }
    Ok(())
}

/// A path as a SARIF artifact URI: relative paths stay relative (without a leading `./`),
/// absolute ones become `file://` URIs; characters a URI cannot hold are percent-encoded.
fn artifact_uri(file: &str) -> String {
    let mut path = file;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    let mut uri = String::from(if path.starts_with('/') { "file://" } else { "" });
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(b as char)
            }
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@' => {
                uri.push(b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

const SARIF_RULES: [(&str, &str, &str); 2] = [
    (
        "flint/error",
        "error",
        "The config is invalid: Ignition would refuse it, or Butane cannot translate it.",
    ),
    (
        "flint/warning",
        "warning",
        "The config is accepted, but probably not what was meant (e.g. an unused key).",
    ),
];

/// The whole report as one SARIF 2.1.0 log with one run.
pub(crate) fn sarif(outcomes: &[Outcome]) -> String {
    let rules: Vec<serde_json::Value> = SARIF_RULES
        .iter()
        .map(|(id, level, text)| {
            json!({
                "id": id,
                "name": if *level == "error" { "InvalidConfig" } else { "SuspiciousConfig" },
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level},
            })
        })
        .collect();
    let mut results = Vec::new();
    for o in outcomes {
        let uri = artifact_uri(&o.file);
        for d in &o.reported() {
            let (index, level) = match d.severity {
                Severity::Error => (0, "error"),
                Severity::Warning => (1, "warning"),
            };
            let mut physical = json!({"artifactLocation": {"uri": uri}});
            if let Some(p) = d.pos.filter(|p| p.line >= 1) {
                let mut region = json!({"startLine": p.line});
                if p.col >= 1 {
                    region["startColumn"] = json!(p.col);
                }
                physical["region"] = region;
            }
            let mut location = json!({"physicalLocation": physical});
            if let Some(path) = d.path.as_ref().filter(|p| !p.is_root()) {
                location["logicalLocations"] =
                    json!([{"fullyQualifiedName": path.to_string(), "kind": "member"}]);
            }
            results.push(json!({
                "ruleId": SARIF_RULES[index].0,
                "ruleIndex": index,
                "level": level,
                "message": {"text": message(d)},
                "locations": [location],
            }));
        }
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "flint",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_workflow_commands() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }

    #[test]
    fn artifact_uris() {
        assert_eq!(artifact_uri("./sub/a.bu"), "sub/a.bu");
        assert_eq!(artifact_uri("a b#1.ign"), "a%20b%231.ign");
        assert_eq!(artifact_uri("/tmp/x.ign"), "file:///tmp/x.ign");
        assert_eq!(artifact_uri("d/é.bu"), "d/%C3%A9.bu");
    }
}
