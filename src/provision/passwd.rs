//! Users and groups, with the shadow tools run against the target root (`useradd --root`,
//! as upstream does), and SSH keys in `~/.ssh/authorized_keys.d/ignition`. Runs before the
//! files, so that files may be owned by users the config creates.

use super::files::EntryError;
use super::owners::Owners;
use super::root::Root;
use crate::ignition::types::{Config, PasswdGroup, PasswdUser};
use crate::tree::JsonPath;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// One change to the users and groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub entry: JsonPath,
    pub what: String,
    /// The shadow tool and its arguments (after `--root ROOT`); none for key files.
    pub command: Option<(String, Vec<String>)>,
    /// The user whose authorized keys to write, with the keys.
    pub keys: Option<(String, Vec<String>)>,
}

fn group_args(g: &PasswdGroup) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(gid) = g.gid {
        a.extend(["--gid".into(), gid.to_string()]);
    }
    // Upstream locks groups without a password hash.
    a.extend([
        "--password".into(),
        g.password_hash.clone().unwrap_or_else(|| "!".into()),
    ]);
    if g.system == Some(true) {
        a.push("--system".into());
    }
    a.push(g.name.clone());
    a
}

fn user_args(u: &PasswdUser, existing: bool) -> Vec<String> {
    let mut a = Vec::new();
    let mut opt = |flag: &str, v: &Option<String>| {
        if let Some(v) = v {
            a.extend([flag.to_string(), v.clone()]);
        }
    };
    opt("--comment", &u.gecos);
    opt("--home", &u.home_dir);
    opt("--gid", &u.primary_group);
    opt("--shell", &u.shell);
    if !existing || u.password_hash.is_some() {
        a.extend([
            "--password".into(),
            u.password_hash.clone().unwrap_or_else(|| "*".into()),
        ]);
    }
    if let Some(uid) = u.uid {
        a.extend(["--uid".into(), uid.to_string()]);
    }
    if !u.groups.is_empty() {
        a.extend(["--groups".into(), u.groups.join(",")]);
    }
    if !existing {
        if u.no_create_home == Some(true) {
            a.push("--no-create-home".into());
        } else {
            a.push("--create-home".into());
        }
        if u.no_user_group == Some(true) {
            a.push("--no-user-group".into());
        }
        if u.system == Some(true) {
            a.push("--system".into());
        }
        if u.no_log_init == Some(true) {
            a.push("--no-log-init".into());
        }
    }
    a.push(u.name.clone());
    a
}

/// The fields of the line for `name` in the colon-separated database `file` of the root.
fn db_line(root: &Path, file: &str, name: &str) -> Option<Vec<String>> {
    std::fs::read_to_string(root.join(file))
        .ok()?
        .lines()
        .map(|l| l.split(':').map(str::to_string).collect::<Vec<_>>())
        .find(|f| f.first().map(String::as_str) == Some(name))
}

fn passwd_entry(root: &Path, name: &str) -> Option<Vec<String>> {
    db_line(root, "etc/passwd", name)
}

/// Field `idx` of the line for `name` in database `file` of the root.
fn db_field(root: &Path, file: &str, name: &str, idx: usize) -> Option<String> {
    db_line(root, file, name)?.get(idx).cloned()
}

/// Plans (and with `apply`, makes) the changes to users and groups.
pub fn run(cfg: &Config, root: &Root, apply: bool) -> Result<Vec<Change>, EntryError> {
    let mut out = Vec::new();
    let owners = Owners::read(&root.dir);
    let groups = JsonPath::root().key("passwd").key("groups");
    for (i, g) in cfg.passwd.groups.iter().enumerate() {
        let exists = owners.gid(&g.name).is_ok();
        let entry = groups.index(i);
        let change = match (g.should_exist, exists) {
            (Some(false), true) => Some((
                "groupdel",
                vec![g.name.clone()],
                format!("remove group {}", g.name),
            )),
            (Some(false), false) | (_, true) => None,
            (_, false) => Some(("groupadd", group_args(g), format!("add group {}", g.name))),
        };
        if let Some((tool, args, what)) = change {
            out.push(Change {
                entry,
                what,
                command: Some((tool.into(), args)),
                keys: None,
            });
        }
    }
    let users = JsonPath::root().key("passwd").key("users");
    for (i, u) in cfg.passwd.users.iter().enumerate() {
        let entry = users.index(i);
        let existing = passwd_entry(&root.dir, &u.name);
        let change = match (u.should_exist, &existing) {
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
                let differs = |idx: usize, v: &Option<String>| {
                    v.as_ref().is_some_and(|v| f.get(idx) != Some(v))
                };
                let uid_differs = u.uid.is_some_and(|id| f.get(2) != Some(&id.to_string()));
                let primary_differs = u.primary_group.as_ref().is_some_and(|g| {
                    owners.gid(g).map(|id| id.to_string()).ok().as_ref() != f.get(3)
                });
                let hash_differs = u.password_hash.as_ref().is_some_and(|h| {
                    db_field(&root.dir, "etc/shadow", &u.name, 1).as_ref() != Some(h)
                });
                let missing_group = u.groups.iter().any(|g| {
                    db_field(&root.dir, "etc/group", g, 3)
                        .is_none_or(|members| !members.split(',').any(|m| m == u.name))
                });
                let needs = differs(4, &u.gecos)
                    || differs(5, &u.home_dir)
                    || differs(6, &u.shell)
                    || uid_differs
                    || primary_differs
                    || hash_differs
                    || missing_group;
                needs.then(|| {
                    (
                        "usermod",
                        user_args(u, true),
                        format!("modify user {}", u.name),
                    )
                })
            }
        };
        if let Some((tool, args, what)) = change {
            out.push(Change {
                entry: entry.clone(),
                what,
                command: Some((tool.into(), args)),
                keys: None,
            });
        }
        let want = format!("{}\n", u.ssh_authorized_keys.join("\n"));
        let current = keys_path(root, &u.name).and_then(|p| std::fs::read_to_string(p).ok());
        if u.should_exist != Some(false)
            && !u.ssh_authorized_keys.is_empty()
            && current.as_deref() != Some(want.as_str())
        {
            out.push(Change {
                entry: entry.key("sshAuthorizedKeys"),
                what: format!(
                    "write {} SSH keys of {}",
                    u.ssh_authorized_keys.len(),
                    u.name
                ),
                command: None,
                keys: Some((u.name.clone(), u.ssh_authorized_keys.clone())),
            });
        }
    }
    if apply {
        for c in &out {
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
                write_keys(root, user, keys).map_err(fail)?;
            }
        }
    }
    Ok(out)
}

/// Where `user`'s keys go, if the user exists.
fn keys_path(root: &Root, user: &str) -> Option<std::path::PathBuf> {
    let f = passwd_entry(&root.dir, user)?;
    let home = root.resolve(&format!("{}/x", f.get(5)?)).ok()?;
    Some(home.host.parent()?.join(".ssh/authorized_keys.d/ignition"))
}

/// `~/.ssh/authorized_keys.d/ignition` (0600; directories 0700), owned by the user.
fn write_keys(root: &Root, user: &str, keys: &[String]) -> Result<(), String> {
    let f =
        passwd_entry(&root.dir, user).ok_or_else(|| format!("no user {user} to give keys to"))?;
    let uid: u32 = f
        .get(2)
        .and_then(|v| v.parse().ok())
        .ok_or("bad passwd entry")?;
    let gid: u32 = f
        .get(3)
        .and_then(|v| v.parse().ok())
        .ok_or("bad passwd entry")?;
    let home = f.get(5).cloned().unwrap_or_default();
    let home = root
        .resolve(&format!("{home}/x"))
        .map_err(|e| e.to_string())?;
    let home_host = home
        .host
        .parent()
        .expect("a path with a parent")
        .to_path_buf();
    let ssh = home_host.join(".ssh");
    let dir = ssh.join("authorized_keys.d");
    for d in [&ssh, &dir] {
        if !d.exists() {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
        std::os::unix::fs::lchown(d, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    let text = format!("{}\n", keys.join("\n"));
    let path = dir.join("ignition");
    super::write_atomic(&path, text.as_bytes(), 0o600).map_err(|e| e.to_string())?;
    std::os::unix::fs::lchown(&path, Some(uid), Some(gid)).map_err(|e| e.to_string())
}
