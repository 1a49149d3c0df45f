//! The one interface every stage has, and what a stage gets and gives: the bottom of the
//! provisioner engine (`run.rs` drives it, `stages/` implements it).

use crate::acquire::{Places, Source};
use crate::fetch::Fetcher;
use crate::resources::Fetched;
pub use crate::resources::Needed;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::path::PathBuf;
use std::time::Duration;

/// A stage of the provisioner: a module behind this interface, registered in
/// [`crate::stages::ORDER`].
pub trait Stage: Sync {
    fn name(&self) -> StageName;
    /// The resources of the config the stage works with. Run on its own, a stage gets only
    /// those (from what the fetch stage kept, or fetched again): one that needs none never
    /// touches the network for them.
    fn needs(&self) -> Needed {
        Needed::Nothing
    }
    /// Checks, after the fetch stage and before any stage runs, what can be refused before
    /// any disk is touched.
    fn check(&self, _cx: &Context, _mode: Mode) -> Result<(), StageError> {
        Ok(())
    }
    /// Plans the stage's changes, and with [`Mode::Apply`] makes them (and checks them).
    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError>;
}

/// Whether a run only reports what it would change (`flint plan`) or changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Plan,
    Apply,
}

impl Mode {
    pub fn applies(self) -> bool {
        self == Mode::Apply
    }
}

/// The stages, in the order they run. `fetch-offline` is upstream's first step in the
/// initramfs: the fetch stage without the network, which renders the config when nothing
/// in it needs the network and otherwise says so (the `--neednet` flag file), so that the
/// network is brought up only then; it is run on its own, never as part of a full run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageName {
    FetchOffline,
    Fetch,
    Kargs,
    Disks,
    Mount,
    Files,
    Umount,
}

impl StageName {
    /// Every stage, as `--stage` takes them.
    pub const ALL: [StageName; 7] = [
        StageName::FetchOffline,
        StageName::Fetch,
        StageName::Kargs,
        StageName::Disks,
        StageName::Mount,
        StageName::Files,
        StageName::Umount,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StageName::FetchOffline => "fetch-offline",
            StageName::Fetch => "fetch",
            StageName::Kargs => "kargs",
            StageName::Disks => "disks",
            StageName::Mount => "mount",
            StageName::Files => "files",
            StageName::Umount => "umount",
        }
    }
}

impl std::str::FromStr for StageName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        (StageName::ALL.into_iter())
            .find(|n| n.name() == s)
            .ok_or_else(|| format!("unknown stage {s:?}"))
    }
}

/// What to provision, from where, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub source: Source,
    pub places: Places,
    pub base_dir: Option<PathBuf>,
    pub cache: Option<PathBuf>,
    pub root: PathBuf,
    /// Run state kept between stages of one boot (generated LUKS keys): /run/flint.
    pub state_dir: PathBuf,
    pub fetch: crate::fetch::Settings,
    /// How long the platform may take to hand over the user config (upstream's
    /// -fetch-timeout, 2 minutes).
    pub fetch_timeout: Duration,
    /// The grub.cfg the kargs stage edits; `None`: the one on the OEM partition.
    pub kargs_file: Option<PathBuf>,
    /// Created when the kargs stage changed the kernel arguments (a reboot is due).
    pub kargs_reboot_flag: Option<PathBuf>,
    /// The distribution's kernel-argument program (upstream's `ignition-kargs-helper`,
    /// looked up in PATH): when set, the kargs stage runs it instead of editing grub.cfg
    /// itself, and the helper reboots when it changed something.
    pub kargs_helper: Option<String>,
    /// Created by the fetch-offline stage when the config needs the network.
    pub neednet: PathBuf,
    /// Upstream's state file: set when flint runs a stage as upstream's `ignition` does
    /// (one stage a process). The run state is then read from and written to this file
    /// (`crate::state`), and the config cache (`cache`) is upstream's: the user config
    /// alone, written by the fetch stages, which always fetch, and read by the others,
    /// which merge the base configs under it again.
    pub state_file: Option<PathBuf>,
    /// The config is applied to a running system (upstream's `ignition-apply`): the files
    /// stage leaves no result record of a first boot.
    pub live: bool,
}

impl Options {
    /// Options with the defaults of the command line for everything but the source, the
    /// root and the state directory.
    pub fn new(source: Source, root: PathBuf, state_dir: PathBuf) -> Options {
        Options {
            source,
            places: Places::default(),
            base_dir: None,
            cache: None,
            root,
            state_dir,
            fetch: crate::fetch::Settings::from_env(),
            fetch_timeout: Duration::from_secs(120),
            kargs_file: None,
            kargs_reboot_flag: None,
            kargs_helper: None,
            neednet: PathBuf::from("/run/flint/neednet"),
            state_file: None,
            live: false,
        }
    }
}

/// A stage failed: which stage, which entry, what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct StageError {
    pub stage: StageName,
    pub path: Option<JsonPath>,
    pub message: String,
}

impl StageError {
    pub fn new(stage: StageName, path: Option<JsonPath>, message: impl Into<String>) -> Self {
        StageError {
            stage,
            path,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} stage failed", self.stage.name())?;
        if let Some(p) = &self.path {
            write!(f, " at {p}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The fetch stage's result: the final config and every resource's bytes.
pub struct Acquired {
    pub config: Config,
    pub fetched: Fetched,
    pub fetcher: Fetcher,
    /// Where the user config came from (for messages).
    pub origin: String,
    pub took: Duration,
    /// Whether a user config was found (not only base configs): the result record says so.
    pub user_provided: bool,
    /// The platform, when the config came from one.
    pub platform: Option<&'static dyn crate::platform::Platform>,
    /// Lines about how the config was found (fallbacks, skipped user data).
    pub notes: Vec<String>,
}

/// A planned change, for output.
#[derive(Debug, Clone)]
pub struct Planned {
    pub kind: String,
    pub entry: JsonPath,
    pub path: String,
    pub text: String,
    /// The user the change is for (SSH keys: upstream tells the journal whose it wrote).
    pub user: Option<String>,
}

/// What a stage did (or would do): its changes, and notes about what it found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub changes: Vec<Planned>,
    pub notes: Vec<String>,
    /// What a plan could not look at (a disk not present on this machine): said at once,
    /// planned around, and the plan ends with a failure exit.
    pub unseen: Vec<String>,
}

/// What the stages of one run share: the options, what the fetch stage acquired, the
/// mounts a plan made (released when the run ends, whatever happens), the run state
/// carried between stage runs (upstream's state file, see [`Options::state_file`]), the
/// stage the run was asked for (`None`: all of them), and the resources its stages need.
pub struct Context<'a> {
    pub options: &'a Options,
    pub acquired: Option<Acquired>,
    pub plan_mounts: Vec<PathBuf>,
    pub state: crate::state::State,
    pub asked: Option<StageName>,
    pub needed: Needed,
}

impl<'a> Context<'a> {
    pub fn new(options: &'a Options) -> Self {
        Context {
            options,
            acquired: None,
            plan_mounts: Vec::new(),
            state: Default::default(),
            asked: None,
            needed: Needed::All,
        }
    }

    /// What the fetch stage acquired; a stage after it fails without (the engine always runs
    /// the fetch stage first, so this is a misuse of the engine, not of a config).
    pub fn acquired(&self, stage: StageName) -> Result<&Acquired, StageError> {
        (self.acquired.as_ref())
            .ok_or_else(|| StageError::new(stage, None, "the fetch stage has not run"))
    }
}
