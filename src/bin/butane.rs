//! A drop-in replacement for the upstream `butane` command: upstream's command line (see
//! cli::butane_flags), flint's translation.
use flint::cli::butane_flags::{Action, answer, parse};

fn main() {
    flint::cli::die_on_closed_output();
    flint::cli::heap::prefer_huge_pages(flint::cli::heap::HUGE_HEAP);
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let action = parse(args, &mut std::io::stderr());
    if let Some(code) = answer(&action, &argv0) {
        std::process::exit(code);
    }
    if let Action::Translate(t) = action {
        std::process::exit(flint::cli::translate::run(&t));
    }
}
