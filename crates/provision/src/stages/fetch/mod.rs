//! The fetch stage: the user config (or the cached one), base configs underneath, references
//! resolved, every resource fetched and verified, so that nothing is touched before all of
//! it is in hand. `fetch-offline` is the same stage with the network refused.

mod cache;
mod upstream;

pub use cache::CacheMeta;

use crate::acquire::{self, Budget, Places, Source};
use crate::fetch::Fetcher;
use crate::keep::Keep;
use crate::resources::{self, Needed};
use crate::stage::{Acquired, Context, Mode, Options, Outcome, Stage, StageError, StageName};
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub struct Fetch;

impl Stage for Fetch {
    fn name(&self) -> StageName {
        StageName::Fetch
    }

    /// Everything, fetched and verified before any stage touches a disk.
    fn needs(&self) -> crate::stage::Needed {
        crate::stage::Needed::All
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let opts = cx.options;
        let acq = acquire_in(cx, opts, mode)?;
        Ok(acquired(cx, acq, ","))
    }
}

/// Upstream's first step in the initramfs: the fetch stage without the network. When the
/// config (or the platform) needs the network, the flag file `neednet` is created and the
/// stage succeeds without a config, as upstream's does; otherwise the config is rendered
/// (into the cache) and the later fetch has nothing to do.
pub struct FetchOffline;

impl Stage for FetchOffline {
    fn name(&self) -> StageName {
        StageName::FetchOffline
    }

    /// As the fetch stage: what cannot be fetched without the network asks for it.
    fn needs(&self) -> crate::stage::Needed {
        crate::stage::Needed::All
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let mut opts = cx.options.clone();
        let flag = Arc::new(AtomicBool::new(false));
        opts.fetch.offline = Some(flag.clone());
        let r = acquire_in(cx, &opts, mode);
        let fail = |message: String| StageError::new(StageName::FetchOffline, None, message);
        // A Clevis binding that needs a Tang server (or says it needs the network) asks
        // for the network too, as upstream's does: the disks stage binds with it.
        let clevis = match &r {
            Ok(acq) => (acq.config.storage.luks.iter())
                .find(|l| l.clevis.needs_network_to_bind())
                .map(|l| {
                    format!(
                        "LUKS volume {:?} is bound with Clevis over the network",
                        l.name
                    )
                }),
            Err(_) => None,
        };
        if flag.load(Ordering::Relaxed) || clevis.is_some() {
            let why = match (r, clevis) {
                (Err(e), _) => e.to_string(),
                (Ok(_), why) => why.unwrap_or_default(),
            };
            let neednet = &opts.neednet;
            if let Some(d) = neednet.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)
                    .map_err(|e| fail(format!("creating {}: {e}", d.display())))?;
            }
            std::fs::write(neednet, b"")
                .map_err(|e| fail(format!("writing {}: {e}", neednet.display())))?;
            let note = format!(
                "the config needs the network ({}); wrote {}",
                why.trim_start_matches("fetch stage failed: "),
                neednet.display()
            );
            return Ok(Outcome {
                changes: Vec::new(),
                notes: vec![note],
                unseen: Vec::new(),
            });
        }
        let acq = r.map_err(|e| StageError {
            stage: StageName::FetchOffline,
            ..e
        })?;
        Ok(acquired(cx, acq, " needs no network:"))
    }
}

/// The config of a stage run with `opts`: upstream's way when the run keeps upstream's state
/// file (the fetch stages fetch, the others read the cache), else flint's ([`fetch_stage`]).
fn acquire_in(cx: &mut Context, opts: &Options, mode: Mode) -> Result<Acquired, StageError> {
    let wanted = Wanted::of(cx, opts, mode);
    let later = cx
        .asked
        .filter(|a| !matches!(a, StageName::Fetch | StageName::FetchOffline));
    let r = match (&opts.cache, later) {
        (_, _) if opts.state_file.is_none() => fetch_with(opts, wanted),
        (Some(cache), Some(_)) => upstream::from_cache(opts, &mut cx.state, cache, wanted),
        _ => upstream::fetch(opts, &mut cx.state, wanted),
    };
    // As upstream's, reading the cache (and what was kept, or fetching again) is part of
    // the asked-for stage, and fails as that stage; flint's own runs name the fetch stage
    // for whatever the acquiring did.
    r.map_err(|e| match later {
        Some(asked) if opts.state_file.is_some() => StageError { stage: asked, ..e },
        _ => e,
    })
}

/// Which resources a run fetches, and what it does with the keep-store: a fetch stage run
/// on its own (`--stage`, or as upstream's `ignition`) applying the config fills it for the
/// later stages; a later stage run on its own takes from it. A full run, all in one process,
/// fetches everything once and keeps nothing.
pub(crate) struct Wanted {
    needed: Needed,
    keep: Keeping,
}

enum Keeping {
    No,
    Save(std::path::PathBuf),
    /// Take from the store in this directory when it is of this boot and config; else
    /// fetch everything.
    Use(std::path::PathBuf),
}

impl Wanted {
    /// Hands `fetcher` the certificate authorities a fetch stage of this boot kept, when
    /// the run takes from the store: a stage that fetches nothing else fetches none.
    fn prime(&self, fetcher: &Fetcher) {
        if let Keeping::Use(dir) = &self.keep {
            fetcher.know_cas(crate::keep::cas(dir));
        }
    }

    fn all() -> Wanted {
        Wanted {
            needed: Needed::All,
            keep: Keeping::No,
        }
    }

    fn of(cx: &Context, opts: &Options, mode: Mode) -> Wanted {
        let dir = opts.state_dir.join("keep");
        let keep = match cx.asked {
            None => Keeping::No,
            Some(StageName::Fetch | StageName::FetchOffline) if mode.applies() => {
                Keeping::Save(dir)
            }
            Some(StageName::Fetch | StageName::FetchOffline) => Keeping::No,
            Some(_) => Keeping::Use(dir),
        };
        Wanted {
            needed: cx.needed,
            keep,
        }
    }
}

/// The stage's outcome once the config is acquired: how it was found, and a line saying
/// where it came from (`how` follows the origin) and what was fetched.
fn acquired(cx: &mut Context, mut acq: Acquired, how: &str) -> Outcome {
    // The notes are the stage's to tell; the acquired config keeps the rest.
    let mut notes = std::mem::take(&mut acq.notes);
    notes.push(format!(
        "config from {}{how} {} resources ({} bytes) fetched and verified",
        acq.origin,
        acq.fetched.items.len(),
        acq.fetched.total_bytes(),
    ));
    cx.acquired = Some(acq);
    Outcome {
        changes: Vec::new(),
        notes,
        unseen: Vec::new(),
    }
}

fn fail(path: Option<JsonPath>, message: impl Into<String>) -> StageError {
    StageError::new(StageName::Fetch, path, message)
}

/// The user config and where it came from, before base configs and rendering.
struct Found {
    user: Option<Config>,
    base: Option<Config>,
    origin: String,
    /// Files a platform hands over beside the config (upstream's cloud-config scripts).
    files: Vec<flint_ignition::types::File>,
    fetcher: Fetcher,
    user_provided: bool,
    platform: Option<&'static dyn crate::platform::Platform>,
    /// Which provider answered (upstream's name for it: `cmdline`, `system`, a platform).
    provider: &'static str,
}

/// The fetch stage: the config acquired, checked and its resources fetched. With a cache
/// path, the rendered config is written there (CA sources as data URLs), and read from
/// there when it exists.
pub fn fetch_stage(opts: &Options) -> Result<Acquired, StageError> {
    fetch_with(opts, Wanted::all())
}

fn fetch_with(opts: &Options, wanted: Wanted) -> Result<Acquired, StageError> {
    let start = Instant::now();
    let fetcher = Fetcher::with(opts.fetch.clone());
    wanted.prime(&fetcher);
    let budget = Budget::from_env();
    let mut notes = Vec::new();
    let (config, fetcher, origin, meta, platform) = match opts.cache.as_ref().filter(|c| c.exists())
    {
        Some(cache) => {
            let c = cache::read(cache, fetcher, &budget)?;
            let origin = format!("cache {}", cache.display());
            (c.config, c.fetcher, origin, c.meta, c.platform)
        }
        None => {
            // Base configs are read (and refused) before the user config.
            let extra_base = match &opts.base_dir {
                Some(d) => acquire::base_configs(d).map_err(|e| fail(e.path, e.message))?,
                None => None,
            };
            let found = find(opts, fetcher, &budget, &mut notes)?;
            let meta = CacheMeta {
                user_provided: found.user_provided,
                platform: found.platform.map(|p| p.name().to_string()),
            };
            let (origin, platform) = (found.origin.clone(), found.platform);
            let (config, fetcher) = assemble(found, extra_base, &budget)?;
            (config, fetcher, origin, meta, platform)
        }
    };
    check_final(&config)?;
    let fetched = fetch_resources(&config, &fetcher, wanted, &mut notes)?;
    if let Some(cache) = opts.cache.as_ref().filter(|c| !c.exists()) {
        cache::write(cache, &config, &fetcher, &meta)?;
    }
    notes.extend(fetcher.take_notes());
    Ok(Acquired {
        config,
        fetched,
        fetcher,
        origin,
        took: start.elapsed(),
        user_provided: meta.user_provided,
        platform,
        notes,
    })
}

/// The resources of `config` the run needs, fetched and verified (or taken from the
/// keep-store, or left there for the later stages).
fn fetch_resources(
    config: &Config,
    fetcher: &Fetcher,
    mut wanted: Wanted,
    notes: &mut Vec<String>,
) -> Result<resources::Fetched, StageError> {
    let stamp = || crate::keep::stamp(resources::identities(config));
    let mut kept = None;
    if let Keeping::Use(dir) = &wanted.keep
        && wanted.needed != Needed::Nothing
    {
        let k = Keep::load(dir, &stamp())
            .map_err(|e| fail(None, format!("reading {}: {e}", dir.display())))?;
        if k.exists() {
            kept = Some(k);
        } else {
            // No fetch stage ran before with this config this boot: nothing was verified,
            // and a stage that needs resources verifies them all before it touches a disk.
            // Only a fetch stage fills the store: run again, this stage fetches afresh.
            wanted = Wanted::all();
        }
    }
    let fetched =
        resources::fetch_all(config, fetcher, wanted.needed, kept.as_ref()).map_err(|e| {
            let message = format!("fetching {}: {}", e.url, e.message);
            fail(Some(e.path.clone()), message)
        })?;
    if let Keeping::Save(dir) = &wanted.keep {
        let budget = crate::keep::budget_from_env();
        let what = crate::keep::Fetched {
            stamp: stamp(),
            items: fetched.downloads(),
            cas: fetcher.known_cas(),
        };
        let (n, bytes) = crate::keep::save(dir, what, budget).map_err(|e| {
            let message = format!("keeping what was fetched in {}: {e}", dir.display());
            fail(None, message)
        })?;
        if fetched.downloads().next().is_some() {
            notes.push(format!(
                "kept {n} resources ({bytes} bytes) in {} for the later stages",
                dir.display()
            ));
        }
    }
    Ok(fetched)
}

/// Finds the user config where the options say, and the system's base config for a
/// platform.
fn find(
    opts: &Options,
    fetcher: Fetcher,
    budget: &Budget,
    notes: &mut Vec<String>,
) -> Result<Found, StageError> {
    let explicit = match &opts.source {
        Source::File(p) => {
            let (user, origin) =
                acquire::file_config(p, budget).map_err(|e| fail(e.path, e.message))?;
            return Ok(Found {
                user: Some(user),
                base: None,
                origin,
                files: Vec::new(),
                fetcher,
                user_provided: true,
                platform: None,
                provider: "file",
            });
        }
        Source::Given(c) => {
            return Ok(Found {
                user: Some((**c).clone()),
                base: None,
                origin: "the config given".into(),
                files: Vec::new(),
                fetcher,
                user_provided: true,
                platform: None,
                provider: "file",
            });
        }
        Source::Platform(n) => Some(n.as_str()),
        Source::Auto => None,
    };
    let p = crate::platform::select(explicit, &opts.places).map_err(|e| fail(None, e))?;
    if let Some(flag) = &opts.fetch.offline
        && platform_needs_network(p, &opts.places)
    {
        flag.store(true, Ordering::Relaxed);
        let message = format!("platform {}: {}", p.name(), crate::fetch::NEEDS_NETWORK);
        return Err(fail(None, message));
    }
    let mut fetcher = fetcher;
    fetcher.credentials = p.credentials();
    // Before any config is known, provider fetches give up after the fetch timeout
    // (upstream's -fetch-timeout). The user data is a config too, within the budget of
    // configs.
    let mut pf = fetcher.limited(budget.left());
    pf.http.total_timeout = Some(opts.fetch_timeout);
    let cx = crate::platform::Context::new(pf, opts.places.clone());
    let base = acquire::system_base(&opts.places.system, p.name(), notes)
        .map_err(|e| fail(e.path, e.message))?;
    let got = acquire::platform_config(p, &cx, budget).map_err(|e| fail(e.path, e.message))?;
    notes.extend(got.notes);
    Ok(Found {
        user_provided: got.user.is_some(),
        user: got.user,
        base,
        origin: format!("{} (platform {})", got.origin, p.name()),
        files: got.files,
        fetcher,
        platform: Some(p),
        provider: got.provider,
    })
}

/// The final config: base configs (the system's, then `--base-dir`'s) with the rendered user
/// config merged over them, a platform's files after, references resolved.
fn assemble(
    found: Found,
    extra_base: Option<Config>,
    budget: &Budget,
) -> Result<(Config, Fetcher), StageError> {
    let user = render_user(found.user, &found.fetcher, budget)?;
    combine(
        [found.base, extra_base, user],
        found.files,
        &found.fetcher,
        budget,
    )
}

/// The user config with its `replace` and `merge` references resolved.
fn render_user(
    user: Option<Config>,
    fetcher: &Fetcher,
    budget: &Budget,
) -> Result<Option<Config>, StageError> {
    let Some(u) = user else { return Ok(None) };
    let root = JsonPath::root();
    let (rendered, _) = acquire::render(u, fetcher, &root, &mut Vec::new(), budget)
        .map_err(|e| fail(e.path, e.message))?;
    Ok(Some(rendered))
}

/// The configs `parts` merged in order (an empty config of the newest version if none), a
/// platform's `files` after, the result's own settings (TLS roots, timeouts, proxy) given to
/// the fetcher it returns.
fn combine<const N: usize>(
    parts: [Option<Config>; N],
    files: Vec<flint_ignition::types::File>,
    fetcher: &Fetcher,
    budget: &Budget,
) -> Result<(Config, Fetcher), StageError> {
    let mut full: Option<Config> = None;
    for part in parts.into_iter().flatten() {
        full = Some(match full {
            Some(acc) => flint_ignition::merge::merge(acc, part),
            None => part,
        });
    }
    let mut full = full.unwrap_or_else(empty_config);
    if !files.is_empty() {
        let mut extra = Config::default();
        extra.ignition.version = full.ignition.version.clone();
        extra.storage.files = files;
        full = flint_ignition::merge::merge(full, extra);
    }
    acquire::render(
        strip_references(full),
        fetcher,
        &JsonPath::root(),
        &mut Vec::new(),
        budget,
    )
    .map_err(|e| fail(e.path, e.message))
}

/// A config with nothing in it, of the newest version.
fn empty_config() -> Config {
    Config {
        ignition: flint_ignition::types::Ignition {
            version: flint_ignition::Version::NEWEST.to_string(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Every part was validated when it was read; what merging can break is checked again, and
/// what this provisioner cannot do is refused before any disk is touched.
fn check_final(config: &Config) -> Result<(), StageError> {
    let issues = flint_ignition::validate::validate_with(
        config,
        flint_ignition::Version::NEWEST,
        flint_ignition::validate::Options {
            skip_data_contents: true,
            ..flint_ignition::validate::Options::FLATCAR
        },
    );
    if let Some(e) = (issues.iter()).find(|i| i.severity == flint_go::diag::Severity::Error) {
        let message = format!("the final config is invalid: {}", e.message);
        return Err(fail(Some(e.path.clone()), message));
    }
    if let Some(e) = flint_ignition::validate::unsupported_by_provisioner(config).first() {
        return Err(fail(Some(e.path.clone()), e.message.clone()));
    }
    Ok(())
}

/// Whether fetching the user config from `p` needs the network, as upstream's fetch-offline
/// stage finds out ([`crate::platform::source_needs_network`]), except that AWS always does:
/// upstream's AWS platform asks its metadata service for the region before any config is
/// read.
fn platform_needs_network(p: &dyn crate::platform::Platform, places: &Places) -> bool {
    p.name() == "aws" || crate::platform::source_needs_network(p, places)
}

/// References were resolved already; what remains in the config must not be fetched again.
fn strip_references(mut c: Config) -> Config {
    c.ignition.config = Default::default();
    c
}
