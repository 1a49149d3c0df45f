//! The users' SSH keys: where the keys file goes, whether it must be written, and whether
//! the user (as whom it is written) can reach and write it.

use super::*;
/// The keys file's text: the keys one per line, ending with a newline (once).
pub(super) fn keys_text(keys: &[String]) -> String {
    let mut t = keys.join("\n");
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// The keys file below the home: `.ssh/authorized_keys.d/ignition`, or
/// `.ssh/authorized_keys` when IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT is `false` or `0`
/// (upstream's switch, read from the same variable).
pub(super) fn keys_file() -> &'static str {
    match std::env::var("IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT").as_deref() {
        Ok("false") | Ok("0") => ".ssh/authorized_keys",
        _ => ".ssh/authorized_keys.d/ignition",
    }
}

/// Where `user`'s keys go, if the user exists: the path inside the root (the home's links
/// resolved as far as they resolve), and the file the write lands in
/// ([`keys_target`]).
pub(super) fn keys_place(root: &Root, user: &str) -> Option<(String, KeysTarget)> {
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
pub(super) type KeysTarget = Result<Option<std::path::PathBuf>, String>;

pub(super) fn keys_target(root: &Root, p: &str) -> KeysTarget {
    let r = root.resolve_through(p)?;
    r.map(|r| std::path::absolute(&r.host).map_err(|e| e.to_string()))
        .transpose()
}

/// Whether the keys file has to be written: not when it leads out of the root (nothing is
/// written there), nor when it already holds `want` and the user could write it (upstream
/// writes it again as the user, and fails where the user may not: the same failure here).
pub(super) fn keys_need_writing(
    root: &Root,
    user: &str,
    target: Option<&KeysTarget>,
    want: &str,
) -> bool {
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
pub(super) fn refusal(uid: u32, gid: u32, host: &std::path::Path) -> Option<std::io::Error> {
    denied(super::super::as_user::can_write(uid, gid, host))
}

/// The kernel's refusal among a check's outcomes (EROFS and the like are not counted: a plan
/// may see the root read-only, the run will not).
pub(super) fn denied(r: std::io::Result<()>) -> Option<std::io::Error> {
    r.err()
        .filter(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
}

/// What a plan can tell of the write of the keys file before it happens, for a user who
/// exists: the way to it fails, or the file is there and the user may not write it.
pub(super) fn keys_writable(root: &Root, user: &str, target: &KeysTarget) -> Result<(), String> {
    let Some(f) = passwd_entry(root, user) else {
        return Ok(());
    };
    let Ok((uid, gid)) = ids(&f) else {
        return Ok(());
    };
    keys_writable_as(root, f.get(5).map_or("", String::as_str), uid, gid, target)
}

/// [`keys_writable`] for user `uid`:`gid` with home `home`.
pub(super) fn keys_writable_as(
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
        return match denied(super::super::as_user::can_create(uid, gid, host)) {
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
pub(super) fn rehearsed_keys_writable(
    cfg: &Config,
    root: &Root,
    passwd: &str,
) -> Result<(), EntryError> {
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
pub(super) fn way_in(root: &Root, p: &str, uid: u32, gid: u32) -> Result<(), String> {
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
    match denied(super::super::as_user::can_search(uid, gid, &d.host)) {
        Some(e) => Err(format!(
            "creating parent directories of {p} as user {uid}: {}: {e}",
            d.inner
        )),
        None => Ok(()),
    }
}

/// Whether something is at inner path `p` of the root.
pub(super) fn present(root: &Root, p: &str) -> bool {
    root.resolve(p)
        .is_ok_and(|r| std::fs::symlink_metadata(&r.host).is_ok())
}

/// The uid and gid of a passwd entry.
pub(super) fn ids(f: &[String]) -> Result<(u32, u32), String> {
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
pub(super) fn write_keys(root: &Root, user: &str, keys: &[String]) -> Result<(), String> {
    let f = passwd_entry(root, user).ok_or_else(|| format!("no user {user} to give keys to"))?;
    let (uid, gid) = ids(&f)?;
    let home = f.get(5).cloned().unwrap_or_default();
    let Some(file) = keys_target(root, &format!("{home}/{}", keys_file()))? else {
        return Ok(());
    };
    way_searchable(root, &home, uid, gid)?;
    let text = keys_text(keys);
    super::super::as_user::write_file(uid, gid, &file, text.as_bytes())
        .map_err(|e| format!("writing {}: {e}", file.display()))
}

/// Upstream opens the keys file by its path as the user, so the kernel asks the user's
/// search permission on every directory of that path, the directory holding a link at the
/// keys file's name included. The file is written where such a link leads (confined to the
/// root), so the directory it was reached through is asked about here.
pub(super) fn way_searchable(root: &Root, home: &str, uid: u32, gid: u32) -> Result<(), String> {
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
    match denied(super::super::as_user::can_search(uid, gid, &r.host)) {
        Some(e) => Err(format!(
            "opening {} as user {uid}: {e}",
            root.host(&file).display()
        )),
        None => Ok(()),
    }
}
