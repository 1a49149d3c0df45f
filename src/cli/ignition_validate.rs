//! The validator under upstream's name: `flint` run as `ignition-validate` (a link or a copy
//! of that name) takes upstream's command line — Go's flag syntax (`-version` or
//! `--version`, `-h`), exactly one CONFIG (`-` for standard input) — and answers as
//! upstream does: the report on stdout, exit 0 when valid (warnings included), 1 when
//! invalid or unreadable or without exactly one config (usage on stderr), 2 for an unknown
//! flag.

use super::ignition::flags::parse_go;
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
    let mut version = false;
    let set = &mut |_: &str, v: &str| {
        version = v == "true";
        Ok(())
    };
    let i = match parse_go(args, &[("version", true)], set) {
        Ok(i) => i,
        Err(stop) => return stop.go_exit(&usage(prog)),
    };
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
