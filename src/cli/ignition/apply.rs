//! `ignition-apply`: a config applied to the running system it is in, as upstream's tool
//! (meant for containers): pflag syntax, one CONFIG (`-` for standard input), logging to
//! standard output. What cannot be changed live (kernel arguments, disks, filesystems,
//! users and groups) is refused, or left out with `--ignore-unsupported`; the rest is
//! flint's files stage, without the record of a first boot.

use super::VERSION;
use super::flags;
use super::log::Logger;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use flint_provision::acquire::{self, Budget, Source};
use flint_provision::run::RunError;
use flint_provision::stage::{Mode, Options, StageName};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

fn usage(prog: &str) -> String {
    format!(
        "Usage: {prog} [options] config.ign
Options:
      --ignore-unsupported   ignore unsupported config sections
      --offline              error out if config references remote resources
      --root string          root of the filesystem (default \"/\")
      --version              print the version of ignition-apply
"
    )
}

#[derive(Default)]
struct Flags {
    ignore_unsupported: bool,
    offline: bool,
    root: Option<PathBuf>,
    version: bool,
}

/// Runs the command line `args` (without the program name `prog`); returns the exit code.
pub fn run(prog: &str, args: &[String]) -> i32 {
    let specs = [
        ("ignore-unsupported", true),
        ("offline", true),
        ("root", false),
        ("version", true),
    ];
    let mut f = Flags::default();
    let rest = flags::parse_pflag(args, &specs, &mut |name, v| {
        match name {
            "ignore-unsupported" => f.ignore_unsupported = v == "true",
            "offline" => f.offline = v == "true",
            "root" => f.root = Some(v.into()),
            _ => f.version = v == "true",
        }
        Ok(())
    });
    let rest = match rest {
        Ok(r) => r,
        Err(stop) => return stop.pflag_exit(&usage(prog)),
    };
    if f.version {
        println!("{VERSION}");
        return 0;
    }
    let [config] = rest.as_slice() else {
        eprint!("{}", usage(prog));
        return 1;
    };
    let mut log = Logger::stdout();
    log.info(VERSION);
    let config = match read(config) {
        Ok(c) => c,
        Err(msg) => {
            log.crit(&msg);
            return 1;
        }
    };
    match apply(&f, config, &mut log) {
        Ok(()) => 0,
        Err(msg) => {
            log.crit(&format!("failed to apply: {msg}"));
            1
        }
    }
}

/// The config in `name` (`-`: standard input), parsed, or upstream's message.
fn read(name: &str) -> Result<Config, String> {
    use std::io::Read as _;
    let path = PathBuf::from(if name == "-" { "/dev/stdin" } else { name });
    let mut bytes = Vec::new();
    (std::fs::File::open(&path).and_then(|mut f| f.read_to_end(&mut bytes))).map_err(|e| {
        let shown = PathBuf::from(name);
        let e = flint_provision::state::go_io_error(&shown, &e);
        format!("couldn't read config: {e}")
    })?;
    if !flint_provision::platform::is_config(&bytes) {
        return Err("couldn't parse config: not a config (empty)".into());
    }
    acquire::parse_any(bytes, name, None).map_err(|e| format!("couldn't parse config: {e}"))
}

/// Whether this runs in a container, as upstream tests it.
fn in_container() -> bool {
    std::env::var_os("container").is_some_and(|v| !v.is_empty())
        || ["/run/.containerenv", "/.dockerenv"]
            .iter()
            .any(|p| std::path::Path::new(p).exists())
}

/// Renders the config, refuses (or leaves out) what cannot change live, and runs the files
/// stage on the root.
fn apply(f: &Flags, config: Config, log: &mut Logger) -> Result<(), String> {
    if !in_container() {
        return Err(
            "this tool is not designed to run on a host system; reprovision the machine instead"
                .into(),
        );
    }
    let root = f.root.clone().unwrap_or_else(|| "/".into());
    let root = std::path::absolute(&root).unwrap_or(root);
    let mut settings = flint_provision::fetch::Settings::from_env();
    if f.offline {
        settings.offline = Some(Arc::new(AtomicBool::new(false)));
    }
    let fetcher = flint_provision::fetch::Fetcher::with(settings.clone());
    let budget = Budget::from_env();
    let (mut config, _) = acquire::render(
        config,
        &fetcher,
        &JsonPath::root(),
        &mut Vec::new(),
        &budget,
    )
    .map_err(|e| e.to_string())?;
    // Resolved: the files stage must not fetch them again.
    config.ignition.config = Default::default();
    live_only(&mut config, f.ignore_unsupported)?;
    let state_dir = private_dir()?;
    let opts = Options {
        fetch: settings,
        live: true,
        ..Options::new(Source::Given(Box::new(config)), root, state_dir.clone())
    };
    let mut obs = super::Logged {
        log,
        root: &opts.root,
    };
    let r = flint_provision::run::run(&opts, Some(StageName::Files), Mode::Apply, &mut obs);
    let _ = std::fs::remove_dir_all(&state_dir);
    match r {
        Ok(_) => Ok(()),
        Err(RunError::Stage(e)) => Err(match &e.path {
            Some(p) => format!("running stage '{}': {p}: {}", e.stage.name(), e.message),
            None => format!("running stage '{}': {}", e.stage.name(), e.message),
        }),
        Err(RunError::Busy(m) | RunError::ReadState(m) | RunError::WriteState(m)) => Err(m),
    }
}

/// Refuses, stage by stage as upstream's stages refuse, what cannot be applied to a running
/// system; with `ignore`, leaves it out instead.
fn live_only(c: &mut Config, ignore: bool) -> Result<(), String> {
    let s = &c.storage;
    let refusals = [
        (
            "kargs",
            "kargs modifications",
            !c.kernel_arguments.should_exist.is_empty()
                || !c.kernel_arguments.should_not_exist.is_empty(),
        ),
        (
            "disks",
            "disk modifications",
            !(s.disks.is_empty()
                && s.raid.is_empty()
                && s.filesystems.is_empty()
                && s.luks.is_empty()),
        ),
        (
            "files",
            "passwd",
            !c.passwd.users.is_empty() || !c.passwd.groups.is_empty(),
        ),
    ];
    if let Some((stage, what, _)) = refusals.iter().find(|r| r.2).filter(|_| !ignore) {
        return Err(format!("running stage '{stage}': cannot apply {what} live"));
    }
    c.kernel_arguments = Default::default();
    c.storage.disks.clear();
    c.storage.raid.clear();
    c.storage.filesystems.clear();
    c.storage.luks.clear();
    c.passwd = Default::default();
    Ok(())
}

/// A fresh private directory for the run's state (nothing is carried between runs).
fn private_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let d = std::env::temp_dir().join(format!("flint-ignition-apply-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    (std::fs::DirBuilder::new().mode(0o700).create(&d))
        .map_err(|e| format!("creating {}: {e}", d.display()))?;
    Ok(d)
}
