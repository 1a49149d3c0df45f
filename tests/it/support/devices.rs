//! Real block devices for tests: sparse images on loop devices, detached (with their BLKPG
//! partitions) and unmounted on drop, also when the test fails.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs a command; panics with its stderr unless it succeeds; returns stdout.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A sparse image of `mib` MiB attached to a loop device.
pub struct Loop {
    pub dev: PathBuf,
    pub image: PathBuf,
}

impl Loop {
    pub fn new(dir: &Path, name: &str, mib: u64) -> Loop {
        let image = dir.join(format!("{name}.img"));
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(mib << 20).unwrap();
        let dev = sh("losetup", &["-f", "--show", "-P", image.to_str().unwrap()]);
        Loop {
            dev: PathBuf::from(dev.trim()),
            image,
        }
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    /// The node of partition `n` (loopNpM).
    pub fn part(&self, n: u32) -> String {
        format!("{}p{n}", self.path())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        // Whatever the test left mounted on the device's partitions goes first.
        if let Ok(info) = std::fs::read_to_string("/proc/self/mounts") {
            for l in info.lines().rev() {
                let mut f = l.split(' ');
                if let (Some(src), Some(dir)) = (f.next(), f.next())
                    && src.starts_with(self.path())
                {
                    let _ = Command::new("umount").arg(dir).status();
                }
            }
        }
        let _ = Command::new("partx").arg("-d").arg(&self.dev).output();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A mount, unmounted on drop.
pub struct Mounted(pub PathBuf);

impl Mounted {
    pub fn new(dev: &str, dir: &Path, opts: &str) -> Mounted {
        std::fs::create_dir_all(dir).unwrap();
        sh("mount", &["-o", opts, dev, dir.to_str().unwrap()]);
        Mounted(dir.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// blkid's low-level probe of one value (TYPE, LABEL, UUID…), empty when absent.
pub fn blkid(dev: &str, tag: &str) -> String {
    let out = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", tag, dev])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The lines of /proc/self/mounts whose source is `dev` or one of its partitions (`devpN`):
/// exactly those, not another loop device whose name starts the same (`/dev/loop1` and
/// `/dev/loop10`).
pub fn mounts_of(dev: &str) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap();
    text.lines()
        .filter(|l| {
            let src = l.split(' ').next().unwrap_or("");
            src == dev
                || src
                    .strip_prefix(dev)
                    .and_then(|r| r.strip_prefix('p'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
        .collect()
}
