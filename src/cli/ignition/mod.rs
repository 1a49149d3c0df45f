//! flint under upstream's names: run as `ignition` (a link or copy of that name), flint is
//! upstream's provisioner binary — its flags read as Go's `flag` reads them, its defaults,
//! usage text, messages, exit codes, files (`/run/ignition.json`, `/run/ignition/neednet`,
//! `/run/ignition/state`) and logging — running one stage through flint's engine. As
//! `ignition-apply` and `ignition-rmcfg` it is those two tools (`apply.rs`, `rmcfg.rs`).

pub mod apply;
pub(super) mod flags;
mod journal;
mod log;
pub mod rmcfg;

use flint_provision::acquire::Source;
use flint_provision::run::{Observer, RunError};
use flint_provision::stage::{Mode, Options, Planned, StageName};
use log::{Level, Logger};
use std::path::PathBuf;
use std::time::Duration;

/// The version line; flint provisions as this release (with Flatcar's changes) does.
use super::ignition_validate::VERSION;

/// Upstream's platform names, as its `-platform` flag takes and lists them.
const PLATFORMS: [&str; 31] = [
    "akamai",
    "aliyun",
    "applehv",
    "aws",
    "azure",
    "azurestack",
    "brightbox",
    "cloudstack",
    "digitalocean",
    "exoscale",
    "file",
    "gcp",
    "hetzner",
    "hyperv",
    "ibmcloud",
    "kubevirt",
    "metal",
    "nutanix",
    "nvidiabluefield",
    "openstack",
    "oraclecloud",
    "packet",
    "powervs",
    "proxmoxve",
    "qemu",
    "scaleway",
    "upcloud",
    "virtualbox",
    "vmware",
    "vultr",
    "zvm",
];

/// The flags, with upstream's defaults.
struct Flags {
    config_cache: PathBuf,
    fetch_timeout: Duration,
    log_to_stdout: bool,
    neednet: PathBuf,
    platform: Option<String>,
    root: PathBuf,
    stage: Option<StageName>,
    state_file: PathBuf,
    version: bool,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            config_cache: "/run/ignition.json".into(),
            fetch_timeout: Duration::from_secs(120),
            log_to_stdout: false,
            neednet: "/run/ignition/neednet".into(),
            platform: None,
            root: "/".into(),
            stage: None,
            state_file: "/run/ignition/state".into(),
            version: false,
        }
    }
}

const SPECS: [flags::Spec; 9] = [
    ("config-cache", false),
    ("fetch-timeout", false),
    ("log-to-stdout", true),
    ("neednet", false),
    ("platform", false),
    ("root", false),
    ("stage", false),
    ("state-file", false),
    ("version", true),
];

impl Flags {
    /// Takes one flag's value; a refusal is worded as upstream's value types word it.
    fn set(&mut self, name: &str, v: &str) -> Result<(), String> {
        match name {
            "config-cache" => self.config_cache = v.into(),
            "fetch-timeout" => {
                self.fetch_timeout = flags::parse_go_duration(v).ok_or("parse error")?;
            }
            "log-to-stdout" => self.log_to_stdout = v == "true",
            "neednet" => self.neednet = v.into(),
            "platform" if PLATFORMS.contains(&v) => self.platform = Some(v.into()),
            "platform" => return Err(format!("{v} is not a valid platform")),
            "root" => self.root = v.into(),
            "stage" => {
                let s = v.parse().map_err(|_| format!("{v} is not a valid stage"))?;
                self.stage = Some(s);
            }
            "state-file" => self.state_file = v.into(),
            _ => self.version = v == "true",
        }
        Ok(())
    }
}

fn usage(prog: &str) -> String {
    format!(
        "Usage of {prog}:
  -config-cache string
    \twhere to cache the config (default \"/run/ignition.json\")
  -fetch-timeout duration
    \tinitial duration for which to wait for config (default 2m0s)
  -log-to-stdout
    \tlog to stdout instead of the system log when set
  -neednet string
    \tflag file to write from fetch-offline if networking is needed (default \"/run/ignition/neednet\")
  -platform value
    \tcurrent platform. [{}]
  -root string
    \troot of the filesystem (default \"/\")
  -stage value
    \texecution stage. [disks fetch fetch-offline files kargs mount umount]
  -state-file string
    \twhere to store internal state (default \"/run/ignition/state\")
  -version
    \tprint the version and exit
",
        PLATFORMS.join(" ")
    )
}

/// Runs the command line `args` (without the program name `prog`); returns the exit code.
pub fn run(prog: &str, args: &[String]) -> i32 {
    let mut f = Flags::default();
    match flags::parse_go(args, &SPECS, &mut |n, v| f.set(n, v)) {
        // What follows the flags (upstream's units end with `${IGNITION_ARGS}`, an empty
        // argument) is ignored, as upstream ignores it.
        Ok(_) => {}
        Err(stop) => return stop.go_exit(&usage(prog)),
    }
    if f.version {
        println!("{VERSION}");
        return 0;
    }
    let Some(platform) = f.platform.clone() else {
        eprintln!("'--platform' must be provided");
        return 2;
    };
    let Some(stage) = f.stage else {
        eprintln!("'--stage' must be provided");
        return 2;
    };
    let mut log = Logger::new(f.log_to_stdout);
    log.info(VERSION);
    log.info(&format!("Stage: {}", stage.name()));
    if flint_provision::platform::get(&platform).is_none() {
        log.crit(&format!(
            "failed to generate fetcher: platform {platform} is not supported by flint"
        ));
        return 3;
    }
    super::provision::one_malloc_arena();
    run_stage(&f, platform, stage, &mut log)
}

/// The stage through flint's engine, with the flags as its options.
fn run_stage(f: &Flags, platform: String, stage: StageName, log: &mut Logger) -> i32 {
    // Tools run with `--root` (useradd, systemctl) need it absolute.
    let root = std::path::absolute(&f.root).unwrap_or_else(|_| f.root.clone());
    let opts = Options {
        cache: Some(f.config_cache.clone()),
        fetch_timeout: f.fetch_timeout,
        neednet: f.neednet.clone(),
        state_file: Some(f.state_file.clone()),
        kargs_helper: Some("ignition-kargs-helper".into()),
        ..Options::new(
            Source::Platform(platform),
            root,
            flint_provision::state::flint_dir(&f.state_file),
        )
    };
    let passed = |log: &mut Logger| log.info(&format!("{0}: {0} passed", stage.name()));
    match flint_provision::run::run(
        &opts,
        Some(stage),
        Mode::Apply,
        &mut Logged {
            log,
            root: &opts.root,
        },
    ) {
        Ok(_) => {
            passed(log);
            if matches!(stage, StageName::Fetch | StageName::FetchOffline) {
                tell_fetched(&f.state_file);
            }
            log.info("Ignition finished successfully");
            0
        }
        Err(RunError::ReadState(msg)) => {
            log.crit(&msg);
            3
        }
        Err(RunError::WriteState(msg)) => {
            passed(log);
            log.crit(&msg);
            1
        }
        Err(RunError::Stage(e)) => {
            log.crit(&format!("Ignition failed: {e}"));
            1
        }
        Err(RunError::Busy(msg)) => {
            log.crit(&format!("Ignition failed: {msg}"));
            1
        }
    }
}

/// Tells the journal of every config the state lists as fetched, as upstream's fetch
/// stages do once they have the config (earlier stage runs' entries again too).
fn tell_fetched(state_file: &std::path::Path) {
    let Ok(state) = flint_provision::state::State::load(state_file) else {
        return;
    };
    for c in state.fetched_configs.iter().flatten() {
        let referenced = if c.referenced { "referenced " } else { "" };
        journal::send(
            &format!(
                "fetched {referenced}{} config from \"{}\"",
                c.kind, c.source
            ),
            &[
                ("MESSAGE_ID", journal::CONFIG_FETCHED),
                ("IGNITION_CONFIG_TYPE", &c.kind),
                ("IGNITION_CONFIG_SRC", &c.source),
                ("IGNITION_CONFIG_REFERENCED", &c.referenced.to_string()),
            ],
        );
    }
}

/// The engine's events as log lines: notes and changes at INFO (each prefixed with its
/// stage, as upstream prefixes a stage's messages), timings at DEBUG; SSH keys written are
/// also told to the journal, as upstream tells it.
pub(super) struct Logged<'a> {
    pub(super) log: &'a mut Logger,
    /// The root the stages work on (the journal gets the keys file's whole path).
    pub(super) root: &'a std::path::Path,
}

impl Observer for Logged<'_> {
    fn note(&mut self, text: &str) {
        let level = match text.starts_with("stage times:") {
            true => Level::Debug,
            false => Level::Info,
        };
        self.log.log(level, text);
    }

    fn changes(&mut self, stage: StageName, changes: &[Planned]) {
        for c in changes {
            self.log.info(&format!("{}: {}", stage.name(), c.text));
            if let (Some(user), "write-ssh-keys") = (&c.user, c.kind.as_str()) {
                let path = self.root.join(c.path.trim_start_matches('/'));
                let path = path.to_string_lossy();
                journal::send(
                    &format!("wrote ssh authorized keys file for user: {user}"),
                    &[
                        ("MESSAGE_ID", journal::KEYS_WRITTEN),
                        ("IGNITION_USER_NAME", user),
                        ("IGNITION_PATH", &path),
                    ],
                );
            }
        }
    }
}
