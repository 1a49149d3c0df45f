//! Planning one entry: what is at its path (or would be, after earlier entries), and the
//! actions that make it as the config says.

use super::*;
/// What `c` makes at inner path `at` (`None`: not known, or made elsewhere). A symbolic
/// link leads to a directory when the root or an earlier entry (`made`) says its target is
/// one.
pub(crate) fn planned_kind(
    c: &Change,
    at: &str,
    root: &Root,
    made: &HashMap<String, Made>,
) -> Option<Made> {
    match c {
        c if c.makes_dir() => Some(Made::Dir),
        Change::WriteFile { .. }
        | Change::Hardlink { .. }
        | Change::Append { create: true, .. } => Some(Made::Other),
        Change::Symlink { target, .. } => {
            let dir = at.rsplit_once('/').map_or("", |(d, _)| d);
            let joined = if target.starts_with('/') {
                target.clone()
            } else {
                format!("{dir}/{target}")
            };
            let r = root.resolve(&joined).ok()?;
            let dir = match made.get(&r.inner) {
                Some(m) => *m != Made::Other,
                None => std::fs::metadata(&r.host).ok()?.is_dir(),
            };
            Some(if dir { Made::LinkToDir } else { Made::Other })
        }
        _ => None,
    }
}

/// A file entry resolved and planned ahead of the others.
pub(crate) type PlannedFile = Result<(Resolved, Result<Option<Change>, String>), String>;

pub(crate) fn plan_file(
    cfg: &Config,
    i: usize,
    entry: &JsonPath,
    fetched: &Fetched,
    // `None`: nothing is there by the time of this entry (planning).
    host: Option<&Path>,
    owners: &Owners,
    first_run: bool,
) -> Result<Option<Change>, String> {
    let f = &cfg.storage.files[i];
    // An empty source is contents all the same: upstream writes an empty file (with the
    // overwrite rules of contents), fetching and checking nothing.
    let base = match f.contents.source.as_deref() {
        Some("") => Some(Vec::new().into()),
        _ => fetched.get(&entry.key("contents")).cloned(),
    };
    let mut appends = Content::default();
    for j in 0..f.append.len() {
        if let Some(d) = fetched.get(&entry.key("append").index(j)) {
            appends.push(d.clone());
        }
    }
    // The contents given (if any), then the fragments.
    let whole = |base: &Option<crate::fetch::blob::Blob>| {
        let mut c = Content::default();
        if let Some(b) = base {
            c.push(b.clone());
        }
        for b in &appends.0 {
            c.push(b.clone());
        }
        c
    };
    let overwrite = f.overwrite == Some(true);
    let (uid, gid) = ids(owners, &f.user, &f.group)?;
    let mode = f.mode.map(mask);
    let (kind, meta) = host.map_or((Kind::None, None), observe);
    // (Looked up only where a file is made: not on a run that finds everything in place.)
    let new_gid = || gid.or_else(|| host.and_then(setgid_parent)).unwrap_or(0);
    let create = |data: Content, replace: bool| Change::WriteFile {
        data,
        mode: mode.unwrap_or(0o644),
        uid: uid.unwrap_or(0),
        gid: new_gid(),
        replace,
    };
    match kind {
        Kind::None => Ok(Some(create(whole(&base), false))),
        Kind::Dir | Kind::Symlink | Kind::Other => {
            if overwrite {
                Ok(Some(create(whole(&base), true)))
            } else {
                Err("a non-regular file is in the way; set overwrite to replace it".into())
            }
        }
        Kind::File => {
            let (Some(meta), Some(host)) = (meta, host) else {
                unreachable!("a file is observed at a path");
            };
            let cur_mode = meta.permissions().mode() & 0o7777;
            let (cur_uid, cur_gid) = (meta.uid(), meta.gid());
            if base.is_some() && !overwrite && first_run {
                return Err("file exists; set overwrite to replace it".into());
            }
            let io = |e: std::io::Error| e.to_string();
            if base.is_some() {
                let want = whole(&base);
                // Already as desired (contents, mode, owner): nothing to do. But a file with
                // other names is written anew, as upstream writes it: they keep the old one.
                let linked = first_run && meta.nlink() > 1 && overwrite;
                if linked || !want.same_as_file(host, meta.len()).map_err(io)? {
                    if overwrite {
                        return Ok(Some(create(want, true)));
                    }
                    return Err("file exists; set overwrite to replace it".into());
                }
            } else if !appends.is_empty() && (first_run || !appends.ends_file(host).map_err(io)?) {
                // Appending keeps the file's mode and owner unless the entry sets them.
                // A file with other names is appended to in place, as upstream appends (so
                // they see it too); any other is written anew whole, and renamed into place.
                if meta.nlink() > 1 {
                    return Ok(Some(Change::AppendFile {
                        data: appends,
                        mode: mode.unwrap_or(after_chown(cur_mode)),
                        uid: uid.unwrap_or(cur_uid),
                        gid: gid.unwrap_or(cur_gid),
                    }));
                }
                let mut data = Content::from(std::fs::read(host).map_err(io)?);
                for b in &appends.0 {
                    data.push(b.clone());
                }
                return Ok(Some(Change::WriteFile {
                    data,
                    mode: mode.unwrap_or(after_chown(cur_mode)),
                    uid: uid.unwrap_or(cur_uid),
                    gid: gid.unwrap_or(cur_gid),
                    replace: true,
                }));
            }
            let replaced_defaults = base.is_some() && overwrite;
            let want_mode =
                (mode.or(replaced_defaults.then_some(0o644))).or(Some(after_chown(cur_mode)));
            let want_uid = uid.or(replaced_defaults.then_some(0));
            let want_gid = gid.or(replaced_defaults.then(new_gid));
            Ok(attrs(
                cur_mode, cur_uid, cur_gid, want_mode, want_uid, want_gid,
            ))
        }
    }
}

/// The mode a regular file is left with once upstream has set its owner (even to the owner
/// it has), which it does for every file entry before it sets the mode the entry gives, if
/// any: Linux clears set-user-ID on a chown, and set-group-ID where the group may execute.
pub(crate) fn after_chown(mode: u32) -> u32 {
    let mut m = mode & !0o4000;
    if m & 0o010 != 0 {
        m &= !0o2000;
    }
    m
}

/// The group of the directory that `host` is (or will be) made in, when that directory is
/// set-group-ID: the kernel gives what is made there its group (and a directory the bit),
/// and upstream then sets the owner it finds. Directories still to be made on the way get
/// the same from the nearest existing one.
pub(crate) fn setgid_parent(host: &Path) -> Option<u32> {
    let meta = host
        .ancestors()
        .skip(1)
        .find_map(|d| std::fs::metadata(d).ok())?;
    (meta.is_dir() && meta.mode() & 0o2000 != 0).then(|| meta.gid())
}

/// The attribute change needed, if any.
pub(crate) fn attrs(
    mode: u32,
    uid: u32,
    gid: u32,
    want_mode: Option<u32>,
    want_uid: Option<u32>,
    want_gid: Option<u32>,
) -> Option<Change> {
    let m = want_mode.filter(|w| *w != mode);
    let u = want_uid.filter(|w| *w != uid);
    let g = want_gid.filter(|w| *w != gid);
    (m.is_some() || u.is_some() || g.is_some()).then_some(Change::SetAttrs {
        mode: m,
        uid: u.or(g.map(|_| uid)),
        gid: g.or(u.map(|_| gid)),
    })
}

pub(crate) fn plan_dir(
    cfg: &Config,
    i: usize,
    host: &Path,
    owners: &Owners,
    planned: &HashSet<String>,
    first_run: bool,
) -> Result<Option<Change>, String> {
    let d = &cfg.storage.directories[i];
    let overwrite = d.overwrite == Some(true);
    let (uid, gid) = ids(owners, &d.user, &d.group)?;
    let mode = d.mode.map(mask);
    // In a set-group-ID directory a new one takes its group, and the bit (which a mode
    // given replaces).
    let inherited = setgid_parent(host);
    let create = |replace| Change::CreateDir {
        mode: mode.unwrap_or(if inherited.is_some() { 0o2755 } else { 0o755 }),
        uid: uid.unwrap_or(0),
        gid: gid.or(inherited).unwrap_or(0),
        replace,
    };
    match observe(host) {
        (Kind::None, _) if planned.contains(&d.path) => Ok(None),
        (Kind::None, _) => Ok(Some(create(false))),
        (Kind::Dir, Some(m)) => {
            let empty = || {
                std::fs::read_dir(host)
                    .map(|mut r| r.next().is_none())
                    .unwrap_or(true)
            };
            // Upstream empties it on every run; flint on the first (later runs find the
            // entries the config put in it since).
            if overwrite && first_run && !empty() {
                return Ok(Some(create(true)));
            }
            let defaults = overwrite;
            Ok(attrs(
                m.permissions().mode() & 0o7777,
                m.uid(),
                m.gid(),
                mode.or(defaults.then_some(0o755)),
                uid.or(defaults.then_some(0)),
                gid.or(defaults.then_some(0)),
            ))
        }
        _ if overwrite => Ok(Some(create(true))),
        _ => Err(
            "something other than a directory is in the way; set overwrite to replace it".into(),
        ),
    }
}

pub(crate) fn plan_link(
    cfg: &Config,
    i: usize,
    host: &Path,
    root: &Root,
    owners: &Owners,
    planned: &HashSet<String>,
    made: &HashMap<String, Made>,
) -> Result<Option<Change>, String> {
    let l = &cfg.storage.links[i];
    let overwrite = l.overwrite == Some(true);
    let target = l.target.clone().unwrap_or_default();
    let (kind, meta) = observe(host);
    if l.hard == Some(true) {
        return plan_hard_link(&target, overwrite, host, (kind, meta), root, planned, made);
    }
    // Without an owner, the link gets the owner of what it points to (as upstream does).
    // As upstream, the owner of whatever the new link reaches when followed by the kernel
    // from its directory: an absolute target is a host path there (upstream stats the link).
    let pointed = || -> (u32, u32) {
        let dir = host.parent().unwrap_or(Path::new("/"));
        std::fs::metadata(dir.join(&target)).map_or((0, 0), |m| (m.uid(), m.gid()))
    };
    // The owner's names are looked up only for a link that gets made: upstream leaves a
    // link with the same target alone without looking them up, so an unknown name there
    // is no error.
    let owner = || -> Result<(u32, u32), String> {
        let (uid, gid) = ids(owners, &l.user, &l.group)?;
        let (pu, pg) = pointed();
        Ok((uid.unwrap_or(pu), gid.unwrap_or(pg)))
    };
    let create = |replace, (uid, gid): (u32, u32)| {
        Ok(Some(Change::Symlink {
            target: target.clone(),
            uid,
            gid,
            replace,
        }))
    };
    match (kind, meta) {
        (Kind::None, _) => create(false, owner()?),
        (Kind::Symlink, Some(m)) => {
            let cur = std::fs::read_link(host).map_err(|e| e.to_string())?;
            let same = flint_ignition::validate::paths::clean(&cur.to_string_lossy())
                == flint_ignition::validate::paths::clean(&target);
            if same && !overwrite {
                // Nothing changes, not even the owner (as upstream).
                Ok(None)
            } else if same {
                // Upstream removes and makes it again, with the owner the config gives;
                // flint only when that owner is not already the link's.
                let wanted = owner()?;
                if wanted == (m.uid(), m.gid()) {
                    Ok(None)
                } else {
                    create(true, wanted)
                }
            } else if overwrite {
                create(true, owner()?)
            } else {
                Err(
                    "a symlink with another target is in the way; set overwrite to replace it"
                        .into(),
                )
            }
        }
        _ if overwrite => create(true, owner()?),
        _ => {
            Err("something other than a symlink is in the way; set overwrite to replace it".into())
        }
    }
}

/// Refuses a path the units step writes when a directory stands there, or a file on the
/// way to it: found in the root, or (planning) made by an earlier entry (`made`).
/// `follows`: the write opens the path (an append), so a link to a directory is one; a
/// rename replaces the link.
pub(crate) fn no_dir_on_the_way(
    r: &Resolved,
    made: &HashMap<String, Made>,
    follows: bool,
) -> Result<(), String> {
    let dir_there = match follows {
        true => r.host.is_dir() || made.get(&r.inner).is_some_and(|m| *m != Made::Other),
        false => matches!(observe(&r.host).0, Kind::Dir) || made.get(&r.inner) == Some(&Made::Dir),
    };
    if dir_there {
        return Err(format!("{}: a directory is there", r.inner));
    }
    no_file_on_the_way(&r.inner, made)
}

/// Refuses inner path `inner` when an earlier entry makes something other than a
/// directory (`made`) on the way to it.
pub(crate) fn no_file_on_the_way(inner: &str, made: &HashMap<String, Made>) -> Result<(), String> {
    match ancestors(inner).find(|p| made.get(*p) == Some(&Made::Other)) {
        Some(p) => Err(format!("{p} is not a directory")),
        None => Ok(()),
    }
}

pub(crate) fn parents(
    planned: &mut HashSet<String>,
    entry: &JsonPath,
    missing: &[String],
) -> Vec<Action> {
    missing
        .iter()
        .filter(|m| planned.insert((*m).clone()))
        .map(|m| Action {
            entry: entry.clone(),
            path: m.clone(),
            change: Change::CreateParent,
        })
        .collect()
}

/// A hard link: its target is resolved in the root and must be something the kernel links
/// (no directory), there or made by an earlier entry.
fn plan_hard_link(
    target: &str,
    overwrite: bool,
    host: &Path,
    (kind, meta): (Kind, Option<std::fs::Metadata>),
    root: &Root,
    planned: &HashSet<String>,
    made: &HashMap<String, Made>,
) -> Result<Option<Change>, String> {
    // A hard link's target is a path in the root even when it is relative (upstream
    // joins it to the root, `..` stopping there): unlike a symbolic link's, it is not
    // read from the link's directory.
    let t = root.resolve(&flint_ignition::validate::paths::clean(&format!(
        "/{target}"
    )))?;
    let tmeta = match std::fs::symlink_metadata(&t.host) {
        Ok(m) => Some(m),
        // Not there yet, but an earlier entry makes it a directory, or this one makes it
        // on its way (a link below its own target), when planning.
        Err(_)
            if made.get(&t.inner) == Some(&Made::Dir)
                || (host != t.host && host.starts_with(&t.host)) =>
        {
            return Err(format!(
                "hard link target {target} is a directory: the kernel links no directories"
            ));
        }
        // Not there yet, but an earlier entry creates it (when planning).
        Err(_) if planned.contains(&t.inner) => None,
        Err(_) => return Err(format!("hard link target {target} does not exist")),
    };
    // With overwrite, upstream removes what is at the path (all of it) before linking:
    // a target there, or below it, is gone by then and the link fails.
    if overwrite && !matches!(kind, Kind::None) && t.host.starts_with(host) {
        return Err(format!(
            "hard link target {target} is removed with what overwrite removes at the link's path"
        ));
    }
    let same = match (&meta, &tmeta) {
        (Some(m), Some(tm)) => m.ino() == tm.ino() && m.dev() == tm.dev(),
        _ => false,
    };
    // What the run would make the kernel refuse (EPERM), found before anything is written.
    if tmeta.as_ref().is_some_and(|m| m.is_dir()) && (!same || overwrite) {
        return Err(format!(
            "hard link target {target} is a directory: the kernel links no directories"
        ));
    }
    match (kind, meta) {
        (Kind::None, _) => Ok(Some(Change::Hardlink {
            target: t.inner,
            replace: false,
        })),
        _ if same => Ok(None),
        _ if overwrite => Ok(Some(Change::Hardlink {
            target: t.inner,
            replace: true,
        })),
        _ => Err("something else is at the hard link's path; set overwrite to replace it".into()),
    }
}
