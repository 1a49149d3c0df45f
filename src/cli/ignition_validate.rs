//! The validator under upstream's name: `flint` run as `ignition-validate` (a link or a copy
//! of that name) takes upstream's command line — Go's flag syntax (`-version` or
//! `--version`, `-h`), exactly one CONFIG (`-` for standard input) — and answers as
//! upstream does: the report on stdout, exit 0 when valid (warnings included), 1 when
//! invalid or unreadable or without exactly one config (usage on stderr), 2 for an unknown
//! flag.

use super::go_parse_bool;
use std::path::Path;

/// The version line upstream prints; flint validates as that release does.
pub const VERSION: &str = "Ignition v2.26.0";

fn usage(prog: &str) -> String {
    format!(
        "Usage:\n  {prog} [flags] config.ign\n\n  -version\n    \tprint the version of ignition-validate\n"
    )
}

/// Runs the command line `args` (without the program name); returns the exit code.
///
/// Flags are parsed as Go's `flag` package parses them: they end at the first argument that
/// is not a flag (`-` and the empty string included) or after `--`.
pub fn run(prog: &str, args: &[String]) -> i32 {
    let fail = |msg: String| {
        eprintln!("{msg}");
        eprint!("{}", usage(prog));
        2
    };
    let mut version = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.len() < 2 || !a.starts_with('-') {
            break;
        }
        i += 1;
        if a == "--" {
            break;
        }
        let name = a.strip_prefix("--").unwrap_or(&a[1..]);
        if name.is_empty() || name.starts_with('-') || name.starts_with('=') {
            return fail(format!("bad flag syntax: {a}"));
        }
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (name, None),
        };
        match name {
            "version" => match value.map_or(Some(true), |v| go_parse_bool(v.as_bytes())) {
                Some(b) => version = b,
                None => {
                    let v = value.unwrap_or_default();
                    return fail(format!(
                        "invalid boolean value \"{v}\" for -version: parse error"
                    ));
                }
            },
            "h" | "help" => {
                eprint!("{}", usage(prog));
                return 0;
            }
            _ => return fail(format!("flag provided but not defined: -{name}")),
        }
    }
    if version {
        println!("{VERSION}");
        return 0;
    }
    let configs = &args[i..];
    if configs.len() != 1 {
        eprint!("{}", usage(prog));
        return 1;
    }
    super::validate::validate_one(Path::new(&configs[0]))
}
