//! `flint completions SHELL` and `flint man`: shell completion scripts and manual pages,
//! generated from the same clap definition the binary parses with (the copies under
//! `completions/` and `man/` are these outputs, checked by tests/cli_completions.rs).

use super::Cli;
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write flint.1 and one page per subcommand (flint-validate.1, ...) into DIR instead
    /// of printing flint.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The command as the manual describes it: without clap's `help` subcommand, which
/// `--help` covers.
fn command() -> clap::Command {
    Cli::command().disable_help_subcommand(true)
}

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "flint", &mut out);
    out
}

/// A page for `cmd`, every one naming flint's version (clap_mangen would give the
/// subcommands' pages none).
fn page(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("flint {}", env!("CARGO_PKG_VERSION")))
}

/// The roff source of flint.1.
pub fn man_page() -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    page(command()).render(&mut out)?;
    Ok(out)
}

/// Writes flint.1 and a page per (non-hidden) subcommand, flint-validate.1 and so on, into
/// `dir`; returns the files written.
pub fn write_man_pages(dir: &Path) -> io::Result<Vec<PathBuf>> {
    fn generate(cmd: clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            generate(sub.clone(), dir, written)?;
        }
        written.push(page(cmd).generate_to(dir)?);
        Ok(())
    }
    std::fs::create_dir_all(dir)?;
    let mut cmd = command();
    // Building gives the subcommands their display names (flint-validate).
    cmd.build();
    let mut written = Vec::new();
    generate(cmd, dir, &mut written)?;
    Ok(written)
}

pub fn run_completions(args: &CompletionsArgs) -> i32 {
    let mut out = io::stdout().lock();
    match out
        .write_all(&completion_script(args.shell))
        .and_then(|_| out.flush())
    {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: writing the completion script: {e}");
            1
        }
    }
}

pub fn run_man(args: &ManArgs) -> i32 {
    let result = match &args.dir {
        Some(dir) => write_man_pages(dir).map(|_| ()),
        None => man_page().and_then(|page| {
            let mut out = io::stdout().lock();
            out.write_all(&page)?;
            out.flush()
        }),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: writing the manual: {e}");
            1
        }
    }
}
