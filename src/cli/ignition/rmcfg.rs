//! `ignition-rmcfg`: deletes the config from the hypervisor after the first boot, as
//! upstream's tool (run by ignition-delete-config.service on VMware and VirtualBox):
//! pflag syntax, `--platform` required, logging as `ignition` logs.

use super::flags;
use super::log::Logger;
use super::{PLATFORMS, VERSION};

fn usage(prog: &str) -> String {
    format!(
        "Usage: {prog} [options]
Options:
      --log-to-stdout     log to stdout instead of the system log
      --platform string   current platform. [{}]
      --version           print the version and exit
",
        PLATFORMS.join(" ")
    )
}

/// Runs the command line `args` (without the program name `prog`); returns the exit code.
pub fn run(prog: &str, args: &[String]) -> i32 {
    let specs = [
        ("log-to-stdout", true),
        ("platform", false),
        ("version", true),
    ];
    let (mut to_stdout, mut platform, mut version) = (false, None::<String>, false);
    let rest = flags::parse_pflag(args, &specs, &mut |name, v| {
        match name {
            "log-to-stdout" => to_stdout = v == "true",
            "platform" => platform = Some(v.into()),
            _ => version = v == "true",
        }
        Ok(())
    });
    match rest {
        Ok(rest) if rest.is_empty() => {}
        Ok(_) => {
            eprint!("{}", usage(prog));
            return 2;
        }
        Err(stop) => return stop.pflag_exit(&usage(prog)),
    }
    if version {
        println!("{VERSION}");
        return 0;
    }
    let Some(platform) = platform else {
        eprintln!("'--platform' must be provided");
        return 2;
    };
    let mut log = Logger::new(to_stdout);
    log.info(VERSION);
    if !PLATFORMS.contains(&platform.as_str()) {
        // Upstream panics here (exit 2); flint says the same without the stack trace.
        eprintln!("invalid platform name {platform:?} provided");
        return 2;
    }
    match delete(&platform) {
        Ok(()) => {
            log.info("Successfully deleted config");
            0
        }
        Err(e) => {
            log.crit(&format!("couldn't delete config: {e}"));
            1
        }
    }
}

/// The platform's deletion; only VMware and VirtualBox keep a config to delete.
fn delete(name: &str) -> Result<(), String> {
    use flint_provision::platform::{self, Context, Places};
    let p = platform::get(name)
        .filter(|p| matches!(p.name(), "vmware" | "virtualbox"))
        .ok_or("cannot delete config on this platform")?;
    let fetcher =
        flint_provision::fetch::Fetcher::with(flint_provision::fetch::Settings::from_env());
    p.delete_config(&Context::new(fetcher, Places::default()))
}
