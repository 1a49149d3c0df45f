//! Config acquisition: find the user config (a file, the kernel command line, QEMU fw_cfg),
//! read it whatever its form (Ignition 3.x, spec 1 or 2.x translated as Flatcar does, or
//! Butane), merge base configs underneath, and
//! resolve `ignition.config.replace` and `merge` recursively, depth first, as upstream does.

use crate::fetch::{Fetcher, url::redact};
use flint_go::tree::JsonPath;
use flint_ignition::{self as ignition, Config, merge::merge, types::Resource};
use std::path::{Path, PathBuf};

/// Configs may reference configs this many levels deep.
pub const MAX_DEPTH: usize = 10;

/// Where the user config comes from.
#[derive(Debug, Clone)]
pub enum Source {
    File(PathBuf),
    /// The platform the kernel command line names (`--config-source auto`).
    Auto,
    /// This platform (`--platform NAME`).
    Platform(String),
    /// A config already read (`ignition-apply`), taken as the user config.
    Given(Box<Config>),
}

/// Where platforms look (the kernel command line, fw_cfg, the system config directories,
/// ...).
pub use crate::platform::Places;

/// fw_cfg entries Flatcar reads, in order.
pub use crate::platform::qemu::FW_CFG_NAMES;

/// Why acquisition failed, naming the entry and URL involved.
#[derive(Debug, Clone, PartialEq)]
pub struct AcquireError {
    pub path: Option<JsonPath>,
    pub message: String,
}

impl std::fmt::Display for AcquireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn err(path: Option<JsonPath>, message: impl Into<String>) -> AcquireError {
    AcquireError {
        path,
        message: message.into(),
    }
}

/// The config URL on a kernel command line (the last of `ignition.config.url`,
/// `flatcar.config.url`, `coreos.config.url`).
pub fn cmdline_url(cmdline: &str) -> Option<String> {
    crate::platform::cmdline::parse(cmdline).url
}

/// Reads a config of any supported form: Ignition 3.x JSON, or Butane YAML (translated; its
/// `local` files are looked for in `files_dir`).
pub fn parse_any(
    bytes: Vec<u8>,
    name: &str,
    files_dir: Option<&Path>,
) -> Result<Config, AcquireError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let looks_json = first == Some(&b'{');
    if looks_json || name.ends_with(".ign") || name.ends_with(".json") {
        let parsed = match ignition::read_owned(bytes) {
            (ignition::Document::Legacy(tree, version), text) => {
                // Spec 1 and 2.x configs are translated to 3.x as Flatcar's Ignition does.
                let text = text.unwrap_or_default();
                let config = ignition::legacy::translate_bytes(&text, tree, version)
                    .map_err(|e| err(e.path, format!("{name}: legacy config: {}", e.message)))?;
                // The translation gives a 3.1.0 config, which goes up the chain as any other.
                return Ok(ignition::upgrade(config, ignition::Version::V3_1));
            }
            (ignition::Document::Current(parsed), _) => *parsed,
        }
        .map_err(|d| err(None, format!("{name}: {d}")))?;
        // The tree goes before the checks: only the config is needed from here on.
        let ignition::parse::Parsed {
            config, version, ..
        } = parsed;
        // Flatcar's rules: its Ignition fetches `oem://` sources.
        let issues = ignition::validate::validate_with(
            &config,
            version,
            ignition::validate::Options::FLATCAR,
        );
        if let Some(e) = issues
            .iter()
            .find(|i| i.severity == flint_go::diag::Severity::Error)
        {
            return Err(err(
                Some(e.path.clone()),
                format!("{name}: invalid config: {}", e.message),
            ));
        }
        return Ok(ignition::upgrade(config, version));
    }
    let outcome = flint_butane::translate(
        &bytes,
        flint_butane::Options {
            files_dir,
            ..Default::default()
        },
    );
    match (outcome.config, outcome.failure) {
        (Some(c), _) => Ok(ignition::upgrade::upgrade_declared(c)),
        (None, failure) => {
            let first = outcome.diagnostics.iter().find(|d| d.is_error());
            let detail = first.map(|d| d.to_string()).or(failure).unwrap_or_default();
            Err(err(
                None,
                format!("{name}: Butane translation failed: {detail}"),
            ))
        }
    }
}

/// Reads the user config from a file, within `budget`.
pub fn file_config(p: &Path, budget: &Budget) -> Result<(Config, String), AcquireError> {
    use std::io::Read;
    let name = p.display().to_string();
    let reading = |e: std::io::Error| err(None, format!("reading {name}: {e}"));
    let mut bytes = Vec::new();
    let f = std::fs::File::open(p).map_err(reading)?;
    (f.take(budget.left() + 1).read_to_end(&mut bytes)).map_err(reading)?;
    (budget.charge(bytes.len() as u64)).map_err(|e| err(None, format!("{name}: {e}")))?;
    let beside = p.parent().map(|d| d.join("files")).filter(|d| d.is_dir());
    Ok((parse_any(bytes, &name, beside.as_deref())?, name))
}

/// What the platform chain found: the user config (`None`: no config, or user data meant
/// for another tool), where it came from, the lines to show about it, and files the
/// platform wants written.
pub struct PlatformConfig {
    pub user: Option<Config>,
    pub origin: String,
    pub notes: Vec<String>,
    pub files: Vec<flint_ignition::types::File>,
    /// Which provider answered (`cmdline`, `system`, the platform's name).
    pub provider: &'static str,
}

/// The user config from the platform chain (kernel command line, system `user.ign`, the
/// platform), classified as Flatcar's Ignition does: empty, `#cloud-config`, `#!` scripts
/// and multipart MIME are no config.
pub fn platform_config(
    platform: &dyn crate::platform::Platform,
    cx: &crate::platform::Context,
    budget: &Budget,
) -> Result<PlatformConfig, AcquireError> {
    use crate::platform::userdata::{Kind, classify};
    let got = crate::platform::acquire(platform, cx);
    let mut notes = cx.take_notes();
    notes.extend(cx.fetcher.take_notes());
    let ud = got.map_err(|e| err(None, e))?;
    (budget.charge(ud.bytes.len() as u64))
        .map_err(|e| err(None, format!("the user data from {}: {e}", ud.origin)))?;
    let kind = classify(&ud.bytes);
    let user = match kind {
        Kind::Config => Some(parse_any(ud.bytes, &ud.origin, None)?),
        Kind::Empty => {
            notes.push(format!(
                "no user config ({}): going on with the base configs alone",
                ud.origin
            ));
            None
        }
        k => {
            notes.push(format!(
                "the user data from {} is {}: skipped, so that coreos-cloudinit can take it",
                ud.origin,
                k.describe()
            ));
            None
        }
    };
    Ok(PlatformConfig {
        user,
        origin: ud.origin,
        notes,
        files: ud.files,
        provider: ud.provider,
    })
}

/// The system base configs: `base.d` then `base.platform.d/PLATFORM` across the system
/// config directories, merged in order. A fragment of base.d that is unreadable or no
/// config fails the run; base.platform.d is skipped (with a note) on any error, as
/// upstream does.
pub fn system_base(
    dirs: &crate::platform::system::SystemDirs,
    platform: &str,
    notes: &mut Vec<String>,
) -> Result<Option<Config>, AcquireError> {
    let read = |sub: &str| -> Result<Option<Config>, AcquireError> {
        let mut acc: Option<Config> = None;
        for p in dirs.fragments(sub).map_err(|e| err(None, e))? {
            let bytes = std::fs::read(&p)
                .map_err(|e| err(None, format!("reading {}: {e}", p.display())))?;
            let name = p.display().to_string();
            let kind = crate::platform::userdata::classify(&bytes);
            if kind != crate::platform::userdata::Kind::Config {
                return Err(err(
                    None,
                    format!(
                        "system base config {name}: not a config ({})",
                        kind.describe()
                    ),
                ));
            }
            let c = parse_any(bytes, &name, None)?;
            acc = Some(match acc {
                Some(a) => merge(a, c),
                None => c,
            });
        }
        Ok(acc)
    };
    let base = read("base.d").map_err(|e| {
        err(
            e.path,
            format!("failed to acquire system base config: {}", e.message),
        )
    })?;
    let sub = format!("base.platform.d/{platform}");
    let plat = match read(&sub) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("ignoring the configs in {sub}: {e}"));
            None
        }
    };
    Ok(match (base, plat) {
        (Some(b), Some(p)) => Some(merge(b, p)),
        (b, p) => b.or(p),
    })
}

/// Base configs from `dir` (`*.ign`, in name order), merged in order.
pub fn base_configs(dir: &Path) -> Result<Option<Config>, AcquireError> {
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => {
            return Err(err(
                None,
                format!("reading base configs in {}: {e}", dir.display()),
            ));
        }
    };
    names.retain(|p| p.extension().is_some_and(|e| e == "ign" || e == "bu"));
    names.sort();
    let mut acc: Option<Config> = None;
    for p in names {
        let bytes =
            std::fs::read(&p).map_err(|e| err(None, format!("reading {}: {e}", p.display())))?;
        let c = parse_any(bytes, &p.display().to_string(), None)?;
        acc = Some(match acc {
            Some(a) => merge(a, c),
            None => c,
        });
    }
    Ok(acc)
}

/// Applies the config's TLS roots, timeouts and proxy to `fetcher`.
fn configure(fetcher: &mut Fetcher, config: &Config, at: &JsonPath) -> Result<(), AcquireError> {
    fetcher.configure(&config.ignition);
    let cas = at
        .key("ignition")
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    for (i, ca) in config
        .ignition
        .security
        .tls
        .certificate_authorities
        .iter()
        .enumerate()
    {
        let p = cas.index(i);
        let pem = fetcher.fetch_ca(ca).map_err(|e| err(Some(p.clone()), e))?;
        fetcher.add_roots(&pem).map_err(|e| {
            err(
                Some(p),
                format!("{}: {e}", redact(ca.source.as_deref().unwrap_or(""))),
            )
        })?;
    }
    Ok(())
}

/// The default of [`Budget`]: a config and every config it references, 256 MiB together.
pub const MAX_CONFIG_BYTES: u64 = 256 << 20;

/// How many bytes a config and the configs it references (`merge`, `replace`, at any depth)
/// may take together, decompressed. Each is read, parsed and merged in memory, a few times
/// its size at the peak, so their total is bounded, far below what an initramfs has: a config
/// that crosses it is refused, named by its path, before it is parsed (and, when fetched,
/// as soon as its download or decompression goes past what is left).
///
/// It also keeps the sources of the referenced configs it was charged for, in the order
/// they were fetched (depth first), which upstream's state file records.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    left: std::cell::Cell<u64>,
    referenced: std::cell::RefCell<Vec<String>>,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            left: std::cell::Cell::new(limit),
            referenced: Default::default(),
        }
    }

    /// The sources of the referenced configs fetched within this budget, in order.
    pub(crate) fn referenced(&self) -> Vec<String> {
        self.referenced.borrow().clone()
    }

    /// [`MAX_CONFIG_BYTES`], or `FLINT_MAX_CONFIG_BYTES`.
    pub fn from_env() -> Budget {
        let limit = std::env::var("FLINT_MAX_CONFIG_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MAX_CONFIG_BYTES);
        Budget::new(limit)
    }

    /// What is left.
    pub fn left(&self) -> u64 {
        self.left.get()
    }

    fn exceeded(&self) -> String {
        format!(
            "the config and the configs it references are larger than the {}-byte limit \
             on them together (FLINT_MAX_CONFIG_BYTES)",
            self.limit
        )
    }

    /// Takes `n` bytes of what is left, or says that `n` is more than that.
    pub fn charge(&self, n: u64) -> Result<(), String> {
        match self.left.get().checked_sub(n) {
            Some(rest) => {
                self.left.set(rest);
                Ok(())
            }
            None => Err(self.exceeded()),
        }
    }
}

/// Fetches and reads a referenced config, within `budget`.
fn fetch_config(
    fetcher: &Fetcher,
    r: &Resource,
    at: &JsonPath,
    budget: &Budget,
) -> Result<Config, AcquireError> {
    let src = r.source.as_deref().unwrap_or("");
    // Fetched with what is left as its limit: a config past it is cut off as it arrives.
    let limited = fetcher.limited(budget.left());
    let bytes = limited.fetch(r).map_err(|e| {
        let past = budget.left() < fetcher.memory_limit() && e.contains("-byte");
        err(
            Some(at.clone()),
            if past {
                format!("{}: {}", redact(src), budget.exceeded())
            } else {
                e
            },
        )
    })?;
    (budget.charge(bytes.len() as u64))
        .map_err(|e| err(Some(at.clone()), format!("{}: {e}", redact(src))))?;
    budget.referenced.borrow_mut().push(src.to_string());
    parse_any(bytes, &redact(src), None).map_err(|e| err(Some(at.clone()), e.message))
}

/// Resolves `replace` and `merge` references of `config`, depth first, within `budget`.
/// `chain` holds the sources being resolved above this config, to detect a config that
/// references itself.
pub fn render(
    mut config: Config,
    fetcher: &Fetcher,
    at: &JsonPath,
    chain: &mut Vec<String>,
    budget: &Budget,
) -> Result<(Config, Fetcher), AcquireError> {
    if chain.len() > MAX_DEPTH {
        return Err(err(
            Some(at.clone()),
            format!("configs reference configs more than {MAX_DEPTH} levels deep"),
        ));
    }
    let mut f = fetcher.clone();
    configure(&mut f, &config, at)?;
    let refs = at.key("ignition").key("config");
    let replace = &config.ignition.config.replace;
    if let Some(src) = replace.source.as_deref().filter(|s| !s.is_empty()) {
        let p = refs.key("replace");
        let child = with_cycle_check(chain, src, &p, |chain| {
            let child = fetch_config(&f, replace, &p, budget)?;
            render(child, &f, &p, chain, budget)
        })?;
        return Ok(child);
    }
    // Without merges the config is its own rendering, and `f` the fetcher it configures:
    // no copy (a config of inline files holds all their contents).
    if config.ignition.config.merge.is_empty() {
        return Ok((config, f));
    }
    // The config is merged into as it stands, never copied: the references are taken out
    // and each child comes in whole. What configures a child's fetches is the `ignition`
    // section merged so far, which is small.
    let merges = std::mem::take(&mut config.ignition.config.merge);
    let mut acc = config;
    for (i, m) in merges.iter().enumerate() {
        let p = refs.key("merge").index(i);
        let src = m.source.as_deref().unwrap_or("");
        let (rendered, _) = with_cycle_check(chain, src, &p, |chain| {
            let child = fetch_config(&f, m, &p, budget)?;
            // The child's own references are fetched with the settings merged so far.
            let mut cf = f.clone();
            configure(&mut cf, &sections_merged(&acc, &child), &p)?;
            render(child, &cf, &p, chain, budget)
        })?;
        acc = merge(acc, rendered);
    }
    // The references go back in front of what the children brought, as merging them with
    // the rest would have left them.
    let list = |merge: Vec<Resource>| {
        let mut c = Config::default();
        c.ignition.config.merge = merge;
        c
    };
    let theirs = std::mem::take(&mut acc.ignition.config.merge);
    acc.ignition.config.merge = merge(list(merges), list(theirs)).ignition.config.merge;
    let mut fin = fetcher.clone();
    configure(&mut fin, &acc, &JsonPath::root())?;
    Ok((acc, fin))
}

/// The `ignition` sections of `parent` and `child` merged, alone in a config: what
/// [`configure`] reads of the merge of the two, without copying their other sections.
fn sections_merged(parent: &Config, child: &Config) -> Config {
    let only = |c: &Config| Config {
        ignition: c.ignition.clone(),
        ..Default::default()
    };
    merge(only(parent), only(child))
}

fn with_cycle_check<T>(
    chain: &mut Vec<String>,
    src: &str,
    at: &JsonPath,
    body: impl FnOnce(&mut Vec<String>) -> Result<T, AcquireError>,
) -> Result<T, AcquireError> {
    if chain.iter().any(|s| s == src) {
        let mut cycle: Vec<String> = chain.iter().map(|s| redact(s)).collect();
        cycle.push(redact(src));
        return Err(err(
            Some(at.clone()),
            format!("config reference cycle: {}", cycle.join(" -> ")),
        ));
    }
    chain.push(src.to_string());
    let r = body(chain);
    chain.pop();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernel_command_line() {
        assert_eq!(
            cmdline_url("quiet ignition.config.url=http://a/b.ign flatcar.first_boot=1"),
            Some("http://a/b.ign".into())
        );
        assert_eq!(
            cmdline_url("coreos.config.url=http://x flatcar.config.url=http://y"),
            Some("http://y".into())
        );
        assert_eq!(cmdline_url("root=/dev/sda"), None);
    }

    #[test]
    fn renders_merges_and_detects_cycles() {
        let child = r#"{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/b"}]}}"#;
        let url = format!(
            "data:,{}",
            flint_ignition::dataurl::percent_encode(child.as_bytes())
        );
        let parent = format!(
            r#"{{"ignition":{{"version":"3.4.0","config":{{"merge":[{{"source":"{url}"}}]}}}},"storage":{{"files":[{{"path":"/a"}}]}}}}"#
        );
        let cfg = parse_any(parent.clone().into_bytes(), "p.ign", None).unwrap();
        let budget = Budget::new(MAX_CONFIG_BYTES);
        let (out, _) = render(
            cfg,
            &Fetcher::new(),
            &JsonPath::root(),
            &mut Vec::new(),
            &budget,
        )
        .unwrap();
        let paths: Vec<&str> = out.storage.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b"]);

        let mut chain = vec![url.clone()];
        let cfg = parse_any(parent.clone().into_bytes(), "p.ign", None).unwrap();
        let Err(e) = render(cfg, &Fetcher::new(), &JsonPath::root(), &mut chain, &budget) else {
            panic!("a cycle must be refused");
        };
        assert!(e.message.contains("cycle"), "{e}");
        assert_eq!(e.path.unwrap().to_string(), "$.ignition.config.merge.0");
    }
}
