//! `flint plan` and `flint apply`: provision a machine from an Ignition (or Butane) config.

use flint_provision::provision::acquire::{Places, Source};
use flint_provision::provision::{self, Options, Stage};
use std::path::PathBuf;
use std::time::Instant;

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
    #[arg(long, value_enum)]
    pub stage: Option<Stage>,
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
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tuning call made before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Runs `plan` (`apply` = false) or `apply`; returns the exit code.
pub fn run(args: &ProvisionArgs, apply: bool) -> i32 {
    one_malloc_arena();
    let source = match (&args.config, args.config_source.as_deref(), &args.platform) {
        // `-`: the config on standard input.
        (Some(p), _, _) if p.as_os_str() == "-" => Source::File(PathBuf::from("/dev/stdin")),
        (Some(p), _, _) => Source::File(p.clone()),
        (None, _, Some(name)) => {
            if flint_provision::platform::get(name).is_none() {
                eprintln!(
                    "error: unknown platform {name:?}; known: {}",
                    flint_provision::platform::names().join(", ")
                );
                return 2;
            }
            Source::Platform(name.clone())
        }
        (None, Some("auto"), None) => Source::Auto,
        (None, Some(other), None) => {
            eprintln!("error: unknown config source {other:?} (use a file or `auto`)");
            return 2;
        }
        (None, None, None) => {
            eprintln!("error: give a CONFIG file, --platform NAME or --config-source auto");
            return 2;
        }
    };
    let offline = (args.stage == Some(Stage::FetchOffline))
        .then(|| std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
    let mut fetch = flint_provision::fetch::Settings::from_env();
    fetch.offline = offline.clone();
    let opts = Options {
        source,
        places: Places::default(),
        base_dir: args.base_dir.clone(),
        cache: args.config_cache.clone(),
        // Tools run with `--root` (useradd, systemctl) need it absolute; a user may type it
        // relative to where they stand.
        root: std::path::absolute(&args.root).unwrap_or_else(|_| args.root.clone()),
        state_dir: args.state_dir.clone(),
        fetch,
        fetch_timeout: std::time::Duration::from_secs(args.fetch_timeout.max(1)),
    };
    let stages: Vec<Stage> = match args.stage {
        Some(s) => vec![s],
        None => vec![
            Stage::Fetch,
            Stage::Kargs,
            Stage::Disks,
            Stage::Mount,
            Stage::Files,
            Stage::Umount,
        ],
    };
    let out = Output {
        format: args.format,
        apply,
    };
    // One run at a time on a root and a state directory (see provision::lock).
    use provision::lock::Role;
    let dirs = [
        (opts.root.as_path(), Role::Root),
        (opts.state_dir.as_path(), Role::StateDir),
    ];
    let _locks = match provision::lock::take(&dirs, apply) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    if let Some(flag) = &offline {
        return fetch_offline(&opts, &out, flag, &args.neednet);
    }
    let acq = match provision::fetch_stage(&opts) {
        Ok(a) => a,
        Err(e) => {
            // The platform hears of the failure too (Equinix Metal's timeline).
            if let Ok(p) = flint_provision::platform::select(
                match &opts.source {
                    Source::Platform(n) => Some(n.as_str()),
                    _ => None,
                },
                &opts.places,
            ) && !matches!(opts.source, Source::File(_))
            {
                let cx = flint_provision::platform::Context::new(
                    flint_provision::fetch::Fetcher::with(opts.fetch.clone()),
                    opts.places.clone(),
                );
                report(&out, p, &cx, Stage::Fetch, Some(&e.message));
            }
            return out.failed(&e);
        }
    };
    for n in &acq.notes {
        out.note(&format!("fetch: {n}"));
    }
    out.note(&format!(
        "fetch: config from {}, {} resources ({} bytes) fetched and verified",
        acq.origin,
        acq.fetched.items.len(),
        acq.fetched.total_bytes(),
    ));
    // A mount path through a link in the root is refused before any disk is touched.
    if stages.contains(&Stage::Mount)
        && let Err(e) = provision::mounts::check_paths(&acq.config, &opts.root)
    {
        return out.failed(&e);
    }
    let mut times = vec![(Stage::Fetch, acq.took)];
    let mut changes = 0;
    // Mounts this run made for a plan: released when it ends, whatever happens.
    let mut plan_mounts: Vec<PathBuf> = Vec::new();
    let mut result = Ok(());
    for &stage in stages.iter().filter(|s| **s != Stage::Fetch) {
        let start = Instant::now();
        let step = run_stage(stage, args, &opts, &acq, apply, &mut plan_mounts);
        times.push((stage, start.elapsed()));
        match step {
            Ok((actions, notes)) => {
                for n in &notes {
                    out.note(&format!("{}: {n}", stage.name()));
                }
                changes += actions.len();
                out.actions(stage, &actions);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    provision::mounts::release(&plan_mounts);
    if apply && let Some(p) = acq.platform {
        let cx = flint_provision::platform::Context::new(acq.fetcher.clone(), opts.places.clone());
        // Each stage asked for that ran, as upstream reports once per stage run.
        for (s, _) in times.iter().filter(|(s, _)| stages.contains(s)) {
            let failed = result.as_ref().err().filter(|e| e.stage == *s);
            report(&out, p, &cx, *s, failed.map(|e| e.message.as_str()));
        }
    }
    if let Err(e) = result {
        // A run that fails after mounting leaves nothing mounted behind.
        if apply && stages.len() > 1 {
            let _ = provision::mounts::umount_stage(&acq.config, &opts.root);
        }
        return out.failed(&e);
    }
    out.note(&format!(
        "stage times: {}",
        times
            .iter()
            .map(|(s, d)| format!("{} {:.2} s", s.name(), d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if apply && args.format == Format::Human {
        use std::io::Write as _;
        // The work is done: a reader gone away is no failure (and no panic).
        let _ = if changes == 0 {
            writeln!(std::io::stdout(), "apply: nothing to change")
        } else {
            writeln!(std::io::stdout(), "apply: {changes} changes")
        };
    }
    0
}

/// `--stage fetch-offline`: the fetch stage without the network. When the config (or the
/// platform) needs the network, the flag file `neednet` is created and the run succeeds
/// without a config, as upstream's stage does; otherwise the config is rendered (into the
/// cache) and the later fetch has nothing to do.
fn fetch_offline(
    opts: &Options,
    out: &Output,
    flag: &std::sync::atomic::AtomicBool,
    neednet: &std::path::Path,
) -> i32 {
    let r = provision::fetch_stage(opts);
    if flag.load(std::sync::atomic::Ordering::Relaxed) {
        let why = r.err().map(|e| e.to_string()).unwrap_or_default();
        if let Some(d) = neednet.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(d)
        {
            eprintln!("error: fetch-offline: creating {}: {e}", d.display());
            return 1;
        }
        if let Err(e) = std::fs::write(neednet, b"") {
            eprintln!("error: fetch-offline: writing {}: {e}", neednet.display());
            return 1;
        }
        out.note(&format!(
            "fetch-offline: the config needs the network ({}); wrote {}",
            why.trim_start_matches("fetch stage failed: "),
            neednet.display()
        ));
        return 0;
    }
    match r {
        Ok(acq) => {
            for n in &acq.notes {
                out.note(&format!("fetch-offline: {n}"));
            }
            out.note(&format!(
                "fetch-offline: config from {} needs no network: {} resources ({} bytes) \
                 fetched and verified",
                acq.origin,
                acq.fetched.items.len(),
                acq.fetched.total_bytes(),
            ));
            0
        }
        Err(mut e) => {
            e.stage = Stage::FetchOffline;
            out.failed(&e)
        }
    }
}

type StageResult = Result<(Vec<provision::Planned>, Vec<String>), provision::StageError>;

fn run_stage(
    stage: Stage,
    args: &ProvisionArgs,
    opts: &Options,
    acq: &provision::Acquired,
    apply: bool,
    plan_mounts: &mut Vec<PathBuf>,
) -> StageResult {
    match stage {
        Stage::FetchOffline | Stage::Fetch => Ok((Vec::new(), Vec::new())),
        Stage::Kargs => {
            let target = match &args.kargs_file {
                Some(f) => provision::KargsTarget::File(f.clone()),
                None => provision::KargsTarget::Oem(opts.fetch.oem.partition()),
            };
            let changed = provision::kargs_stage(&acq.config, &target, apply)?;
            if apply
                && changed.is_some()
                && let Some(flag) = &args.kargs_reboot_flag
            {
                std::fs::write(flag, b"").map_err(|e| provision::StageError {
                    stage: Stage::Kargs,
                    path: None,
                    message: format!("writing the reboot flag {}: {e}", flag.display()),
                })?;
            }
            Ok((
                changed
                    .into_iter()
                    .map(|text| provision::Planned {
                        kind: "set-kernel-arguments".into(),
                        entry: flint_go::tree::JsonPath::root().key("kernelArguments"),
                        path: target.to_string(),
                        text,
                    })
                    .collect(),
                Vec::new(),
            ))
        }
        Stage::Disks => {
            let cx = provision::disks::Context {
                config: &acq.config,
                fetched: &acq.fetched,
                apply,
                state_dir: opts.state_dir.clone(),
                root: opts.root.clone(),
            };
            let o = provision::disks::run(&cx)?;
            Ok((o.changes, o.notes))
        }
        Stage::Mount => {
            let (mounted, notes) =
                provision::mounts::mount_stage(&acq.config, &opts.root, &opts.state_dir, apply)?;
            if !apply {
                plan_mounts.extend(mounted);
            }
            Ok((Vec::new(), notes))
        }
        Stage::Files => {
            let actions = provision::files_stage(acq, &opts.root, &opts.state_dir, apply)?;
            if apply && (!actions.is_empty() || !provision::has_record(&opts.root)) {
                provision::write_result(&opts.root, acq.user_provided).map_err(|e| {
                    provision::StageError {
                        stage: Stage::Files,
                        path: None,
                        message: format!("writing the result record: {e}"),
                    }
                })?;
            }
            Ok((actions, Vec::new()))
        }
        Stage::Umount => {
            if !apply {
                return Ok((Vec::new(), Vec::new()));
            }
            Ok((
                Vec::new(),
                provision::mounts::umount_stage(&acq.config, &opts.root)?,
            ))
        }
    }
}

/// Tells the platform how a stage went (only Equinix Metal listens); a failure to tell is
/// a note, not a failed run.
fn report(
    out: &Output,
    p: &dyn flint_provision::platform::Platform,
    cx: &flint_provision::platform::Context,
    stage: Stage,
    error: Option<&str>,
) {
    if let Err(e) = p.report(cx, stage.name(), error) {
        out.note(&format!("{}: POST status error: {e}", stage.name()));
    }
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
    apply: bool,
}

impl Output {
    fn note(&self, text: &str) {
        if self.format == Format::Human {
            eprintln!("{text}");
        }
    }

    /// A stage's lines, written at once: a reader that stops after the first line
    /// (`| head -1`) then meets a whole output, not one cut at a random line; and `apply`
    /// goes on (a failed write is left unreported) when nobody reads any more.
    fn actions(&self, stage: Stage, actions: &[provision::Planned]) {
        use std::fmt::Write as _;
        let mut text = String::new();
        for a in actions {
            let _ = match self.format {
                Format::Human if self.apply => writeln!(text, "{}", a.text),
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

    fn failed(&self, e: &provision::StageError) -> i32 {
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
