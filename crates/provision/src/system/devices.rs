//! Device paths from a config: wait for the node, and where udev is absent (an initramfs
//! without it, a test host) resolve `/dev/disk/by-*` aliases from sysfs and on-disk metadata.

use super::{gpt, probe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a device may take to appear: `FLINT_DEVICE_TIMEOUT` seconds, default 30.
pub(crate) fn timeout() -> Duration {
    std::env::var("FLINT_DEVICE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .unwrap_or(Duration::from_secs(30))
}

/// The device node `path` stands for, waiting up to `wait` for it to appear.
pub(crate) fn resolve(path: &str, wait: Duration) -> Result<PathBuf, String> {
    let start = Instant::now();
    loop {
        if let Some(p) = resolve_now(path) {
            return Ok(p);
        }
        if start.elapsed() >= wait {
            return Err(format!(
                "device {path} did not appear within {:.0} s",
                wait.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One look: the node itself (symlinks followed), else our own reading of the alias.
pub(crate) fn resolve_now(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let rest = path.strip_prefix("/dev/disk/")?;
    let (kind, value) = rest.split_once('/')?;
    let value = unescape_udev(value);
    match kind {
        "by-partlabel" => find_partition(|e| e.label == value),
        "by-partuuid" => find_partition(|e| e.guid.eq_ignore_ascii_case(&value)),
        "by-label" => find_probed(|f| f.label == value),
        "by-uuid" => find_probed(|f| f.uuid.eq_ignore_ascii_case(&value)),
        "by-id" => find_by_id(&value),
        _ => None,
    }
}

/// udev escapes unsafe characters in link names as \xHH.
fn unescape_udev(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let Some(h) = s.get(i + 2..i + 4)
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Block devices the kernel knows: (name, is a partition).
fn block_devices() -> Vec<(String, bool)> {
    let Ok(rd) = std::fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut v: Vec<(String, bool)> = rd
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let part = e.path().join("partition").exists();
            (name, part)
        })
        // Empty loop devices and RAM disks carry nothing to find.
        .filter(|(n, _)| !n.starts_with("ram") && size_of(n) > 0)
        .collect();
    v.sort();
    v
}

fn size_of(name: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/block/{name}/size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn find_partition(matches: impl Fn(&gpt::Entry) -> bool) -> Option<PathBuf> {
    for (name, is_part) in block_devices() {
        if is_part {
            continue;
        }
        let disk = PathBuf::from("/dev").join(&name);
        if let Ok(Some(t)) = gpt::read(&disk)
            && let Some(e) = t.partitions.iter().find(|e| matches(e))
        {
            let node = super::blockdev::partition_node(&disk, e.number);
            if node.exists() {
                return Some(node);
            }
        }
    }
    None
}

fn find_probed(matches: impl Fn(&probe::Found) -> bool) -> Option<PathBuf> {
    block_devices().into_iter().find_map(|(name, _)| {
        let dev = PathBuf::from("/dev").join(&name);
        match probe::probe(&dev) {
            Ok(Some(f)) if !f.kind.is_empty() && matches(&f) => Some(dev),
            _ => None,
        }
    })
}

/// by-id names udev gives virtio disks (virtio-SERIAL) and disks with a WWN (wwn-0x…).
fn find_by_id(value: &str) -> Option<PathBuf> {
    let (base, part) = match value.rsplit_once("-part") {
        Some((b, n)) if n.parse::<u32>().is_ok() => (b, n.parse::<u32>().ok()),
        _ => (value, None),
    };
    for (name, is_part) in block_devices() {
        if is_part {
            continue;
        }
        let read = |f: &str| {
            std::fs::read_to_string(format!("/sys/class/block/{name}/{f}"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let serial = read("serial");
        let wwid = read("wwid");
        let hit = (!serial.is_empty() && base == format!("virtio-{serial}"))
            || (!wwid.is_empty() && base == format!("wwn-{wwid}"));
        if hit {
            let disk = PathBuf::from("/dev").join(&name);
            return Some(match part {
                Some(n) => super::blockdev::partition_node(&disk, n),
                None => disk,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udev_escapes_are_undone() {
        assert_eq!(unescape_udev("my\\x20disk"), "my disk");
        assert_eq!(unescape_udev("plain"), "plain");
    }

    #[test]
    fn a_missing_device_times_out_with_its_name() {
        let e = resolve(
            "/dev/disk/by-partlabel/flint-none-such",
            Duration::from_millis(150),
        )
        .unwrap_err();
        assert!(e.contains("/dev/disk/by-partlabel/flint-none-such"), "{e}");
    }
}
