//! The files stage for files, directories and links: for each entry, observe what the root
//! holds, decide what must change, and (when applying) change it and check the result.
//! Entries run parents first (by depth), hard links last, as upstream orders them.
//!
//! Where upstream would fail on a re-run (contents over an existing file without
//! `overwrite`), an entry whose desired state is already there is left alone: a second apply
//! of the same config changes nothing.

mod execute;
mod plan;

pub(crate) use execute::*;
pub(crate) use plan::*;

use super::content::Content;
use super::owners::Owners;
pub(crate) use crate::entry::EntryError;
use crate::resources::Fetched;
use crate::root::{Resolved, Root};
use crate::stage::Mode;
use flint_go::tree::JsonPath;
use flint_ignition::types::{Config, NodeGroup, NodeUser};
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// One change, described for `plan` and carried out by `apply`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Action {
    pub entry: JsonPath,
    /// The path inside the root.
    pub path: String,
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
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
    pub(crate) fn makes_dir(&self) -> bool {
        matches!(self, Change::CreateParent | Change::CreateDir { .. })
    }
}

impl Action {
    /// Whether carrying it out may remove or replace what was at its path.
    pub(crate) fn replaces(&self) -> bool {
        self.change.replaces()
    }

    fn owner(owners: &Owners, uid: u32, gid: u32) -> String {
        format!("{}:{}", owners.user_name(uid), owners.group_name(gid))
    }

    /// The plan line: "create file /etc/hostname (5 bytes, 0644, root:root)".
    pub(crate) fn describe(&self, owners: &Owners) -> String {
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

    pub(crate) fn kind(&self) -> &'static str {
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

pub(crate) enum Kind {
    None,
    File,
    Dir,
    Symlink,
    Other,
}

pub(crate) fn observe(host: &Path) -> (Kind, Option<std::fs::Metadata>) {
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
pub(crate) fn mask(mode: i64) -> u32 {
    (mode as u32) & 0o7777
}

pub(crate) fn ids(
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
pub(crate) fn ordered(
    cfg: &Config,
    root: &Root,
    first_run: bool,
) -> Vec<(usize, JsonPath, String)> {
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
pub(crate) fn same_place(cfg: &Config, root: &Root) -> Result<(), EntryError> {
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
pub(crate) struct Around<'a> {
    /// Entries left out (the check after apply leaves out what cannot be planned again).
    pub skip: &'a HashSet<JsonPath>,
    /// Planning: what the SSH keys step, which runs first, makes (directory or not).
    pub keys_made: &'a HashMap<String, bool>,
}

pub(crate) fn run(
    cfg: &Config,
    fetched: &Fetched,
    root: &Root,
    owners: &Owners,
    mode: Mode,
    first_run: bool,
    around: Around,
) -> Result<Vec<Action>, EntryError> {
    let Around { skip, keys_made } = around;
    same_place(cfg, root)?;
    let mut order = ordered(cfg, root, first_run);
    if !skip.is_empty() {
        order.retain(|(_, entry, _)| !skip.contains(entry));
    }
    // Planning without applying only reads the disk, and a file's plan depends on no earlier
    // entry (only directories and links look at what earlier entries would create): the
    // files, a stat, open, read and compare each, are planned on all cores first.
    let mut early = if mode.applies() {
        Vec::new()
    } else {
        plan_files_early(&order, cfg, fetched, root, owners, first_run)
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
        let gone = !mode.applies() && ancestors(inner).any(|p| wiped.contains(p));
        if gone {
            pre = None;
        }
        let (r, file_change) = resolve(pre, root, &path, gone, &wiped).map_err(fail)?;
        not_through_made_link(&path, &made_links).map_err(fail)?;
        if !mode.applies() {
            no_file_on_the_way(&r.inner, &made).map_err(fail)?;
        }
        let idx = index(&entry);
        if !mode.applies() {
            in_the_keys_way(cfg, kind, idx, &r.inner, keys_made).map_err(fail)?;
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
        let touched = touched_databases(&databases, &entry_actions);
        if mode.applies() {
            for a in &entry_actions {
                execute(a, root).map_err(|e| fail(format!("{}: {e}", a.path)))?;
            }
            if !touched.is_empty() {
                owners = std::borrow::Cow::Owned(Owners::read(root));
            }
        } else {
            for (which, a) in touched {
                let Some(text) = database_text(&databases, which, a, root).map_err(fail)? else {
                    continue;
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

/// A file's plan: the change it needs (none: as desired), or why it cannot be made.
type FileChange = Result<Option<Change>, String>;

/// Where an entry's path leads: as planned early (with the file's plan), or resolved now;
/// when planning below what an earlier entry empties or replaces (`gone`), the way the run
/// makes anew.
fn resolve(
    pre: Option<PlannedFile>,
    root: &Root,
    path: &str,
    gone: bool,
    wiped: &HashSet<String>,
) -> Result<(Resolved, Option<FileChange>), String> {
    if let Some(p) = pre {
        let (r, c) = p?;
        return Ok((r, Some(c)));
    }
    match root.resolve(path) {
        Ok(r) => Ok((r, None)),
        // Planning: what stood in the way on the disk is below a path an earlier entry
        // empties or replaces; the run makes the way anew.
        Err(_) if gone => {
            let under = |p: &&str| ancestors(p).any(|a| wiped.contains(a));
            let missing = ancestors(path).filter(under).map(String::from);
            let r = Resolved {
                host: root.host(path),
                inner: path.to_string(),
                missing: missing.collect(),
            };
            Ok((r, None))
        }
        Err(e) => Err(e),
    }
}

/// The path was resolved before anything was written; a symbolic link this run made since,
/// with an absolute target, may now stand on it. Upstream hands the kernel the host path,
/// which follows that link out of the root (and fails, or writes to the host's own
/// directories): flint refuses it before anything is written there.
fn not_through_made_link(path: &str, made_links: &HashSet<String>) -> Result<(), String> {
    match ancestors(path).find(|p| made_links.contains(*p)) {
        Some(link) => Err(format!(
            "{path} goes through {link}, a symbolic link to an absolute path made by an \
             earlier entry, which would lead outside the root"
        )),
        None => Ok(()),
    }
}

/// The index of an entry in its list.
fn index(entry: &JsonPath) -> usize {
    match entry.segs().last() {
        Some(flint_go::tree::Seg::Index(i)) => *i,
        _ => 0,
    }
}

/// Planning without applying only reads the disk, and a file's plan depends on no earlier
/// entry (only directories and links look at what earlier entries would create): the
/// files, a stat, open, read and compare each, are planned on all cores first.
fn plan_files_early(
    order: &[(usize, JsonPath, String)],
    cfg: &Config,
    fetched: &Fetched,
    root: &Root,
    owners: &Owners,
    first_run: bool,
) -> Vec<Option<PlannedFile>> {
    use rayon::prelude::*;
    (order.par_iter())
        .map(|(kind, entry, path)| {
            (*kind == 1).then(|| {
                root.resolve(path).map(|r| {
                    let host = Some(r.host.as_path());
                    let c = plan_file(cfg, index(entry), entry, fetched, host, owners, first_run);
                    (r, c)
                })
            })
        })
        .collect()
}

/// Planning: the SSH keys step runs first, and what it makes (`.ssh`, the keys file) is in
/// the way of an entry there without overwrite, as in the run.
fn in_the_keys_way(
    cfg: &Config,
    kind: usize,
    idx: usize,
    inner: &str,
    keys_made: &HashMap<String, bool>,
) -> Result<(), String> {
    let Some(&is_dir) = keys_made.get(inner) else {
        return Ok(());
    };
    let (overwrite, in_the_way) = match kind {
        0 => (cfg.storage.directories[idx].overwrite, !is_dir),
        1 => (cfg.storage.files[idx].overwrite, true),
        _ => (cfg.storage.links[idx].overwrite, true),
    };
    if in_the_way && overwrite != Some(true) {
        return Err(format!(
            "{inner} is made by the SSH keys step, which runs first; set overwrite to replace it"
        ));
    }
    Ok(())
}

/// The actions that rewrite one of the account databases (or what leads to one), with the
/// database's index.
fn touched_databases<'a>(
    databases: &[Option<String>],
    actions: &'a [Action],
) -> Vec<(usize, &'a Action)> {
    let rewrites = |a: &Action| {
        (databases.iter().enumerate())
            .filter_map(|(i, d)| Some((i, d.as_deref()?)))
            .find(|(_, d)| *d == a.path || ancestors(d).any(|p| p == a.path))
            .map(|(i, _)| i)
    };
    (actions.iter())
        .filter_map(|a| Some((rewrites(a)?, a)))
        .collect()
}

/// Planning: what database `which` will hold after `a` (`None`: unchanged by it).
fn database_text(
    databases: &[Option<String>],
    which: usize,
    a: &Action,
    root: &Root,
) -> Result<Option<String>, String> {
    Ok(Some(match &a.change {
        Change::WriteFile { data, .. } if databases[which].as_deref() == Some(&a.path) => {
            let bytes = data.to_vec().map_err(|e| e.to_string())?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Change::AppendFile { data, .. } => {
            let mut bytes = std::fs::read(root.host(&a.path)).unwrap_or_default();
            bytes.extend(data.to_vec().map_err(|e| e.to_string())?);
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Change::SetAttrs { .. } | Change::CreateParent => return Ok(None),
        // Replaced by something that is no database (or emptied): no names.
        _ => String::new(),
    }))
}

/// Planning: what an earlier entry makes at a path, where that is known.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Made {
    Dir,
    /// A symbolic link to a directory: a directory to a path through it, but a link to
    /// what replaces it (a rename, a hard link: neither follows it).
    LinkToDir,
    /// A file, a hard link, or a symbolic link to something other than a directory.
    Other,
}

/// The symbolic links `actions` make: target by inner path (what a plan follows where the
/// run will find them).
pub(crate) fn planned_links(actions: &[Action]) -> HashMap<String, String> {
    (actions.iter())
        .filter_map(|a| match &a.change {
            Change::Symlink { target, .. } => Some((a.path.clone(), target.clone())),
            _ => None,
        })
        .collect()
}

/// Records in `made` what `actions` make, where that is known.
pub(crate) fn note_made(made: &mut HashMap<String, Made>, actions: &[Action], root: &Root) {
    for a in actions {
        if let Some(m) = planned_kind(&a.change, &a.path, root, made) {
            made.insert(a.path.clone(), m);
        }
    }
}

/// The proper ancestors of inner path `p`, `/a` and `/a/b` for `/a/b/c`.
pub(crate) fn ancestors(p: &str) -> impl Iterator<Item = &str> {
    p.match_indices('/').skip(1).map(move |(at, _)| &p[..at])
}
