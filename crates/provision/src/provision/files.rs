//! The files stage for files, directories and links: for each entry, observe what the root
//! holds, decide what must change, and (when applying) change it and check the result.
//! Entries run parents first (by depth), hard links last, as upstream orders them.
//!
//! Where upstream would fail on a re-run (contents over an existing file without
//! `overwrite`), an entry whose desired state is already there is left alone: a second apply
//! of the same config changes nothing.

use super::content::Content;
pub use super::entry::EntryError;
use super::owners::Owners;
use super::resources::Fetched;
use super::root::{Resolved, Root};
use flint_go::tree::JsonPath;
use flint_ignition::types::{Config, NodeGroup, NodeUser};
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// One change, described for `plan` and carried out by `apply`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub entry: JsonPath,
    /// The path inside the root.
    pub path: String,
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    CreateParent,
    /// Writes (creating or replacing) a regular file.
    WriteFile {
        data: Content,
        mode: u32,
        uid: u32,
        gid: u32,
        replace: bool,
    },
    /// Appends `data` to the regular file there, in place (its other names see it too),
    /// then sets its owner and mode.
    AppendFile {
        data: Content,
        mode: u32,
        uid: u32,
        gid: u32,
    },
    /// Changes mode or owner of what is there.
    SetAttrs {
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
    },
    CreateDir {
        mode: u32,
        uid: u32,
        gid: u32,
        replace: bool,
    },
    Symlink {
        target: String,
        uid: u32,
        gid: u32,
        replace: bool,
    },
    Hardlink {
        target: String,
        replace: bool,
    },
    Remove,
    /// Appends to a file, creating it (0644, root:root) when missing; an existing file keeps
    /// its mode and owner.
    Append {
        data: Vec<u8>,
        create: bool,
    },
    /// Removes a unit's enablement links (`systemctl disable`); `path` is the unit.
    Disable,
}

impl Change {
    /// Whether carrying it out may remove or replace what is at its path (which could be a
    /// directory other entries were resolved through).
    fn replaces(&self) -> bool {
        match self {
            Change::CreateParent
            | Change::SetAttrs { .. }
            | Change::Append { .. }
            | Change::AppendFile { .. } => false,
            Change::WriteFile { replace, .. }
            | Change::CreateDir { replace, .. }
            | Change::Symlink { replace, .. }
            | Change::Hardlink { replace, .. } => *replace,
            Change::Remove | Change::Disable => true,
        }
    }

    /// Whether it makes a directory at its path.
    pub fn makes_dir(&self) -> bool {
        matches!(self, Change::CreateParent | Change::CreateDir { .. })
    }
}

impl Action {
    /// Whether carrying it out may remove or replace what was at its path.
    pub fn replaces(&self) -> bool {
        self.change.replaces()
    }

    fn owner(owners: &Owners, uid: u32, gid: u32) -> String {
        format!("{}:{}", owners.user_name(uid), owners.group_name(gid))
    }

    /// The plan line: "create file /etc/hostname (5 bytes, 0644, root:root)".
    pub fn describe(&self, owners: &Owners) -> String {
        let p = &self.path;
        match &self.change {
            Change::CreateParent => format!("create directory {p} (0755, root:root)"),
            Change::WriteFile {
                data,
                mode,
                uid,
                gid,
                replace,
            } => format!(
                "{} file {p} ({} bytes, {mode:04o}, {})",
                if *replace { "replace" } else { "create" },
                data.len(),
                Self::owner(owners, *uid, *gid)
            ),
            Change::AppendFile {
                data,
                mode,
                uid,
                gid,
            } => format!(
                "append {} bytes to file {p} ({mode:04o}, {})",
                data.len(),
                Self::owner(owners, *uid, *gid)
            ),
            Change::SetAttrs { mode, uid, gid } => {
                let mut parts = Vec::new();
                if let Some(m) = mode {
                    parts.push(format!("mode {m:04o}"));
                }
                if uid.is_some() || gid.is_some() {
                    let u = uid.map_or("-".into(), |u| owners.user_name(u));
                    let g = gid.map_or("-".into(), |g| owners.group_name(g));
                    parts.push(format!("owner {u}:{g}"));
                }
                format!("set {} of {p}", parts.join(", "))
            }
            Change::CreateDir {
                mode,
                uid,
                gid,
                replace,
            } => format!(
                "{} directory {p} ({mode:04o}, {})",
                if *replace { "replace" } else { "create" },
                Self::owner(owners, *uid, *gid)
            ),
            Change::Symlink {
                target, replace, ..
            } => format!(
                "{} symlink {p} -> {target}",
                if *replace { "replace" } else { "create" }
            ),
            Change::Hardlink { target, replace } => format!(
                "{} hard link {p} => {target}",
                if *replace { "replace" } else { "create" }
            ),
            Change::Remove => format!("remove {p}"),
            Change::Append { data, create: true } => {
                format!("create file {p} ({} bytes, 0644, root:root)", data.len())
            }
            Change::Append { data, .. } => format!("append {} bytes to {p}", data.len()),
            Change::Disable => format!("disable unit {p}"),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self.change {
            Change::CreateParent => "create-directory",
            Change::WriteFile { .. } => "write-file",
            Change::AppendFile { .. } => "append",
            Change::SetAttrs { .. } => "set-attributes",
            Change::CreateDir { .. } => "create-directory",
            Change::Symlink { .. } => "create-symlink",
            Change::Hardlink { .. } => "create-hardlink",
            Change::Remove => "remove",
            Change::Append { create: true, .. } => "write-file",
            Change::Append { .. } => "append",
            Change::Disable => "disable-unit",
        }
    }
}

enum Kind {
    None,
    File,
    Dir,
    Symlink,
    Other,
}

fn observe(host: &Path) -> (Kind, Option<std::fs::Metadata>) {
    match std::fs::symlink_metadata(host) {
        Err(_) => (Kind::None, None),
        Ok(m) => {
            let ft = m.file_type();
            let k = if ft.is_symlink() {
                Kind::Symlink
            } else if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                Kind::File
            } else {
                Kind::Other
            };
            (k, Some(m))
        }
    }
}

/// The mode bits applied. Configs older than 3.6.0 lost their setuid, setgid and sticky bits
/// when they were upgraded (`ignition::upgrade`); from 3.6.0 on they are applied.
fn mask(mode: i64) -> u32 {
    (mode as u32) & 0o7777
}

fn ids(
    owners: &Owners,
    user: &NodeUser,
    group: &NodeGroup,
) -> Result<(Option<u32>, Option<u32>), String> {
    // An id of -1 (as the kernel reads it: 4294967295 too) leaves the owner as it is.
    let uid = match (&user.id, &user.name) {
        (Some(id), _) if *id as u32 == u32::MAX => None,
        (Some(id), _) => Some(*id as u32),
        (None, Some(n)) if !n.is_empty() => Some(owners.uid(n)?),
        _ => None,
    };
    let gid = match (&group.id, &group.name) {
        (Some(id), _) if *id as u32 == u32::MAX => None,
        (Some(id), _) => Some(*id as u32),
        (None, Some(n)) if !n.is_empty() => Some(owners.gid(n)?),
        _ => None,
    };
    Ok((uid, gid))
}

/// The files stage's entries in the order they run, each with its path as the root's links
/// resolve it before anything is written: upstream resolves every path first and orders by
/// the depth of the result, so `/lnk/f` (with `/lnk -> /etc`) is `/etc/f` even when an
/// entry before it replaces `/lnk`. On a later run such an entry no longer resolves (the
/// config's own file stands where its link was) and is left out: the first run wrote it.
fn ordered(cfg: &Config, root: &Root, first_run: bool) -> Vec<(usize, JsonPath, String)> {
    let st = JsonPath::root().key("storage");
    let mut v: Vec<(usize, JsonPath, String, bool)> = Vec::new();
    for (i, d) in cfg.storage.directories.iter().enumerate() {
        v.push((0, st.key("directories").index(i), d.path.clone(), false));
    }
    for (i, f) in cfg.storage.files.iter().enumerate() {
        v.push((1, st.key("files").index(i), f.path.clone(), false));
    }
    for (i, l) in cfg.storage.links.iter().enumerate() {
        v.push((
            2,
            st.key("links").index(i),
            l.path.clone(),
            l.hard == Some(true),
        ));
    }
    let mut through_own_entry = Vec::new();
    for (n, e) in v.iter_mut().enumerate() {
        // A path that does not resolve yet fails where it runs, naming its entry.
        match root.resolve(&e.2) {
            Ok(r) => e.2 = r.inner,
            Err(m) => through_own_entry.push((n, m)),
        }
    }
    if !first_run {
        let own: HashSet<String> = v
            .iter()
            .map(|e| format!("{} is not a directory", e.2))
            .collect();
        for (n, _) in through_own_entry
            .iter()
            .rev()
            .filter(|(_, m)| own.contains(m))
        {
            v.remove(*n);
        }
    }
    let depth = |p: &str| p.split('/').filter(|s| !s.is_empty()).count();
    // By depth, then the hard links in the config's order (a hard link may need an earlier
    // one as its target, at any depth), as upstream orders them. Within a depth, upstream's
    // sort keeps the config's order (directories, files, links) up to 12 entries, and some
    // order of its own beyond: there flint goes by path, so that the entries of one
    // directory are written together, which filesystems handle much faster than visiting
    // directories round-robin. The order shows where an entry depends on another of its
    // depth: a link's default owner is its target's, a name is looked up in a database an
    // earlier entry wrote.
    let by_path = v.iter().filter(|e| !e.3).count() > 12;
    v.sort_by(|a, b| match (a.3, b.3) {
        (false, false) if by_path => (depth(&a.2), &a.2).cmp(&(depth(&b.2), &b.2)),
        (false, false) => depth(&a.2).cmp(&depth(&b.2)),
        (x, y) => x.cmp(&y),
    });
    v.into_iter().map(|(k, j, p, _)| (k, j, p)).collect()
}

/// Two entries whose paths lead to the same place once the root's links are followed are an
/// error, found (as upstream finds it) before anything is written.
fn same_place(cfg: &Config, root: &Root) -> Result<(), EntryError> {
    let st = JsonPath::root().key("storage");
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    let entries = (cfg.storage.directories.iter().enumerate())
        .map(|(i, d)| (st.key("directories").index(i), &d.path))
        .chain(
            (cfg.storage.files.iter().enumerate())
                .map(|(i, f)| (st.key("files").index(i), &f.path)),
        )
        .chain(
            (cfg.storage.links.iter().enumerate())
                .map(|(i, l)| (st.key("links").index(i), &l.path)),
        );
    for (entry, path) in entries {
        let Ok(r) = root.resolve(path) else { continue };
        if let Some(other) = seen.insert(r.inner.clone(), path.clone()) {
            return Err(EntryError {
                entry,
                message: format!(
                    "{path} resolves to {} through the root's symbolic links, where {other} also resolves",
                    r.inner
                ),
            });
        }
    }
    Ok(())
}

/// Plans (and with `apply`, carries out) the files, directories and links of `cfg`.
/// `first_run` (no result record in the root yet): existing files meet the config as they
/// meet upstream's (contents over a file without `overwrite` fail, appends always append);
/// on later runs an entry already in its desired state is left alone.
/// What surrounds the entries in a run of the files stage.
pub struct Around<'a> {
    /// Entries left out (the check after apply leaves out what cannot be planned again).
    pub skip: &'a HashSet<JsonPath>,
    /// Planning: what the SSH keys step, which runs first, makes (directory or not).
    pub keys_made: &'a HashMap<String, bool>,
}

pub fn run(
    cfg: &Config,
    fetched: &Fetched,
    root: &Root,
    owners: &Owners,
    apply: bool,
    first_run: bool,
    around: Around,
) -> Result<Vec<Action>, EntryError> {
    let Around { skip, keys_made } = around;
    use rayon::prelude::*;
    same_place(cfg, root)?;
    let mut order = ordered(cfg, root, first_run);
    if !skip.is_empty() {
        order.retain(|(_, entry, _)| !skip.contains(entry));
    }
    let index = |entry: &JsonPath| match entry.segs().last() {
        Some(flint_go::tree::Seg::Index(i)) => *i,
        _ => 0,
    };
    // Planning without applying only reads the disk, and a file's plan depends on no earlier
    // entry (only directories and links look at what earlier entries would create): the
    // files, a stat, open, read and compare each, are planned on all cores first.
    let mut early: Vec<Option<PlannedFile>> = if apply {
        Vec::new()
    } else {
        order
            .par_iter()
            .map(|(kind, entry, path)| {
                (*kind == 1).then(|| {
                    root.resolve(path).map(|r| {
                        let c = plan_file(
                            cfg,
                            index(entry),
                            entry,
                            fetched,
                            Some(&r.host),
                            owners,
                            first_run,
                        );
                        (r, c)
                    })
                })
            })
            .collect()
    };
    let mut planned_dirs: HashSet<String> = HashSet::new();
    // Symbolic links to absolute paths this run makes (or, planning, would make).
    let mut made_links: HashSet<String> = HashSet::new();
    // Planning: whether what earlier entries would make is a directory, where that is known.
    // A later entry through what is not fails in the run (which resolves its path once they
    // are made), and so does a hard link to what is.
    let mut made: HashMap<String, Made> = HashMap::new();
    // Planning: paths whose contents earlier entries remove (they replace what is there).
    let mut wiped: HashSet<String> = HashSet::new();
    let mut actions = Vec::new();
    // Upstream looks a name up as it makes each entry, in the databases as earlier entries
    // left them: once an entry writes one (or what leads to it), later entries see it.
    let databases = Owners::databases(root);
    let mut owners = std::borrow::Cow::Borrowed(owners);
    for (n, (kind, entry, path)) in order.into_iter().enumerate() {
        let fail = |message: String| EntryError {
            entry: entry.clone(),
            message,
        };
        let mut pre = early.get_mut(n).and_then(Option::take);
        if matches!(owners, std::borrow::Cow::Owned(_)) {
            pre = None;
        }
        // Planning: below what an earlier entry replaces (a directory emptied by overwrite,
        // a link put in a directory's place), nothing is left by the time of this entry.
        let inner = match &pre {
            Some(Ok((r, _))) => r.inner.as_str(),
            _ => path.as_str(),
        };
        let gone = !apply && ancestors(inner).any(|p| wiped.contains(p));
        if gone {
            pre = None;
        }
        let (r, file_change) = match pre {
            Some(p) => {
                let (r, c) = p.map_err(fail)?;
                (r, Some(c))
            }
            None => match root.resolve(&path) {
                Ok(r) => (r, None),
                // Planning: what stood in the way on the disk is below a path an earlier
                // entry empties or replaces; the run makes the way anew.
                Err(_) if gone => {
                    let under = |p: &&str| ancestors(p).any(|a| wiped.contains(a));
                    let missing = ancestors(&path).filter(under).map(String::from);
                    let r = Resolved {
                        host: root.host(&path),
                        inner: path.clone(),
                        missing: missing.collect(),
                    };
                    (r, None)
                }
                Err(e) => return Err(fail(e)),
            },
        };
        // The path was resolved before anything was written; a symbolic link this run made
        // since, with an absolute target, now stands on it. Upstream hands the kernel the
        // host path, which follows that link out of the root (and fails, or writes to the
        // host's own directories): flint refuses it before anything is written there.
        let through = ancestors(&path).find(|p| made_links.contains(*p));
        if let Some(link) = through {
            return Err(fail(format!(
                "{path} goes through {link}, a symbolic link to an absolute path made by an \
                 earlier entry, which would lead outside the root"
            )));
        }
        if !apply {
            no_file_on_the_way(&r.inner, &made).map_err(fail)?;
        }
        let idx = index(&entry);
        // Planning: the SSH keys step runs first, and what it makes (`.ssh`, the keys file)
        // is in the way of an entry there without overwrite, as in the run.
        if !apply && let Some(&is_dir) = keys_made.get(&r.inner) {
            let (overwrite, in_the_way) = match kind {
                0 => (cfg.storage.directories[idx].overwrite, !is_dir),
                1 => (cfg.storage.files[idx].overwrite, true),
                _ => (cfg.storage.links[idx].overwrite, true),
            };
            if in_the_way && overwrite != Some(true) {
                return Err(fail(format!(
                    "{} is made by the SSH keys step, which runs first; set overwrite to replace it",
                    r.inner
                )));
            }
        }
        let mut entry_actions = parents(&mut planned_dirs, &entry, &r.missing);
        let change = match kind {
            0 => plan_dir(cfg, idx, &r.host, &owners, &planned_dirs, first_run).map_err(fail)?,
            1 => match file_change {
                Some(c) => c.map_err(fail)?,
                None => {
                    let host = (!gone).then_some(r.host.as_path());
                    plan_file(cfg, idx, &entry, fetched, host, &owners, first_run)
                }
                .map_err(fail)?,
            },
            _ => plan_link(cfg, idx, &r.host, root, &owners, &planned_dirs, &made).map_err(fail)?,
        };
        if let Some(c) = change {
            if matches!(&c, Change::Symlink { target, .. } if target.starts_with('/')) {
                made_links.insert(r.inner.clone());
            }
            // Later entries may stand in or point at what earlier ones create.
            planned_dirs.insert(r.inner.clone());
            entry_actions.push(Action {
                entry: entry.clone(),
                path: r.inner.clone(),
                change: c,
            });
        }
        let rewrites = |a: &Action| {
            (databases.iter().enumerate())
                .filter_map(|(i, d)| Some((i, d.as_deref()?)))
                .find(|(_, d)| *d == a.path || ancestors(d).any(|p| p == a.path))
                .map(|(i, _)| i)
        };
        let touched: Vec<(usize, &Action)> = (entry_actions.iter())
            .filter_map(|a| Some((rewrites(a)?, a)))
            .collect();
        if apply {
            for a in &entry_actions {
                execute(a, root).map_err(|e| fail(format!("{}: {e}", a.path)))?;
            }
            if !touched.is_empty() {
                owners = std::borrow::Cow::Owned(Owners::read(root));
            }
        } else {
            for (which, a) in touched {
                let text = match &a.change {
                    Change::WriteFile { data, .. }
                        if databases[which].as_deref() == Some(&a.path) =>
                    {
                        let bytes = data.to_vec().map_err(|e| fail(e.to_string()))?;
                        String::from_utf8_lossy(&bytes).into_owned()
                    }
                    Change::AppendFile { data, .. } => {
                        let mut bytes = std::fs::read(root.host(&a.path)).unwrap_or_default();
                        bytes.extend(data.to_vec().map_err(|e| fail(e.to_string()))?);
                        String::from_utf8_lossy(&bytes).into_owned()
                    }
                    Change::SetAttrs { .. } | Change::CreateParent => continue,
                    // Replaced by something that is no database (or emptied): no names.
                    _ => String::new(),
                };
                owners = std::borrow::Cow::Owned(owners.into_owned().with_database(which, &text));
            }
            note_made(&mut made, &entry_actions, root);
            wiped.extend(
                (entry_actions.iter())
                    .filter(|a| a.replaces())
                    .map(|a| a.path.clone()),
            );
        }
        actions.extend(entry_actions);
    }
    Ok(actions)
}

/// Planning: what an earlier entry makes at a path, where that is known.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Made {
    Dir,
    /// A symbolic link to a directory: a directory to a path through it, but a link to
    /// what replaces it (a rename, a hard link: neither follows it).
    LinkToDir,
    /// A file, a hard link, or a symbolic link to something other than a directory.
    Other,
}

/// The symbolic links `actions` make: target by inner path (what a plan follows where the
/// run will find them).
pub fn planned_links(actions: &[Action]) -> HashMap<String, String> {
    (actions.iter())
        .filter_map(|a| match &a.change {
            Change::Symlink { target, .. } => Some((a.path.clone(), target.clone())),
            _ => None,
        })
        .collect()
}

/// Records in `made` what `actions` make, where that is known.
pub fn note_made(made: &mut HashMap<String, Made>, actions: &[Action], root: &Root) {
    for a in actions {
        if let Some(m) = planned_kind(&a.change, &a.path, root, made) {
            made.insert(a.path.clone(), m);
        }
    }
}

/// The proper ancestors of inner path `p`, `/a` and `/a/b` for `/a/b/c`.
pub fn ancestors(p: &str) -> impl Iterator<Item = &str> {
    p.match_indices('/').skip(1).map(move |(at, _)| &p[..at])
}

/// What `c` makes at inner path `at` (`None`: not known, or made elsewhere). A symbolic
/// link leads to a directory when the root or an earlier entry (`made`) says its target is
/// one.
fn planned_kind(c: &Change, at: &str, root: &Root, made: &HashMap<String, Made>) -> Option<Made> {
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
type PlannedFile = Result<(Resolved, Result<Option<Change>, String>), String>;

fn plan_file(
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
fn after_chown(mode: u32) -> u32 {
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
fn setgid_parent(host: &Path) -> Option<u32> {
    let meta = host
        .ancestors()
        .skip(1)
        .find_map(|d| std::fs::metadata(d).ok())?;
    (meta.is_dir() && meta.mode() & 0o2000 != 0).then(|| meta.gid())
}

/// The attribute change needed, if any.
fn attrs(
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

fn plan_dir(
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

fn plan_link(
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
        return match (kind, meta) {
            (Kind::None, _) => Ok(Some(Change::Hardlink {
                target: t.inner,
                replace: false,
            })),
            _ if same => Ok(None),
            _ if overwrite => Ok(Some(Change::Hardlink {
                target: t.inner,
                replace: true,
            })),
            _ => {
                Err("something else is at the hard link's path; set overwrite to replace it".into())
            }
        };
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

fn remove_any(host: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(host) {
        Ok(m) if m.is_dir() => {
            super::refusals::guard(host)?;
            std::fs::remove_dir_all(host)
        }
        Ok(_) => std::fs::remove_file(host),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn chown(host: &Path, uid: Option<u32>, gid: Option<u32>) -> std::io::Result<()> {
    std::os::unix::fs::lchown(host, uid, gid)
}

/// Carries out one action; files are written atomically (a temporary file in the same
/// directory with mode and owner set, then renamed over).
fn execute(a: &Action, root: &Root) -> std::io::Result<()> {
    let host: PathBuf = root.host(&a.path);
    if a.change.replaces() {
        root.forget();
    }
    match &a.change {
        Change::CreateParent => {
            let inherited = setgid_parent(&host);
            std::fs::create_dir(&host)?;
            let mode = if inherited.is_some() { 0o2755 } else { 0o755 };
            std::fs::set_permissions(&host, std::fs::Permissions::from_mode(mode))?;
            chown(&host, Some(0), Some(inherited.unwrap_or(0)))
        }
        Change::WriteFile {
            data,
            mode,
            uid,
            gid,
            replace,
        } => {
            // A leftover of an interrupted run is simply overwritten.
            let (tmp, mut f) = super::open_temp(&host, 0o600)?;
            let staged = (|| {
                // Owner and mode through the open file, not the path: fewer lookups.
                data.write_to(&mut f)?;
                std::os::unix::fs::fchown(&f, Some(*uid), Some(*gid))?;
                // After the owner: chown clears the set-id bits.
                f.set_permissions(std::fs::Permissions::from_mode(*mode))?;
                drop(f);
                if *replace && std::fs::symlink_metadata(&host).is_ok_and(|m| m.is_dir()) {
                    super::refusals::guard(&host)?;
                    std::fs::remove_dir_all(&host)?;
                }
                std::fs::rename(&tmp, &host)
            })();
            // A failed write (a full disk) leaves nothing behind, not even the temporary file.
            if staged.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            staged
        }
        Change::AppendFile {
            data,
            mode,
            uid,
            gid,
        } => {
            use std::io::Seek;
            use std::os::unix::fs::OpenOptionsExt;
            // What stands at the path was planned for: a link found there now is not followed.
            // At the end by position, not O_APPEND, which the kernel's copy between files
            // (a spooled resource) refuses.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&host)?;
            f.seek(std::io::SeekFrom::End(0))?;
            data.write_to(&mut f)?;
            std::os::unix::fs::fchown(&f, Some(*uid), Some(*gid))?;
            f.set_permissions(std::fs::Permissions::from_mode(*mode))
        }
        Change::SetAttrs { mode, uid, gid } => {
            if uid.is_some() || gid.is_some() {
                chown(&host, *uid, *gid)?;
            }
            if let Some(m) = mode {
                std::fs::set_permissions(&host, std::fs::Permissions::from_mode(*m))?;
            }
            Ok(())
        }
        Change::CreateDir {
            mode,
            uid,
            gid,
            replace,
        } => {
            if *replace {
                remove_any(&host)?;
            }
            std::fs::create_dir(&host)?;
            std::fs::set_permissions(&host, std::fs::Permissions::from_mode(*mode))?;
            chown(&host, Some(*uid), Some(*gid))
        }
        Change::Symlink {
            target,
            uid,
            gid,
            replace,
        } => {
            if *replace {
                remove_any(&host)?;
            }
            std::os::unix::fs::symlink(target, &host)?;
            chown(&host, Some(*uid), Some(*gid))
        }
        Change::Hardlink { target, replace } => {
            if *replace {
                remove_any(&host)?;
            }
            std::fs::hard_link(root.host(target), &host)
        }
        Change::Remove => remove_any(&host),
        Change::Append { data, .. } => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            // What stands at the path was planned for (a regular file, or the preset file
            // reached inside the root): a link found there now is not followed.
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&host)?;
            f.write_all(data)
        }
        Change::Disable => disable_unit(&root.dir, &a.path),
    }
}

/// Actions that make `path` a regular file with `data` (0644, root:root).
fn ensure_file(
    root: &Root,
    planned: &mut HashSet<String>,
    made: &HashMap<String, Made>,
    entry: &JsonPath,
    path: &str,
    data: &[u8],
    first_run: bool,
) -> Result<Vec<Action>, String> {
    let r = root.resolve(path)?;
    // Upstream renames the new contents into place, which a directory there refuses;
    // nothing under it is removed.
    no_dir_on_the_way(&r, made, false)?;
    let mut out = parents(planned, entry, &r.missing);
    let current = match observe(&r.host) {
        (Kind::File, Some(m)) => std::fs::read(&r.host)
            .ok()
            // (A file with other names is written anew, as upstream writes it: they keep
            // the old one.)
            .filter(|_| m.permissions().mode() & 0o7777 == 0o644 && m.uid() == 0 && m.gid() == 0)
            .filter(|_| !first_run || m.nlink() == 1),
        _ => None,
    };
    if current.as_deref() != Some(data) {
        let data = data.to_vec().into();
        let replace = !matches!(observe(&r.host).0, Kind::None);
        out.push(Action {
            entry: entry.clone(),
            path: r.inner,
            change: Change::WriteFile {
                data,
                mode: 0o644,
                uid: 0,
                gid: 0,
                replace,
            },
        });
    }
    Ok(out)
}

/// Refuses a path the units step writes when a directory stands there, or a file on the
/// way to it: found in the root, or (planning) made by an earlier entry (`made`).
/// `follows`: the write opens the path (an append), so a link to a directory is one; a
/// rename replaces the link.
fn no_dir_on_the_way(
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
fn no_file_on_the_way(inner: &str, made: &HashMap<String, Made>) -> Result<(), String> {
    match ancestors(inner).find(|p| made.get(*p) == Some(&Made::Other)) {
        Some(p) => Err(format!("{p} is not a directory")),
        None => Ok(()),
    }
}

fn parents(planned: &mut HashSet<String>, entry: &JsonPath, missing: &[String]) -> Vec<Action> {
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
pub const PRESET_PATH: &str = "/etc/systemd/system-preset/20-ignition.preset";

/// Whether systemd in the root counts `unit` as enabled (`systemctl --root R is-enabled`,
/// whose success also covers static and alias units, as upstream asks it). Without
/// systemctl: whether a `.wants`/`.requires` link of that name exists.
pub fn unit_enabled(root: &Path, unit: &str) -> bool {
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
fn counts_enabled(cfg: &Config, root: &Root, unit: &str, apply: bool) -> bool {
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
        Some(contents) if !apply && !in_place(contents) => {
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

/// The `.wants`/`.requires` links named `unit` under /etc/systemd/system of the root.
fn enablement_links(root: &Path, unit: &str) -> Vec<PathBuf> {
    let dir = root.join("etc/systemd/system");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".wants") || n.ends_with(".requires")
        })
        .map(|e| e.path().join(unit))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()))
        .collect()
}

/// Removes the enablement links of `unit` (`systemctl --root R disable`, as upstream; without
/// systemctl, the `.wants`/`.requires` links).
fn disable_unit(root: &Path, unit: &str) -> std::io::Result<()> {
    match std::process::Command::new("systemctl")
        .arg("--root")
        .arg(root)
        .args(["disable", unit])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(std::io::Error::other(format!(
            "systemctl disable {unit}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(_) => {
            for l in enablement_links(root, unit) {
                std::fs::remove_file(l)?;
            }
            Ok(())
        }
    }
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
pub fn run_units(
    cfg: &Config,
    root: &Root,
    apply: bool,
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
        if apply {
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
        let acts = match u.mask {
            // (Planning: through a file an entry makes, the mask's mkdir fails as the run's.)
            Some(true) => root.resolve(&unit_path).and_then(|r| {
                no_file_on_the_way(&r.inner, made)?;
                let mut acts = parents(&mut planned, &e, &r.missing);
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
            Some(false) => root.resolve(&unit_path).map(|r| {
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
        };
        step(&e, acts, &mut actions)?;
    }
    let entries = presets(cfg);
    if entries.is_empty() {
        return Ok(actions);
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
            if !counts_enabled(cfg, root, &unit, apply) {
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
        acts.extend(parents(&mut planned, &units, &preset.missing));
        acts.push(Action {
            entry: units.clone(),
            path: preset.inner,
            change: Change::Append {
                data: block.into_bytes(),
                create: !preset.host.exists(),
            },
        });
    }
    step(&units, Ok(acts), &mut actions)?;
    Ok(actions)
}
