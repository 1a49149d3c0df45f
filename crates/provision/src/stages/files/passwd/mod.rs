//! Users and groups, with the shadow tools run against the target root (`useradd --root`,
//! as upstream does), and SSH keys in `~/.ssh/authorized_keys.d/ignition`. Runs before the
//! files, so that files may be owned by users the config creates.

mod rehearse;

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

/// The keys file's text: the keys one per line, ending with a newline (once).
fn keys_text(keys: &[String]) -> String {
    let mut t = keys.join("\n");
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// The keys file below the home: `.ssh/authorized_keys.d/ignition`, or
/// `.ssh/authorized_keys` when IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT is `false` or `0`
/// (upstream's switch, read from the same variable).
fn keys_file() -> &'static str {
    match std::env::var("IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT").as_deref() {
        Ok("false") | Ok("0") => ".ssh/authorized_keys",
        _ => ".ssh/authorized_keys.d/ignition",
    }
}

/// Where `user`'s keys go, if the user exists: the path inside the root (the home's links
/// resolved as far as they resolve), and the file the write lands in
/// ([`keys_target`]).
fn keys_place(root: &Root, user: &str) -> Option<(String, KeysTarget)> {
    let f = passwd_entry(root, user)?;
    let p = format!("{}/{}", f.get(5)?, keys_file());
    let inner = root.resolve(&p).map_or(p.clone(), |r| r.inner);
    Some((inner, keys_target(root, &p)))
}

/// The file a write of the keys file at inner path `p` lands in: `Ok(None)` when a link at
/// the keys file leads out of the root. Upstream opens the file as the host sees it and so
/// writes through such a link out of the root (as the user, wherever the user may write);
/// flint writes nothing there, which leaves the root as upstream leaves it. Links that stay
/// in the root are followed as upstream follows them; an error where upstream's open fails
/// on the way (a link into a directory that does not exist).
type KeysTarget = Result<Option<std::path::PathBuf>, String>;

fn keys_target(root: &Root, p: &str) -> KeysTarget {
    let r = root.resolve_through(p)?;
    r.map(|r| std::path::absolute(&r.host).map_err(|e| e.to_string()))
        .transpose()
}

/// Whether the keys file has to be written: not when it leads out of the root (nothing is
/// written there), nor when it already holds `want` and the user could write it (upstream
/// writes it again as the user, and fails where the user may not: the same failure here).
fn keys_need_writing(root: &Root, user: &str, target: Option<&KeysTarget>, want: &str) -> bool {
    let host = match target {
        Some(Ok(Some(h))) => h,
        Some(Ok(None)) => return false,
        None | Some(Err(_)) => return true,
    };
    let current = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(host)
        .and_then(std::io::read_to_string);
    if current.ok().as_deref() != Some(want) {
        return true;
    }
    let Some((uid, gid)) = passwd_entry(root, user).and_then(|f| ids(&f).ok()) else {
        return true;
    };
    refusal(uid, gid, host).is_some()
}

/// Why user `uid`:`gid` may not open the existing keys file `host` for writing, if its
/// permissions refuse it. Only that: a plan sees the root's filesystems mounted read-only,
/// which the run will not.
fn refusal(uid: u32, gid: u32, host: &std::path::Path) -> Option<std::io::Error> {
    denied(super::as_user::can_write(uid, gid, host))
}

/// The kernel's refusal among a check's outcomes (EROFS and the like are not counted: a plan
/// may see the root read-only, the run will not).
fn denied(r: std::io::Result<()>) -> Option<std::io::Error> {
    r.err()
        .filter(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
}

/// What a plan can tell of the write of the keys file before it happens, for a user who
/// exists: the way to it fails, or the file is there and the user may not write it.
fn keys_writable(root: &Root, user: &str, target: &KeysTarget) -> Result<(), String> {
    let Some(f) = passwd_entry(root, user) else {
        return Ok(());
    };
    let Ok((uid, gid)) = ids(&f) else {
        return Ok(());
    };
    keys_writable_as(root, f.get(5).map_or("", String::as_str), uid, gid, target)
}

/// [`keys_writable`] for user `uid`:`gid` with home `home`.
fn keys_writable_as(
    root: &Root,
    home: &str,
    uid: u32,
    gid: u32,
    target: &KeysTarget,
) -> Result<(), String> {
    let host = match target {
        Ok(Some(h)) => h,
        Ok(None) => return Ok(()),
        Err(e) => return Err(e.clone()),
    };
    way_searchable(root, home, uid, gid)?;
    if std::fs::symlink_metadata(host).is_err() {
        // To be made, with the directories missing on its way, as the user. (Only the
        // kernel's refusal counts: a plan may see the root read-only, the run will not.)
        return match denied(super::as_user::can_create(uid, gid, host)) {
            Some(e) => Err(format!("creating {} as user {uid}: {e}", host.display())),
            None => Ok(()),
        };
    }
    match refusal(uid, gid, host) {
        Some(e) => Err(format!("opening {} as user {uid}: {e}", host.display())),
        None => Ok(()),
    }
}

/// The keys of users the run makes or moves, as far as a plan can tell, with their uid and
/// home from the rehearsal's `passwd`.
/// - A user the run makes: useradd makes a home that is missing (the user's own, so the
///   keys can be written); one that is there already it leaves as it is, and the keys are
///   written into it as the new user, who may not be allowed to.
/// - A user whose home the run moves (`usermod --move-home`): the old home, if there, is
///   renamed to the new one, and the keys go into it as they would go into the old one
///   (unless the uid or group changes too: usermod hands the home's files over); if not,
///   the new one is not made, and the keys' directories are made as the user.
fn rehearsed_keys_writable(cfg: &Config, root: &Root, passwd: &str) -> Result<(), EntryError> {
    let users = JsonPath::root().key("passwd").key("users");
    // Homes that users earlier in the list move away (usermod --move-home renames them): a
    // user made after them with such a home gets a new one from useradd, its own.
    let mut vacated: Vec<String> = Vec::new();
    for (i, u) in cfg.passwd.users.iter().enumerate() {
        if u.should_exist == Some(false) {
            continue;
        }
        let current = passwd_entry(root, &u.name);
        let moves = current.is_some() && home_moves(root, u);
        if moves {
            let old = current.as_ref().and_then(|old| old.get(5));
            vacated.extend(old.map(|h| h.trim_end_matches('/').to_string()));
        }
        if u.ssh_authorized_keys.is_empty() {
            continue;
        }
        let Some(f) = fields_of(passwd, &u.name) else {
            continue;
        };
        let (Ok((uid, gid)), Some(home)) = (ids(&f), f.get(5)) else {
            continue;
        };
        let at_keys = |message| EntryError {
            entry: users.index(i).key("sshAuthorizedKeys"),
            message,
        };
        let home = match current {
            None if u.no_create_home == Some(true) && !present(root, home) => continue,
            None if u.no_create_home == Some(true) => home.clone(),
            // useradd makes the home, the user's own; the way to it must let the user in.
            None if !present(root, home) => {
                way_in(root, home, uid, gid).map_err(at_keys)?;
                continue;
            }
            // (Only users already there move their homes: these are all earlier ones'.)
            None if vacated.iter().any(|v| v == home.trim_end_matches('/')) => continue,
            None => home.clone(),
            Some(_) if !moves => continue,
            Some(old) => {
                let renamed = old
                    .get(5)
                    .filter(|h| root.resolve(h).is_ok_and(|r| r.host.is_dir()));
                match renamed {
                    // usermod also gives the files of the home the new uid, if it changes:
                    // what the user may do there is not read off the root as it is, but the
                    // way to the home must still let the user in.
                    Some(_) if ids(&old).ok() != Some((uid, gid)) => {
                        way_in(root, home, uid, gid).map_err(at_keys)?;
                        continue;
                    }
                    Some(h) => h.clone(),
                    None => home.clone(),
                }
            }
        };
        let target = keys_target(root, &format!("{home}/{}", keys_file()));
        keys_writable_as(root, &home, uid, gid, &target).map_err(at_keys)?;
    }
    Ok(())
}

/// Whether user `uid`:`gid` may go through the deepest directory on the way to the missing
/// inner path `p`, as the keys' write below a home that useradd makes there asks.
fn way_in(root: &Root, p: &str, uid: u32, gid: u32) -> Result<(), String> {
    let Ok(r) = root.resolve(p) else {
        return Ok(());
    };
    let first = r.missing.first().unwrap_or(&r.inner);
    let Some((dir, _)) = first.rsplit_once('/') else {
        return Ok(());
    };
    let Ok(d) = root.resolve(if dir.is_empty() { "/" } else { dir }) else {
        return Ok(());
    };
    match denied(super::as_user::can_search(uid, gid, &d.host)) {
        Some(e) => Err(format!(
            "creating parent directories of {p} as user {uid}: {}: {e}",
            d.inner
        )),
        None => Ok(()),
    }
}

/// Whether something is at inner path `p` of the root.
fn present(root: &Root, p: &str) -> bool {
    root.resolve(p)
        .is_ok_and(|r| std::fs::symlink_metadata(&r.host).is_ok())
}

/// The uid and gid of a passwd entry.
fn ids(f: &[String]) -> Result<(u32, u32), String> {
    let id = |i: usize| -> Result<u32, String> {
        f.get(i)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| "bad passwd entry".to_string())
    };
    Ok((id(2)?, id(3)?))
}

/// Writes the keys file as the user does (upstream switches to the user's uid and gid for
/// it): every missing directory on the way is made 0700 by the user, existing ones are left
/// as they are, the file is opened 0600 and truncated. So a home the user cannot write to
/// (or that does not exist, `noCreateHome`) fails with "permission denied", as upstream.
fn write_keys(root: &Root, user: &str, keys: &[String]) -> Result<(), String> {
    let f = passwd_entry(root, user).ok_or_else(|| format!("no user {user} to give keys to"))?;
    let (uid, gid) = ids(&f)?;
    let home = f.get(5).cloned().unwrap_or_default();
    let Some(file) = keys_target(root, &format!("{home}/{}", keys_file()))? else {
        return Ok(());
    };
    way_searchable(root, &home, uid, gid)?;
    let text = keys_text(keys);
    super::as_user::write_file(uid, gid, &file, text.as_bytes())
        .map_err(|e| format!("writing {}: {e}", file.display()))
}

/// Upstream opens the keys file by its path as the user, so the kernel asks the user's
/// search permission on every directory of that path, the directory holding a link at the
/// keys file's name included. The file is written where such a link leads (confined to the
/// root), so the directory it was reached through is asked about here.
fn way_searchable(root: &Root, home: &str, uid: u32, gid: u32) -> Result<(), String> {
    let file = format!("{home}/{}", keys_file());
    let Some((dir, _)) = file.rsplit_once('/') else {
        return Ok(());
    };
    let Ok(r) = root.resolve(dir) else {
        return Ok(());
    };
    if !r.host.is_dir() {
        return Ok(());
    }
    match denied(super::as_user::can_search(uid, gid, &r.host)) {
        Some(e) => Err(format!(
            "opening {} as user {uid}: {e}",
            root.host(&file).display()
        )),
        None => Ok(()),
    }
}
