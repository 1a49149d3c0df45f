//! A drop-in replacement for the upstream `butane` command.
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "butane",
    about = "Translate a Butane config into an Ignition config",
    disable_version_flag = true
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
    let cli = Cli::parse();
    if cli.version {
        println!("Butane v{} (flint)", env!("CARGO_PKG_VERSION"));
        return;
    }
    std::process::exit(flint::cli::translate::run(&cli.args));
}
