use clap::Parser;

fn main() {
    // Upstream's names (links to flint of those names) are upstream's command lines.
    let mut args = std::env::args();
    let prog = args.next().unwrap_or_default();
    let name = std::path::Path::new(&prog)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest = || args.collect::<Vec<String>>();
    match name.as_str() {
        // Run as `ignition-validate` (a link to flint of that name): upstream's validator CLI.
        "ignition-validate" => {
            flint::cli::die_on_closed_output();
            std::process::exit(flint::cli::ignition_validate::run(&prog, &rest()));
        }
        // Upstream's provisioner binaries; like `apply`, they finish what they started
        // even when nobody reads their output any more.
        "ignition" => std::process::exit(flint::cli::ignition::run(&prog, &rest())),
        "ignition-apply" => std::process::exit(flint::cli::ignition::apply::run(&prog, &rest())),
        "ignition-rmcfg" => std::process::exit(flint::cli::ignition::rmcfg::run(&prog, &rest())),
        _ => {}
    }
    let cli = flint::cli::Cli::parse();
    // `apply` must finish what it started even when nobody reads its output any more.
    if !matches!(cli.command, flint::cli::Command::Apply(_)) {
        flint::cli::die_on_closed_output();
    }
    std::process::exit(flint::cli::run(cli));
}
