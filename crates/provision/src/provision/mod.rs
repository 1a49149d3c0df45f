//! The first-boot provisioner: stages run in Ignition's order, each planning its actions,
//! then (for `apply`) executing and verifying them. The first stage fetches the final config
//! and every resource it refers to, so that nothing is touched before all of it is in hand.

pub mod acquire;
pub mod as_user;
pub mod content;
pub mod disks;
pub mod entry;
pub mod files;
pub mod kargs;
pub mod lock;
pub mod mounts;
pub mod owners;
pub mod passwd;
pub mod refusals;

pub mod resources;
pub mod root;

use crate::fetch::Fetcher;
use acquire::{Places, Source};
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use resources::Fetched;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The stages, in the order they run. `fetch-offline` is upstream's first step in the
/// initramfs: the fetch stage without the network, which renders the config when nothing
/// in it needs the network and otherwise says so (the `--neednet` flag file), so that the
/// network is brought up only then; it is run on its own, never as part of a full run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stage {
    FetchOffline,
    Fetch,
    Kargs,
    Disks,
    Mount,
    Files,
    Umount,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::FetchOffline => "fetch-offline",
            Stage::Fetch => "fetch",
            Stage::Kargs => "kargs",
            Stage::Disks => "disks",
            Stage::Mount => "mount",
            Stage::Files => "files",
            Stage::Umount => "umount",
        }
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
}

/// A stage failed: which stage, which entry, what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct StageError {
    pub stage: Stage,
    pub path: Option<JsonPath>,
    pub message: String,
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

fn fail(path: Option<JsonPath>, message: impl Into<String>) -> StageError {
    StageError {
        stage: Stage::Fetch,
        path,
        message: message.into(),
    }
}

/// The temporary file a write of `path` goes through before its rename, opened for writing
/// (mode `mode`, less the umask): `.NAME.flint-tmp.RANDOM`, made new (never through a link,
/// never over anything that stands there), so that no two writes share one, whatever runs
/// beside this one. A run killed mid-write leaves it behind; the next run, which finds the
/// in-progress mark, clears such leftovers in the directories it writes to
/// ([`clear_leftovers`]).
pub fn open_temp(path: &Path, mode: u32) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    let mut tries = 0;
    loop {
        let tmp = dir.join(crate::system::beneath::unique_name(name));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Whether `name` is one of flint's temporary names ([`open_temp`]; `.NAME.flint-tmp` too,
/// as earlier versions named them).
fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    let n = name.as_encoded_bytes();
    n.starts_with(b".")
        && (n.ends_with(b".flint-tmp") || n.windows(11).any(|w| w == b".flint-tmp."))
}

/// Removes what an interrupted run left at flint's temporary names (regular files only:
/// a link or a directory there is the root's own) in each of `dirs` (paths in the root).
pub fn clear_leftovers<'a>(r: &root::Root, dirs: impl IntoIterator<Item = &'a str>) {
    let mut seen = HashSet::new();
    for d in dirs {
        let Ok(res) = r.resolve(d) else { continue };
        if !seen.insert(res.host.clone()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&res.host) else {
            continue;
        };
        for e in rd.flatten() {
            if is_temp_name(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Writes `bytes` to `path` atomically (a temporary file in the same directory, renamed).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    let (tmp, mut f) = open_temp(path, mode)?;
    let r = f.write_all(bytes).and_then(|_| f.sync_all());
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path)
}

/// The fetch stage: the user config (or the cached one), base configs underneath, references
/// resolved, every resource fetched and verified. With a cache path, the rendered config is
/// written there (CA sources as data URLs), and read from there when it exists.
pub fn fetch_stage(opts: &Options) -> Result<Acquired, StageError> {
    let start = Instant::now();
    let fetcher = Fetcher::with(opts.fetch.clone());
    let cached = opts.cache.as_ref().filter(|c| c.exists());
    let mut notes = Vec::new();
    let mut user_provided = true;
    let mut platform = None;
    let budget = acquire::Budget::from_env();
    let (config, fetcher, origin) = if let Some(cache) = cached {
        let bytes = std::fs::read(cache).map_err(|e| {
            fail(
                None,
                format!("reading the config cache {}: {e}", cache.display()),
            )
        })?;
        let config = flint_ignition::parse(&bytes)
            .map_err(|d| fail(None, format!("config cache {}: {d}", cache.display())))?
            .config;
        let meta = CacheMeta::read(cache);
        user_provided = meta.user_provided;
        if let Some(name) = &meta.platform {
            platform = crate::platform::get(name);
        }
        let mut fetcher = fetcher;
        if let Some(p) = platform {
            fetcher.credentials = p.credentials();
        }
        let (config, fetcher) = acquire::render(
            config,
            &fetcher,
            &JsonPath::root(),
            &mut Vec::new(),
            &budget,
        )
        .map_err(|e| fail(e.path, e.message))?;
        (config, fetcher, format!("cache {}", cache.display()))
    } else {
        let extra_base = match &opts.base_dir {
            Some(d) => acquire::base_configs(d).map_err(|e| fail(e.path, e.message))?,
            None => None,
        };
        let (user, base, origin, files, fetcher) = match &opts.source {
            Source::File(p) => {
                let (user, origin) =
                    acquire::file_config(p, &budget).map_err(|e| fail(e.path, e.message))?;
                (Some(user), None, origin, Vec::new(), fetcher)
            }
            Source::Auto | Source::Platform(_) => {
                let explicit = match &opts.source {
                    Source::Platform(n) => Some(n.as_str()),
                    _ => None,
                };
                let p =
                    crate::platform::select(explicit, &opts.places).map_err(|e| fail(None, e))?;
                platform = Some(p);
                if let Some(flag) = &opts.fetch.offline
                    && platform_needs_network(p, &opts.places)
                {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(fail(
                        None,
                        format!("platform {}: {}", p.name(), crate::fetch::NEEDS_NETWORK),
                    ));
                }
                let mut fetcher = fetcher;
                fetcher.credentials = p.credentials();
                // Before any config is known, provider fetches give up after the fetch
                // timeout (upstream's -fetch-timeout).
                // The user data is a config too, within the budget of configs.
                let mut pf = fetcher.limited(budget.left());
                pf.http.total_timeout = Some(opts.fetch_timeout);
                let cx = crate::platform::Context::new(pf, opts.places.clone());
                let base = acquire::system_base(&opts.places.system, p.name(), &mut notes)
                    .map_err(|e| fail(e.path, e.message))?;
                let got = acquire::platform_config(p, &cx, &budget)
                    .map_err(|e| fail(e.path, e.message))?;
                notes.extend(got.notes);
                user_provided = got.user.is_some();
                (
                    got.user,
                    base,
                    format!("{} (platform {})", got.origin, p.name()),
                    got.files,
                    fetcher,
                )
            }
        };
        let user = match user {
            Some(u) => Some(
                acquire::render(u, &fetcher, &JsonPath::root(), &mut Vec::new(), &budget)
                    .map_err(|e| fail(e.path, e.message))?
                    .0,
            ),
            None => None,
        };
        let mut full: Option<Config> = None;
        for part in [base, extra_base, user].into_iter().flatten() {
            full = Some(match full {
                Some(acc) => flint_ignition::merge::merge(acc, part),
                None => part,
            });
        }
        let mut full = full.unwrap_or_else(|| Config {
            ignition: flint_ignition::types::Ignition {
                version: flint_ignition::Version::NEWEST.to_string(),
                ..Default::default()
            },
            ..Default::default()
        });
        if !files.is_empty() {
            let mut extra = Config::default();
            extra.ignition.version = full.ignition.version.clone();
            extra.storage.files = files;
            full = flint_ignition::merge::merge(full, extra);
        }
        let (full, fetcher) = acquire::render(
            strip_references(full),
            &fetcher,
            &JsonPath::root(),
            &mut Vec::new(),
            &budget,
        )
        .map_err(|e| fail(e.path, e.message))?;
        (full, fetcher, origin)
    };
    // Every part was validated when it was read; what merging can break is checked again.
    let issues = flint_ignition::validate::validate_with(
        &config,
        flint_ignition::Version::NEWEST,
        flint_ignition::validate::Options {
            skip_data_contents: true,
            ..flint_ignition::validate::Options::FLATCAR
        },
    );
    if let Some(e) = issues
        .iter()
        .find(|i| i.severity == flint_go::diag::Severity::Error)
    {
        return Err(fail(
            Some(e.path.clone()),
            format!("the final config is invalid: {}", e.message),
        ));
    }
    // Valid, but asking for what this provisioner cannot do: refused before any disk is touched.
    if let Some(e) = flint_ignition::validate::unsupported_by_provisioner(&config).first() {
        return Err(fail(Some(e.path.clone()), e.message.clone()));
    }
    let fetched = resources::fetch_all(&config, &fetcher).map_err(|e| {
        fail(
            Some(e.path.clone()),
            format!("fetching {}: {}", e.url, e.message),
        )
    })?;
    if let Some(cache) = opts.cache.as_ref().filter(|c| !c.exists()) {
        let json = flint_go::json::to_vec(&cache_form(&config, &fetcher), false);
        if let Some(dir) = cache.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        write_atomic(cache, &json, 0o640).map_err(|e| {
            fail(
                None,
                format!("writing the config cache {}: {e}", cache.display()),
            )
        })?;
        CacheMeta {
            user_provided,
            platform: platform.map(|p| p.name().to_string()),
        }
        .write(cache)
        .map_err(|e| fail(None, format!("writing the config cache's record: {e}")))?;
    }
    notes.extend(fetcher.take_notes());
    Ok(Acquired {
        config,
        fetched,
        fetcher,
        origin,
        took: start.elapsed(),
        user_provided,
        platform,
        notes,
    })
}

/// Whether fetching the user config from `p` needs the network, as upstream's fetch-offline
/// stage finds out ([`crate::platform::source_needs_network`]), except that AWS always does:
/// upstream's AWS platform asks its metadata service for the region before any config is
/// read.
fn platform_needs_network(p: &dyn crate::platform::Platform, places: &Places) -> bool {
    p.name() == "aws" || crate::platform::source_needs_network(p, places)
}

/// What later stages need to know about the cached config beside the config itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheMeta {
    #[serde(rename = "userConfigProvided")]
    pub user_provided: bool,
    pub platform: Option<String>,
}

impl CacheMeta {
    fn path(cache: &Path) -> PathBuf {
        let mut p = cache.as_os_str().to_owned();
        p.push(".meta");
        PathBuf::from(p)
    }

    /// The record beside `cache`; a cache without one had a user config.
    pub fn read(cache: &Path) -> CacheMeta {
        std::fs::read(Self::path(cache))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(CacheMeta {
                user_provided: true,
                platform: None,
            })
    }

    fn write(&self, cache: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        write_atomic(&Self::path(cache), &json, 0o640)
    }
}

/// References were resolved already; what remains in the config must not be fetched again.
fn strip_references(mut c: Config) -> Config {
    c.ignition.config = Default::default();
    c
}

/// The config as cached for later stages: CA sources inlined as data URLs so that a later
/// stage needs no network to trust them.
fn cache_form(config: &Config, fetcher: &Fetcher) -> Config {
    let mut c = config.clone();
    for ca in &mut c.ignition.security.tls.certificate_authorities {
        if let Ok(pem) = fetcher.fetch(ca) {
            ca.source = Some(format!(
                "data:;base64,{}",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pem)
            ));
            ca.compression = None;
            ca.http_headers.clear();
            ca.verification = Default::default();
        }
    }
    c
}

/// A planned change, for output.
#[derive(Debug, Clone)]
pub struct Planned {
    pub kind: String,
    pub entry: JsonPath,
    pub path: String,
    pub text: String,
}

/// The files stage: users and groups, then files, directories and links, then units. Plans,
/// and with `apply` carries out the plan and checks that planning again finds nothing to do.
pub fn files_stage(
    acq: &Acquired,
    root: &Path,
    state_dir: &Path,
    apply: bool,
) -> Result<Vec<Planned>, StageError> {
    let r = root::Root::new(root.to_path_buf());
    // LUKS key files and crypttab are files like the config's own.
    // Copied only when there are any: the config and its resources can be large.
    let with_luks;
    let (config, fetched) = if acq.config.storage.luks.is_empty() {
        (&acq.config, &acq.fetched)
    } else {
        let (mut config, mut fetched) = (acq.config.clone(), acq.fetched.clone());
        disks::luks::root_files(&mut config, &mut fetched, state_dir, root);
        with_luks = (config, fetched);
        (&with_luks.0, &with_luks.1)
    };
    let fail = |e: entry::EntryError| StageError {
        stage: Stage::Files,
        path: Some(e.entry),
        message: e.message,
    };
    // Upstream's files stage meets existing files as it finds them on every run; flint does
    // so on the first run, and leaves what is already as desired on later runs (the result
    // record tells which). The check after apply plans as a later run.
    let mark = etc_file(root, IN_PROGRESS);
    // Upstream's run ends by reading the record of an earlier run into its own, and fails
    // on one it cannot read: flint fails on it before touching anything.
    let previous = previous_record(root).map_err(|message| StageError {
        stage: Stage::Files,
        path: None,
        message,
    })?;
    let interrupted = mark.as_deref().is_some_and(is_mark);
    let first_run = previous.is_none() && !interrupted;
    // Nothing is removed across a mount point: refused before anything is done.
    refusals::check_removals(config, &r, first_run).map_err(fail)?;
    refusals::check_path_lengths(config, &r).map_err(fail)?;
    // A run killed mid-write left its temporary files where it was writing.
    if apply && interrupted {
        clear_leftovers(&r, written_dirs(config).iter().map(String::as_str));
    }
    // A run that fails half-way leaves this behind: the next run finishes the job rather
    // than failing on what the first one wrote (removed with the result record written).
    if apply
        && first_run
        && let Some(mark) = mark
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Best effort, and never through a link standing at its name.
        let _ = mark.parent().map(std::fs::create_dir_all);
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&mark);
    }
    let notated = mounts::notated_dirs(state_dir);
    // Each change with whether it replaced or removed what was at its path.
    let plan = |apply: bool,
                first_run: bool,
                skip: &HashSet<JsonPath>|
     -> Result<Vec<(Planned, bool)>, StageError> {
        // Homes are asked for as upstream asks, on a first run; a later run, and the check
        // after this one, converge (a directory of the config may have replaced a home).
        let mut out: Vec<(Planned, bool)> = passwd::run(config, &r, apply, first_run, &notated)
            .map_err(fail)?
            .into_iter()
            .map(|c| {
                let p = Planned {
                    kind: if c.keys.is_some() {
                        "write-ssh-keys".into()
                    } else {
                        "passwd".into()
                    },
                    path: c.path.clone().unwrap_or_else(|| c.entry.to_string()),
                    entry: c.entry,
                    text: c.what,
                };
                (p, false)
            })
            .collect();
        // What the SSH keys step makes before the entries: the keys file, and `.ssh` and
        // `authorized_keys.d` on its way.
        let keys_made: std::collections::HashMap<String, bool> = (out.iter())
            .filter(|(p, _)| p.kind == "write-ssh-keys" && p.path.starts_with('/'))
            .flat_map(|(p, _)| {
                let dirs = files::ancestors(&p.path)
                    .filter(|a| a.ends_with("/.ssh") || a.ends_with("/.ssh/authorized_keys.d"))
                    .map(|a| (a.to_string(), true));
                dirs.chain([(p.path.clone(), false)]).collect::<Vec<_>>()
            })
            .collect();
        // useradd may have moved a home directory.
        r.forget();
        // Names are looked up after users and groups exist (or would, when planning).
        let owners = owners::Owners::read(&r).with_planned(config);
        let around = files::Around {
            skip,
            keys_made: &keys_made,
        };
        let mut actions =
            files::run(config, fetched, &r, &owners, apply, first_run, around).map_err(fail)?;
        // What the entries make, which a plan of the units has not seen made.
        let mut made = std::collections::HashMap::new();
        let mut links = std::collections::HashMap::new();
        if !apply {
            files::note_made(&mut made, &actions, &r);
            links = files::planned_links(&actions);
        }
        let units = files::run_units(config, &r, apply, first_run, &made, &links);
        actions.extend(units.map_err(fail)?);
        out.extend(actions.into_iter().map(|a| {
            let replaces = a.replaces();
            let p = Planned {
                kind: a.kind().into(),
                text: a.describe(&owners),
                path: a.path,
                entry: a.entry,
            };
            (p, replaces)
        }));
        Ok(out)
    };
    // A later run plans first (the files on all cores, see files::run) and stops there when
    // nothing is to change; otherwise, or if planning alone fails, it applies as usual.
    let none = HashSet::new();
    let done = match (apply && !first_run).then(|| plan(false, false, &none)) {
        Some(Ok(p)) if p.is_empty() => return Ok(Vec::new()),
        Some(_) => {
            r.forget();
            plan(true, false, &none)?
        }
        None => plan(apply, first_run, &none)?,
    };
    // Nothing done, nothing to check again.
    if apply && !done.is_empty() {
        r.forget();
        let mut skip = overridden_by_units(config, &done);
        skip.extend(targets_replaced_later(config, &done));
        let left = plan(false, false, &skip)?;
        if let Some((a, _)) = left.iter().find(|(l, _)| !displaced(&done, l)) {
            return Err(StageError {
                stage: Stage::Files,
                path: Some(a.entry.clone()),
                message: format!(
                    "not in the desired state after apply: would still {}",
                    a.text
                ),
            });
        }
    }
    Ok(done.into_iter().map(|(p, _)| p).collect())
}

/// The directories (in the root) the files stage writes into: those of the storage entries,
/// the units and their drop-ins, and /etc (the record).
fn written_dirs(config: &Config) -> Vec<String> {
    let parent = |p: &str| -> String {
        let p = p.trim_end_matches('/');
        match p.rfind('/') {
            Some(0) | None => "/".into(),
            Some(i) => p[..i].into(),
        }
    };
    let st = &config.storage;
    let mut dirs: Vec<String> = (st.files.iter().map(|f| parent(&f.path)))
        .chain(st.directories.iter().map(|d| parent(&d.path)))
        .chain(st.links.iter().map(|l| parent(&l.path)))
        .collect();
    let units = "/etc/systemd/system";
    dirs.extend(["/etc".to_string(), units.to_string()]);
    for u in &config.systemd.units {
        if !u.dropins.is_empty() {
            dirs.push(format!("{units}/{}.d", u.name));
        }
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Storage entries whose path the systemd section changed after them on this run, as
/// upstream's order has it (units come after files): a preset file the preset lines were
/// appended to, a unit path a mask replaced by the link to /dev/null, the /dev/null link an
/// unmask removed, what `systemctl disable` removed under /etc/systemd/system (links to the
/// unit, aliases and enablement links included). Such an entry is not as its config says once
/// the run is done, by the config's own later word, so the check after apply leaves it out.
fn overridden_by_units(config: &Config, done: &[(Planned, bool)]) -> HashSet<JsonPath> {
    let in_section = |p: &Planned, key: &str| matches!(p.entry.segs().first(), Some(flint_go::tree::Seg::Key(k)) if k == key);
    let by_units: HashSet<&str> = (done.iter())
        .filter(|(d, _)| in_section(d, "systemd"))
        .map(|(d, _)| d.path.as_str())
        .collect();
    let mut out: HashSet<JsonPath> = (done.iter())
        .filter(|(d, _)| in_section(d, "storage") && by_units.contains(d.path.as_str()))
        .map(|(d, _)| d.entry.clone())
        .collect();
    // `systemctl disable` removes, under /etc/systemd/system, every link to the unit's
    // file and every enablement link named for it (and `.wants` directories it empties),
    // whether this run made the link or found it: what it took is systemd's business, not
    // predicted here.
    if (done.iter()).any(|(d, _)| in_section(d, "systemd") && d.kind == "disable-unit") {
        let links = JsonPath::root().key("storage").key("links");
        out.extend(
            (config.storage.links.iter().enumerate())
                .filter(|(_, l)| l.path.starts_with("/etc/systemd/system/"))
                .map(|(i, _)| links.index(i)),
        );
        let dirs = JsonPath::root().key("storage").key("directories");
        let dependencies = [".wants", ".requires", ".upholds"];
        out.extend(
            (config.storage.directories.iter().enumerate())
                .filter(|(_, d)| {
                    d.path.starts_with("/etc/systemd/system/")
                        && dependencies
                            .iter()
                            .any(|s| d.path.trim_end_matches('/').ends_with(s))
                })
                .map(|(i, _)| dirs.index(i)),
        );
    }
    out
}

/// Hard links whose target a later change of this run replaced (or a directory above it):
/// made to the target as it was, as upstream makes them, they cannot be planned again (the
/// target is gone, or somewhere else), so the check after apply leaves them out. Upstream's
/// next run fails on them, and so does flint's.
fn targets_replaced_later(config: &Config, done: &[(Planned, bool)]) -> Vec<JsonPath> {
    let links = JsonPath::root().key("storage").key("links");
    let under =
        |p: &str, dir: &str| p == dir || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    (config.storage.links.iter().enumerate())
        .filter(|(_, l)| l.hard == Some(true))
        .filter_map(|(i, l)| {
            let entry = links.index(i);
            let own = done.iter().position(|(d, _)| d.entry == entry)?;
            let target = flint_ignition::validate::paths::clean(&format!(
                "/{}",
                l.target.as_deref().unwrap_or_default()
            ));
            (done[own + 1..].iter())
                .any(|(d, replaced)| *replaced && under(&target, &d.path))
                .then_some(entry)
        })
        .collect()
}

/// Whether a change left after apply belongs to an entry that another change displaced, as
/// upstream's order makes it: entries' paths are resolved before anything is written, so one
/// resolved through a link or directory that another entry replaced was made where the path
/// led before (planning again follows it to the new object); and an entry made below a path
/// that a later change replaced went with it (SSH keys in a `.ssh` a file entry replaces).
/// Such a config converges on a second run, if at all, not on the first.
fn displaced(done: &[(Planned, bool)], left: &Planned) -> bool {
    let under = |p: &str, dir: &str| p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    // SSH keys are checked as their user: a directory entry that then changed the mode or
    // owner of a directory on their way (`.ssh` made root's 0600) leaves them written but out
    // of the user's reach, as upstream leaves them (users come before files).
    let from_files = |d: &Planned| d.kind != "write-ssh-keys" && d.kind != "passwd";
    if left.kind == "write-ssh-keys"
        && (done.iter()).any(|(d, _)| from_files(d) && under(&left.path, &d.path))
    {
        return true;
    }
    // A user or group added on this run is as the shadow tools made it, which is upstream's
    // result: `useradd --groups` adds the user to those groups and leaves the member lists
    // that named the user before (a later run's usermod then sets exactly these).
    if left.kind == "passwd"
        && (done.iter())
            .any(|(d, _)| d.kind == "passwd" && d.entry == left.entry && d.text.starts_with("add "))
    {
        return true;
    }
    // Where the entry's own changes were made on this run.
    let own: Vec<(usize, &str)> = (done.iter().enumerate())
        .filter(|(_, (d, _))| d.entry == left.entry)
        .map(|(i, (d, _))| (i, d.path.as_str()))
        .collect();
    done.iter().enumerate().any(|(j, (d, replaced))| {
        *replaced
            && (under(&left.path, &d.path) || own.iter().any(|(i, p)| *i < j && under(p, &d.path)))
    })
}

/// Where the kargs stage edits grub.cfg.
#[derive(Debug, Clone)]
pub enum KargsTarget {
    /// This file (tests, images that keep the OEM partition mounted).
    File(PathBuf),
    /// `grub.cfg` at the top of the OEM partition, mounted for the edit as Flatcar's helper
    /// mounts it.
    Oem(crate::fetch::oem::Partition),
}

impl std::fmt::Display for KargsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KargsTarget::File(p) => write!(f, "{}", p.display()),
            KargsTarget::Oem(p) => write!(f, "grub.cfg on the OEM partition (label {})", p.label),
        }
    }
}

/// The kargs stage: applies the config's kernel arguments to grub.cfg as Flatcar does (see
/// [`kargs`]). Returns the plan line when they change; they hold after a reboot.
pub fn kargs_stage(
    config: &Config,
    target: &KargsTarget,
    apply: bool,
) -> Result<Option<String>, StageError> {
    let k = &config.kernel_arguments;
    if k.should_exist.is_empty() && k.should_not_exist.is_empty() {
        return Ok(None);
    }
    let fail = |message: String| StageError {
        stage: Stage::Kargs,
        path: Some(JsonPath::root().key("kernelArguments")),
        message,
    };
    // What grub.cfg holds (none: no such file), and how it is replaced.
    type Read<'a> = &'a dyn Fn() -> Result<Option<Vec<u8>>, String>;
    type Write<'a> = &'a dyn Fn(&[u8]) -> Result<(), String>;
    let edit = |read: Read, write: Write| -> Result<Option<String>, String> {
        let text = read()?.map(|t| String::from_utf8_lossy(&t).into_owned());
        let Some(new) = kargs::apply_to(text.as_deref().unwrap_or(""), k) else {
            return Ok(None);
        };
        if apply {
            write(new.as_bytes())?;
        }
        Ok(Some(format!(
            "set kernel arguments \"{}\" in {target} (takes effect after a reboot)",
            kargs::current(&new)
        )))
    };
    match target {
        KargsTarget::File(p) => {
            let read = || match std::fs::read(p) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("reading {}: {e}", p.display())),
            };
            let write = |b: &[u8]| {
                write_atomic(p, b, 0o644).map_err(|e| format!("writing {}: {e}", p.display()))
            };
            edit(&read, &write).map_err(fail)
        }
        KargsTarget::Oem(part) => {
            let dev = part
                .device(crate::system::devices::timeout())
                .map_err(|e| {
                    fail(format!(
                        "kernel arguments are kept on the OEM partition, but {e}"
                    ))
                })?;
            // Read and written beneath the mount: a grub.cfg that is a link out of the
            // partition is refused, not read (its target could be any file of the
            // initramfs) nor written through.
            use crate::system::beneath::Refused;
            let name = Path::new("grub.cfg");
            let shown = |e: Refused| match e {
                Refused::Escapes => format!(
                    "grub.cfg on the OEM partition {} is a symbolic link that leads outside \
                     the partition: refused",
                    dev.display()
                ),
                e => format!("grub.cfg on the OEM partition {}: {e}", dev.display()),
            };
            part.with_mounted(&dev, apply, |dir| {
                let read = || match dir.read(name, KARGS_FILE_LIMIT) {
                    Ok(t) => Ok(Some(t)),
                    Err(Refused::Missing) => Ok(None),
                    Err(e) => Err(shown(e)),
                };
                let write = |b: &[u8]| dir.write_atomic(name, b, 0o644).map_err(shown);
                edit(&read, &write)
            })
            .map_err(fail)
        }
    }
}

/// The largest grub.cfg the kargs stage edits (a real one is a few hundred bytes).
const KARGS_FILE_LIMIT: u64 = 16 << 20;

/// Marks a root whose files stage started but did not finish (see `files_stage`), in /etc.
pub const IN_PROGRESS: &str = ".flint-files-in-progress";
/// The record of a run, in /etc, as upstream names it.
const RECORD: &str = ".ignition-result.json";

/// flint's own file `name` in the root's /etc, found as the root sees /etc: through a link
/// there inside the root, never out of it (upstream writes its record there too). `None`
/// where /etc is no directory.
fn etc_file(root: &Path, name: &str) -> Option<PathBuf> {
    root::Root::new(root.to_path_buf())
        .resolve(&format!("/etc/{name}"))
        .ok()
        .map(|r| r.host)
}

/// Whether `p` is flint's in-progress mark: a regular file (a link of that name is not).
fn is_mark(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}

/// Whether the root holds the record of a run, read as upstream reads it (through a link
/// inside the root): a link at the record's name that leads nowhere is none, since nothing
/// then says that a run happened.
pub fn has_record(root: &Path) -> bool {
    !matches!(previous_record(root), Ok(None))
}

/// The record an earlier run left, as upstream reads it into the new one: `None` where
/// there is none (or its link leads nowhere), an error where it is there but no JSON (or
/// cannot be read). Read as the root sees it, never through a link out of the root.
fn previous_record(root: &Path) -> Result<Option<serde_json::Value>, String> {
    let r = root::Root::new(root.to_path_buf());
    let text = match r.read_inside(&format!("/etc/{RECORD}")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("reading previous report: {e}")),
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("couldn't unmarshal previous report output: {e}"))?;
    Ok(Some(go_numbers(value)))
}

/// `v` with its whole numbers written as Go writes them after reading them into a float
/// (`1.0` and `1e3` as `1`, `1000`).
fn go_numbers(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(go_numbers).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, go_numbers(v))).collect()),
        other => other,
    }
}

/// What the record holds, in upstream's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(rename = "provisioningBootID")]
    provisioning_boot_id: String,
    provisioning_date: String,
    user_config_provided: bool,
    /// The earlier run's record (upstream leaves out a `null` one).
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_report: Option<serde_json::Value>,
}

/// The record of the run left in the root, as upstream's /etc/.ignition-result.json (the
/// record of an earlier run kept in it as `previousReport`, laid out as Go's MarshalIndent);
/// the in-progress mark goes.
pub fn write_result(root: &Path, user_config_provided: bool) -> std::io::Result<()> {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let record = Record {
        provisioning_boot_id: boot_id,
        provisioning_date: rfc3339_now(),
        user_config_provided,
        previous_report: previous_record(root)
            .map_err(std::io::Error::other)?
            .filter(|v| !v.is_null()),
    };
    let path = etc_file(root, RECORD)
        .ok_or_else(|| std::io::Error::other("/etc in the root is not a directory"))?;
    if let Some(etc) = path.parent() {
        std::fs::create_dir_all(etc)?;
    }
    write_atomic(&path, &flint_go::json::write::to_vec(&record, true), 0o600)?;
    match etc_file(root, IN_PROGRESS).filter(|m| is_mark(m)) {
        Some(mark) => std::fs::remove_file(mark),
        None => Ok(()),
    }
}

/// The current time in UTC as RFC 3339.
fn rfc3339_now() -> String {
    crate::civil::Utc::now().rfc3339()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_new_for_each_write_and_leftovers_are_cleared() {
        let t = std::env::temp_dir().join(format!("flint-temps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(t.join("srv/.kept.flint-tmp.d")).unwrap();
        let target = t.join("srv/f");
        let (a, _fa) = open_temp(&target, 0o600).unwrap();
        let (b, _fb) = open_temp(&target, 0o600).unwrap();
        assert_ne!(a, b, "two writes of one file share a temporary file");
        for p in [&a, &b] {
            let n = p.file_name().unwrap().to_string_lossy();
            assert!(n.starts_with(".f.flint-tmp."), "{n}");
        }
        // What a killed run left: regular files at flint's names go, the rest stays.
        std::fs::write(t.join("srv/.g.flint-tmp"), "old").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", t.join("srv/.h.flint-tmp.x")).unwrap();
        std::fs::write(t.join("srv/g.flint-tmp.x"), "not ours: no dot").unwrap();
        let r = root::Root::new(t.clone());
        clear_leftovers(&r, ["/srv", "/srv", "/missing"]);
        let mut names: Vec<String> = (std::fs::read_dir(t.join("srv")).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".h.flint-tmp.x", ".kept.flint-tmp.d", "g.flint-tmp.x"]
        );
        write_atomic(&target, b"x", 0o644).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"x");
        assert_eq!(std::fs::read_dir(t.join("srv")).unwrap().count(), 4);
        std::fs::remove_dir_all(&t).unwrap();
    }
}
