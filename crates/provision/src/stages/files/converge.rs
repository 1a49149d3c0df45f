//! Which changes left after apply the config itself explains: what the units step changed
//! after an entry, hard links to targets replaced later, entries displaced by another
//! change. The check after apply leaves those out; anything else left is a failure.

use crate::stage::Planned;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::collections::HashSet;

/// the units and their drop-ins, and /etc (the record).
pub(super) fn written_dirs(config: &Config) -> Vec<String> {
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
pub(super) fn overridden_by_units(config: &Config, done: &[(Planned, bool)]) -> HashSet<JsonPath> {
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
pub(super) fn targets_replaced_later(config: &Config, done: &[(Planned, bool)]) -> Vec<JsonPath> {
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
pub(super) fn displaced(done: &[(Planned, bool)], left: &Planned) -> bool {
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
