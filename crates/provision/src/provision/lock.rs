//! One run at a time per target root and per state directory. Two applies on one root,
//! left to run together, would interleave their writes (one file holding parts of both
//! configs, with either's mode): each run takes an exclusive lock on the root directory
//! and on its state directory before it starts. A second run on the same root is refused at
//! once, saying so. Runs on other roots that share a state directory (the default one, when
//! a build host provisions several images at once) wait their turn, saying so, since what
//! they keep there must not mix. A plan only reads, so plans take shared locks: any number
//! of them may run together, but not beside an apply.
//!
//! The lock is flock(2) on the directory itself: nothing is written into the root, and the
//! kernel drops it when the run ends, however it ends (kill -9 included).

use std::os::fd::AsRawFd;
use std::path::Path;

/// The locks a run holds, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct Held(#[allow(dead_code)] Vec<std::fs::File>);

/// What a directory is to the run, for the message when it is taken.
#[derive(Debug, Clone, Copy)]
pub enum Role {
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

/// Locks each of `dirs` (exclusively for an apply, shared for a plan), in order: a root held
/// by another run is refused at once, a state directory waited for (up to ten minutes, with
/// a line on standard error). A directory that does not exist is skipped: there is nothing
/// in it to mix.
pub fn take(dirs: &[(&Path, Role)], exclusive: bool) -> Result<Held, String> {
    let mut held = Vec::new();
    for (dir, role) in dirs {
        let f = match std::fs::File::open(dir) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "opening the {} {} to lock it: {e}",
                    role.describe(),
                    dir.display()
                ));
            }
        };
        // Two roles may be the same directory; it is locked once.
        if held.iter().any(|h: &std::fs::File| same_file(h, &f)) {
            continue;
        }
        let wait = match role {
            Role::Root => None,
            Role::StateDir => Some(STATE_WAIT),
        };
        lock(&f, exclusive, wait, || {
            format!(
                "another flint run is using the {} {} (it holds a lock on it)",
                role.describe(),
                dir.display()
            )
        })?;
        held.push(f);
    }
    Ok(Held(held))
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

fn same_file(a: &std::fs::File, b: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a.metadata(), b.metadata()) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_apply_excludes_every_other_run_and_plans_share() {
        let t = std::env::temp_dir().join(format!("flint-lock-{}", std::process::id()));
        std::fs::create_dir_all(t.join("root")).unwrap();
        std::fs::create_dir_all(t.join("state")).unwrap();
        let (root, state) = (t.join("root"), t.join("state"));
        let dirs = [
            (root.as_path(), Role::Root),
            (state.as_path(), Role::StateDir),
        ];
        let a = take(&dirs, true).unwrap();
        // flock locks belong to the open file: a second open in this process conflicts
        // as another process would.
        let e = take(&dirs, true).unwrap_err();
        assert!(
            e.contains("another flint run is using the target root"),
            "{e}"
        );
        assert!(take(&dirs, false).is_err());
        drop(a);
        let p1 = take(&dirs, false).unwrap();
        let p2 = take(&dirs, false).unwrap();
        assert!(take(&dirs, true).is_err());
        drop((p1, p2));
        // Missing directories are skipped; one directory in two roles is locked once.
        take(
            &[
                (&t.join("none"), Role::Root),
                (&root, Role::StateDir),
                (&root, Role::Root),
            ],
            true,
        )
        .unwrap();
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn a_held_state_directory_is_waited_for() {
        let t = std::env::temp_dir().join(format!("flint-lock-wait-{}", std::process::id()));
        std::fs::create_dir_all(&t).unwrap();
        let f = std::fs::File::open(&t).unwrap();
        let g = std::fs::File::open(&t).unwrap();
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
}
