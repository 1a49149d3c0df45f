//! File operations done as another user, as upstream writes SSH keys: in a thread of its own
//! whose effective uid and gid are the user's and whose umask is 077, so that the kernel's
//! permission checks, the new files' owners and their modes are exactly the user's.
//!
//! Credentials are per thread in Linux; the raw set*id system calls (unlike libc's wrappers,
//! which change every thread of the process) change only the calling thread, and the thread
//! ends when the work is done. `unshare(CLONE_FS)` gives the thread its own umask.

use std::io::{Error, Result, Write};
use std::path::{Component, Path, PathBuf};

/// Switches the calling thread to `uid`/`gid` (effective ids) with umask 077.
fn become_user(uid: u32, gid: u32) -> Result<()> {
    // SAFETY: plain system calls on the calling thread's own state.
    unsafe {
        if libc::unshare(libc::CLONE_FS) != 0 {
            return Err(Error::last_os_error());
        }
        libc::umask(0o077);
        if libc::getegid() != gid
            && libc::syscall(libc::SYS_setresgid, -1i64, gid as i64, -1i64) != 0
        {
            return Err(Error::last_os_error());
        }
        if libc::geteuid() != uid
            && libc::syscall(libc::SYS_setresuid, -1i64, uid as i64, -1i64) != 0
        {
            return Err(Error::last_os_error());
        }
    }
    Ok(())
}

/// Every directory from `/` down to `dir`, made 0700 (less the umask) where missing.
fn mkdir_all(dir: &Path) -> Result<()> {
    let mut p = PathBuf::new();
    for c in dir.components() {
        p.push(c);
        if matches!(c, Component::RootDir) {
            continue;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

/// Writes `data` to the absolute path `file` as user `uid`:`gid`: missing directories made
/// 0700, the file opened 0600 (kept as it is when it exists) and truncated.
pub(super) fn write_file(uid: u32, gid: u32, file: &Path, data: &[u8]) -> Result<()> {
    let file = file.to_path_buf();
    let data = data.to_vec();
    std::thread::spawn(move || -> Result<()> {
        become_user(uid, gid)?;
        if let Some(dir) = file.parent() {
            mkdir_all(dir)?;
        }
        // The caller followed whatever link stood there (inside the root only): one put there
        // since is not followed.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&file)?;
        f.write_all(&data)
    })
    .join()
    .map_err(|_| Error::other("the thread writing as the user panicked"))?
}

/// Whether user `uid`:`gid` may open the existing file `file` for writing (it is opened,
/// neither created nor truncated, and closed).
pub(super) fn can_write(uid: u32, gid: u32, file: &Path) -> Result<()> {
    let file = file.to_path_buf();
    std::thread::spawn(move || -> Result<()> {
        become_user(uid, gid)?;
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&file)
            .map(drop)
    })
    .join()
    .map_err(|_| Error::other("the thread opening as the user panicked"))?
}

/// Whether user `uid`:`gid` may go through the directory `dir` (search permission on it and
/// on the way to it), as the kernel asks when it opens a path below `dir`.
pub(super) fn can_search(uid: u32, gid: u32, dir: &Path) -> Result<()> {
    let dir = dir.to_path_buf();
    std::thread::spawn(move || -> Result<()> {
        become_user(uid, gid)?;
        access(&dir, libc::X_OK)
    })
    .join()
    .map_err(|_| Error::other("the thread checking as the user panicked"))?
}

/// `faccessat` with the calling thread's effective ids.
fn access(path: &Path, mode: libc::c_int) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::other("a path with a NUL byte"))?;
    // SAFETY: a valid C string; checks the calling thread's effective ids.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::last_os_error())
    }
}

/// Whether user `uid`:`gid` may make `file` where it is missing, as [`write_file`] makes it:
/// the deepest directory on its way that exists must let the user in and write in it (the
/// directories below it, and the file, are then the user's own).
pub(super) fn can_create(uid: u32, gid: u32, file: &Path) -> Result<()> {
    let file = file.to_path_buf();
    std::thread::spawn(move || -> Result<()> {
        become_user(uid, gid)?;
        let mut dir = file.parent();
        while let Some(d) = dir {
            match std::fs::symlink_metadata(d) {
                Ok(_) => return access(d, libc::W_OK | libc::X_OK),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => dir = d.parent(),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    })
    .join()
    .map_err(|_| Error::other("the thread checking as the user panicked"))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn writes_as_the_user_and_leaves_the_process_root() {
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let d = tempdir();
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let f = d.join("a/b/keys");
        write_file(4321, 4322, &f, b"k\n").unwrap();
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (4321, 4322, 0o600));
        let a = std::fs::metadata(d.join("a")).unwrap();
        assert_eq!((a.uid(), a.mode() & 0o777), (4321, 0o700));
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "only the thread changed user"
        );
        // A directory the user may not write to: permission denied, nothing written.
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let err = write_file(4321, 4322, &d.join("c/keys"), b"k\n").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(!d.join("c").exists());
        // can_create says so beforehand, and nothing else: below `a` (the user's) it may,
        // missing directories and all; in `d` it may not; as root it may.
        let no = can_create(4321, 4322, &d.join("c/keys")).unwrap_err();
        assert_eq!(no.kind(), std::io::ErrorKind::PermissionDenied);
        can_create(4321, 4322, &d.join("a/x/y/keys")).unwrap();
        can_create(0, 0, &d.join("c/keys")).unwrap();
        assert!(!d.join("c").exists() && !d.join("a/x").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("flint-as-user-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }
}
