//! Users and groups, with the shadow tools run against the target root (`useradd --root`,
//! as upstream does), and SSH keys in `~/.ssh/authorized_keys.d/ignition`. Runs before the
//! files, so that files may be owned by users the config creates.

mod keys;
mod rehearse;

use keys::*;

use super::owners::Owners;
use crate::entry::EntryError;
use crate::root::Root;
use crate::stage::Mode;
use flint_go::tree::JsonPath;
use flint_ignition::types::{Config, PasswdGroup, PasswdUser};
use std::os::unix::fs::OpenOptionsExt;
use std::process::Command;

/// One change to the users and groups.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    pub entry: JsonPath,
    pub what: String,
    /// The shadow tool and its arguments (after `--root ROOT`); none for key files.
    pub command: Option<(String, Vec<String>)>,
    /// The user whose authorized keys to write, with the keys.
    pub keys: Option<(String, Vec<String>)>,
    /// The keys file inside the root, for a change of keys of a user who exists (resolved
    /// where it resolves): a later entry may replace a directory on its way.
    pub path: Option<String>,
}

/// `groupadd` (new) or `groupmod` (existing) arguments, as upstream passes them: the gid and
/// a non-empty password hash when given, `--system` for a new group.
fn group_args(g: &PasswdGroup, existing: bool) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(gid) = g.gid {
        a.extend(["--gid".into(), gid.to_string()]);
    }
    if let Some(h) = g.password_hash.as_ref().filter(|h| !h.is_empty()) {
        a.extend(["--password".into(), h.clone()]);
    }
    if !existing && g.system == Some(true) {
        a.push("--system".into());
    }
    a.push(g.name.clone());
    a
}

/// A string field counts when given and not empty (upstream skips empty ones).
fn given(v: &Option<String>) -> Option<&String> {
    v.as_ref().filter(|v| !v.is_empty())
}

/// The password hash a user gets: the given one, `*` for an empty one.
fn hash_of(u: &PasswdUser) -> Option<String> {
    u.password_hash
        .as_ref()
        .map(|h| if h.is_empty() { "*".into() } else { h.clone() })
}

/// `useradd` (new) or `usermod` (existing) arguments, as upstream passes them.
fn user_args(u: &PasswdUser, existing: bool) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    if existing {
        if let Some(h) = given(&u.home_dir) {
            a.extend(["--home".into(), h.clone(), "--move-home".into()]);
        }
    } else {
        if let Some(h) = given(&u.home_dir) {
            a.extend(["--home-dir".into(), h.clone()]);
        }
        a.push(if u.no_create_home == Some(true) {
            "--no-create-home".into()
        } else {
            "--create-home".into()
        });
        for (flag, on) in [
            ("--no-user-group", u.no_user_group),
            ("--system", u.system),
            ("--no-log-init", u.no_log_init),
        ] {
            if on == Some(true) {
                a.push(flag.into());
            }
        }
    }
    // A new user without a hash gets `*`: no password login.
    if let Some(h) = hash_of(u).or_else(|| (!existing).then(|| "*".into())) {
        a.extend(["--password".into(), h]);
    }
    if let Some(uid) = u.uid {
        a.extend(["--uid".into(), uid.to_string()]);
    }
    for (flag, v) in [("--comment", &u.gecos), ("--gid", &u.primary_group)] {
        if let Some(v) = given(v) {
            a.extend([flag.into(), v.clone()]);
        }
    }
    if !u.groups.is_empty() {
        a.extend(["--groups".into(), u.groups.join(",")]);
    }
    if let Some(v) = given(&u.shell) {
        a.extend(["--shell".into(), v.clone()]);
    }
    a.push(u.name.clone());
    a
}

/// The fields of the line for `name` in the colon-separated database `file` of the root.
fn db_line(root: &Root, file: &str, name: &str) -> Option<Vec<String>> {
    fields_of(&root.read_inside(file).ok()?, name)
}

/// The fields of the line for `name` in the text of a colon-separated database, the first
/// one as the C library's lookups find it (leading blanks and comment lines skipped).
fn fields_of(db: &str, name: &str) -> Option<Vec<String>> {
    super::owners::records(db)
        .find(|f| f.first() == Some(&name))
        .map(|f| f.into_iter().map(str::to_string).collect())
}

/// The gid a group given to the shadow tools stands for: a number is a gid (they try that
/// first), anything else a name.
fn gid_of(owners: &Owners, group: &str) -> Option<u32> {
    group.parse().ok().or_else(|| owners.gid(group).ok())
}

/// The password hash of `name` where the shadow tools keep it: the shadow database
/// (`shadow`, `gshadow`) when the root has one, else the plain one (`passwd`, `group`).
fn stored_hash(root: &Root, shadow: &str, plain: &str, name: &str) -> Option<String> {
    match root.read_inside(shadow) {
        Ok(db) => fields_of(&db, name)?.get(1).cloned(),
        Err(_) => db_field(root, plain, name, 1),
    }
}

pub(super) fn passwd_entry(root: &Root, name: &str) -> Option<Vec<String>> {
    db_line(root, "/etc/passwd", name)
}

/// Whether the config gives existing user `u` a home other than theirs (usermod moves it).
fn home_moves(root: &Root, u: &PasswdUser) -> bool {
    given(&u.home_dir)
        .is_some_and(|h| passwd_entry(root, &u.name).is_some_and(|f| f.get(5) != Some(h)))
}

/// Field `idx` of the line for `name` in database `file` of the root.
fn db_field(root: &Root, file: &str, name: &str, idx: usize) -> Option<String> {
    db_line(root, file, name)?.get(idx).cloned()
}

/// Plans (and with `apply`, makes) the changes to users and groups. `notated`: mount points
/// the mount stage created; those in a user's home become the user's (0700).
///
/// `first_run`: whether to check what upstream's run finds out on the way: that users'
/// homes exist right after making the users, and (when planning) that the shadow tools and
/// the keys file's write will not be refused. Not in the look taken after a run, nor on a
/// later run: an entry of the config may have replaced a home or `.ssh` (a directory with
/// `overwrite`, a file), as upstream's run does.
pub(crate) fn run(
    cfg: &Config,
    root: &Root,
    mode: Mode,
    first_run: bool,
    notated: &[String],
) -> Result<Vec<Change>, EntryError> {
    let owners = Owners::read(root);
    let mut out = group_changes(cfg, root, &owners);
    let users = JsonPath::root().key("passwd").key("users");
    for (i, u) in cfg.passwd.users.iter().enumerate() {
        let entry = users.index(i);
        if let Some((tool, args, what)) = user_change(u, root, &owners) {
            out.push(Change {
                entry: entry.clone(),
                what,
                command: Some((tool.into(), args)),
                keys: None,
                path: None,
            });
        }
        out.extend(keys_change(u, root, &entry, mode, first_run)?);
    }
    if !mode.applies() && first_run {
        refused_databases(root, &out)?;
    }
    if !mode.applies() {
        let rehearsed = rehearse::shadow_tools(cfg, root, &out)?;
        if first_run && let Some(passwd) = rehearsed {
            rehearsed_keys_writable(cfg, root, &passwd)?;
        }
    }
    if mode.applies() {
        make(cfg, root, &out, notated)?;
    }
    if first_run {
        homes_exist(cfg, root, &out, mode)?;
    }
    Ok(out)
}

/// A planned change of a group or user: the tool, its arguments, the plan line.
type ToolRun = (&'static str, Vec<String>, String);

/// The groups' changes, in the config's order.
fn group_changes(cfg: &Config, root: &Root, owners: &Owners) -> Vec<Change> {
    let groups = JsonPath::root().key("passwd").key("groups");
    let mut out = Vec::new();
    for (i, g) in cfg.passwd.groups.iter().enumerate() {
        let exists = owners.gid(&g.name).is_ok();
        let entry = groups.index(i);
        let change = match (g.should_exist, exists) {
            (Some(false), true) => Some((
                "groupdel",
                vec![g.name.clone()],
                format!("remove group {}", g.name),
            )),
            (Some(false), false) => None,
            (_, true) => {
                // groupmod with what is given, when it changes something.
                let gid_differs = g
                    .gid
                    .is_some_and(|id| owners.gid(&g.name).ok() != Some(id as u32));
                let hash_differs = g
                    .password_hash
                    .as_ref()
                    .filter(|h| !h.is_empty())
                    .is_some_and(|h| {
                        stored_hash(root, "/etc/gshadow", "/etc/group", &g.name).as_ref() != Some(h)
                    });
                (gid_differs || hash_differs).then(|| {
                    (
                        "groupmod",
                        group_args(g, true),
                        format!("modify group {}", g.name),
                    )
                })
            }
            (_, false) => Some((
                "groupadd",
                group_args(g, false),
                format!("add group {}", g.name),
            )),
        };
        if let Some((tool, args, what)) = change {
            out.push(Change {
                entry,
                what,
                command: Some((tool.into(), args)),
                keys: None,
                path: None,
            });
        }
    }
    out
}

/// What the user's entry changes in the databases, if anything.
fn user_change(u: &PasswdUser, root: &Root, owners: &Owners) -> Option<ToolRun> {
    let existing = passwd_entry(root, &u.name);
    match (u.should_exist, &existing) {
        (Some(false), Some(_)) => Some((
            "userdel",
            vec!["--remove".into(), u.name.clone()],
            format!("remove user {}", u.name),
        )),
        (Some(false), None) => None,
        (_, None) => Some((
            "useradd",
            user_args(u, false),
            format!("add user {}", u.name),
        )),
        (_, Some(f)) => {
            let differs =
                |idx: usize, v: &Option<String>| given(v).is_some_and(|v| f.get(idx) != Some(v));
            let uid_differs = u.uid.is_some_and(|id| f.get(2) != Some(&id.to_string()));
            let primary_differs = given(&u.primary_group)
                .is_some_and(|g| gid_of(owners, g).map(|id| id.to_string()).as_ref() != f.get(3));
            // usermod --password also dates the change: an empty date is filled in.
            let undated =
                || db_field(root, "/etc/shadow", &u.name, 2).is_some_and(|d| d.is_empty());
            let hash_differs = hash_of(u).is_some_and(|h| {
                stored_hash(root, "/etc/shadow", "/etc/passwd", &u.name).as_ref() != Some(&h)
                    || undated()
            });
            // --groups sets the supplementary groups: exactly these, no others, in the
            // member lists of both databases.
            let groups_differ = !u.groups.is_empty() && {
                let mut want: Vec<String> = (u.groups.iter())
                    .map(|g| match g.parse() {
                        Ok(gid) => owners.group_name(gid),
                        Err(_) => g.clone(),
                    })
                    .collect();
                want.sort();
                want.dedup();
                member_of(root, "/etc/group", &u.name).unwrap_or_default() != want
                    || member_of(root, "/etc/gshadow", &u.name).is_some_and(|m| m != want)
            };
            let needs = differs(4, &u.gecos)
                || differs(5, &u.home_dir)
                || differs(6, &u.shell)
                || uid_differs
                || primary_differs
                || hash_differs
                || groups_differ;
            needs.then(|| {
                (
                    "usermod",
                    user_args(u, true),
                    format!("modify user {}", u.name),
                )
            })
        }
    }
}

/// The user's SSH keys, when they are to be written; on a first run's plan, whether the
/// keys file's write would be refused is found out now.
fn keys_change(
    u: &PasswdUser,
    root: &Root,
    entry: &JsonPath,
    mode: Mode,
    first_run: bool,
) -> Result<Option<Change>, EntryError> {
    let want = keys_text(&u.ssh_authorized_keys);
    let place = keys_place(root, &u.name);
    if u.should_exist != Some(false)
        && !u.ssh_authorized_keys.is_empty()
        && keys_need_writing(root, &u.name, place.as_ref().map(|p| &p.1), &want)
    {
        // (Not for a home the run moves: the keys go to the new one.)
        if !mode.applies()
            && first_run
            && !home_moves(root, u)
            && let Some((_, target)) = &place
        {
            keys_writable(root, &u.name, target).map_err(|message| EntryError {
                entry: entry.key("sshAuthorizedKeys"),
                message,
            })?;
        }
        return Ok(Some(Change {
            entry: entry.key("sshAuthorizedKeys"),
            what: format!(
                "write {} SSH keys of {}",
                u.ssh_authorized_keys.len(),
                u.name
            ),
            command: None,
            keys: Some((u.name.clone(), u.ssh_authorized_keys.clone())),
            path: place.map(|(inner, _)| inner),
        }));
    }
    Ok(None)
}

/// Runs the shadow tools and writes the keys, change by change; then hands the users the
/// mount points made in their homes.
fn make(cfg: &Config, root: &Root, out: &[Change], notated: &[String]) -> Result<(), EntryError> {
    let users = JsonPath::root().key("passwd").key("users");
    for c in out {
        let fail = |message: String| EntryError {
            entry: c.entry.clone(),
            message,
        };
        if let Some((tool, args)) = &c.command {
            let res = Command::new(tool)
                .arg("--root")
                .arg(&root.dir)
                .args(args)
                .output()
                .map_err(|e| fail(format!("running {tool}: {e}")))?;
            if !res.status.success() {
                return Err(fail(format!(
                    "{tool} failed: {}",
                    String::from_utf8_lossy(&res.stderr).trim()
                )));
            }
        }
        if let Some((user, keys)) = &c.keys {
            // Before the keys, as upstream: the user may then write into a mount point
            // made in their home.
            hand_over(cfg, root, user, notated).map_err(fail)?;
            write_keys(root, user, keys).map_err(fail)?;
        }
    }
    for u in &cfg.passwd.users {
        hand_over(cfg, root, &u.name, notated).map_err(|message| EntryError {
            entry: users.clone(),
            message,
        })?;
    }
    Ok(())
}

/// Gives `user` (of the config, not `noCreateHome`, meant to exist) the mount points the
/// mount stage made in their home: owner the user and their primary group, mode 0700.
fn hand_over(cfg: &Config, root: &Root, user: &str, notated: &[String]) -> Result<(), String> {
    let Some(u) = cfg.passwd.users.iter().find(|u| u.name == user) else {
        return Ok(());
    };
    if u.no_create_home == Some(true) || u.should_exist == Some(false) || notated.is_empty() {
        return Ok(());
    }
    let Some(f) = passwd_entry(root, user) else {
        return Ok(());
    };
    let id = |i: usize| f.get(i).and_then(|v| v.parse::<u32>().ok());
    let (Some(uid), Some(gid), Some(home)) = (id(2), id(3), f.get(5)) else {
        return Ok(());
    };
    for d in notated {
        if d == home || d.starts_with(&format!("{home}/")) {
            let host = root.resolve(d).map_err(|e| e.to_string())?.host;
            std::os::unix::fs::chown(&host, Some(uid), Some(gid))
                .and_then(|_| {
                    std::fs::set_permissions(
                        &host,
                        std::os::unix::fs::PermissionsExt::from_mode(0o700),
                    )
                })
                .map_err(|e| format!("handing {d} to {user}: {e}"))?;
        }
    }
    Ok(())
}

/// Upstream looks at the home of every user of the config (but those with `noCreateHome` or
/// `shouldExist: false`) once users are made, and fails when it is not there. When planning,
/// a user the plan adds or moves is taken to get a home, and keys planned for a user without
/// one fail already (apply would fail writing them).
fn homes_exist(
    cfg: &Config,
    root: &Root,
    changes: &[Change],
    mode: Mode,
) -> Result<(), EntryError> {
    let users = JsonPath::root().key("passwd").key("users");
    for (i, u) in cfg.passwd.users.iter().enumerate() {
        if u.should_exist == Some(false) {
            continue;
        }
        let entry = users.index(i);
        // A home the plan moves (usermod --move-home) is not there yet.
        let moved = home_moves(root, u)
            && changes
                .iter()
                .any(|c| c.entry == entry && c.command.is_some());
        let keys = changes
            .iter()
            .any(|c| c.entry == entry.key("sshAuthorizedKeys"));
        let Some(f) = passwd_entry(root, &u.name) else {
            // (A home that is there already holds them: the rehearsal asks whether the user
            // may write there.)
            let default_home = format!("/home/{}", u.name);
            let home = given(&u.home_dir).map_or(default_home.as_str(), String::as_str);
            if !mode.applies() && keys && u.no_create_home == Some(true) && !present(root, home) {
                return Err(EntryError {
                    entry: entry.key("sshAuthorizedKeys"),
                    message: format!("{} gets no home (noCreateHome) to hold SSH keys", u.name),
                });
            }
            continue;
        };
        if u.no_create_home == Some(true) && !keys {
            continue;
        }
        if !mode.applies() && moved {
            // usermod renames the old home to the new one; with no old home, it makes none
            // (the keys' directories, if any, are made by their write).
            let old = f.get(5).map_or("", String::as_str);
            let new = given(&u.home_dir).map_or("", String::as_str);
            if !keys && !present(root, old) && !present(root, new) {
                return Err(EntryError {
                    entry,
                    message: format!("the home directory {new} of {} does not exist", u.name),
                });
            }
            continue;
        }
        let home = f.get(5).cloned().unwrap_or_default();
        if std::fs::symlink_metadata(root.dir.join(home.trim_start_matches('/'))).is_err() {
            return Err(EntryError {
                entry,
                message: format!("the home directory {home} of {} does not exist", u.name),
            });
        }
    }
    Ok(())
}

/// What the plan can tell of the shadow tools before they run: they open the databases
/// they change with O_NOFOLLOW, so a link at the root's `/etc/passwd` (for a user tool) or
/// `/etc/group` (for a group tool) makes them fail ("cannot open /etc/passwd"), wherever the
/// link leads.
fn refused_databases(root: &Root, changes: &[Change]) -> Result<(), EntryError> {
    for c in changes {
        let Some((tool, _)) = &c.command else {
            continue;
        };
        let db = if tool.starts_with("group") {
            "/etc/group"
        } else {
            "/etc/passwd"
        };
        let link = root
            .resolve(db)
            .is_ok_and(|r| r.host.symlink_metadata().is_ok_and(|m| m.is_symlink()));
        if link {
            return Err(EntryError {
                entry: c.entry.clone(),
                message: format!("{tool} would fail: it cannot open {db}, a symbolic link"),
            });
        }
    }
    Ok(())
}

/// The groups (sorted) whose member list in the root's `db` (/etc/group or /etc/gshadow,
/// both with the members fourth) names `user`; `None` where the root has no such file.
fn member_of(root: &Root, db: &str, user: &str) -> Option<Vec<String>> {
    let mut v: Vec<String> = (root.read_inside(db).ok()?)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            let members = f.get(3)?;
            members
                .split(',')
                .any(|m| m == user)
                .then(|| f[0].to_string())
        })
        .collect();
    v.sort();
    v.dedup();
    Some(v)
}
