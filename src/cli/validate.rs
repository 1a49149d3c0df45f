//! `flint validate`: check many configs at once, in parallel, for people and for CI.

use super::render::{
    Color, Outcome, print_github, print_json, print_lines, print_pretty, print_snippets, sarif,
};
use flint_go::diag::Diagnostic;
use rayon::prelude::*;
use std::io::{self, Write};
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

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Treat warnings as failures.
    #[arg(short, long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Colour human output and show the source around each problem, as Butane does.
    #[arg(long, alias = "colour", value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    pub color: Color,
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
        eprintln!(
            "couldn't parse config: {}",
            flint_ignition::upstream_refusal(&tree)
        );
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
    let color = args.color.enabled(&io::stdout());

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
