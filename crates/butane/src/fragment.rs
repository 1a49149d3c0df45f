//! Configs the `ignition` section merges or replaces with from local files (`local:`).
//! Upstream embeds such a file as it is, unchecked; flint:
//!
//! - checks an Ignition config by its own version's rules and reports its problems with
//!   their place in that file (the embedded output stays upstream's);
//! - translates a Butane fragment (a YAML file naming a `variant`) at build time, with its
//!   own `local` references read from the same files directory: a fragment merged before
//!   any config fetched at run time is merged into the output now (Ignition's merge rules,
//!   the order Ignition would merge in), any other is embedded as the Ignition config it
//!   translates to, where upstream would embed YAML no Ignition can read.
//!
//! Fragments may include fragments, up to 10 deep and without cycles.

use super::base::Settings;
use super::base::local::FilesDir;
use super::base::types as bu;
use super::pathmap::PathMap;
use super::{Finding, Variant, jpath};
use flint_go::diag::{Diagnostic, Severity};
use flint_go::tree::{JsonPath, Value};
use flint_ignition::types as ig;
use flint_ignition::validate::Issue;
use std::cell::RefCell;
use std::path::PathBuf;

/// Fragments may include fragments this deep.
const MAX_DEPTH: usize = 10;

thread_local! {
    /// The fragments being translated, outermost first (to find cycles).
    static CHAIN: RefCell<Vec<(PathBuf, String)>> = const { RefCell::new(Vec::new()) };
}

fn issue(severity: Severity, path: JsonPath, message: String) -> Finding {
    Finding::Source(Issue {
        severity,
        path,
        message,
    })
}

/// A finding from inside the file `name`, told at the `local` key that names it.
fn relay(d: &Diagnostic, name: &str, at: &JsonPath) -> Finding {
    issue(
        d.severity,
        at.clone(),
        format!("{}: {}", place(d, name), d.message),
    )
}

/// Where in the file `name` the diagnostic `d` points.
fn place(d: &Diagnostic, name: &str) -> String {
    match (&d.path, &d.pos) {
        (Some(p), Some(lc)) if !p.is_root() => format!("{name}:{}:{} ({p})", lc.line, lc.col),
        (_, Some(lc)) => format!("{name}:{}:{}", lc.line, lc.col),
        (Some(p), None) if !p.is_root() => format!("{name} ({p})"),
        _ => name.to_string(),
    }
}

/// Whether `bytes` are a Butane config: a YAML mapping that names a variant.
fn is_butane(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    match flint_go::yaml::parse(text) {
        Ok(doc) => matches!(&doc.root.value, Value::Object(_)) && doc.root.get("variant").is_some(),
        Err(_) => false,
    }
}

/// What a `local` config turned out to be.
enum Local {
    /// Not to be touched (absent, compressed by the user, unreadable: reported elsewhere).
    Skip,
    /// An Ignition config, checked.
    Ignition,
    /// A Butane fragment, translated (None when that failed).
    Fragment(Option<Box<(ig::Config, flint_ignition::Version)>>),
}

fn examine(
    r: &bu::IgnitionResource,
    at: &JsonPath,
    spec: &Variant,
    files: FilesDir<'_>,
    findings: &mut Vec<Finding>,
) -> Local {
    let Some(local) = r.local.as_deref() else {
        return Local::Skip;
    };
    // Contents the user compressed are embedded as they are, as upstream does.
    if r.compression.as_deref().is_some_and(|c| !c.is_empty()) {
        return Local::Skip;
    }
    let (Ok(path), Ok(bytes)) = (files.resolve(local), files.read(local)) else {
        return Local::Skip;
    };
    let name = path.display().to_string();
    let local_at = at.key("local");
    if !is_butane(&bytes) {
        check_ignition(&bytes, &name, &local_at, findings);
        return Local::Ignition;
    }

    let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let refused = CHAIN.with(|c| {
        let chain = c.borrow();
        if chain.iter().any(|(p, _)| *p == canonical) {
            let mut names: Vec<String> = chain.iter().map(|(_, n)| n.clone()).collect();
            names.push(name.clone());
            Some(format!(
                "fragments include each other: {}",
                names.join(" → ")
            ))
        } else if chain.len() >= MAX_DEPTH {
            Some(format!("fragments nest deeper than {MAX_DEPTH} levels"))
        } else {
            None
        }
    });
    if let Some(message) = refused {
        findings.push(issue(Severity::Error, local_at, message));
        return Local::Fragment(None);
    }
    CHAIN.with(|c| c.borrow_mut().push((canonical, name.clone())));
    let outcome = super::translate(
        &bytes,
        super::Options {
            files_dir: files.dir,
            raw: true,
            debug: false,
            render: None,
            exiting: false,
            memo: None,
        },
    );
    CHAIN.with(|c| c.borrow_mut().pop());
    for d in &outcome.diagnostics {
        findings.push(relay(d, &name, &local_at));
    }
    let (Some(config), Some(variant)) = (outcome.config, outcome.variant) else {
        let why = outcome.failure.unwrap_or_default();
        findings.push(issue(
            Severity::Error,
            local_at,
            format!("{name}: the Butane fragment does not translate: {why}"),
        ));
        return Local::Fragment(None);
    };
    if variant.ignition > spec.ignition {
        findings.push(issue(
            Severity::Error,
            local_at,
            format!(
                "{name}: the Butane fragment ({} {}) gives Ignition {}, newer than this config's {}",
                variant.name, variant.version, variant.ignition, spec.ignition
            ),
        ));
        return Local::Fragment(None);
    }
    Local::Fragment(Some(Box::new((config, variant.ignition))))
}

/// An Ignition config given as a file: its problems, at their place in that file, by the
/// rules of its own version. A version flint does not know is embedded unchecked, without a
/// word, as upstream embeds every local config.
fn check_ignition(bytes: &[u8], name: &str, at: &JsonPath, findings: &mut Vec<Finding>) {
    match flint_ignition::parse(bytes) {
        Ok(_) => {
            for d in flint_ignition::check(bytes) {
                findings.push(relay(&d, name, at));
            }
        }
        Err(d) if d.fatal && d.message.starts_with("unsupported config version") => {}
        // One finding: why the file is refused, where in it.
        Err(d) => findings.push(issue(
            Severity::Error,
            at.clone(),
            format!("{}: not an Ignition config: {}", place(&d, name), d.message),
        )),
    }
}

/// The translated fragment as a data URL, in place of the YAML upstream would embed.
fn embed(
    out: &mut ig::Resource,
    fragment: &ig::Config,
    version: flint_ignition::Version,
    set: Settings<'_>,
) {
    let mut json = super::legacy::to_json(fragment, version, false);
    json.pop();
    let (url, compression) = set.data_url(&json, None);
    out.source = Some(url);
    out.compression = compression;
}

/// Checks and resolves the local configs of the `ignition` section of `src`, translated
/// into `cfg` (whose path map is `map`).
pub(crate) fn resolve(
    cfg: &mut ig::Config,
    map: &mut PathMap,
    src: &bu::Config,
    spec: &Variant,
    set: Settings<'_>,
    findings: &mut Vec<Finding>,
) {
    let ic = jpath(&["ignition", "config"]);
    let merges = &src.ignition.config.merge;
    if merges.iter().all(|r| r.local.is_none()) && src.ignition.config.replace.local.is_none() {
        return;
    }
    // Merged now: the fragments before any config that is fetched at run time.
    let mut now: Vec<(usize, ig::Config)> = Vec::new();
    let mut runtime_before = false;
    for (i, r) in merges.iter().enumerate() {
        let at = ic.key("merge").index(i);
        match examine(r, &at, spec, set.files, findings) {
            Local::Fragment(Some(found)) => {
                let (fragment, version) = *found;
                if runtime_before {
                    embed(&mut cfg.ignition.config.merge[i], &fragment, version, set);
                } else {
                    now.push((i, fragment));
                }
            }
            Local::Fragment(None) => {}
            Local::Ignition | Local::Skip => runtime_before = true,
        }
    }
    let at = ic.key("replace");
    if let Local::Fragment(Some(found)) =
        examine(&src.ignition.config.replace, &at, spec, set.files, findings)
    {
        let (fragment, version) = *found;
        embed(&mut cfg.ignition.config.replace, &fragment, version, set);
    }
    if now.is_empty() {
        return;
    }

    // The merge entries merged now leave the list.
    let merged: Vec<usize> = now.iter().map(|(i, _)| *i).collect();
    let moves: Vec<(usize, usize)> = (0..cfg.ignition.config.merge.len())
        .filter(|i| !merged.contains(i))
        .enumerate()
        .map(|(new, old)| (old, new))
        .collect();
    map.reindex(&ic.key("merge"), &moves);
    let kept: Vec<ig::Resource> = std::mem::take(&mut cfg.ignition.config.merge)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !merged.contains(i))
        .map(|(_, r)| r)
        .collect();
    cfg.ignition.config.merge = kept;

    for (i, mut fragment) in now {
        let origin = ic.key("merge").index(i).key("local");
        fragment.ignition.version = cfg.ignition.version.clone();
        merge_in(cfg, fragment, map, &origin);
    }
}

/// `fragment` merged over `cfg` (the fragment's values win, as a config merged at run
/// time would); what only the fragment has comes from `origin`.
fn merge_in(cfg: &mut ig::Config, fragment: ig::Config, map: &mut PathMap, origin: &JsonPath) {
    let before = lists(cfg);
    let added = lists(&fragment);
    let parent = std::mem::take(cfg);
    *cfg = flint_ignition::merge::merge(parent, fragment);
    let after = lists(cfg);
    for ((path, old), ((_, new), (_, theirs))) in before.iter().zip(after.iter().zip(&added)) {
        // Entries of the config keep their places unless the fragment's other lists took
        // their paths; the fragment's own new entries follow them.
        let moves: Vec<(usize, usize)> = old
            .iter()
            .enumerate()
            .filter_map(|(k, key)| new.iter().position(|n| n == key).map(|n| (k, n)))
            .collect();
        map.reindex(path, &moves);
        for (k, key) in new.iter().enumerate() {
            if !old.contains(key) && theirs.contains(key) {
                map.add_exact(path.index(k), origin.clone());
            }
        }
    }
}

/// The keyed lists of a config, with the keys of their entries.
fn lists(c: &ig::Config) -> Vec<(JsonPath, Vec<String>)> {
    let st = jpath(&["storage"]);
    let keys = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<String>>();
    vec![
        (
            st.key("directories"),
            keys(&mut c.storage.directories.iter().map(|d| d.path.clone())),
        ),
        (
            st.key("disks"),
            keys(&mut c.storage.disks.iter().map(|d| d.device.clone())),
        ),
        (
            st.key("files"),
            keys(&mut c.storage.files.iter().map(|f| f.path.clone())),
        ),
        (
            st.key("filesystems"),
            keys(&mut c.storage.filesystems.iter().map(|f| f.device.clone())),
        ),
        (
            st.key("links"),
            keys(&mut c.storage.links.iter().map(|l| l.path.clone())),
        ),
        (
            st.key("luks"),
            keys(&mut c.storage.luks.iter().map(|l| l.name.clone())),
        ),
        (
            st.key("raid"),
            keys(&mut c.storage.raid.iter().map(|r| r.name.clone())),
        ),
        (
            jpath(&["passwd", "users"]),
            keys(&mut c.passwd.users.iter().map(|u| u.name.clone())),
        ),
        (
            jpath(&["passwd", "groups"]),
            keys(&mut c.passwd.groups.iter().map(|g| g.name.clone())),
        ),
        (
            jpath(&["systemd", "units"]),
            keys(&mut c.systemd.units.iter().map(|u| u.name.clone())),
        ),
        (
            jpath(&["kernelArguments", "shouldExist"]),
            c.kernel_arguments.should_exist.clone(),
        ),
        (
            jpath(&["kernelArguments", "shouldNotExist"]),
            c.kernel_arguments.should_not_exist.clone(),
        ),
        (
            jpath(&["ignition", "config", "merge"]),
            keys(
                &mut c
                    .ignition
                    .config
                    .merge
                    .iter()
                    .map(|r| r.source.clone().unwrap_or_default()),
            ),
        ),
        (
            jpath(&["ignition", "security", "tls", "certificateAuthorities"]),
            keys(
                &mut c
                    .ignition
                    .security
                    .tls
                    .certificate_authorities
                    .iter()
                    .map(|r| r.source.clone().unwrap_or_default()),
            ),
        ),
    ]
}
