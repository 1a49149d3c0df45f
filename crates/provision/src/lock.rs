//! One run at a time per target root and per state directory. Two applies on one root,
//! left to run together, would interleave their writes (one file holding parts of both
//! configs, with either's mode): each run takes an exclusive lock for the root and one for
//! its state directory before it starts. A second run on the same root is refused at once,
//! saying so. Runs on other roots that share a state directory (the default one, when a
//! build host provisions several images at once) wait their turn, saying so, since what
//! they keep there must not mix. A plan only reads, so plans take shared locks: any number
//! of them may run together, but not beside an apply.
//!
//! The locks are flock(2) on files of their own in a directory of locks (`/run/lock/flint`,
//! `FLINT_LOCK_DIR`), one per directory locked, named after its path: nothing is written
//! into the root, no file of the root's filesystem is held open (its umount stage must be
//! able to unmount it), and the kernel drops the locks when the run ends, however it ends
//! (kill -9 included).

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Where the lock files are.
pub(crate) fn lock_dir() -> PathBuf {
    std::env::var_os("FLINT_LOCK_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/run/lock/flint"), PathBuf::from)
}

/// The locks a run holds, released when dropped (or when the process ends).
#[derive(Debug)]
pub(crate) struct Held(#[allow(dead_code)] Vec<std::fs::File>);

/// What a directory is to the run, for the message when it is taken.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role {
    Root,
    StateDir,
}

impl Role {
    fn describe(self) -> &'static str {
        match self {
            Role::Root => "target root",
            Role::StateDir => "state directory",
        }
    }
}

/// How long a run waits for a state directory another run holds.
const STATE_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The lock file of the directory `dir` (made absolute and, where it exists, canonical, so
/// that two spellings of one directory share it): its path with every byte but letters,
/// digits, `.` and `_` made `-`, and a hash of the path against collisions.
fn lock_file(locks: &Path, dir: &Path) -> PathBuf {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let canon = std::fs::canonicalize(&abs).unwrap_or(abs);
    let bytes = canon.as_os_str().as_bytes();
    let readable: String = (bytes.iter().take(64))
        .map(|&b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' => b as char,
            _ => '-',
        })
        .collect();
    let hash = sha2::Sha256::digest(bytes);
    let tag: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    locks.join(format!("{readable}.{tag}.lock"))
}

/// Locks each of `dirs` (exclusively for an apply, shared for a plan), in order: a root held
/// by another run is refused at once, a state directory waited for (up to ten minutes, with
/// a line on standard error). A plan that cannot make the directory of locks (not run as
/// root) goes on without them.
pub(crate) fn take(dirs: &[(&Path, Role)], exclusive: bool) -> Result<Held, String> {
    take_in(&lock_dir(), dirs, exclusive)
}

/// [`take`] with the lock files in `locks`.
pub(crate) fn take_in(
    locks: &Path,
    dirs: &[(&Path, Role)],
    exclusive: bool,
) -> Result<Held, String> {
    if let Err(e) = std::fs::create_dir_all(locks) {
        if !exclusive {
            return Ok(Held(Vec::new()));
        }
        return Err(format!(
            "making the directory of locks {}: {e}",
            locks.display()
        ));
    }
    let mut held: Vec<(PathBuf, std::fs::File)> = Vec::new();
    for (dir, role) in dirs {
        let path = lock_file(locks, dir);
        // Two roles may be the same directory; it is locked once.
        if held.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("opening the lock file {}: {e}", path.display()))?;
        let wait = match role {
            Role::Root => None,
            Role::StateDir => Some(STATE_WAIT),
        };
        lock(&f, exclusive, wait, || {
            format!(
                "another flint run is using the {} {} (it holds the lock {})",
                role.describe(),
                dir.display(),
                path.display()
            )
        })?;
        held.push((path, f));
    }
    Ok(Held(held.into_iter().map(|(_, f)| f).collect()))
}

/// flock(2) on `f`: at once, or polling for up to `wait` (said once on standard error).
fn lock(
    f: &std::fs::File,
    exclusive: bool,
    wait: Option<std::time::Duration>,
    held_by_another: impl Fn() -> String,
) -> Result<(), String> {
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    let start = std::time::Instant::now();
    let mut said = false;
    loop {
        // SAFETY: a valid open descriptor.
        if unsafe { libc::flock(f.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("{}: locking: {e}", held_by_another()));
        }
        match wait {
            Some(w) if start.elapsed() < w => {
                if !said {
                    eprintln!("note: {}; waiting for it to finish", held_by_another());
                    said = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Some(w) => {
                return Err(format!(
                    "{} for more than {} s; run again once it has finished",
                    held_by_another(),
                    w.as_secs()
                ));
            }
            None => {
                return Err(format!(
                    "{}; run again once it has finished",
                    held_by_another()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let t = std::env::temp_dir().join(format!("flint-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(&t).unwrap();
        t
    }

    #[test]
    fn an_apply_excludes_every_other_run_and_plans_share() {
        let t = scratch("excl");
        let locks = t.join("locks");
        std::fs::create_dir_all(t.join("root")).unwrap();
        std::fs::create_dir_all(t.join("state")).unwrap();
        let (root, state) = (t.join("root"), t.join("state"));
        let dirs = [
            (root.as_path(), Role::Root),
            (state.as_path(), Role::StateDir),
        ];
        let a = take_in(&locks, &dirs, true).unwrap();
        // flock locks belong to the open file: a second open in this process conflicts
        // as another process would.
        let e = take_in(&locks, &dirs, true).unwrap_err();
        assert!(
            e.contains("another flint run is using the target root"),
            "{e}"
        );
        // Another spelling of the same root is the same lock.
        let other = t.join("state/../root");
        let e = take_in(&locks, &[(other.as_path(), Role::Root)], true).unwrap_err();
        assert!(e.contains("target root"), "{e}");
        assert!(take_in(&locks, &dirs, false).is_err());
        drop(a);
        let p1 = take_in(&locks, &dirs, false).unwrap();
        let p2 = take_in(&locks, &dirs, false).unwrap();
        assert!(take_in(&locks, &dirs, true).is_err());
        drop((p1, p2));
        // One directory in two roles is locked once; nothing is written in the directories.
        take_in(
            &locks,
            &[(&root, Role::StateDir), (&root, Role::Root)],
            true,
        )
        .unwrap();
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn a_held_state_directory_is_waited_for() {
        let t = scratch("wait");
        let f = std::fs::File::create(t.join("l")).unwrap();
        let g = std::fs::File::open(t.join("l")).unwrap();
        lock(&f, true, None, String::new).unwrap();
        let e = lock(
            &g,
            true,
            Some(std::time::Duration::from_millis(120)),
            || "held".into(),
        );
        assert!(e.unwrap_err().starts_with("held for more than 0 s"));
        let start = std::time::Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                drop(f);
            });
            lock(&g, true, Some(std::time::Duration::from_secs(10)), || {
                "held".into()
            })
            .unwrap();
        });
        assert!(start.elapsed() >= std::time::Duration::from_millis(200));
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn lock_files_are_named_after_their_directories() {
        let p = lock_file(Path::new("/run/lock/flint"), Path::new("/sysroot"));
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("-sysroot."), "{name}");
        assert!(name.ends_with(".lock"), "{name}");
        assert_ne!(
            p,
            lock_file(Path::new("/run/lock/flint"), Path::new("/sys_root"))
        );
    }
}
