use clap::Parser;

fn main() {
    // Run as `ignition-validate` (a link to flint of that name): upstream's validator CLI.
    let mut args = std::env::args();
    let prog = args.next().unwrap_or_default();
    let name = std::path::Path::new(&prog)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "ignition-validate" {
        flint::cli::die_on_closed_output();
        let rest: Vec<String> = args.collect();
        std::process::exit(flint::cli::ignition_validate::run(&prog, &rest));
    }
    let cli = flint::cli::Cli::parse();
    // `apply` must finish what it started even when nobody reads its output any more.
    if !matches!(cli.command, flint::cli::Command::Apply(_)) {
        flint::cli::die_on_closed_output();
    }
    std::process::exit(flint::cli::run(cli));
}
