//! Rules for files, directories and links: paths, modes, ownership, links below links, and
//! collisions with each other and with systemd units.

use super::paths::{check_path, clean};
use super::{Checker, DUPLICATE, resource};
use crate::types::{Config, NodeRef};
use crate::version::Version;
use flint_go::tree::JsonPath;
use std::collections::HashSet;

/// Messages of the storage-wide and config-wide rules, which `in_upstream_order` places.
pub(super) const UNIT_PATH_CONFLICT: &str = "path conflicts with systemd unit or dropin";
pub(super) const BELOW_LINK: &str = " path includes link in config";
pub(super) const LINK_TARGET_REQUIRED: &str = "link target is required";
pub(super) const HARD_LINK_TO_DIR: &str = "hard link target is a directory";
pub(super) const HARD_LINK_OWNER: &str = "user/group ignored for hard link";

pub(crate) const SPECIAL_BITS: &str =
    "setuid/setgid/sticky bits are not supported or functional in spec versions older than 3.6.0";

fn check_node_path(c: &mut Checker, n: &NodeRef<'_>, path: &JsonPath) {
    if let Some(e) = check_path(n.path) {
        c.error(path.key("path"), e);
    }
}

/// The owner's rules, which upstream checks after the entry's own (path, mode): the group
/// before the user, as its fields come.
fn check_owner(c: &mut Checker, n: &NodeRef<'_>, path: &JsonPath) {
    if n.group.id.is_some() && n.group.name.as_deref().is_some_and(|s| !s.is_empty()) {
        c.error(path.key("group"), "cannot set both id and name");
    }
    if n.user.id.is_some() && n.user.name.as_deref().is_some_and(|s| !s.is_empty()) {
        c.error(path.key("user"), "cannot set both id and name");
    }
}

fn check_mode(c: &mut Checker, mode: Option<i64>, path: &JsonPath) {
    let Some(m) = mode else { return };
    if !(0..=0o7777).contains(&m) {
        c.error(path.key("mode"), "illegal file mode");
    }
    if m & 0o7000 != 0 && !c.version.applies_special_mode_bits() {
        c.warning(path.key("mode"), SPECIAL_BITS);
    }
}

pub(super) fn check_nodes(c: &mut Checker, cfg: &Config, storage: &JsonPath) {
    let s = &cfg.storage;
    let (files, dirs, links) = (
        storage.key("files"),
        storage.key("directories"),
        storage.key("links"),
    );
    let kinds = [
        (&dirs, paths_of(&s.directories, |d| &d.path)),
        (&files, paths_of(&s.files, |f| &f.path)),
        (&links, paths_of(&s.links, |l| &l.path)),
    ];
    // Upstream's order: first its rules across the storage section (entries below a link,
    // link targets), then each entry's own rules, directories before files before links.
    check_links(c, cfg, &kinds);
    for (i, d) in s.directories.iter().enumerate() {
        let p = dirs.index(i);
        check_node_path(c, &d.node(), &p);
        check_mode(c, d.mode, &p);
        check_owner(c, &d.node(), &p);
    }
    // Files are checked on every core (a config may embed thousands, each URL read through);
    // their findings are reported in the order of the files whatever the thread count.
    let one = |(i, f): (usize, &crate::types::File)| {
        let mut c = Checker {
            version: c.version,
            options: c.options,
            issues: Vec::new(),
        };
        let p = files.index(i);
        check_node_path(&mut c, &f.node(), &p);
        check_mode(&mut c, f.mode, &p);
        if f.overwrite == Some(true) && f.contents.source.is_none() {
            c.error(
                p.key("overwrite"),
                "overwrite must be false if source is unspecified",
            );
        }
        check_owner(&mut c, &f.node(), &p);
        for (j, a) in f.append.iter().enumerate() {
            resource::check(&mut c, a, &p.key("append").index(j));
        }
        resource::check(&mut c, &f.contents, &p.key("contents"));
        c.issues
    };
    let per_file: Vec<Vec<super::Issue>> = crate::par::map_indexed(&s.files, one);
    c.issues.extend(per_file.into_iter().flatten());
    for (i, l) in s.links.iter().enumerate() {
        let p = links.index(i);
        check_node_path(c, &l.node(), &p);
        check_owner(c, &l.node(), &p);
    }

    // One path, one entry: directories first, then files, then links, as upstream orders them.
    let mut seen = HashSet::new();
    for (base, paths) in &kinds {
        for (i, p) in paths.iter().enumerate() {
            if !seen.insert(*p) {
                c.error(base.index(i), DUPLICATE);
            }
        }
    }

    // Units and drop-ins with contents own their paths under /etc/systemd/system.
    let mut unit_paths = HashSet::new();
    for u in &cfg.systemd.units {
        if u.contents.as_deref().is_some_and(|s| !s.is_empty()) {
            unit_paths.insert(format!("/etc/systemd/system/{}", u.name));
        }
        for d in &u.dropins {
            if d.contents.as_deref().is_some_and(|s| !s.is_empty()) {
                unit_paths.insert(format!("/etc/systemd/system/{}.d/{}", u.name, d.name));
            }
        }
    }
    if !unit_paths.is_empty() {
        // Upstream's config-wide rule goes over files, then directories, then links.
        let [dirs, files, links] = &kinds;
        for (base, paths) in [files, dirs, links] {
            for (i, p) in paths.iter().enumerate() {
                if unit_paths.contains(*p) {
                    c.error(base.index(i).key("path"), UNIT_PATH_CONFLICT);
                }
            }
        }
    }
}

fn paths_of<T>(items: &[T], path: impl Fn(&T) -> &String) -> Vec<&str> {
    items.iter().map(|x| path(x).as_str()).collect()
}

/// The storage section's rules across entries, in upstream's order: directories, then files
/// below a configured link; then each link, below another one, then its target.
fn check_links(c: &mut Checker, cfg: &Config, kinds: &[(&JsonPath, Vec<&str>); 3]) {
    let [(dirs, dir_paths), (files, file_paths), (links, link_paths)] = kinds;
    // Upstream compares the strings as given: a link at `/` has nothing below it (nothing
    // starts with `//`), and no path is cleaned first.
    let below_links = |c: &mut Checker, at: JsonPath, path: &str, kind: &str| {
        for l in link_paths {
            if path
                .strip_prefix(l)
                .is_some_and(|rest| rest.starts_with('/'))
            {
                c.error(at.clone(), format!("{kind}{BELOW_LINK}"));
            }
        }
    };
    for (i, d) in dir_paths.iter().enumerate() {
        below_links(c, dirs.index(i), d, "directory");
    }
    for (i, f) in file_paths.iter().enumerate() {
        below_links(c, files.index(i), f, "file");
    }
    for (i, l) in cfg.storage.links.iter().enumerate() {
        let p = links.index(i);
        below_links(c, p.clone(), &l.path, "link");
        let target = l.target.as_deref().unwrap_or("");
        // From 3.3 a link needs a target; before, a hard link without one is still checked
        // (its target is then its own path).
        if target.is_empty() && c.version >= Version::V3_3 {
            c.error(p.key("target"), LINK_TARGET_REQUIRED);
            continue;
        }
        if l.hard == Some(true) {
            let resolved = if target.starts_with('/') {
                clean(target)
            } else {
                // Upstream joins a relative hard-link target onto the link's own path.
                clean(&format!("{}/{}", l.path, target))
            };
            // Reported once for every directory entry at the target (duplicates included).
            for _ in dir_paths.iter().filter(|d| **d == resolved) {
                c.error(p.clone(), HARD_LINK_TO_DIR);
            }
            let owner = [
                ("user", "id", l.user.id.is_some()),
                ("user", "name", l.user.name.is_some()),
                ("group", "id", l.group.id.is_some()),
                ("group", "name", l.group.name.is_some()),
            ];
            for (who, what, set) in owner {
                if set {
                    c.warning(p.key(who).key(what), HARD_LINK_OWNER);
                }
            }
        }
    }
}
