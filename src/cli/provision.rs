//! `flint plan` and `flint apply`: provision a machine from an Ignition (or Butane) config.

use flint_provision::acquire::{Places, Source};
use flint_provision::run::{Observer, RunError};
use flint_provision::stage::{Mode, Options, Planned, StageError, StageName};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ProvisionArgs {
    /// The mounted target root.
    #[arg(long, default_value = "/sysroot", value_name = "DIR")]
    pub root: PathBuf,
    /// Where the config comes from: `auto` is the platform the kernel command line names
    /// (ignition.platform.id=, else flatcar.oem.id=, else qemu on QEMU/KVM, else metal).
    #[arg(long, value_name = "SOURCE", conflicts_with = "config")]
    pub config_source: Option<String>,
    /// Get the config from this platform (aws, azure, gcp, openstack, vmware, …; `flint
    /// rmcfg --help` lists them): the kernel command line, then user.ign in the system
    /// config directories, then the platform.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["config", "config_source"])]
    pub platform: Option<String>,
    /// How long the platform may take to hand over the config, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub fetch_timeout: u64,
    /// Base configs (*.ign, in name order) merged underneath the user config.
    #[arg(long, value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Keep the rendered config here, so that separate stage runs read the same config.
    #[arg(long, value_name = "FILE")]
    pub config_cache: Option<PathBuf>,
    /// The grub.cfg that holds the kernel arguments; without it, grub.cfg on the OEM
    /// partition (the filesystem labelled OEM), mounted for the edit.
    #[arg(long, value_name = "FILE")]
    pub kargs_file: Option<PathBuf>,
    /// Created when the kargs stage changed the kernel arguments: the machine must reboot
    /// before they hold (the initramfs does).
    #[arg(long, value_name = "FILE")]
    pub kargs_reboot_flag: Option<PathBuf>,
    /// The flag file `--stage fetch-offline` creates when the config needs the network.
    #[arg(long, default_value = "/run/flint/neednet", value_name = "FILE")]
    pub neednet: PathBuf,
    /// Run state kept between the stages of one boot (generated LUKS keys).
    #[arg(long, default_value = "/run/flint", value_name = "DIR")]
    pub state_dir: PathBuf,
    /// Run only this stage.
    #[arg(long, value_parser = stage_name())]
    pub stage: Option<StageName>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The config: Ignition 3.x JSON (3.0.0–3.7.0-experimental) or Butane YAML (`-` for
    /// standard input).
    pub config: Option<PathBuf>,
}

/// The provisioner's threads (fetch workers) are few and short-lived: one malloc arena for
/// all of them keeps the peak memory of a large config about 10 MiB lower, in an initramfs
/// where memory is what there is least of.
pub(crate) fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tuning call made before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Runs `plan` or `apply`; returns the exit code.
pub fn run(args: &ProvisionArgs, mode: Mode) -> i32 {
    one_malloc_arena();
    let Some(source) = source(args) else {
        return 2;
    };
    // Tools run with `--root` (useradd, systemctl) need it absolute; a user may type it
    // relative to where they stand.
    let root = std::path::absolute(&args.root).unwrap_or_else(|_| args.root.clone());
    let opts = Options {
        base_dir: args.base_dir.clone(),
        cache: args.config_cache.clone(),
        fetch_timeout: std::time::Duration::from_secs(args.fetch_timeout.max(1)),
        kargs_file: args.kargs_file.clone(),
        kargs_reboot_flag: args.kargs_reboot_flag.clone(),
        neednet: args.neednet.clone(),
        ..Options::new(source, root, args.state_dir.clone())
    };
    let mut out = Output {
        format: args.format,
        mode,
    };
    match flint_provision::run::run(&opts, args.stage, mode, &mut out) {
        Ok(summary) => {
            if mode.applies()
                && args.format == Format::Human
                && args.stage != Some(StageName::FetchOffline)
            {
                use std::io::Write as _;
                let changes = summary.changes;
                // The work is done: a reader gone away is no failure (and no panic).
                let _ = if changes == 0 {
                    writeln!(std::io::stdout(), "apply: nothing to change")
                } else {
                    writeln!(std::io::stdout(), "apply: {changes} changes")
                };
            }
            // A plan that could not see everything is no complete plan.
            if !summary.unseen.is_empty() {
                let n = summary.unseen.len();
                eprintln!("plan: incomplete: {n} device(s) not present on this machine");
                return 1;
            }
            0
        }
        Err(RunError::Busy(e) | RunError::ReadState(e) | RunError::WriteState(e)) => {
            eprintln!("error: {e}");
            1
        }
        Err(RunError::Stage(e)) => out.failed(&e),
    }
}

/// Where the config comes from, as the command line says; `None` (after saying why) for a
/// command line that names none or an unknown one.
fn source(args: &ProvisionArgs) -> Option<Source> {
    Some(
        match (&args.config, args.config_source.as_deref(), &args.platform) {
            // `-`: the config on standard input.
            (Some(p), _, _) if p.as_os_str() == "-" => Source::File(PathBuf::from("/dev/stdin")),
            (Some(p), _, _) => Source::File(p.clone()),
            (None, _, Some(name)) => {
                if flint_provision::platform::get(name).is_none() {
                    eprintln!(
                        "error: unknown platform {name:?}; known: {}",
                        flint_provision::platform::names().join(", ")
                    );
                    return None;
                }
                Source::Platform(name.clone())
            }
            (None, Some("auto"), None) => Source::Auto,
            (None, Some(other), None) => {
                eprintln!("error: unknown config source {other:?} (use a file or `auto`)");
                return None;
            }
            (None, None, None) => {
                eprintln!("error: give a CONFIG file, --platform NAME or --config-source auto");
                return None;
            }
        },
    )
}

/// `flint rmcfg`: delete the config from the hypervisor after boot.
#[derive(Debug, clap::Args)]
pub struct RmcfgArgs {
    /// The platform (vmware or virtualbox keep the config where the guest can read it);
    /// without it, the platform the kernel command line names.
    #[arg(long, value_name = "NAME")]
    pub platform: Option<String>,
}

/// Runs `rmcfg`; returns the exit code.
pub fn rmcfg(args: &RmcfgArgs) -> i32 {
    let places = Places::default();
    let p = match flint_provision::platform::select(args.platform.as_deref(), &places) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let cx = flint_provision::platform::Context::new(
        flint_provision::fetch::Fetcher::with(flint_provision::fetch::Settings::from_env()),
        places,
    );
    let r = p.delete_config(&cx);
    for n in cx.take_notes() {
        eprintln!("rmcfg: {n}");
    }
    match r {
        Ok(()) => {
            eprintln!("rmcfg: successfully deleted config");
            0
        }
        Err(e) => {
            eprintln!("error: couldn't delete config: {e}");
            1
        }
    }
}

/// Where the run's lines go: actions on stdout ("would …" when planning, one JSON object each
/// with --format json), notes and errors on stderr in human form.
struct Output {
    format: Format,
    mode: Mode,
}

impl Observer for Output {
    fn note(&mut self, text: &str) {
        if self.format == Format::Human {
            eprintln!("{text}");
        }
    }

    /// A stage's lines, written at once: a reader that stops after the first line
    /// (`| head -1`) then meets a whole output, not one cut at a random line; and `apply`
    /// goes on (a failed write is left unreported) when nobody reads any more.
    fn changes(&mut self, stage: StageName, actions: &[Planned]) {
        use std::fmt::Write as _;
        let mut text = String::new();
        for a in actions {
            let _ = match self.format {
                Format::Human if self.mode.applies() => writeln!(text, "{}", a.text),
                Format::Human => writeln!(text, "would {}", a.text),
                Format::Json => writeln!(
                    text,
                    "{}",
                    serde_json::json!({
                        "stage": stage.name(),
                        "action": a.kind,
                        "path": a.path,
                        "entry": a.entry.to_string(),
                        "detail": a.text,
                    })
                ),
            };
        }
        if !text.is_empty() {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
        }
    }
}

impl Output {
    fn failed(&self, e: &StageError) -> i32 {
        match self.format {
            Format::Human => eprintln!("error: {e}"),
            Format::Json => println!(
                "{}",
                serde_json::json!({
                    "stage": e.stage.name(),
                    "action": "fail",
                    "path": e.path.as_ref().map(|p| p.to_string()),
                    "message": e.message,
                })
            ),
        }
        1
    }
}

/// `--stage NAME`: the stages' names, listed in the help as clap lists an enum's values.
fn stage_name() -> impl clap::builder::TypedValueParser<Value = StageName> {
    let names: Vec<&'static str> = StageName::ALL.iter().map(|s| s.name()).collect();
    use clap::builder::TypedValueParser as _;
    // Only names of the list get through the first parser, so the second never fails.
    clap::builder::PossibleValuesParser::new(names)
        .map(|s| s.parse::<StageName>().unwrap_or(StageName::Fetch))
}
