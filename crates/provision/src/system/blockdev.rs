//! Block devices: geometry ioctls, the kernel's view of a disk's partitions
//! (sysfs, BLKPG) and whether a device is in use.
//!
//! Every device path is canonicalized first (so `/dev/disk/by-id/...` links
//! work), and sysfs is looked up by `major:minor` (`/sys/dev/block/M:m`), which
//! does not depend on how the `/dev` node is named.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `BLKSSZGET`: logical sector size, an `int`.
const BLKSSZGET: u32 = 0x1268;
/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)`: device size in bytes, a `u64`.
const BLKGETSIZE64: u32 = (2 << 30) | ((size_of::<usize>() as u32) << 16) | (0x12 << 8) | 114;
/// `BLKPG` = `_IO(0x12, 105)`.
const BLKPG: u32 = 0x1269;
const BLKPG_ADD_PARTITION: libc::c_int = 1;
const BLKPG_DEL_PARTITION: libc::c_int = 2;
const BLKPG_RESIZE_PARTITION: libc::c_int = 3;

/// How long [`sync_kernel`] waits for devtmpfs to create partition nodes.
const NODE_TIMEOUT: Duration = Duration::from_secs(5);
/// Passes [`sync_kernel`] makes before it gives up.
const SYNC_ATTEMPTS: u32 = 3;

/// `struct blkpg_ioctl_arg` from `<linux/blkpg.h>`.
#[repr(C)]
struct BlkpgIoctlArg {
    op: libc::c_int,
    flags: libc::c_int,
    datalen: libc::c_int,
    data: *mut libc::c_void,
}

/// `struct blkpg_partition` from `<linux/blkpg.h>`; start and length in bytes.
#[repr(C)]
struct BlkpgPartition {
    start: libc::c_longlong,
    length: libc::c_longlong,
    pno: libc::c_int,
    devname: [libc::c_char; 64],
    volname: [libc::c_char; 64],
}

/// Logical sector size and total size of a block device or image file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub sector_size: u64,
    pub bytes: u64,
}

/// `BLKSSZGET` + `BLKGETSIZE64` for a block device; for a regular file (disk
/// image): 512 and the file length.
pub fn geometry(dev: &Path) -> io::Result<Geometry> {
    let file = File::open(dev)?;
    file_geometry(&file)
        .map(|(geometry, _)| geometry)
        .map_err(|e| context(e, dev))
}

/// The geometry of an open device or image, and whether it is a block device.
pub(crate) fn file_geometry(file: &File) -> io::Result<(Geometry, bool)> {
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok((
            Geometry {
                sector_size: 512,
                bytes: meta.len(),
            },
            false,
        ));
    }
    if !kind.is_block_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "neither a block device nor a regular file",
        ));
    }
    let fd = file.as_raw_fd();
    let mut sector_size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which is valid.
    if unsafe { libc::ioctl(fd, BLKSSZGET as _, &mut sector_size as *mut libc::c_int) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut bytes: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    if unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut bytes as *mut u64) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let sector_size = u64::try_from(sector_size)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| io::Error::other(format!("bad logical sector size {sector_size}")))?;
    Ok((Geometry { sector_size, bytes }, true))
}

/// A partition as the kernel currently knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPart {
    pub number: u32,
    pub start_bytes: u64,
    pub size_bytes: u64,
    /// The kernel's name, which is also the `/dev` node's: "loop3p2", "vda2".
    pub name: String,
}

/// The partitions the kernel currently knows for a whole disk, from
/// `/sys/class/block/<disk>/<part>/{partition,start,size}`, sorted by number.
/// Empty for a regular file.
pub fn kernel_partitions(disk: &Path) -> io::Result<Vec<KernelPart>> {
    let Some(sys) = sysfs_dir(disk)? else {
        return Ok(Vec::new());
    };
    if sys.join("partition").exists() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is a partition, not a whole disk", disk.display()),
        ));
    }
    kernel_partitions_in(&sys)
}

fn kernel_partitions_in(sys: &Path) -> io::Result<Vec<KernelPart>> {
    let mut parts = Vec::new();
    for entry in fs::read_dir(sys)? {
        let dir = entry?.path();
        let Ok(number) = read_sys_u64(&dir.join("partition")) else {
            continue;
        };
        let name = sys_name(&dir);
        let bad = |what: &str| io::Error::other(format!("sysfs {what} of {name} unreadable"));
        let number = u32::try_from(number).map_err(|_| bad("partition"))?;
        let start = read_sys_u64(&dir.join("start")).map_err(|_| bad("start"))?;
        let size = read_sys_u64(&dir.join("size")).map_err(|_| bad("size"))?;
        parts.push(KernelPart {
            number,
            start_bytes: start * 512,
            size_bytes: size * 512,
            name,
        });
    }
    parts.sort_by_key(|p| p.number);
    Ok(parts)
}

/// Makes the kernel's view of the disk's partitions match `want` (number → start and size
/// in bytes, of a table for `sector_size`-byte sectors), with BLKPG ioctls as `partx` does: deletes partitions that are gone or moved, resizes
/// those whose size alone changed (shrinks before grows), adds new ones. Then
/// waits (up to 5 s) until the `/dev` node of every partition exists and is
/// the right device. No-op for regular files.
pub fn sync_kernel(
    disk: &Path,
    sector_size: u64,
    want: &BTreeMap<u32, (u64, u64)>,
) -> io::Result<()> {
    let Some(sys) = sysfs_dir(disk)? else {
        return Ok(());
    };
    if sys.join("partition").exists() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is a partition, not a whole disk", disk.display()),
        ));
    }
    let file = File::open(disk).map_err(|e| context(e, disk))?;
    let (geometry, _) = file_geometry(&file).map_err(|e| context(e, disk))?;
    if geometry.sector_size != sector_size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: table is for {}-byte sectors, device has {}",
                disk.display(),
                sector_size,
                geometry.sector_size
            ),
        ));
    }
    // udev may be re-reading the table at the same time (after the write that
    // preceded this call): on a failure, look at the kernel's view again and
    // retry a few times before giving up.
    let mut attempt = 1;
    let now = loop {
        match apply_partitions(&file, &sys, disk, want) {
            Ok(now) => break now,
            Err(_) if attempt < SYNC_ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(e),
        }
    };
    wait_for_nodes(&sys, &now)
}

/// One pass of [`sync_kernel`]: the BLKPG calls that take the kernel's
/// current view to `want` (number → start and size in bytes), then the view
/// after them, checked.
fn apply_partitions(
    file: &File,
    sys: &Path,
    disk: &Path,
    want: &BTreeMap<u32, (u64, u64)>,
) -> io::Result<Vec<KernelPart>> {
    let have = kernel_partitions_in(sys)?;

    let mut delete = Vec::new();
    let mut shrink = Vec::new();
    let mut grow = Vec::new();
    for part in &have {
        match want.get(&part.number) {
            Some(&(start, size)) if start == part.start_bytes => {
                if size < part.size_bytes {
                    shrink.push((part.number, start, size));
                } else if size > part.size_bytes {
                    grow.push((part.number, start, size));
                }
            }
            _ => delete.push(part.number),
        }
    }
    let add: Vec<(u32, u64, u64)> = want
        .iter()
        .filter(|(number, (start, _))| {
            !have
                .iter()
                .any(|p| p.number == **number && p.start_bytes == *start)
        })
        .map(|(&number, &(start, size))| (number, start, size))
        .collect();

    for number in delete {
        blkpg(file, BLKPG_DEL_PARTITION, number, 0, 0)
            .map_err(|e| blkpg_error(e, "delete", disk, number))?;
    }
    // Shrinks first, so that a grow into their space does not overlap.
    for (number, start, size) in shrink.into_iter().chain(grow) {
        blkpg(file, BLKPG_RESIZE_PARTITION, number, start, size)
            .map_err(|e| blkpg_error(e, "resize", disk, number))?;
    }
    for (number, start, size) in add {
        blkpg(file, BLKPG_ADD_PARTITION, number, start, size)
            .map_err(|e| blkpg_error(e, "add", disk, number))?;
    }

    let now = kernel_partitions_in(sys)?;
    let got: BTreeMap<u32, (u64, u64)> = now
        .iter()
        .map(|p| (p.number, (p.start_bytes, p.size_bytes)))
        .collect();
    if got != *want {
        return Err(io::Error::other(format!(
            "{}: the kernel's partitions {got:?} do not match the table's {want:?}",
            disk.display()
        )));
    }
    Ok(now)
}

/// Waits until `/dev/<name>` of every partition exists and has the device
/// number sysfs gives it (a node left over from a deleted partition of the
/// same name does not count).
fn wait_for_nodes(sys: &Path, parts: &[KernelPart]) -> io::Result<()> {
    let deadline = Instant::now() + NODE_TIMEOUT;
    loop {
        let mut missing = Vec::new();
        for part in parts {
            let node = dev_node(&part.name);
            let want = fs::read_to_string(sys.join(&part.name).join("dev")).ok();
            let ok = match (fs::metadata(&node), want) {
                (Ok(meta), Some(want)) => {
                    meta.file_type().is_block_device() && dev_string(meta.rdev()) == want.trim()
                }
                _ => false,
            };
            if !ok {
                missing.push(node);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "partition nodes did not appear within {} s: {}",
                    NODE_TIMEOUT.as_secs(),
                    names.join(", ")
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn blkpg(file: &File, op: libc::c_int, number: u32, start: u64, length: u64) -> io::Result<()> {
    let invalid = || io::Error::new(io::ErrorKind::InvalidInput, "value out of range");
    let mut part = BlkpgPartition {
        start: i64::try_from(start).map_err(|_| invalid())?,
        length: i64::try_from(length).map_err(|_| invalid())?,
        pno: libc::c_int::try_from(number).map_err(|_| invalid())?,
        devname: [0; 64],
        volname: [0; 64],
    };
    let mut arg = BlkpgIoctlArg {
        op,
        flags: 0,
        datalen: size_of::<BlkpgPartition>() as libc::c_int,
        data: (&mut part as *mut BlkpgPartition).cast(),
    };
    // SAFETY: `arg` and the `part` it points to are valid, properly laid out
    // (`repr(C)`) and outlive the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKPG as _, &mut arg as *mut BlkpgIoctlArg) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn blkpg_error(e: io::Error, what: &str, disk: &Path, number: u32) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "{}: cannot {what} partition {number} in the kernel (BLKPG): {e}",
            disk.display()
        ),
    )
}

/// The device node path of partition `number` of `disk`: the kernel's name
/// for it when the kernel knows the partition, otherwise the kernel's naming
/// rule (`vda` + 2 → `vda2`; a name ending in a digit gets a `p`:
/// `loop3p1`, `nvme0n1p1`).
pub fn partition_node(disk: &Path, number: u32) -> PathBuf {
    if let Ok(Some(sys)) = sysfs_dir(disk)
        && let Ok(parts) = kernel_partitions_in(&sys)
        && let Some(part) = parts.iter().find(|p| p.number == number)
    {
        return dev_node(&part.name);
    }
    let (dir, name) = match sysfs_dir(disk) {
        Ok(Some(sys)) => (PathBuf::from("/dev"), sys_name(&sys)),
        _ => {
            let canon = fs::canonicalize(disk).unwrap_or_else(|_| disk.to_path_buf());
            let dir = canon.parent().map(Path::to_path_buf).unwrap_or_default();
            let name = canon
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (dir, name)
        }
    };
    let sep = if name.ends_with(|c: char| c.is_ascii_digit()) {
        "p"
    } else {
        ""
    };
    dir.join(format!("{name}{sep}{number}").replace('!', "/"))
}

/// Why a device is in use, or `None`: mounted (its `major:minor`, or a
/// `/dev` source that is it, in `/proc/self/mountinfo`), an active swap device (`/proc/swaps`), or held by
/// another device (`holders/` in sysfs non-empty, e.g. md or dm on top). For
/// a whole disk its partitions are checked too ("partition vda1 mounted on
/// /sysroot"). Several reasons are joined with "; ". `None` for regular files.
pub fn in_use(dev: &Path) -> io::Result<Option<String>> {
    let Some(sys) = sysfs_dir(dev)? else {
        return Ok(None);
    };
    let mut reasons = in_use_sys(&sys, "")?;
    if !sys.join("partition").exists() {
        for part in kernel_partitions_in(&sys)? {
            let prefix = format!("partition {} ", part.name);
            reasons.extend(in_use_sys(&sys.join(&part.name), &prefix)?);
        }
    }
    Ok((!reasons.is_empty()).then(|| reasons.join("; ")))
}

/// Like [`in_use`], but only the device itself: a whole disk's partitions are
/// not looked at.
pub fn in_use_exact(dev: &Path) -> io::Result<Option<String>> {
    let Some(sys) = sysfs_dir(dev)? else {
        return Ok(None);
    };
    let reasons = in_use_sys(&sys, "")?;
    Ok((!reasons.is_empty()).then(|| reasons.join("; ")))
}

/// The reasons the device at sysfs directory `sys` is in use, each prefixed.
fn in_use_sys(sys: &Path, prefix: &str) -> io::Result<Vec<String>> {
    let dev = fs::read_to_string(sys.join("dev"))?;
    let dev = dev.trim();
    let mut reasons = Vec::new();

    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() < 5 {
            continue;
        }
        // btrfs shows an anonymous device number: match the mount source too.
        let source = line
            .split_once(" - ")
            .and_then(|(_, tail)| tail.split(' ').nth(1))
            .filter(|s| s.starts_with("/dev/"));
        let by_source = || {
            source.is_some_and(|s| {
                fs::metadata(unescape(s))
                    .is_ok_and(|m| m.file_type().is_block_device() && dev_string(m.rdev()) == dev)
            })
        };
        if fields[2] == dev || by_source() {
            reasons.push(format!("{prefix}mounted on {}", unescape(fields[4])));
        }
    }

    // /proc/swaps is absent without CONFIG_SWAP.
    if let Ok(swaps) = fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            let Some(path) = line.split_whitespace().next() else {
                continue;
            };
            let path = unescape(path);
            if let Ok(meta) = fs::metadata(&path)
                && meta.file_type().is_block_device()
                && dev_string(meta.rdev()) == dev
            {
                reasons.push(format!("{prefix}active swap"));
            }
        }
    }

    if let Ok(holders) = fs::read_dir(sys.join("holders")) {
        let mut names: Vec<String> = holders
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if !names.is_empty() {
            reasons.push(format!("{prefix}held by {}", names.join(", ")));
        }
    }
    Ok(reasons)
}

/// The sysfs directory of a block device (`/sys/dev/block/M:m`, resolved), or
/// `None` for a regular file. Errors for anything else.
fn sysfs_dir(dev: &Path) -> io::Result<Option<PathBuf>> {
    let canon = fs::canonicalize(dev).map_err(|e| context(e, dev))?;
    let meta = fs::metadata(&canon).map_err(|e| context(e, dev))?;
    if meta.file_type().is_file() {
        return Ok(None);
    }
    if !meta.file_type().is_block_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a block device", dev.display()),
        ));
    }
    let link = PathBuf::from(format!("/sys/dev/block/{}", dev_string(meta.rdev())));
    fs::canonicalize(&link)
        .map(Some)
        .map_err(|e| context(e, &link))
}

/// "major:minor" as sysfs and mountinfo print it.
fn dev_string(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// The kernel name of a sysfs device directory.
fn sys_name(sys: &Path) -> String {
    sys.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `/dev/<name>`; devtmpfs turns a `!` in a kernel name into a directory.
fn dev_node(name: &str) -> PathBuf {
    Path::new("/dev").join(name.replace('!', "/"))
}

fn read_sys_u64(path: &Path) -> io::Result<u64> {
    fs::read_to_string(path)?
        .trim()
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not a number"))
}

/// Undoes the octal escapes (`\040` for a space) of mountinfo and swaps.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            out.push(value as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn context(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_mountinfo_paths() {
        assert_eq!(unescape(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape(r"/x\134y"), r"/x\y");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/trail\04"), r"/trail\04");
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn ioctl_numbers() {
        assert_eq!(BLKGETSIZE64, 0x8008_1272);
        assert_eq!(size_of::<BlkpgPartition>(), 152);
        assert_eq!(size_of::<BlkpgIoctlArg>(), 24);
    }
}
