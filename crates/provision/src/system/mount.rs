//! mount(2) and umount(2), and what is mounted where (/proc/self/mountinfo).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Splits `mount -o` style options into mount(2) flags and the filesystem's own data string.
pub(crate) fn split_options(options: &[String]) -> (libc::c_ulong, String) {
    let mut flags: libc::c_ulong = 0;
    let mut data: Vec<&str> = Vec::new();
    for o in options
        .iter()
        .flat_map(|o| o.split(','))
        .filter(|o| !o.is_empty())
    {
        let (set, clear): (libc::c_ulong, libc::c_ulong) = match o {
            "ro" => (libc::MS_RDONLY, 0),
            "rw" => (0, libc::MS_RDONLY),
            "nosuid" => (libc::MS_NOSUID, 0),
            "suid" => (0, libc::MS_NOSUID),
            "nodev" => (libc::MS_NODEV, 0),
            "dev" => (0, libc::MS_NODEV),
            "noexec" => (libc::MS_NOEXEC, 0),
            "exec" => (0, libc::MS_NOEXEC),
            "sync" => (libc::MS_SYNCHRONOUS, 0),
            "async" => (0, libc::MS_SYNCHRONOUS),
            "dirsync" => (libc::MS_DIRSYNC, 0),
            "noatime" => (libc::MS_NOATIME, 0),
            "atime" => (0, libc::MS_NOATIME),
            "nodiratime" => (libc::MS_NODIRATIME, 0),
            "diratime" => (0, libc::MS_NODIRATIME),
            "relatime" => (libc::MS_RELATIME, 0),
            "norelatime" => (0, libc::MS_RELATIME),
            "strictatime" => (libc::MS_STRICTATIME, 0),
            "lazytime" => (libc::MS_LAZYTIME, 0),
            "nolazytime" => (0, libc::MS_LAZYTIME),
            "mand" => (libc::MS_MANDLOCK, 0),
            "nomand" => (0, libc::MS_MANDLOCK),
            "silent" => (libc::MS_SILENT, 0),
            "loud" => (0, libc::MS_SILENT),
            // Meaningful to mount(8) and fstab only.
            "defaults" | "auto" | "noauto" | "nofail" | "_netdev" | "user" | "nouser" => (0, 0),
            other => {
                data.push(other);
                (0, 0)
            }
        };
        flags = (flags | set) & !clear;
    }
    (flags, data.join(","))
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::other("path holds a NUL byte"))
}

/// Mounts `dev` of type `fstype` on `dir` with `options` (mount(8) syntax).
pub(crate) fn mount(dev: &Path, dir: &Path, fstype: &str, options: &[String]) -> io::Result<()> {
    let (flags, data) = split_options(options);
    let (d, t, f) = (cstr(dev)?, cstr(Path::new(fstype))?, cstr(dir)?);
    let data = CString::new(data).map_err(|_| io::Error::other("option holds a NUL byte"))?;
    let ptr = if data.as_bytes().is_empty() {
        std::ptr::null()
    } else {
        data.as_ptr() as *const libc::c_void
    };
    // SAFETY: all pointers are valid NUL-terminated strings (or null data) for the call.
    let rc = unsafe { libc::mount(d.as_ptr(), f.as_ptr(), t.as_ptr(), flags, ptr) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Mounts `dev` on the directory open as `dir` (from [`open_beneath`]): the kernel mounts on
/// that very directory, whatever a path to it would resolve to by now.
pub(crate) fn mount_on(
    dev: &Path,
    dir: &std::os::fd::OwnedFd,
    fstype: &str,
    options: &[String],
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let at = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    mount(dev, &at, fstype, options)
}

/// Opens directory `parts` (path elements, no `.` or `..`) beneath the directory `root`
/// without following any symbolic link: a link or a non-directory on the way is
/// [`BeneathError::NotADirectory`] naming the element. With `create`, missing elements are
/// made (mode 0755, the umask applies); without it a missing one is [`BeneathError::Missing`].
pub(crate) fn open_beneath(
    root: &Path,
    parts: &[String],
    create: bool,
) -> Result<std::os::fd::OwnedFd, BeneathError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let open = |at: libc::c_int, name: &CString| -> io::Result<OwnedFd> {
        // SAFETY: a valid directory fd (or AT_FDCWD) and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                at,
                name.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: a fresh fd that nothing else owns.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let mut cur = open(libc::AT_FDCWD, &cstr(root)?)?;
    for (i, part) in parts.iter().enumerate() {
        let name =
            CString::new(part.as_bytes()).map_err(|_| io::Error::other("path holds a NUL byte"))?;
        let next = match open(cur.as_raw_fd(), &name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                // SAFETY: as above; mkdirat never follows a link in its last element.
                let rc = unsafe { libc::mkdirat(cur.as_raw_fd(), name.as_ptr(), 0o755) };
                if rc != 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(BeneathError::Io(e));
                    }
                }
                open(cur.as_raw_fd(), &name)
            }
            r => r,
        };
        cur = match next {
            Ok(fd) => fd,
            Err(e)
                if e.raw_os_error() == Some(libc::ENOTDIR)
                    || e.raw_os_error() == Some(libc::ELOOP) =>
            {
                return Err(BeneathError::NotADirectory(i));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(BeneathError::Missing),
            Err(e) => return Err(BeneathError::Io(e)),
        };
    }
    Ok(cur)
}

/// Why [`open_beneath`] failed.
#[derive(Debug)]
pub(crate) enum BeneathError {
    /// Element `i` is a symbolic link or not a directory.
    NotADirectory(usize),
    /// An element does not exist (only without `create`).
    Missing,
    Io(io::Error),
}

impl From<io::Error> for BeneathError {
    fn from(e: io::Error) -> Self {
        BeneathError::Io(e)
    }
}

/// Unmounts `dir`.
pub(crate) fn umount(dir: &Path) -> io::Result<()> {
    let d = cstr(dir)?;
    // SAFETY: a valid NUL-terminated path. UMOUNT_NOFOLLOW: a link in the last element is
    // not followed, so a directory replaced by a link never unmounts what it points at.
    let rc = unsafe { libc::umount2(d.as_ptr(), libc::UMOUNT_NOFOLLOW) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Detaches the mount at `dir` now and unmounts it once nothing uses it (MNT_DETACH).
pub(crate) fn detach(dir: &Path) -> io::Result<()> {
    let d = cstr(dir)?;
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::umount2(d.as_ptr(), libc::MNT_DETACH | libc::UMOUNT_NOFOLLOW) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Unmounts `dir`, trying again for up to a second while the kernel says it is busy: a
/// mount may be held for a moment after its last file is closed (seen in the VM right
/// after a config drive was read). Not mounted at all is success.
pub(crate) fn umount_patiently(dir: &Path) -> io::Result<()> {
    let mut tries = 50;
    loop {
        match umount(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries > 0 => {
                tries -= 1;
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(()),
            r => return r,
        }
    }
}

/// Unmounts flint's own mount at `dir` where a failure could not be acted on (cleanup
/// after a failure, a config drive, a plan's read-only mount): patiently, and detached if
/// that fails, so that no mount of flint's outlives it.
pub(crate) fn release(dir: &Path) {
    if umount_patiently(dir).is_err() {
        let _ = detach(dir);
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mounted {
    pub major: u32,
    pub minor: u32,
    pub dir: PathBuf,
    pub fstype: String,
    pub source: String,
}

/// Unescapes mountinfo's octal escapes (\040 for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Everything mounted, in mount order.
pub(crate) fn mounted() -> io::Result<Vec<Mounted>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            let (major, minor) = f.get(2)?.split_once(':')?;
            Some(Mounted {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
                dir: PathBuf::from(unescape(f.get(4)?)),
                fstype: f.get(sep + 1)?.to_string(),
                source: unescape(f.get(sep + 2)?),
            })
        })
        .collect())
}

/// The mount on exactly `dir`, the last one when several are stacked.
pub(crate) fn mount_at(dir: &Path) -> io::Result<Option<Mounted>> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    Ok(mounted()?.into_iter().rev().find(|m| m.dir == dir))
}

/// The device number (major, minor) of a block device node.
pub(crate) fn dev_numbers(dev: &Path) -> io::Result<(u32, u32)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(dev)?;
    if !md.file_type().is_block_device() {
        return Err(io::Error::other(format!(
            "{} is not a block device",
            dev.display()
        )));
    }
    let rdev = md.rdev();
    Ok((libc::major(rdev), libc::minor(rdev)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_into_flags_and_data() {
        let (f, d) = split_options(&["ro,noatime".into(), "discard".into(), "subvol=@".into()]);
        assert_eq!(f, libc::MS_RDONLY | libc::MS_NOATIME);
        assert_eq!(d, "discard,subvol=@");
        let (f, d) = split_options(&["ro".into(), "rw".into(), "defaults".into()]);
        assert_eq!((f, d.as_str()), (0, ""));
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
    }

    /// A tmpfs with a file held open: busy for a while, then free (patient unmount), or
    /// busy for good (release detaches it). Neither leaves the mount behind.
    #[test]
    fn a_busy_mount_is_waited_for_then_detached() {
        let base = std::env::temp_dir().join(format!("flint-umount-test-{}", std::process::id()));
        let is_mounted = |d: &Path| mounted().unwrap().iter().any(|m| m.dir == d);
        for (hold_ms, patient) in [(200, true), (2_000, false)] {
            std::fs::create_dir_all(&base).unwrap();
            mount(Path::new("tmpfs"), &base, "tmpfs", &["size=1m".to_string()]).unwrap();
            let file = std::fs::File::create(base.join("held")).unwrap();
            let holder = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(hold_ms));
                drop(file);
            });
            assert_eq!(umount(&base).unwrap_err().raw_os_error(), Some(libc::EBUSY));
            if patient {
                umount_patiently(&base).unwrap();
            } else {
                assert!(umount_patiently(&base).is_err());
                release(&base);
            }
            assert!(!is_mounted(&base), "{} still mounted", base.display());
            // Not mounted is not an error.
            umount_patiently(&base).unwrap();
            holder.join().unwrap();
            std::fs::remove_dir(&base).unwrap();
        }
    }

    #[test]
    fn the_proc_mount_is_listed() {
        let all = mounted().unwrap();
        assert!(
            all.iter()
                .any(|m| m.dir == Path::new("/proc") && m.fstype == "proc")
        );
    }
}
