//! What the files stage refuses before it does anything, where carrying it out would fail
//! half-way or do harm that upstream does:
//!
//! - A removal across a mount point. `overwrite: true` removes whatever stands at an
//!   entry's path, a whole directory tree included; where a filesystem is mounted at or below
//!   that path (`/var/lib` while `/var/lib/data` is mounted), upstream removes the
//!   filesystem's contents too, then fails on the mount point (EBUSY). flint refuses such an
//!   entry before anything is removed, naming the entry and the filesystem; and the removal
//!   itself checks again ([`guard`]), for what the config does not name.
//! - A path longer than the kernel takes (`PATH_MAX`, or an element past `NAME_MAX`):
//!   its directories would be made one by one until the kernel refuses the rest, leaving
//!   thousands behind; refused before any is made.

use crate::entry::EntryError;
use crate::root::Root;
use flint_go::tree::JsonPath;
use flint_ignition::types::Config;
use std::path::{Path, PathBuf};

/// The mount points at or below the directory `host` (a host path).
pub(crate) fn mounts_within(host: &Path) -> Vec<PathBuf> {
    let Ok(top) = std::fs::canonicalize(host) else {
        return Vec::new();
    };
    let mounted = crate::system::mount::mounted().unwrap_or_default();
    let mut out: Vec<PathBuf> = (mounted.into_iter())
        .map(|m| m.dir)
        .filter(|d| d.starts_with(&top))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Refuses to remove the directory `host` when a filesystem is mounted at or below it.
pub(crate) fn guard(host: &Path) -> std::io::Result<()> {
    match mounts_within(host).first() {
        Some(m) => Err(std::io::Error::other(format!(
            "removing {} would cross into the filesystem mounted at {}: refused",
            host.display(),
            m.display()
        ))),
        None => Ok(()),
    }
}

/// The entries whose `overwrite` removes what is at their path: files and links, and
/// directories on a first run (which empties them).
fn removers(cfg: &Config, first_run: bool) -> Vec<(JsonPath, &str)> {
    let st = JsonPath::root().key("storage");
    let on = |o: Option<bool>| o == Some(true);
    let dirs = (cfg.storage.directories.iter().enumerate())
        .filter(|(_, d)| first_run && on(d.overwrite))
        .map(|(i, d)| (st.key("directories").index(i), d.path.as_str()));
    let files = (cfg.storage.files.iter().enumerate())
        .filter(|(_, f)| on(f.overwrite))
        .map(|(i, f)| (st.key("files").index(i), f.path.as_str()));
    let links = (cfg.storage.links.iter().enumerate())
        .filter(|(_, l)| on(l.overwrite))
        .map(|(i, l)| (st.key("links").index(i), l.path.as_str()));
    dirs.chain(files).chain(links).collect()
}

/// Fails on the first entry whose `overwrite` would remove a mounted filesystem or a
/// directory holding one: one of the config's filesystems mounted at or below its path (the
/// mount stage makes the way to it, so that path is a directory by then: known from the
/// config alone, in a plan as in the run), or any filesystem mounted there now.
pub(crate) fn check_removals(cfg: &Config, root: &Root, first_run: bool) -> Result<(), EntryError> {
    let fs_path = JsonPath::root().key("storage").key("filesystems");
    let mounted: Vec<(JsonPath, String)> = (cfg.storage.filesystems.iter().enumerate())
        .filter_map(|(i, f)| {
            let p = f.path.as_deref()?;
            Some((fs_path.index(i), flint_ignition::validate::paths::clean(p)))
        })
        .collect();
    let within = |q: &str, p: &str| q == p || q.strip_prefix(p).is_some_and(|r| r.starts_with('/'));
    let refuse = |entry: JsonPath, path: &str, fs: String, at: &str| EntryError {
        entry,
        message: format!(
            "overwrite would remove {path}, and with it {fs} mounted at {at}: a removal \
             never crosses into another mounted filesystem"
        ),
    };
    let removers = removers(cfg, first_run);
    for (entry, path) in &removers {
        let p = flint_ignition::validate::paths::clean(path);
        if let Some((fs, q)) = mounted.iter().find(|(_, q)| within(q, &p)) {
            return Err(refuse(
                entry.clone(),
                path,
                format!("the filesystem of {fs}"),
                q,
            ));
        }
    }
    let top = std::fs::canonicalize(&root.dir).unwrap_or_else(|_| root.dir.clone());
    for (entry, path) in removers {
        let Ok(r) = root.resolve(path) else { continue };
        if !std::fs::symlink_metadata(&r.host).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Some(m) = mounts_within(&r.host).into_iter().next() else {
            continue;
        };
        let inner = match m.strip_prefix(&top) {
            Ok(rel) => format!("/{}", rel.display()),
            Err(_) => m.display().to_string(),
        };
        return Err(refuse(entry, path, "a filesystem".into(), &inner));
    }
    Ok(())
}

/// Fails on the first entry whose path in the root is longer than the kernel takes: the
/// whole path (`PATH_MAX` less its terminating NUL) or one of its elements (`NAME_MAX`).
pub(crate) fn check_path_lengths(cfg: &Config, root: &Root) -> Result<(), EntryError> {
    let st = JsonPath::root().key("storage");
    let entries = (cfg.storage.directories.iter().enumerate())
        .map(|(i, d)| (st.key("directories").index(i), d.path.as_str()))
        .chain(
            (cfg.storage.files.iter().enumerate())
                .map(|(i, f)| (st.key("files").index(i), f.path.as_str())),
        )
        .chain(
            (cfg.storage.links.iter().enumerate())
                .map(|(i, l)| (st.key("links").index(i), l.path.as_str())),
        );
    for (entry, path) in entries {
        let host = root
            .resolve(path)
            .map_or_else(|_| root.host(path), |r| r.host);
        // The path itself may be thousands of bytes: the entry names it.
        if let Err(message) = kernel_takes(&host) {
            return Err(EntryError { entry, message });
        }
    }
    Ok(())
}

/// Whether the kernel takes `host` as a path: shorter than `PATH_MAX`, no element longer
/// than `NAME_MAX`.
fn kernel_takes(host: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let len = host.as_os_str().as_bytes().len();
    let max = libc::PATH_MAX as usize - 1;
    if len > max {
        return Err(format!(
            "its path is {len} bytes long in the root, longer than the kernel takes ({max}): \
             nothing of it was made"
        ));
    }
    let name_max = 255;
    if let Some(long) = host.iter().find(|e| e.as_bytes().len() > name_max) {
        return Err(format!(
            "an element of its path ({:?}…) is {} bytes long, longer than the kernel takes \
             ({name_max}): nothing of it was made",
            long.to_string_lossy().chars().take(32).collect::<String>(),
            long.as_bytes().len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_the_kernel_takes() {
        let long = format!("/r{}", "/ab".repeat(1364));
        assert_eq!(long.len(), 4094);
        assert!(kernel_takes(Path::new(&long)).is_ok());
        let e = kernel_takes(Path::new(&format!("{long}/c"))).unwrap_err();
        assert!(e.contains("4096 bytes long"), "{e}");
        let name = format!("/r/{}", "n".repeat(255));
        assert!(kernel_takes(Path::new(&name)).is_ok());
        let e = kernel_takes(Path::new(&format!("{name}n"))).unwrap_err();
        assert!(e.contains("256 bytes long"), "{e}");
    }
}
