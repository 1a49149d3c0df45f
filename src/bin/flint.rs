use clap::Parser;

fn main() {
    let cli = flint::cli::Cli::parse();
    std::process::exit(flint::cli::run(cli));
}
