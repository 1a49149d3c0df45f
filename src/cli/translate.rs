//! `butane` / `flint translate`: Butane YAML in, Ignition JSON out, with upstream butane's
//! flags, output, diagnostics and exit codes.

use super::render::{Color, parse_color};
use flint_butane::{self as spec, Options};
use flint_go::diag::render;
use std::io::{Read, Write};
use std::path::PathBuf;

/// What upstream's flag library says of `--input`, each time it is given.
pub const INPUT_DEPRECATED: &str =
    "Flag --input has been deprecated, specify filename directly on command line";

#[derive(Debug, clap::Args)]
pub struct TranslateArgs {
    /// Fail on any warning.
    #[arg(short, long)]
    pub strict: bool,
    /// Output formatted JSON.
    #[arg(short, long)]
    pub pretty: bool,
    /// Never wrap in a MachineConfig; force Ignition output.
    #[arg(short, long)]
    pub raw: bool,
    /// Print errors and warnings as one line each.
    #[arg(long)]
    pub raw_errors: bool,
    /// Allow embedding local files from this directory.
    #[arg(short = 'd', long, value_name = "DIR", value_parser = any_path())]
    pub files_dir: Option<PathBuf>,
    /// Write the output to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE", value_parser = any_path())]
    pub output: Option<PathBuf>,
    /// Check the config without producing output.
    #[arg(short, long)]
    pub check: bool,
    /// Colour diagnostics: auto, always or never.
    #[arg(long, alias = "colour", value_name = "WHEN", value_parser = parse_color,
          num_args = 0..=1, require_equals = true, default_missing_value = "always",
          default_value = "auto")]
    pub color: Color,
    /// Read the config from FILE (deprecated: give the file as the argument).
    #[arg(long = "input", value_name = "FILE", hide = true, value_parser = any_path())]
    pub input_flag: Option<PathBuf>,
    /// Print where each part of the output came from.
    #[arg(short = 'D', long, hide = true)]
    pub debug: bool,
    /// The Butane config (standard input when absent).
    #[arg(value_parser = any_path())]
    pub input: Option<PathBuf>,
}

/// A path, empty ones too: upstream takes an empty name as none given (see `run`).
fn any_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(PathBuf::from)
}

/// Runs a translation; returns the exit code.
pub fn run(args: &TranslateArgs) -> i32 {
    if args.input_flag.is_some() {
        // What upstream's flag library says of a deprecated flag, each time it is used.
        eprintln!("{INPUT_DEPRECATED}");
        if args.input.is_some() {
            eprintln!("error: give the input file either as the argument or with --input");
            return 2;
        }
    }
    // An empty name is no name, as upstream's flags take it: standard input, standard
    // output, no files directory.
    let given = |p: &Option<PathBuf>| p.clone().filter(|p| !p.as_os_str().is_empty());
    let input = given(&args.input).or(given(&args.input_flag));
    let files_dir = given(&args.files_dir);
    let go_error = spec::base::local::go_io_error;
    let (name, bytes) = match input {
        Some(p) => {
            let mut b = Vec::new();
            let read = match std::fs::File::open(&p) {
                Ok(mut f) => f.read_to_end(&mut b).map_err(|e| ("read", e)),
                Err(e) => Err(("open", e)),
            };
            if let Err((op, e)) = read {
                eprintln!("failed to {op} {}: {}", p.display(), go_error(op, &p, &e));
                return 1;
            }
            (p.display().to_string(), b)
        }
        None => {
            let mut b = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut b) {
                eprintln!("failed to read <stdin>: {e}");
                return 1;
            }
            ("<stdin>".to_string(), b)
        }
    };
    // Snippets quote the text as read (UTF-16 made UTF-8); a malformed one fails below.
    let bytes = spec::utf16_as_utf8(&bytes).unwrap_or(bytes);
    let mut outcome = spec::translate(
        &bytes,
        Options {
            files_dir: files_dir.as_deref(),
            raw: args.raw,
            debug: args.debug,
            render: Some(args.pretty),
            exiting: true,
            memo: None,
        },
    );
    let color = args.color.enabled(&std::io::stderr());
    // Only diagnostics quote the input.
    let text = std::cell::LazyCell::new(|| String::from_utf8_lossy(&bytes));
    let report: Vec<String> = outcome
        .diagnostics
        .iter()
        .map(|d| {
            if args.raw_errors {
                format!("{d}\n")
            } else {
                render::pretty(d, &name, &text, color)
            }
        })
        .collect();
    let mut stderr = std::io::stderr().lock();
    if let Some(t) = &outcome.translations {
        let _ = stderr.write_all(t.as_bytes());
    }
    let _ = stderr.write_all(
        report
            .join(if args.raw_errors { "" } else { "\n" })
            .as_bytes(),
    );
    if let Some(f) = &outcome.failure {
        let _ = writeln!(stderr, "Error translating config: {f}");
        return 1;
    }
    if args.strict && !outcome.diagnostics.is_empty() {
        let _ = writeln!(
            stderr,
            "Config produced warnings and --strict was specified"
        );
        return 1;
    }
    if args.check {
        return 0;
    }
    let Some(json) = outcome.render(args.pretty) else {
        return 1;
    };
    let written = match given(&args.output) {
        Some(path) => match std::fs::File::create(&path) {
            Ok(mut f) => f.write_all(&json).map_err(|e| (path, e)),
            Err(e) => {
                let e = go_error("open", &path, &e);
                let _ = writeln!(stderr, "failed to open {}: {e}", path.display());
                return 1;
            }
        },
        None => {
            let mut out = std::io::stdout().lock();
            widen_pipe(&out, json.len());
            (out.write_all(&json).and_then(|_| out.flush())).map_err(|e| ("/dev/stdout".into(), e))
        }
    };
    if let Err((path, e)) = written {
        let e = go_error("write", &path, &e);
        let _ = writeln!(stderr, "Failed to write config to {}: {e}", path.display());
        return 1;
    }
    // The process ends now: freeing a large translation allocation by allocation would
    // only delay that.
    std::mem::forget((outcome, json));
    0
}

/// Lets a pipe on `out` hold up to `len` bytes (to 1 MiB, what any user may ask): a large
/// config written into a 64 KiB pipe waits for the reader at every 64 KiB. Anything else
/// than a pipe, or a refusal, leaves it as it is.
fn widen_pipe(out: &impl std::os::fd::AsRawFd, len: usize) {
    const DEFAULT: usize = 64 << 10;
    const MOST: usize = 1 << 20;
    if len <= DEFAULT {
        return;
    }
    let fd = out.as_raw_fd();
    // SAFETY: fstat and fcntl on a descriptor the process holds, with a valid out-pointer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            libc::fcntl(fd, libc::F_SETPIPE_SZ, len.min(MOST) as libc::c_int);
        }
    }
}
