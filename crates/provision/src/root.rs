//! Paths inside the target root, resolved as if chrooted into it: symlinks are followed on
//! every element but the last, absolute link targets and `..` are taken relative to the
//! root, and nothing ever resolves outside it. As upstream, `..` is taken by the text of the
//! path (and of each link target joined to its link's directory), not by where the links
//! before it lead.

use std::collections::HashSet;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Symlinks followed while resolving one path, at most (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

/// A path resolved inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The host path of the entry itself (its last element not followed).
    pub host: PathBuf,
    /// The entry's path as seen inside the root, after resolving its parents.
    pub inner: String,
    /// Parent directories that do not exist yet (inner paths, outermost first).
    pub missing: Vec<String>,
}

/// The target root directory.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    pub dir: PathBuf,
    /// Inner paths already seen to be real directories (not links). Thousands of entries
    /// share a handful of parents, and looking at each parent again for each entry was most
    /// of a run that has nothing to change. Only what can stop being true is dropped:
    /// whoever removes or replaces an entry calls [`Root::forget`].
    dirs: Arc<Mutex<HashSet<String>>>,
}

impl Root {
    pub(crate) fn new(dir: PathBuf) -> Root {
        Root {
            dir,
            dirs: Arc::default(),
        }
    }

    /// Forgets the directories seen so far: an entry is about to be removed or replaced.
    pub(crate) fn forget(&self) {
        self.dirs.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub(crate) fn host(&self, inner: &str) -> PathBuf {
        self.dir.join(inner.trim_start_matches('/'))
    }

    /// Whether inner path `inner` was seen to be a real directory (and not forgotten since).
    fn known(&self, inner: &str) -> bool {
        self.dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(inner)
    }

    /// [`Root::resolve`] without a look at the disk or a copy of each element, for a clean
    /// path whose parent is already known to be a real directory (and so, by how
    /// directories get known, each of its parents): most entries of a large config.
    fn resolve_known(&self, path: &str) -> Option<Resolved> {
        let (parent, last) = path.rsplit_once('/')?;
        let clean = path.starts_with('/')
            && path[1..]
                .split('/')
                .all(|p| !p.is_empty() && p != "." && p != "..");
        if !clean || !(parent.is_empty() || self.known(parent)) {
            return None;
        }
        debug_assert!(!last.is_empty());
        Some(Resolved {
            host: self.host(path),
            inner: path.to_string(),
            missing: Vec::new(),
        })
    }

    /// Resolves the parents of absolute path `path` inside the root.
    pub(crate) fn resolve(&self, path: &str) -> Result<Resolved, String> {
        if let Some(r) = self.resolve_known(path) {
            return Ok(r);
        }
        // `..` in the path as written is taken by its text first, as upstream cleans paths.
        let mut parts = clean(Vec::new(), path);
        let Some(last) = parts.pop() else {
            return Err("the root itself cannot be an entry".into());
        };
        // `todo` is consumed from the front (clean: no `.` or `..`, which `clean` took by
        // the text); `done` is the resolved inner path so far.
        let mut todo: std::collections::VecDeque<String> = parts.into();
        let mut done: Vec<String> = Vec::new();
        let mut missing = Vec::new();
        let mut links = 0;
        while let Some(part) = todo.pop_front() {
            done.push(part);
            let inner = format!("/{}", done.join("/"));
            if !missing.is_empty() {
                missing.push(inner);
                continue;
            }
            if self.known(&inner) {
                continue;
            }
            let host = self.host(&inner);
            match std::fs::symlink_metadata(&host) {
                Err(_) => missing.push(inner),
                Ok(m) if m.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(format!(
                            "too many levels of symbolic links resolving {path}"
                        ));
                    }
                    let target = std::fs::read_link(&host).map_err(|e| e.to_string())?;
                    let target = target.to_string_lossy().into_owned();
                    done.pop();
                    if target.starts_with('/') {
                        done.clear();
                    }
                    // The target joined to the link's directory and cleaned by its text, as
                    // upstream does (`hl/..` is the link's own directory, wherever `hl`
                    // leads), then resolved from the top (its elements may be links too).
                    let mut spliced = clean(std::mem::take(&mut done), &target);
                    spliced.extend(todo.drain(..));
                    todo = spliced.into();
                }
                Ok(m) if m.is_dir() => {
                    self.dirs
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(inner);
                }
                Ok(_) => return Err(format!("{inner} is not a directory")),
            }
        }
        let inner = if done.is_empty() {
            format!("/{last}")
        } else {
            format!("/{}/{last}", done.join("/"))
        };
        Ok(Resolved {
            host: self.host(&inner),
            inner,
            missing,
        })
    }

    /// [`Root::resolve`] with the last element followed too, as a program chrooted into the
    /// root opens a file (useradd and groupadd with `--root`, upstream's lookups of owner
    /// names): every link, absolute or climbing, stays inside the root.
    pub(crate) fn resolve_fully(&self, path: &str) -> Result<Resolved, String> {
        let mut path = path.to_string();
        for _ in 0..MAX_LINKS {
            let r = self.resolve(&path)?;
            let Ok(target) = std::fs::read_link(&r.host) else {
                return Ok(r);
            };
            let target = target.to_string_lossy();
            path = if target.starts_with('/') {
                target.into_owned()
            } else {
                let dir = r.inner.rsplit_once('/').map_or("", |(d, _)| d);
                format!("{dir}/{target}")
            };
        }
        Err(format!(
            "too many levels of symbolic links resolving {path}"
        ))
    }

    /// The text of the file at inner path `path`, read as a chrooted program reads it
    /// ([`Root::resolve_fully`]); the root's own account databases are read this way, so a
    /// link at `/etc/passwd` never shows the host's.
    pub(crate) fn read_inside(&self, path: &str) -> std::io::Result<String> {
        let r = self.resolve_fully(path).map_err(std::io::Error::other)?;
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&r.host)?;
        let mut s = String::new();
        std::io::Read::read_to_string(&mut f, &mut s)?;
        Ok(s)
    }

    /// Where a file written through whatever stands at its path (the preset file the preset
    /// lines are appended to) ends up, its links followed as the kernel follows them from the
    /// host, so as upstream's write goes: `Some` inside the root; `None` where that leads
    /// out of the root (upstream writes there; flint writes nothing); an error where
    /// upstream's open fails on the way (a directory that does not exist). Only reads.
    pub(crate) fn resolve_through(&self, path: &str) -> Result<Option<Resolved>, String> {
        self.resolve_through_planned(path, &|_| None)
    }

    /// [`Root::resolve_through`] as it will be once the links `planned` gives (target by
    /// inner path) are made: a plan follows the links earlier entries would make.
    pub(crate) fn resolve_through_planned(
        &self,
        path: &str,
        planned: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Resolved>, String> {
        let mut r = self.resolve(path)?;
        let top = std::fs::canonicalize(&self.dir).map_err(|e| e.to_string())?;
        for _ in 0..MAX_LINKS {
            let target = match planned(&r.inner) {
                Some(t) => PathBuf::from(t),
                None => match std::fs::read_link(&r.host) {
                    Ok(t) => t,
                    Err(_) => return Ok(Some(r)),
                },
            };
            // An absolute target replaces the whole path, as for the kernel.
            let next = r.host.parent().unwrap_or(Path::new("/")).join(&target);
            let (Some(dir), Some(name)) = (next.parent(), next.file_name()) else {
                return Err(format!("open {}: is a directory", next.display()));
            };
            let dir =
                std::fs::canonicalize(dir).map_err(|e| format!("open {}: {e}", next.display()))?;
            let Ok(inside) = dir.strip_prefix(&top) else {
                return Ok(None);
            };
            let inner = Path::new("/").join(inside).join(name);
            r = self.resolve(&inner.to_string_lossy())?;
        }
        Err(format!(
            "too many levels of symbolic links resolving {path}"
        ))
    }
}

/// `base` (path elements from the top) followed by the elements of `path`, `.` dropped and
/// each `..` taking away the element before it (none above the top).
fn clean(mut base: Vec<String>, path: &str) -> Vec<String> {
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                base.pop();
            }
            _ => base.push(p.to_string()),
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_a_chroot() {
        let d = std::env::temp_dir().join(format!("flint-root-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("etc/real")).unwrap();
        std::os::unix::fs::symlink("real", d.join("etc/rel")).unwrap();
        std::os::unix::fs::symlink("/etc/real", d.join("etc/abs")).unwrap();
        std::os::unix::fs::symlink("../../../../escape", d.join("etc/up")).unwrap();
        std::os::unix::fs::symlink("loop2", d.join("etc/loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", d.join("etc/loop2")).unwrap();
        let r = Root::new(d.clone());
        assert_eq!(r.resolve("/etc/rel/f").unwrap().inner, "/etc/real/f");
        assert_eq!(r.resolve("/etc/abs/f").unwrap().inner, "/etc/real/f");
        let up = r.resolve("/etc/up/f").unwrap();
        assert_eq!(up.inner, "/escape/f");
        assert_eq!(up.missing, vec!["/escape".to_string()]);
        assert!(up.host.starts_with(&d));
        assert_eq!(
            r.resolve("/etc/rel").unwrap().inner,
            "/etc/rel",
            "the last element is not followed"
        );
        assert!(
            r.resolve("/etc/loop1/f")
                .unwrap_err()
                .contains("too many levels")
        );
        // Known parents answer without the disk; links among them never become known.
        assert!(r.resolve_known("/etc/real/g").is_some());
        assert_eq!(r.resolve("/etc/real/g").unwrap().inner, "/etc/real/g");
        assert!(r.resolve_known("/etc/rel/g").is_none());
        assert!(r.resolve_known("/etc/real/../rel/g").is_none());
        assert_eq!(r.resolve("/etc/rel/g").unwrap().inner, "/etc/real/g");
        // Replaced by a link: forgotten, then followed again.
        std::fs::rename(d.join("etc/real"), d.join("etc/moved")).unwrap();
        std::os::unix::fs::symlink("moved", d.join("etc/real")).unwrap();
        r.forget();
        assert!(r.resolve_known("/etc/real/g").is_none());
        assert_eq!(r.resolve("/etc/real/g").unwrap().inner, "/etc/moved/g");
        let deep = r.resolve("/a/b/c").unwrap();
        assert_eq!(deep.missing, vec!["/a".to_string(), "/a/b".to_string()]);
        // `..` in a link's target is taken by its text, before the links it climbs over.
        std::fs::create_dir_all(d.join("srv/deep/er")).unwrap();
        std::os::unix::fs::symlink("deep/er", d.join("srv/rel")).unwrap();
        std::os::unix::fs::symlink("rel/../z", d.join("srv/up")).unwrap();
        assert_eq!(r.resolve("/srv/up/f").unwrap().inner, "/srv/z/f");
        assert_eq!(r.resolve("/srv/rel/../f").unwrap().inner, "/srv/f");
        // Followed to the end, the last element too, and never out of the root.
        std::fs::write(d.join("etc/moved/db"), "inside\n").unwrap();
        std::os::unix::fs::symlink("/etc/moved/db", d.join("etc/abs-db")).unwrap();
        std::os::unix::fs::symlink("../../../../../etc/moved/db", d.join("etc/up-db")).unwrap();
        std::os::unix::fs::symlink("real/db", d.join("etc/rel-db")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.join("etc/host-db")).unwrap();
        for l in ["abs-db", "up-db", "rel-db"] {
            assert_eq!(
                r.read_inside(&format!("/etc/{l}")).unwrap(),
                "inside\n",
                "{l}"
            );
        }
        assert_eq!(
            r.resolve_fully("/etc/host-db").unwrap().inner,
            "/etc/hostname"
        );
        assert!(
            r.read_inside("/etc/host-db").is_err(),
            "not the host's /etc/hostname"
        );
        assert!(
            r.resolve_fully("/etc/loop1")
                .unwrap_err()
                .contains("too many levels")
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
