//! `flint migrate CONFIG`: prints the Butane config equivalent to an Ignition config of any
//! version flint reads (spec 1 and 2.x included).

use std::io::Read;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The Ignition config (JSON, spec 1, 2.x or 3.x); `-` or nothing reads standard input.
    pub config: Option<PathBuf>,
    /// Write the Butane config here instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs the command; returns the exit code (0 written, 1 unreadable or refused config).
pub fn run(args: &MigrateArgs) -> i32 {
    let (bytes, name) = match args.config.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(p) => match std::fs::read(p) {
            Ok(b) => (b, p.display().to_string()),
            Err(e) => {
                eprintln!("error: reading {}: {e}", p.display());
                return 1;
            }
        },
        None => {
            let mut b = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut b) {
                eprintln!("error: reading standard input: {e}");
                return 1;
            }
            (b, "standard input".to_string())
        }
    };
    let butane =
        flint_butane::migrate::read(&bytes).and_then(|c| flint_butane::migrate::to_butane(&c));
    match butane {
        Err(e) => {
            eprintln!("error: {name}: {e}");
            1
        }
        Ok(text) => match &args.output {
            Some(p) => match std::fs::write(p, text) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: writing {}: {e}", p.display());
                    1
                }
            },
            None => {
                print!("{text}");
                0
            }
        },
    }
}
