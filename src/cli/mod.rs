//! The command-line interface: argument definitions and the commands behind them. The
//! binaries only parse arguments and turn results into exit codes.

pub mod butane_flags;
pub mod completions;
mod gofmt;
pub mod heap;
pub mod ignition;
pub mod ignition_validate;
pub mod migrate;
pub mod provision;
pub mod render;
pub mod translate;
pub mod validate;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "flint",
    version,
    about = "Butane and Ignition for Flatcar-style systems"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Go's `strconv.ParseBool`, as Go's flag libraries read a boolean flag's value.
pub fn go_parse_bool(s: &[u8]) -> Option<bool> {
    match s {
        b"1" | b"t" | b"T" | b"TRUE" | b"true" | b"True" => Some(true),
        b"0" | b"f" | b"F" | b"FALSE" | b"false" | b"False" => Some(false),
        _ => None,
    }
}

/// Output into a pipe whose reader is gone (`flint plan | head -1`) ends the process
/// quietly, as it ends upstream's tools, instead of a panic on the failed write. Rust starts
/// programs with SIGPIPE ignored; this restores the default. No code writes into a child's
/// pipe, and sockets are written with MSG_NOSIGNAL, so only standard output and error meet it.
pub fn die_on_closed_output() {
    // SAFETY: setting a signal disposition to its default, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what provisioning with a config would change, without changing anything.
    Plan(provision::ProvisionArgs),
    /// Provision the machine from a config (disks, filesystems, files, users, units).
    Apply(provision::ProvisionArgs),
    /// Delete the config from the hypervisor after the first boot (vmware, virtualbox), as
    /// upstream's ignition-rmcfg.
    Rmcfg(provision::RmcfgArgs),
    /// Translate a Butane config into an Ignition config (the same as `butane`).
    Translate(translate::TranslateArgs),
    /// Check Ignition and Butane configs (files or directories), many at once.
    Validate(validate::ValidateArgs),
    /// Print the Butane config (variant flatcar) equivalent to an Ignition config of any
    /// version, spec 1 and 2.x included.
    Migrate(migrate::MigrateArgs),
    /// Print a JSON Schema for editors.
    Schema {
        /// One of the names `flint schema --list` prints, e.g. ignition-3.4.0.
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// List the schema names.
        #[arg(long)]
        list: bool,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), or write one per command into a directory.
    Man(completions::ManArgs),
    /// Serve the Language Server Protocol over standard input and output, for editors:
    /// diagnostics, hover, completion and code actions for Butane and Ignition configs.
    #[cfg(feature = "lsp")]
    Lsp,
}

/// Runs the parsed command line; returns the exit code.
pub fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Plan(args) => provision::run(&args, flint_provision::stage::Mode::Plan),
        Command::Apply(args) => provision::run(&args, flint_provision::stage::Mode::Apply),
        Command::Rmcfg(args) => provision::rmcfg(&args),
        Command::Translate(args) => translate::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Migrate(args) => migrate::run(&args),
        Command::Completions(args) => completions::run_completions(&args),
        Command::Man(args) => completions::run_man(&args),
        #[cfg(feature = "lsp")]
        Command::Lsp => flint_lsp::serve_stdio(),
        Command::Schema { name, list } => {
            // A reader that stops early (`| head`) is no error.
            let emit = |bytes: &[u8]| {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(bytes).and_then(|_| out.flush());
            };
            if list {
                let names: String = flint_butane::schema::names()
                    .into_iter()
                    .map(|n| n + "\n")
                    .collect();
                emit(names.as_bytes());
                return 0;
            }
            let name = name.unwrap_or_default();
            match flint_butane::schema::by_name(&name) {
                Some(s) => {
                    emit(&flint_go::json::to_vec(&s, true));
                    0
                }
                None => {
                    eprintln!(
                        "error: unknown schema {name:?}; known: {}",
                        flint_butane::schema::names().join(", ")
                    );
                    2
                }
            }
        }
    }
}
