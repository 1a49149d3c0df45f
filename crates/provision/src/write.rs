//! Files written whole or not at all: through a temporary file of their own in the same
//! directory, renamed over the target; and the leftovers of a run killed mid-write.

use crate::root;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The temporary file a write of `path` goes through before its rename, opened for writing
/// (mode `mode`, less the umask): `.NAME.flint-tmp.RANDOM`, made new (never through a link,
/// never over anything that stands there), so that no two writes share one, whatever runs
/// beside this one. A run killed mid-write leaves it behind; the next run, which finds the
/// in-progress mark, clears such leftovers in the directories it writes to
/// ([`clear_leftovers`]).
pub(crate) fn open_temp(path: &Path, mode: u32) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    let mut tries = 0;
    loop {
        let tmp = dir.join(crate::system::beneath::unique_name(name));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Whether `name` is one of flint's temporary names ([`open_temp`]; `.NAME.flint-tmp` too,
/// as earlier versions named them).
fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    let n = name.as_encoded_bytes();
    n.starts_with(b".")
        && (n.ends_with(b".flint-tmp") || n.windows(11).any(|w| w == b".flint-tmp."))
}

/// Removes what an interrupted run left at flint's temporary names (regular files only:
/// a link or a directory there is the root's own) in each of `dirs` (paths in the root).
pub(crate) fn clear_leftovers<'a>(r: &root::Root, dirs: impl IntoIterator<Item = &'a str>) {
    let mut seen = HashSet::new();
    for d in dirs {
        let Ok(res) = r.resolve(d) else { continue };
        if !seen.insert(res.host.clone()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&res.host) else {
            continue;
        };
        for e in rd.flatten() {
            if is_temp_name(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Writes `bytes` to `path` atomically (a temporary file in the same directory, renamed).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    let (tmp, mut f) = open_temp(path, mode)?;
    let r = f.write_all(bytes).and_then(|_| f.sync_all());
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_new_for_each_write_and_leftovers_are_cleared() {
        let t = std::env::temp_dir().join(format!("flint-temps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(t.join("srv/.kept.flint-tmp.d")).unwrap();
        let target = t.join("srv/f");
        let (a, _fa) = open_temp(&target, 0o600).unwrap();
        let (b, _fb) = open_temp(&target, 0o600).unwrap();
        assert_ne!(a, b, "two writes of one file share a temporary file");
        for p in [&a, &b] {
            let n = p.file_name().unwrap().to_string_lossy();
            assert!(n.starts_with(".f.flint-tmp."), "{n}");
        }
        // What a killed run left: regular files at flint's names go, the rest stays.
        std::fs::write(t.join("srv/.g.flint-tmp"), "old").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", t.join("srv/.h.flint-tmp.x")).unwrap();
        std::fs::write(t.join("srv/g.flint-tmp.x"), "not ours: no dot").unwrap();
        let r = root::Root::new(t.clone());
        clear_leftovers(&r, ["/srv", "/srv", "/missing"]);
        let mut names: Vec<String> = (std::fs::read_dir(t.join("srv")).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".h.flint-tmp.x", ".kept.flint-tmp.d", "g.flint-tmp.x"]
        );
        write_atomic(&target, b"x", 0o644).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"x");
        assert_eq!(std::fs::read_dir(t.join("srv")).unwrap().count(), 4);
        std::fs::remove_dir_all(&t).unwrap();
    }
}
