//! The mount and umount stages: every filesystem with a `path` is mounted under the target
//! root, shallowest first, and unmounted in reverse at the end. A failed mount unmounts what
//! this run mounted. When planning, filesystems that already hold what the config wants are
//! mounted read-only (without journal replay) so that the files stage can see what is there.

use super::{Stage, StageError};
use crate::ignition::Config;
use crate::ignition::types::Filesystem;
use crate::system::{devices, mount, probe};
use crate::tree::JsonPath;
use std::path::{Path, PathBuf};

/// A filesystem to mount: its entry, and the directory under the root.
pub struct Target<'a> {
    pub entry: JsonPath,
    pub fs: &'a Filesystem,
    pub dir: PathBuf,
}

/// The filesystems with a path, shallowest first (ties in config order).
pub fn targets<'a>(config: &'a Config, root: &Path) -> Vec<Target<'a>> {
    let base = JsonPath::root().key("storage").key("filesystems");
    let mut v: Vec<Target> = config
        .storage
        .filesystems
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.path.is_some() && !matches!(f.format.as_deref(), Some("swap") | Some("none") | None)
        })
        .map(|(i, f)| {
            let rel = f.path.as_deref().unwrap_or("/").trim_start_matches('/');
            Target {
                entry: base.index(i),
                fs: f,
                dir: if rel.is_empty() {
                    root.to_path_buf()
                } else {
                    root.join(rel)
                },
            }
        })
        .collect();
    v.sort_by_key(|t| t.dir.components().count());
    v
}

fn fail(stage: Stage, entry: &JsonPath, message: String) -> StageError {
    StageError {
        stage,
        path: Some(entry.clone()),
        message,
    }
}

/// Whether `dev` is what is mounted on `dir`.
/// btrfs reports an anonymous device number, so the mount source counts too.
fn mounted_here(dev: &Path, dir: &Path) -> bool {
    let Ok(Some(m)) = mount::mount_at(dir) else {
        return false;
    };
    let same_source = std::fs::canonicalize(&m.source).is_ok_and(|s| s == dev);
    same_source || mount::dev_numbers(dev).is_ok_and(|n| (m.major, m.minor) == n)
}

/// Mounts the targets; returns the directories this call mounted, in order, and notes.
pub fn mount_stage(
    config: &Config,
    root: &Path,
    apply: bool,
) -> Result<(Vec<PathBuf>, Vec<String>), StageError> {
    let mut done: Vec<PathBuf> = Vec::new();
    let mut notes = Vec::new();
    for t in targets(config, root) {
        match mount_one(&t, apply) {
            Ok(Some(note)) => {
                if note.starts_with("mounted") {
                    done.push(t.dir.clone());
                }
                notes.push(note);
            }
            Ok(None) => {}
            Err(e) => {
                for d in done.iter().rev() {
                    let _ = mount::umount(d);
                }
                return Err(e);
            }
        }
    }
    Ok((done, notes))
}

fn mount_one(t: &Target, apply: bool) -> Result<Option<String>, StageError> {
    let format = t.fs.format.as_deref().unwrap_or("");
    let dev = if apply {
        devices::resolve(&t.fs.device, devices::timeout())
            .map_err(|m| fail(Stage::Mount, &t.entry.key("device"), m))?
    } else {
        match devices::resolve_now(&t.fs.device) {
            Some(d) => d,
            None => return Ok(None),
        }
    };
    if mounted_here(&dev, &t.dir) {
        return Ok(Some(format!(
            "{} already mounted on {}",
            dev.display(),
            t.dir.display()
        )));
    }
    let mut options = t.fs.mount_options.clone();
    if apply {
        std::fs::create_dir_all(&t.dir).map_err(|e| {
            fail(
                Stage::Mount,
                &t.entry,
                format!("creating the mount point {}: {e}", t.dir.display()),
            )
        })?;
    } else {
        // Only a filesystem that will be kept is worth looking into; nothing may be written.
        let keeps = probe::probe(&dev)
            .ok()
            .flatten()
            .is_some_and(|f| f.kind == probe::blkid_type(format));
        if !keeps || !t.dir.is_dir() {
            return Ok(None);
        }
        options.push("ro".into());
        match format {
            "ext4" => options.push("noload".into()),
            "xfs" => options.push("norecovery".into()),
            _ => {}
        }
    }
    mount::mount(&dev, &t.dir, format, &options).map_err(|e| {
        fail(
            Stage::Mount,
            &t.entry,
            format!(
                "mounting {} ({format}) on {}: {e}",
                dev.display(),
                t.dir.display()
            ),
        )
    })?;
    Ok(Some(format!(
        "mounted {} ({format}) on {}",
        dev.display(),
        t.dir.display()
    )))
}

/// Unmounts every target that is mounted, deepest first; returns notes.
pub fn umount_stage(config: &Config, root: &Path) -> Result<Vec<String>, StageError> {
    let mut notes = Vec::new();
    for t in targets(config, root).iter().rev() {
        let Some(dev) = devices::resolve_now(&t.fs.device) else {
            continue;
        };
        if !mounted_here(&dev, &t.dir) {
            continue;
        }
        mount::umount(&t.dir).map_err(|e| {
            fail(
                Stage::Umount,
                &t.entry,
                format!("unmounting {}: {e}", t.dir.display()),
            )
        })?;
        notes.push(format!("unmounted {}", t.dir.display()));
    }
    Ok(notes)
}

/// Unmounts directories a plan mounted read-only, deepest first.
pub fn release(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        let _ = mount::umount(d);
    }
}
