//! A drop-in replacement for the upstream `butane` command.
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "butane",
    about = "Translate a Butane config into an Ignition config",
    disable_version_flag = true,
    // A flag given twice is upstream's last one.
    args_override_self = true
)]
struct Cli {
    /// Print the version and exit.
    #[arg(short = 'V', long)]
    version: bool,
    #[command(flatten)]
    args: flint::cli::translate::TranslateArgs,
}

fn main() {
    flint::cli::die_on_closed_output();
    flint::cli::heap::prefer_huge_pages(flint::cli::heap::HUGE_HEAP);
    let cli = Cli::parse_from(go_bool_flags(std::env::args_os()));
    if cli.version {
        println!("Butane v{} (flint)", env!("CARGO_PKG_VERSION"));
        return;
    }
    std::process::exit(flint::cli::translate::run(&cli.args));
}

/// Upstream's flag library takes `--pretty=false` and the like (any of Go's spellings of a
/// boolean): such arguments become the plain flag, or nothing. Others pass unchanged, and
/// everything after `--`.
fn go_bool_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    const FLAGS: [&str; 6] = ["strict", "pretty", "raw", "raw-errors", "check", "debug"];
    let mut out = Vec::new();
    let mut flags_end = false;
    for a in args {
        let text = a.to_str().unwrap_or_default();
        flags_end |= text == "--";
        let split = (text.strip_prefix("--").and_then(|t| t.split_once('=')))
            .filter(|(name, _)| !flags_end && FLAGS.contains(name));
        match split.map(|(name, value)| (name, go_bool(value))) {
            Some((name, Some(true))) => out.push(format!("--{name}").into()),
            Some((_, Some(false))) => {}
            _ => out.push(a),
        }
    }
    out
}

/// Go's `strconv.ParseBool`.
fn go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}
