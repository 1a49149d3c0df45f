//! The units step of the files stage: unit files and drop-ins written, masks, presets
//! (enable and disable as upstream's preset file and `systemctl` leave them), after the
//! storage entries.

use super::nodes::*;
use crate::entry::EntryError;
use crate::root::Root;
use crate::stage::Mode;
use flint_go::tree::JsonPath;
use flint_ignition::types::Config;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The preset entries of the config, as upstream orders them: one per unit name and state
/// (`enabled: true` or `false`), instances of a template sharing the entry of their template
/// (`c@.service x y`), sorted by `NAME-enabled` / `NAME-disabled`.
fn presets(cfg: &Config) -> Vec<(String, bool)> {
    let mut entries: Vec<(String, String, bool, Vec<String>)> = Vec::new();
    for u in &cfg.systemd.units {
        let Some(enabled) = u.enabled else { continue };
        let state = if enabled { "enabled" } else { "disabled" };
        let (unit, instance) = match (u.name.find('@'), u.name.rfind('.')) {
            (Some(at), Some(dot)) if dot > at => (
                format!("{}{}", &u.name[..=at], &u.name[dot..]),
                Some(u.name[at + 1..dot].to_string()),
            ),
            _ => (u.name.clone(), None),
        };
        let key = format!("{unit}-{state}");
        match entries.iter_mut().find(|e| e.0 == key) {
            Some(e) if instance.is_some() => e.3.extend(instance),
            // A second plain entry of one name replaces the first (as upstream's map does).
            Some(e) => *e = (key, unit, enabled, Vec::new()),
            None => entries.push((key, unit, enabled, instance.into_iter().collect())),
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
        .into_iter()
        .map(|(_, unit, enabled, insts)| {
            let s = if insts.is_empty() {
                unit
            } else {
                format!("{unit} {}", insts.join(" "))
            };
            (s, enabled)
        })
        .collect()
}

/// Where presets go.
pub(super) const PRESET_PATH: &str = "/etc/systemd/system-preset/20-ignition.preset";

/// Whether systemd in the root counts `unit` as enabled (`systemctl --root R is-enabled`,
/// whose success also covers static and alias units, as upstream asks it). Without
/// systemctl: whether a `.wants`/`.requires` link of that name exists.
fn unit_enabled(root: &Path, unit: &str) -> bool {
    match std::process::Command::new("systemctl")
        .arg("--root")
        .arg(root)
        .args(["is-enabled", unit])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(st) => st.success(),
        Err(_) => !enablement_links(root, unit).is_empty(),
    }
}

/// Whether systemd counts `unit` as enabled when the units step comes to its preset line.
/// Applying, the root shows it. Planning, the unit's contents this config writes are not
/// there yet (unless a run already wrote them: then systemd is asked, as applying): such a
/// unit without an `[Install]` section is static (which `is-enabled` counts), one with it
/// is enabled only by links already in place. A unit the config masks is masked by then
/// (`is-enabled` says so, which is not enabled).
/// `unit` is the preset line's (see [`unit_of_line`]); systemd answers for the template.
fn counts_enabled(cfg: &Config, root: &Root, unit: &str, mode: Mode) -> bool {
    let name = unit_of_line(unit);
    let own = (cfg.systemd.units.iter().rev()).find(|u| u.name == name);
    if own.is_some_and(|u| u.mask == Some(true)) {
        return false;
    }
    let written = own
        .and_then(|u| u.contents.as_deref())
        .filter(|c| !c.is_empty());
    let in_place = |contents: &str| {
        root.resolve(&format!("/etc/systemd/system/{name}"))
            .ok()
            .and_then(|r| std::fs::read(&r.host).ok())
            .is_some_and(|b| b == contents.as_bytes())
    };
    match written {
        Some(contents) if !mode.applies() && !in_place(contents) => {
            let installs = flint_ignition::validate::unit::parse(contents).map_or(true, |opts| {
                flint_ignition::validate::unit::has_install(&opts)
            });
            !installs || !enablement_links(&root.dir, unit).is_empty()
        }
        _ => unit_enabled(&root.dir, unit),
    }
}

/// The unit a preset line's unit part names: a template's instances follow its name
/// (`c@.service x y`; `c@.service ` for the template itself).
fn unit_of_line(unit: &str) -> &str {
    unit.split(' ').next().unwrap_or(unit)
}

/// Whether `host` is a link whose target reads `/dev/null`, letter for letter, as upstream
/// compares it (`/dev//null` is not: an unmask leaves it).
fn links_to_dev_null(host: &Path) -> bool {
    std::fs::read_link(host).is_ok_and(|t| t.as_os_str() == "/dev/null")
}

/// Units and drop-ins under /etc/systemd/system, masks as links to /dev/null, and the preset
/// lines appended to 20-ignition.preset, as upstream: `enable NAME` for enabled units;
/// `disable NAME` (after `systemctl disable` removed its links) for a unit with
/// `enabled: false` that systemd counts as enabled, nothing for one it does not.
///
/// `first_run` (no result record in the root yet): lines are appended as upstream appends
/// them, whatever the file holds. On a later run a line the file already has is not added
/// again, so that a re-run changes nothing.
/// `made`: planning, whether what the files stage would make is a directory (see
/// `note_made`); a unit, drop-in or preset path may be one of them, or lead through a file,
/// and the run then fails there. Applying, it is empty: the root shows what was made.
pub(super) fn run_units(
    cfg: &Config,
    root: &Root,
    mode: Mode,
    first_run: bool,
    made: &HashMap<String, Made>,
    links: &HashMap<String, String>,
) -> Result<Vec<Action>, EntryError> {
    // Directories the entries make (planning) are not made again on the way to a unit.
    let mut planned: HashSet<String> = (made.iter())
        .filter(|(_, m)| **m == Made::Dir)
        .map(|(p, _)| p.clone())
        .collect();
    let mut actions = Vec::new();
    let units = JsonPath::root().key("systemd").key("units");
    let step = |entry: &JsonPath,
                acts: Result<Vec<Action>, String>,
                actions: &mut Vec<Action>|
     -> Result<(), EntryError> {
        let fail = |message: String| EntryError {
            entry: entry.clone(),
            message,
        };
        let acts = acts.map_err(fail)?;
        if mode.applies() {
            for a in &acts {
                execute(a, root).map_err(|e| fail(format!("{}: {e}", a.path)))?;
            }
        }
        actions.extend(acts);
        Ok(())
    };
    for (i, u) in cfg.systemd.units.iter().enumerate() {
        let e = units.index(i);
        let unit_path = format!("/etc/systemd/system/{}", u.name);
        // Drop-ins are written whenever they have contents, empty ones too; a unit only when
        // its contents are not empty.
        for (j, d) in u.dropins.iter().enumerate() {
            if let Some(c) = d.contents.as_deref() {
                let p = format!("/etc/systemd/system/{}.d/{}", u.name, d.name);
                let de = e.key("dropins").index(j);
                let acts = ensure_file(root, &mut planned, made, &de, &p, c.as_bytes(), first_run);
                step(&de, acts, &mut actions)?;
            }
        }
        // A masked unit ends as the link to /dev/null (upstream writes the contents, then
        // replaces them by the mask).
        if let Some(c) = (u.contents.as_deref())
            .filter(|c| !c.is_empty())
            .filter(|_| u.mask != Some(true))
        {
            let acts = ensure_file(
                root,
                &mut planned,
                made,
                &e,
                &unit_path,
                c.as_bytes(),
                first_run,
            );
            step(&e, acts, &mut actions)?;
        }
        // Upstream writes a masked unit's contents before masking it: a directory there
        // fails that write.
        if u.mask == Some(true) && u.contents.as_deref().is_some_and(|c| !c.is_empty()) {
            let r = root.resolve(&unit_path);
            step(
                &e,
                r.and_then(|r| no_dir_on_the_way(&r, made, false))
                    .map(|()| vec![]),
                &mut actions,
            )?;
        }
        let acts = mask_actions(root, &mut planned, made, &e, &unit_path, u.mask, first_run);
        step(&e, acts, &mut actions)?;
    }
    let acts = preset_actions(cfg, root, mode, first_run, &mut planned, made, links)?;
    step(&units, Ok(acts), &mut actions)?;
    Ok(actions)
}

/// A unit's mask: the link to /dev/null made (`mask: true`) or removed (`mask: false`).
fn mask_actions(
    root: &Root,
    planned: &mut HashSet<String>,
    made: &HashMap<String, Made>,
    e: &JsonPath,
    unit_path: &str,
    mask: Option<bool>,
    first_run: bool,
) -> Result<Vec<Action>, String> {
    match mask {
        // (Planning: through a file an entry makes, the mask's mkdir fails as the run's.)
        Some(true) => root.resolve(unit_path).and_then(|r| {
            no_file_on_the_way(&r.inner, made)?;
            let mut acts = parents(planned, e, &r.missing);
            // Upstream makes the link anew on every run (root's, to `/dev/null`); a
            // later run of flint leaves one that is exactly that.
            let ok = !first_run && links_to_dev_null(&r.host);
            if !ok {
                let replace = !matches!(observe(&r.host).0, Kind::None);
                acts.push(Action {
                    entry: e.clone(),
                    path: r.inner,
                    change: Change::Symlink {
                        target: "/dev/null".into(),
                        uid: 0,
                        gid: 0,
                        replace,
                    },
                });
            }
            Ok(acts)
        }),
        Some(false) => root.resolve(unit_path).map(|r| {
            let masked = links_to_dev_null(&r.host);
            if masked {
                vec![Action {
                    entry: e.clone(),
                    path: r.inner,
                    change: Change::Remove,
                }]
            } else {
                vec![]
            }
        }),
        None => Ok(vec![]),
    }
}

/// The preset lines appended (and the `systemctl disable` each `disable` line needs first).
fn preset_actions(
    cfg: &Config,
    root: &Root,
    mode: Mode,
    first_run: bool,
    planned: &mut HashSet<String>,
    made: &HashMap<String, Made>,
    links: &HashMap<String, String>,
) -> Result<Vec<Action>, EntryError> {
    let units = JsonPath::root().key("systemd").key("units");
    let entries = presets(cfg);
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    // Through a link at the preset file's own path too, as upstream's append follows it,
    // but never out of the root: where upstream would append outside it (visible nowhere
    // in the root), nothing is written. A path that cannot be followed fails only when
    // there is a line to append: upstream opens the file for nothing else.
    let preset = root.resolve_through_planned(PRESET_PATH, &|p| links.get(p).cloned());
    let existing = (preset.as_ref().ok().and_then(Option::as_ref))
        .and_then(|p| std::fs::read_to_string(&p.host).ok())
        .unwrap_or_default();
    let mut acts = Vec::new();
    let mut block = String::new();
    for (unit, enabled) in entries {
        let line = format!("{} {unit}", if enabled { "enable" } else { "disable" });
        // (A line appended to a file without a final newline joined its last line.)
        if !first_run && existing.contains(&format!("{line}\n")) {
            continue;
        }
        if !enabled {
            if !counts_enabled(cfg, root, &unit, mode) {
                continue;
            }
            // On a later run, a unit without enablement links has nothing left to disable
            // (its line may have gone where flint writes nothing: out of the root).
            if !first_run && enablement_links(&root.dir, unit_of_line(&unit)).is_empty() {
                block.push_str(&line);
                block.push('\n');
                continue;
            }
            acts.push(Action {
                entry: units.clone(),
                path: unit.clone(),
                change: Change::Disable,
            });
        }
        block.push_str(&line);
        block.push('\n');
    }
    let preset = match block.is_empty() {
        true => None,
        false => preset.map_err(|message| EntryError {
            entry: units.clone(),
            message,
        })?,
    };
    if let Some(preset) = preset {
        no_dir_on_the_way(&preset, made, true).map_err(|message| EntryError {
            entry: units.clone(),
            message,
        })?;
        acts.extend(parents(planned, &units, &preset.missing));
        acts.push(Action {
            entry: units.clone(),
            path: preset.inner,
            change: Change::Append {
                data: block.into_bytes(),
                create: !preset.host.exists(),
            },
        });
    }
    Ok(acts)
}
