//! Config drives and other labelled devices: found by filesystem label (through
//! /dev/disk/by-label, or without udev by probing the block devices), mounted read-only
//! with the type blkid reports, read, and unmounted, as upstream does with `mount -t auto`.
//! Files are read only from inside the mounted filesystem: a symbolic link on the drive
//! that leads out of it is refused.

use super::Context;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The device carrying the filesystem labelled `label`, waiting up to `wait`.
pub(crate) fn wait_for_label(label: &str, wait: Duration) -> Result<PathBuf, String> {
    crate::system::devices::resolve(&format!("/dev/disk/by-label/{label}"), wait)
}

/// The device labelled `label` if it is there now.
pub(crate) fn find_label(label: &str) -> Option<PathBuf> {
    crate::system::devices::resolve_now(&format!("/dev/disk/by-label/{label}"))
}

/// Waits until `found` returns something or `wait` passes (polling once a second).
pub(crate) fn poll<T>(wait: Duration, mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(t) = found() {
            return Some(t);
        }
        if start.elapsed() >= wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(250).min(wait));
    }
}

/// The filesystem type blkid reports on `dev`.
pub(crate) fn fs_type(dev: &Path) -> Result<String, String> {
    match crate::system::probe::probe(dev) {
        Ok(Some(f)) if !f.kind.is_empty() => Ok(f.kind),
        Ok(_) => Err(format!("no filesystem on {}", dev.display())),
        Err(e) => Err(e.to_string()),
    }
}

/// Mounts `dev` read-only, reads each of `files` (paths inside the filesystem; `None` for
/// one that is not there), unmounts.
pub(crate) fn read_files(
    cx: &Context,
    dev: &Path,
    files: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let kind = fs_type(dev)?;
    read_files_as(cx, dev, &kind, files)
}

/// As [`read_files`] with the filesystem type given.
pub(crate) fn read_files_as(
    cx: &Context,
    dev: &Path,
    kind: &str,
    files: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    mount_and_read(&cx.places.mount_dir, dev, kind, files)
}

fn mount_and_read(
    mount_dir: &Path,
    dev: &Path,
    kind: &str,
    files: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let mnt = mount_dir.join(format!(
        "flint-configdrive-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&mnt).map_err(|e| format!("creating {}: {e}", mnt.display()))?;
    let r = (|| {
        crate::system::mount::mount(dev, &mnt, kind, &["ro".to_string()])
            .map_err(|e| format!("mounting {} ({kind}) read-only: {e}", dev.display()))?;
        let out = files.iter().map(|f| read_inside(&mnt, f)).collect();
        crate::system::mount::release(&mnt);
        out
    })();
    let _ = std::fs::remove_dir(&mnt);
    r
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `path` (cleaned, made relative) under `root`, `None` when absent; refused when it
/// resolves outside `root`.
pub(crate) fn read_inside(root: &Path, path: &str) -> Result<Option<Vec<u8>>, String> {
    let rel: PathBuf = Path::new(path)
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .collect();
    let p = root.join(&rel);
    let real = match std::fs::canonicalize(&p) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{path}: {e}")),
    };
    let root_real = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
    if !real.starts_with(&root_real) {
        return Err(format!("{path} on the drive leads outside it"));
    }
    if !real.is_file() {
        return Ok(None);
    }
    std::fs::read(&real)
        .map(Some)
        .map_err(|e| format!("reading {path}: {e}"))
}

/// One way to the user data, run beside others by [`first_of`]: `Ok` ends the race (empty
/// bytes too: "no config" is an answer), `Err` drops out.
pub(crate) type Attempt =
    Box<dyn FnOnce(&std::sync::atomic::AtomicBool) -> Result<Vec<u8>, String> + Send>;

/// Runs `attempts` side by side (config drives and a metadata service, as upstream): the
/// first answer wins and the rest are told to stop; when all fail, `None` (upstream then
/// goes on without a config). Failures are noted with their names.
pub(crate) fn first_of(
    cx: &Context,
    attempts: Vec<(String, Attempt)>,
) -> Option<(String, Vec<u8>)> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let n = attempts.len();
    for (name, f) in attempts {
        let (tx, stop) = (tx.clone(), stop.clone());
        std::thread::spawn(move || {
            let r = f(&stop);
            let _ = tx.send((name, r));
        });
    }
    drop(tx);
    let mut failed = 0;
    while failed < n {
        let Ok((name, r)) = rx.recv() else { break };
        match r {
            Ok(bytes) => {
                stop.store(true, Ordering::Relaxed);
                return Some((name, bytes));
            }
            Err(e) => {
                cx.note(format!("failed to fetch config from {name}: {e}"));
                failed += 1;
            }
        }
    }
    None
}

/// An attempt reading `file` from the drive labelled `label` once it appears (within
/// `wait`); a drive without the file answers "no config".
pub(crate) fn drive_attempt(
    cx: &Context,
    label: &'static str,
    file: &'static str,
    wait: Duration,
) -> Attempt {
    let places = cx.places.clone();
    Box::new(move |stop| {
        let start = Instant::now();
        let dev = loop {
            if let Some(d) = find_label(label) {
                break d;
            }
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err("stopped".into());
            }
            if start.elapsed() >= wait {
                return Err(format!(
                    "config drive {label:?} did not appear within {:.0} s",
                    wait.as_secs_f64()
                ));
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        let got = read_files_in(&places, &dev, &[file])?;
        Ok(got.into_iter().next().flatten().unwrap_or_default())
    })
}

/// [`read_files`] with only the places (for attempts on their own threads).
pub(crate) fn read_files_in(
    places: &super::Places,
    dev: &Path,
    files: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let kind = fs_type(dev)?;
    mount_and_read(&places.mount_dir, dev, &kind, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_inside() {
        let t = std::env::temp_dir().join(format!("flint-drive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(t.join("d/openstack/latest")).unwrap();
        std::fs::write(t.join("d/openstack/latest/user_data"), b"u").unwrap();
        std::fs::write(t.join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink("../secret", t.join("d/escape")).unwrap();
        let d = t.join("d");
        assert_eq!(
            read_inside(&d, "/openstack/latest/user_data")
                .unwrap()
                .unwrap(),
            b"u"
        );
        assert_eq!(
            read_inside(&d, "../../openstack/latest/user_data")
                .unwrap()
                .unwrap(),
            b"u"
        );
        assert_eq!(read_inside(&d, "/missing").unwrap(), None);
        assert!(read_inside(&d, "/escape").is_err());
        std::fs::remove_dir_all(&t).unwrap();
    }
}
