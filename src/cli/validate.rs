//! `flint validate`: check many configs at once, in parallel, for people and for CI.

use flint_go::diag::{Diagnostic, Severity};
use rayon::prelude::*;
use serde_json::json;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The upstream validator's lines (prefixed with the file when there are several).
    Human,
    /// One JSON object per diagnostic and line.
    Json,
    /// One SARIF 2.1.0 log (for GitHub code scanning and other static-analysis viewers).
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…,line=…,col=…::…`): annotations.
    Github,
}

/// Whose validator to be for Ignition configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Rules {
    /// Flatcar's ignition-validate: upstream's rules, and `oem://` sources are accepted.
    #[default]
    Flatcar,
    /// Upstream's ignition-validate exactly: `oem://` is an invalid url scheme.
    Upstream,
}

impl Rules {
    fn options(self) -> flint_ignition::validate::Options {
        match self {
            Rules::Flatcar => flint_ignition::validate::Options::FLATCAR,
            Rules::Upstream => flint_ignition::validate::Options::UPSTREAM,
        }
    }
}

/// When human output is coloured and shown as source snippets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
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

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Treat warnings as failures.
    #[arg(short, long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Colour human output and show the source around each problem, as Butane does.
    #[arg(long, alias = "colour", value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Whose rules Ignition configs are validated by.
    #[arg(long, value_enum, default_value_t = Rules::Flatcar)]
    pub rules: Rules,
    /// The files directory for Butane `local` references (default: a `files` directory
    /// beside each config, when there is one).
    #[arg(short = 'd', long, value_name = "DIR")]
    pub files_dir: Option<PathBuf>,
    /// Config files, or directories to search recursively for Ignition (*.ign, *.json) and
    /// Butane (*.bu, *.yaml, *.yml) configs; `-` reads one Ignition config from standard input.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// What validating one file found.
struct Outcome {
    file: String,
    diagnostics: Vec<Diagnostic>,
    /// Whether the file was read as Butane.
    butane: bool,
    /// The source, kept when there is something to show against it (for snippets).
    text: Option<String>,
    /// Why a Butane translation failed, if it did.
    failure: Option<String>,
}

impl Outcome {
    fn failed(&self, strict: bool) -> bool {
        self.failure.is_some()
            || self
                .diagnostics
                .iter()
                .any(|d| d.is_error() || d.fatal || strict)
    }

    /// A failure no located error explains (e.g. an unknown variant) is printed on its own.
    fn unexplained_failure(&self) -> Option<&str> {
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

fn is_butane_file(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("bu" | "yaml" | "yml")
    )
}

fn is_config_file(p: &Path) -> bool {
    is_butane_file(p) || matches!(p.extension().and_then(|e| e.to_str()), Some("ign" | "json"))
}

/// Expands directories into the config files below them, sorted for stable output.
fn collect(paths: &[PathBuf]) -> Vec<(PathBuf, Option<io::Error>)> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found, &mut out);
            found.sort();
            out.extend(found.into_iter().map(|f| (f, None)));
        } else {
            out.push((p.clone(), None));
        }
    }
    out
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>, errors: &mut Vec<(PathBuf, Option<io::Error>)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push((dir.to_path_buf(), Some(e)));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, found, errors),
            Ok(_) if is_config_file(&path) => found.push(path),
            _ => {}
        }
    }
}

fn check_file(
    path: &Path,
    err: Option<io::Error>,
    files_dir: Option<&Path>,
    rules: Rules,
) -> Outcome {
    let file = path.display().to_string();
    let butane = is_butane_file(path);
    // `-` is standard input (read once).
    let read = match err {
        Some(e) => Err(e),
        None if path == Path::new("-") => {
            let mut b = Vec::new();
            io::Read::read_to_end(&mut io::stdin().lock(), &mut b).map(|_| b)
        }
        None => std::fs::read(path),
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            return Outcome {
                file,
                diagnostics: vec![Diagnostic::error(
                    None,
                    None,
                    format!("couldn't read config: {e}"),
                )],
                butane: false,
                text: None,
                failure: None,
            };
        }
    };
    // A Butane config may be UTF-16 (see spec::source_utf8): snippets quote it as UTF-8.
    let bytes = match butane {
        true => flint_butane::utf16_as_utf8(&bytes).unwrap_or(bytes),
        false => bytes,
    };
    let keep = |diagnostics: &[Diagnostic], failure: &Option<String>| {
        (!diagnostics.is_empty() || failure.is_some())
            .then(|| String::from_utf8_lossy(&bytes).into_owned())
    };
    if !butane {
        let diagnostics = flint_ignition::check_with(&bytes, rules.options());
        return Outcome {
            file,
            text: keep(&diagnostics, &None),
            diagnostics,
            butane,
            failure: None,
        };
    }
    // Each config's own `files` directory, unless -d names one for all.
    let beside = path
        .parent()
        .map(|d| d.join("files"))
        .filter(|d| d.is_dir());
    let dir = files_dir.map(Path::to_path_buf).or(beside);
    let outcome = flint_butane::translate(
        &bytes,
        flint_butane::Options {
            files_dir: dir.as_deref(),
            ..Default::default()
        },
    );
    Outcome {
        file,
        text: keep(&outcome.diagnostics, &outcome.failure),
        diagnostics: outcome.diagnostics,
        butane,
        failure: outcome.failure,
    }
}

/// One config as upstream's `ignition-validate CONFIG` checks it (`-` for standard input):
/// always as Ignition JSON, whatever its name; the report on stdout, exit 1 when the config
/// is invalid or unreadable.
pub fn validate_one(path: &Path) -> i32 {
    let read = if path == Path::new("-") {
        let mut b = Vec::new();
        io::Read::read_to_end(&mut io::stdin().lock(), &mut b).map(|_| b)
    } else {
        std::fs::read(path)
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            // Go's wording for the failures a user meets.
            let p = path.display();
            let why = match e.raw_os_error() {
                Some(libc::ENOENT) => format!("open {p}: no such file or directory"),
                Some(libc::EACCES) => format!("open {p}: permission denied"),
                Some(libc::EISDIR) => format!("read {p}: is a directory"),
                _ => format!("open {p}: {e}"),
            };
            eprintln!("couldn't read config: {why}");
            return 1;
        }
    };
    // Upstream's validator knows no spec 1 or 2.x config (Flatcar's does: `flint validate`).
    if let Some((tree, _)) = flint_ignition::legacy_tree(&bytes) {
        let semver = matches!(flint_ignition::parse::go_version(&tree),
            Some(flint_go::tree::Value::String(s)) if flint_ignition::version::is_semver(s));
        let why = if semver {
            "unsupported config version"
        } else {
            "invalid config version (couldn't parse)"
        };
        eprintln!("couldn't parse config: {why}");
        return 1;
    }
    let o = Outcome {
        file: path.display().to_string(),
        diagnostics: flint_ignition::check(&bytes),
        butane: false,
        text: None,
        failure: None,
    };
    // Upstream trims the white space off the end of its whole report (a last unused key
    // "x " reads "x"), and prints it as a Go format string.
    let mut report = Vec::new();
    let _ = print_lines(&mut report, &mut io::stderr(), &o, None);
    let report = String::from_utf8_lossy(&report);
    let report = report.trim_end();
    let mut out = io::stdout().lock();
    if !report.is_empty() {
        // The newline is part of the format string (a last `%` reads it as its verb).
        let report = super::gofmt::sprintf_without_args(&format!("{report}\n"));
        let _ = write!(out, "{report}");
    }
    let _ = out.flush();
    i32::from(o.failed(false))
}

/// Runs the command; returns the exit code.
pub fn run(args: &ValidateArgs) -> i32 {
    let files = collect(&args.paths);
    let outcomes: Vec<Outcome> = files
        .into_par_iter()
        .map(|(p, e)| check_file(&p, e, args.files_dir.as_deref(), args.rules))
        .collect();
    let single = outcomes.len() == 1 && !args.paths.iter().any(|p| p.is_dir());
    let color = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => std::env::var_os("NO_COLOR").is_none() && io::stdout().is_terminal(),
    };

    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut stderr = io::stderr();
    let (mut errors, mut warnings, mut invalid) = (0usize, 0usize, 0usize);
    for o in &outcomes {
        for d in &o.diagnostics {
            if d.is_error() {
                errors += 1;
            } else {
                warnings += 1;
            }
        }
        let _ = match (args.format, single) {
            (Format::Json, _) => print_json(&mut out, o),
            (Format::Github, _) => print_github(&mut out, o),
            (Format::Sarif, _) => Ok(()),
            (Format::Human, _) if color => print_snippets(&mut out, o, !single),
            (Format::Human, true) if o.butane => print_pretty(&mut out, o),
            (Format::Human, true) => print_lines(&mut out, &mut stderr, o, None),
            (Format::Human, false) => print_lines(&mut out, &mut stderr, o, Some(&o.file)),
        };
        if o.unexplained_failure().is_some() {
            errors += 1;
        }
        if o.failed(args.strict) {
            invalid += 1;
        }
    }
    if args.format == Format::Sarif {
        let _ = writeln!(out, "{}", sarif(&outcomes));
    }
    if args.format == Format::Human && !single {
        let _ = writeln!(
            out,
            "{} files checked: {} valid, {} invalid ({} errors, {} warnings)",
            outcomes.len(),
            outcomes.len() - invalid,
            invalid,
            errors,
            warnings
        );
    }
    let _ = out.flush();
    if invalid > 0 { 1 } else { 0 }
}

fn print_json(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    for d in &o.reported() {
        writeln!(out, "{}", d.to_json(&o.file))?;
    }
    Ok(())
}

/// Butane's own rendering, for one Butane file.
fn print_pretty(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
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
fn print_snippets(out: &mut impl Write, o: &Outcome, prefixed: bool) -> io::Result<()> {
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
fn print_lines(
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
fn print_github(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
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
fn sarif(outcomes: &[Outcome]) -> String {
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
