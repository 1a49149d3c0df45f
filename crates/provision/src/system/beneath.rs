//! Files opened beneath a directory handle, never through a symbolic link out of it: how
//! flint reads and writes a partition it mounts for its own use (the OEM partition), where
//! a link left by whoever made the filesystem must not lead a read or a write into the
//! initramfs (a `grub.cfg` that links to `/etc/shadow`).
//!
//! `openat2(2)` with `RESOLVE_BENEATH` does the confinement: a relative link that stays
//! inside is followed, an absolute one or one that climbs out fails with `EXDEV`, and so
//! does a crossing into another mount. On a kernel without `openat2` (before 5.6), every
//! element is opened on its own without following any link, which refuses links inside too.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// Why a path beneath the directory could not be opened.
#[derive(Debug)]
pub enum Refused {
    /// Not there.
    Missing,
    /// A symbolic link on the way (or at the end) leads out of the directory, or another
    /// filesystem is mounted on the way.
    Escapes,
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Missing => f.write_str("not found"),
            Refused::Escapes => {
                f.write_str("a symbolic link on the way leads outside the partition")
            }
            Refused::Io(e) => write!(f, "{e}"),
        }
    }
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::other("path holds a NUL byte"))
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// A directory held open; paths below it are resolved by the kernel beneath it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    /// The path it was opened at, for messages.
    shown: PathBuf,
}

impl Dir {
    /// Opens the directory at `path`, refusing a symbolic link at its last element.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let p = cstr(path.as_os_str().as_bytes())?;
        // SAFETY: a NUL-terminated path.
        let fd = unsafe {
            libc::open(
                p.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        Ok(Dir {
            fd: owned(fd)?,
            shown: path.to_path_buf(),
        })
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The device number of the filesystem it is on.
    pub fn device(&self) -> io::Result<u64> {
        // SAFETY: a zeroed stat is a valid out-parameter for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and out-pointer.
        if unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(st.st_dev)
    }

    /// Opens `rel` (relative, `..` allowed only while it stays inside) with `flags`.
    pub fn open_at(&self, rel: &Path, flags: libc::c_int, mode: u32) -> Result<OwnedFd, Refused> {
        let name = cstr(rel.as_os_str().as_bytes()).map_err(Refused::Io)?;
        // SAFETY: open_how is plain integers; all zero is its empty value.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        if flags & libc::O_CREAT != 0 {
            how.mode = u64::from(mode);
        }
        how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS | libc::RESOLVE_NO_XDEV;
        // SAFETY: a valid directory descriptor, a NUL-terminated name, and `how` with its
        // size, as openat2(2) takes them.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                self.fd.as_raw_fd(),
                name.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        match owned(fd as libc::c_int) {
            Ok(fd) => Ok(fd),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => self.open_walking(rel, flags, mode),
            Err(e) => Err(refusal(e)),
        }
    }

    /// [`Dir::open_at`] without openat2: each element opened on its own, no link followed.
    fn open_walking(&self, rel: &Path, flags: libc::c_int, mode: u32) -> Result<OwnedFd, Refused> {
        let parts: Vec<&std::ffi::OsStr> = (rel.components())
            .filter_map(|c| match c {
                Component::Normal(n) => Some(Ok(n)),
                Component::CurDir => None,
                _ => Some(Err(Refused::Escapes)),
            })
            .collect::<Result<_, _>>()?;
        let Some((last, dirs)) = parts.split_last() else {
            return Err(Refused::Io(io::Error::other("an empty path")));
        };
        let at = |dir: libc::c_int, name: &std::ffi::OsStr, fl: libc::c_int| {
            let n = cstr(name.as_bytes())?;
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            owned(unsafe { libc::openat(dir, n.as_ptr(), fl | libc::O_CLOEXEC, mode) })
        };
        let mut cur: Option<OwnedFd> = None;
        for d in dirs {
            let base = cur.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
            let fl = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
            cur = Some(at(base, d, fl).map_err(refusal)?);
        }
        let base = cur.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
        at(base, last, flags | libc::O_NOFOLLOW).map_err(refusal)
    }

    /// Reads the regular file `rel`, at most `limit` bytes (more is an error).
    pub fn read(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, Refused> {
        use std::io::Read;
        let fd = self.open_at(rel, libc::O_RDONLY, 0)?;
        let f = std::fs::File::from(fd);
        let meta = f.metadata().map_err(Refused::Io)?;
        if meta.is_dir() {
            return Err(Refused::Io(io::Error::other("is a directory")));
        }
        let mut out = Vec::new();
        (f.take(limit + 1).read_to_end(&mut out)).map_err(Refused::Io)?;
        if out.len() as u64 > limit {
            return Err(Refused::Io(io::Error::other(format!(
                "larger than the {limit}-byte resource limit"
            ))));
        }
        Ok(out)
    }

    /// Replaces `rel` with `bytes` (mode `mode`, less the umask): a new file of a name of its
    /// own beside it, renamed over it. What stood there (a link too) is replaced, not
    /// followed; a link on the way to its directory is refused like a read's.
    pub fn write_atomic(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<(), Refused> {
        use std::io::Write;
        let name = rel
            .file_name()
            .ok_or_else(|| Refused::Io(io::Error::other("no file name")))?;
        let parent = rel.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = match parent {
            Some(p) => self.open_at(p, libc::O_PATH | libc::O_DIRECTORY, 0)?,
            None => self.fd.try_clone().map_err(Refused::Io)?,
        };
        let tmp = unique_name(name);
        let tmp_c = cstr(tmp.as_bytes()).map_err(Refused::Io)?;
        let name_c = cstr(name.as_bytes()).map_err(Refused::Io)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = owned(unsafe {
            libc::openat(
                dir.as_raw_fd(),
                tmp_c.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode,
            )
        })
        .map_err(Refused::Io)?;
        let mut f = std::fs::File::from(fd);
        let written = f.write_all(bytes).and_then(|_| f.sync_all()).and_then(|_| {
            // SAFETY: valid directory descriptors and NUL-terminated names.
            let rc = unsafe {
                libc::renameat(
                    dir.as_raw_fd(),
                    tmp_c.as_ptr(),
                    dir.as_raw_fd(),
                    name_c.as_ptr(),
                )
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
        if let Err(e) = written {
            // SAFETY: as above.
            unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_c.as_ptr(), 0) };
            return Err(Refused::Io(e));
        }
        Ok(())
    }
}

/// A temporary name for a write of `name`, unique to this write: `.NAME.flint-tmp.RANDOM`.
pub(crate) fn unique_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut r = [0u8; 6];
    super::random_bytes(&mut r);
    let mut s = std::ffi::OsString::from(".");
    s.push(name);
    s.push(".flint-tmp.");
    s.push(r.iter().map(|b| format!("{b:02x}")).collect::<String>());
    s
}

fn refusal(e: io::Error) -> Refused {
    match e.raw_os_error() {
        Some(libc::ENOENT) => Refused::Missing,
        Some(libc::EXDEV) | Some(libc::ELOOP) => Refused::Escapes,
        _ => Refused::Io(e),
    }
}

/// A new private directory (mode 0700) named `PREFIX-XXXXXX` in `parent`, made fresh as
/// mkdtemp(3) makes it: nothing that stood there before, a link planted by another user
/// included, is ever taken for it.
pub(crate) fn private_dir(parent: &Path, prefix: &str) -> io::Result<PathBuf> {
    let mut template = parent
        .join(format!("{prefix}-XXXXXX"))
        .into_os_string()
        .into_vec();
    template.push(0);
    // SAFETY: a writable NUL-terminated template ending in XXXXXX, as mkdtemp takes it.
    let p = unsafe { libc::mkdtemp(template.as_mut_ptr() as *mut libc::c_char) };
    if p.is_null() {
        return Err(io::Error::last_os_error());
    }
    template.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(template)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flint-beneath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn links_inside_are_followed_and_links_out_refused() {
        let t = scratch("links");
        let top = t.join("part");
        std::fs::create_dir_all(top.join("sub")).unwrap();
        std::fs::write(top.join("sub/f"), b"inside").unwrap();
        std::fs::write(t.join("secret"), b"outside").unwrap();
        std::os::unix::fs::symlink("sub/f", top.join("rel")).unwrap();
        std::os::unix::fs::symlink(t.join("secret"), top.join("abs")).unwrap();
        std::os::unix::fs::symlink("../secret", top.join("up")).unwrap();
        std::os::unix::fs::symlink(&t, top.join("outdir")).unwrap();
        let d = Dir::open(&top).unwrap();
        assert_eq!(d.read(Path::new("rel"), 100).unwrap(), b"inside");
        assert_eq!(d.read(Path::new("sub/../sub/f"), 100).unwrap(), b"inside");
        for bad in ["abs", "up", "outdir/secret", "../secret", "/etc/hostname"] {
            assert!(
                matches!(d.read(Path::new(bad), 100), Err(Refused::Escapes)),
                "{bad}"
            );
        }
        assert!(matches!(
            d.read(Path::new("none"), 100),
            Err(Refused::Missing)
        ));
        assert!(d.read(Path::new("sub/f"), 3).is_err());
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn writes_replace_links_and_never_follow_them() {
        let t = scratch("write");
        let top = t.join("part");
        std::fs::create_dir_all(&top).unwrap();
        std::fs::write(t.join("secret"), b"outside").unwrap();
        std::os::unix::fs::symlink(t.join("secret"), top.join("grub.cfg")).unwrap();
        std::os::unix::fs::symlink(&t, top.join("out")).unwrap();
        let d = Dir::open(&top).unwrap();
        d.write_atomic(Path::new("grub.cfg"), b"new", 0o644)
            .unwrap();
        assert_eq!(std::fs::read(t.join("secret")).unwrap(), b"outside");
        let m = std::fs::symlink_metadata(top.join("grub.cfg")).unwrap();
        assert!(m.is_file());
        assert_eq!(std::fs::read(top.join("grub.cfg")).unwrap(), b"new");
        assert!(matches!(
            d.write_atomic(Path::new("out/x"), b"x", 0o644),
            Err(Refused::Escapes)
        ));
        assert!(!t.join("x").exists());
        // Nothing but the file itself is left in the directory.
        let names: Vec<_> = std::fs::read_dir(&top)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn private_directories_are_new_and_unique() {
        let t = scratch("private");
        let a = private_dir(&t, "flint-oem").unwrap();
        let b = private_dir(&t, "flint-oem").unwrap();
        assert_ne!(a, b);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("flint-oem-")
        );
        std::fs::remove_dir_all(&t).unwrap();
    }
}
