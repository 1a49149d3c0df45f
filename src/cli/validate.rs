//! `flint validate`: check many configs at once, in parallel, for people and for CI.

use crate::diag::Diagnostic;
use rayon::prelude::*;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The upstream validator's lines (prefixed with the file when there are several).
    Human,
    /// One JSON object per diagnostic and line.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Treat warnings as failures.
    #[arg(short, long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Config files, or directories to search recursively for *.ign and *.json.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// What validating one file found.
struct Outcome {
    file: String,
    diagnostics: Vec<Diagnostic>,
}

impl Outcome {
    fn failed(&self, strict: bool) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.is_error() || d.fatal || strict)
    }
}

fn is_config_file(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("ign" | "json"))
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

fn check_file(path: &Path, err: Option<io::Error>) -> Outcome {
    let file = path.display().to_string();
    let read = match err {
        Some(e) => Err(e),
        None => std::fs::read(path),
    };
    let diagnostics = match read {
        Ok(bytes) => crate::ignition::check(&bytes),
        Err(e) => vec![Diagnostic {
            message: format!("couldn't read config: {e}"),
            ..Diagnostic::error(None, None, "")
        }],
    };
    Outcome { file, diagnostics }
}

/// Runs the command; returns the exit code.
pub fn run(args: &ValidateArgs) -> i32 {
    let files = collect(&args.paths);
    let outcomes: Vec<Outcome> = files
        .into_par_iter()
        .map(|(p, e)| check_file(&p, e))
        .collect();
    let single = outcomes.len() == 1 && !args.paths.iter().any(|p| p.is_dir());

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
            let _ = match (args.format, single) {
                (Format::Json, _) => writeln!(out, "{}", d.to_json(&o.file)),
                // As upstream: the report on stdout, a failure to read the config on stderr.
                (Format::Human, true) if d.fatal => writeln!(stderr, "{d}"),
                (Format::Human, true) => writeln!(out, "{d}"),
                (Format::Human, false) => writeln!(out, "{}: {d}", o.file),
            };
        }
        if o.failed(args.strict) {
            invalid += 1;
        }
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
