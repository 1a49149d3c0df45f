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
    /// The files directory for Butane `local` references (default: a `files` directory
    /// beside each config, when there is one).
    #[arg(short = 'd', long, value_name = "DIR")]
    pub files_dir: Option<PathBuf>,
    /// Config files, or directories to search recursively for Ignition (*.ign, *.json) and
    /// Butane (*.bu, *.yaml, *.yml) configs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// What validating one file found.
struct Outcome {
    file: String,
    diagnostics: Vec<Diagnostic>,
    /// For Butane files: the source (for snippets) and why translation failed, if it did.
    butane: Option<(String, Option<String>)>,
}

impl Outcome {
    fn failure(&self) -> Option<&str> {
        self.butane.as_ref().and_then(|(_, f)| f.as_deref())
    }

    fn failed(&self, strict: bool) -> bool {
        self.failure().is_some()
            || self
                .diagnostics
                .iter()
                .any(|d| d.is_error() || d.fatal || strict)
    }

    /// A failure no located error explains (e.g. an unknown variant) is printed on its own.
    fn unexplained_failure(&self) -> Option<&str> {
        self.failure()
            .filter(|_| !self.diagnostics.iter().any(|d| d.is_error()))
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

fn check_file(path: &Path, err: Option<io::Error>, files_dir: Option<&Path>) -> Outcome {
    let file = path.display().to_string();
    let read = match err {
        Some(e) => Err(e),
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
                butane: None,
            };
        }
    };
    if !is_butane_file(path) {
        return Outcome {
            file,
            diagnostics: crate::ignition::check(&bytes),
            butane: None,
        };
    }
    let beside = path
        .parent()
        .map(|d| d.join("files"))
        .filter(|d| d.is_dir());
    let dir = files_dir.map(Path::to_path_buf).or(beside);
    let outcome = crate::spec::translate(
        &bytes,
        crate::spec::Options {
            files_dir: dir.as_deref(),
        },
    );
    Outcome {
        file,
        diagnostics: outcome.diagnostics,
        butane: Some((
            String::from_utf8_lossy(&bytes).into_owned(),
            outcome.failure,
        )),
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: &ValidateArgs) -> i32 {
    let files = collect(&args.paths);
    let outcomes: Vec<Outcome> = files
        .into_par_iter()
        .map(|(p, e)| check_file(&p, e, args.files_dir.as_deref()))
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
        }
        let _ = match (args.format, single, &o.butane) {
            (Format::Json, ..) => print_json(&mut out, o),
            (Format::Human, true, Some((text, _))) => print_pretty(&mut out, o, text),
            (Format::Human, true, None) => print_lines(&mut out, &mut stderr, o, None),
            (Format::Human, false, _) => print_lines(&mut out, &mut stderr, o, Some(&o.file)),
        };
        if o.unexplained_failure().is_some() {
            errors += 1;
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

fn print_json(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    for d in &o.diagnostics {
        writeln!(out, "{}", d.to_json(&o.file))?;
    }
    if let Some(f) = o.unexplained_failure() {
        let d = Diagnostic::error(None, None, format!("Error translating config: {f}"));
        writeln!(out, "{}", d.to_json(&o.file))?;
    }
    Ok(())
}

/// Butane's own rendering, for one Butane file.
fn print_pretty(out: &mut impl Write, o: &Outcome, text: &str) -> io::Result<()> {
    let blocks: Vec<String> = o
        .diagnostics
        .iter()
        .map(|d| crate::diag::render::pretty(d, &o.file, text, false))
        .collect();
    out.write_all(blocks.join("\n").as_bytes())?;
    if let Some(f) = o.failure() {
        writeln!(out, "Error translating config: {f}")?;
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
