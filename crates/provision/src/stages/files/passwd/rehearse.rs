//! The shadow tools rehearsed for a plan. Whether `groupadd`, `useradd` and their kin will
//! refuse a change (a GID or UID already taken, a group that does not exist, a user's own
//! group already there, a tool that needs the root's `/proc`) is their own business, with
//! rules of their own: rather than restate those rules, the plan runs the same commands,
//! in the same order, against a scratch root holding copies of the target root's user and
//! group databases and of the files that steer the tools. A command that fails there fails
//! in the run, and the plan says so, naming the entry. Nothing of the target root changes.

use super::{Change, passwd_entry};
use crate::entry::EntryError;
use crate::root::Root;
use flint_ignition::types::Config;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of the root's /etc the shadow tools read or change.
const COPIED: &[&str] = &[
    "passwd",
    "group",
    "shadow",
    "gshadow",
    "login.defs",
    "default/useradd",
    "subuid",
    "subgid",
];

/// Runs the commands of `changes` against a scratch copy of `root`'s databases; the first
/// that fails is the plan's error. Only as root (the tools need it, as the run does).
/// Returns the scratch `/etc/passwd` as the commands leave it (the uids of users yet to be
/// made are known there), when they ran.
pub(super) fn shadow_tools(
    cfg: &Config,
    root: &Root,
    changes: &[Change],
) -> Result<Option<String>, EntryError> {
    let commands: Vec<_> = (changes.iter())
        .filter_map(|c| c.command.as_ref().map(|cmd| (c, cmd)))
        .collect();
    // SAFETY: geteuid has no preconditions.
    if commands.is_empty() || unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let Ok(scratch) = Scratch::new(cfg, root) else {
        // No scratch root (no space, no /tmp): the plan knows no more than before.
        return Ok(None);
    };
    for (c, (tool, args)) in commands {
        let Ok(out) = (Command::new(tool).arg("--root").arg(&scratch.dir))
            .args(args)
            .output()
        else {
            // The tool is missing: the run says so itself.
            return Ok(None);
        };
        if !out.status.success() {
            return Err(EntryError {
                entry: c.entry.clone(),
                message: format!(
                    "{tool} would fail: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            });
        }
    }
    Ok(std::fs::read_to_string(scratch.dir.join("etc/passwd")).ok())
}

/// A scratch root, removed when dropped.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(cfg: &Config, root: &Root) -> std::io::Result<Self> {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("flint-rehearse-{}-{n}", std::process::id()));
        let s = Scratch { dir };
        std::fs::create_dir_all(s.dir.join("etc/default"))?;
        for f in COPIED {
            if let Ok(text) = root.read_inside(&format!("/etc/{f}")) {
                std::fs::write(s.dir.join("etc").join(f), text)?;
            }
        }
        // usermod looks for the user's processes in /proc when it changes a uid, name or
        // home: a root without /proc makes it fail, one with it (even empty) does not.
        if root.host("/proc").is_dir() {
            std::fs::create_dir_all(s.dir.join("proc"))?;
        }
        // The homes the tools may create, move or remove: the part of their way that
        // exists in the root exists here too.
        for u in &cfg.passwd.users {
            let current = passwd_entry(root, &u.name).and_then(|f| f.get(5).cloned());
            let wanted = u.home_dir.clone().filter(|h| !h.is_empty());
            for home in [current, wanted, Some(format!("/home/{}", u.name))]
                .into_iter()
                .flatten()
            {
                s.mirror(root, &home)?;
            }
        }
        Ok(s)
    }

    /// Makes the deepest directory of `path` that is a directory in the root.
    fn mirror(&self, root: &Root, path: &str) -> std::io::Result<()> {
        let mut p = Path::new(path);
        loop {
            let inner = p.to_string_lossy();
            let found = root.resolve(&inner).ok().map(|r| r.host);
            if let Some(meta) = found
                .and_then(|h| std::fs::metadata(h).ok())
                .filter(|m| m.is_dir())
            {
                // With its owner: userdel removes a home only when the user owns it.
                use std::os::unix::fs::MetadataExt;
                let here = self.dir.join(inner.trim_start_matches('/'));
                std::fs::create_dir_all(&here)?;
                return std::os::unix::fs::chown(&here, Some(meta.uid()), Some(meta.gid()));
            }
            match p.parent() {
                Some(up) => p = up,
                None => return Ok(()),
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
