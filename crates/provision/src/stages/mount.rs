//! The mount and umount stages: every filesystem with a `path` is mounted under the target
//! root, shallowest first, and unmounted in reverse at the end. A failed mount unmounts what
//! this run mounted. When planning, filesystems that already hold what the config wants are
//! mounted read-only (without journal replay) so that the files stage can see what is there.
//!
//! A mount path is never resolved through the target root's symbolic links: a root holding
//! `/tmp0 -> /` must not get a partition mounted over the host's `/`. Every existing element
//! of the path must be a real directory (upstream refuses links and non-directories the same
//! way); the mount itself goes onto a directory opened element by element without following
//! links, so nothing can swap a link in between the check and the mount.

use crate::stage::{Context, Mode, Outcome, Stage, StageError, StageName};
use crate::system::mount::BeneathError;
use crate::system::{devices, mount, probe};
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use flint_ignition::types::Filesystem;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// A filesystem to mount: its entry, and the directory under the root.
pub(crate) struct Target<'a> {
    pub entry: JsonPath,
    pub fs: &'a Filesystem,
    /// The mount path's elements inside the root (`.` dropped, `..` taken lexically).
    pub parts: Vec<String>,
    pub root: PathBuf,
    pub dir: PathBuf,
}

/// The elements of an absolute path, `.` dropped and `..` taken lexically, clamped at the
/// root (as a chroot would: `/..` is `/`).
fn elements(path: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                v.pop();
            }
            p => v.push(p.to_string()),
        }
    }
    v
}

impl Target<'_> {
    fn path(&self) -> &str {
        self.fs.path.as_deref().unwrap_or("/")
    }

    /// Opens the mount point (creating it when `create`); `Ok(None)` when it does not
    /// exist and may not be created. A link or non-directory on the way is the error
    /// upstream gives, at the entry's `path`.
    pub(super) fn open(
        &self,
        stage: StageName,
        create: bool,
    ) -> Result<Option<OwnedFd>, StageError> {
        match mount::open_beneath(&self.root, &self.parts, create) {
            Ok(fd) => Ok(Some(fd)),
            Err(BeneathError::Missing) => Ok(None),
            Err(BeneathError::NotADirectory(i)) => {
                let inner = format!("/{}", self.parts[..=i].join("/"));
                let what = match std::fs::symlink_metadata(self.root.join(&inner[1..])) {
                    Ok(m) if m.file_type().is_symlink() => "a symbolic link",
                    _ => "not a directory",
                };
                Err(fail(
                    stage,
                    &self.entry.key("path"),
                    format!(
                        "mount path {:?} contains non-directory component {inner:?} ({what}); \
                         refusing to mount through it",
                        self.path()
                    ),
                ))
            }
            Err(BeneathError::Io(e)) => Err(fail(
                stage,
                &self.entry.key("path"),
                format!("opening the mount point {}: {e}", self.dir.display()),
            )),
        }
    }
}

pub(crate) struct Mount;

impl Stage for Mount {
    fn name(&self) -> StageName {
        StageName::Mount
    }

    /// A mount path through a link in the root is refused before any disk is touched.
    fn check(&self, cx: &Context, _: Mode) -> Result<(), StageError> {
        check_paths(&cx.acquired(StageName::Mount)?.config, &cx.options.root)
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let opts = cx.options;
        let acq = cx.acquired(StageName::Mount)?;
        let m = mount_stage(&acq.config, &opts.root, mode)?;
        if !mode.applies() {
            cx.plan_mounts.extend(m.done);
        }
        if !m.made.is_empty() {
            note_dirs(cx, m.made)?;
        }
        Ok(Outcome {
            changes: Vec::new(),
            notes: m.notes,
            unseen: Vec::new(),
        })
    }
}

/// Refuses, before anything is mounted or written, any mount path whose existing elements
/// go through a symbolic link or a non-directory in the root as it is now.
pub(crate) fn check_paths(config: &Config, root: &Path) -> Result<(), StageError> {
    for t in targets(config, root) {
        t.open(StageName::Mount, false)?;
    }
    Ok(())
}

/// The filesystems with a path, shallowest first (ties in config order).
pub(crate) fn targets<'a>(config: &'a Config, root: &Path) -> Vec<Target<'a>> {
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
            let parts = elements(mount_path(f));
            let mut dir = root.to_path_buf();
            dir.extend(&parts);
            Target {
                entry: base.index(i),
                fs: f,
                parts,
                root: root.to_path_buf(),
                dir,
            }
        })
        .collect();
    v.sort_by_key(|t| t.dir.components().count());
    v
}

/// Where `f` is mounted: its path, except that the OEM partition asked for at
/// `/usr/share/oem` goes to `/oem` (Flatcar's patch 0016: on Flatcar `/usr/share/oem` is a
/// link to `/oem`). Only that exact path and device, as Flatcar matches them.
pub(crate) fn mount_path(f: &Filesystem) -> &str {
    match f.path.as_deref() {
        Some("/usr/share/oem") if f.device == "/dev/disk/by-label/OEM" => "/oem",
        Some(p) => p,
        None => "/",
    }
}

pub(super) fn fail(stage: StageName, entry: &JsonPath, message: String) -> StageError {
    StageError {
        stage,
        path: Some(entry.clone()),
        message,
    }
}

/// Whether `dev` is what is mounted on `dir`.
/// btrfs reports an anonymous device number, so the mount source counts too.
pub(super) fn mounted_here(dev: &Path, dir: &Path) -> bool {
    let Ok(Some(m)) = mount::mount_at(dir) else {
        return false;
    };
    let same_source = std::fs::canonicalize(&m.source).is_ok_and(|s| s == dev);
    same_source || mount::dev_numbers(dev).is_ok_and(|n| (m.major, m.minor) == n)
}

/// Where the mount stage lists the mount-point directories it created (inner paths, one a
/// line), for the files stage: those under a user's home go to the user, as upstream's
/// mount stage notes them and its files stage hands them over. Run as upstream's `ignition`,
/// the list is the state file's `notatedDirectories` instead.
pub(crate) const NOTATED_DIRS: &str = "notated-dirs";

/// The directories the files stage is to hand to users (see [`NOTATED_DIRS`]).
pub(crate) fn notated(cx: &Context) -> Vec<String> {
    match &cx.options.state_file {
        Some(_) => cx.state.notated_directories.clone().unwrap_or_default(),
        None => std::fs::read_to_string(cx.options.state_dir.join(NOTATED_DIRS))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect(),
    }
}

/// Adds `made` to the directories the files stage is to hand over ([`notated`]).
fn note_dirs(cx: &mut Context, made: Vec<String>) -> Result<(), StageError> {
    let mut all = notated(cx);
    all.extend(
        made.into_iter()
            .filter(|d| !all.contains(d))
            .collect::<Vec<_>>(),
    );
    if cx.options.state_file.is_some() {
        cx.state.notated_directories = Some(all);
        return Ok(());
    }
    let state_dir = &cx.options.state_dir;
    let _ = std::fs::create_dir_all(state_dir);
    let text: String = all.iter().map(|d| format!("{d}\n")).collect();
    crate::write::write_atomic(&state_dir.join(NOTATED_DIRS), text.as_bytes(), 0o600).map_err(|e| {
        fail(
            StageName::Mount,
            &flint_go::tree::JsonPath::root(),
            format!("noting the mount points made: {e}"),
        )
    })
}

/// What [`mount_stage`] did.
pub(crate) struct Mounted {
    /// The directories mounted, in order.
    pub done: Vec<PathBuf>,
    pub notes: Vec<String>,
    /// When applying, the mount points created, as paths in the root.
    pub made: Vec<String>,
}

/// Mounts the targets.
pub(crate) fn mount_stage(config: &Config, root: &Path, mode: Mode) -> Result<Mounted, StageError> {
    check_paths(config, root)?;
    let mut done: Vec<PathBuf> = Vec::new();
    let mut notes = Vec::new();
    let mut notated: Vec<String> = Vec::new();
    for t in targets(config, root) {
        if mode.applies() {
            // The elements of the mount path that are not there yet (open creates them).
            let mut missing = false;
            for k in 1..=t.parts.len() {
                let inner = format!("/{}", t.parts[..k].join("/"));
                missing = missing || std::fs::symlink_metadata(root.join(&inner[1..])).is_err();
                if missing && !notated.contains(&inner) {
                    notated.push(inner);
                }
            }
        }
        match mount_one(&t, mode) {
            Ok(Some(note)) => {
                if note.starts_with("mounted") {
                    done.push(t.dir.clone());
                }
                notes.push(note);
            }
            Ok(None) => {}
            Err(e) => {
                for d in done.iter().rev() {
                    mount::release(d);
                }
                return Err(e);
            }
        }
    }
    notated.retain(|d| root.join(&d[1..]).is_dir());
    Ok(Mounted {
        done,
        notes,
        made: notated,
    })
}

fn mount_one(t: &Target, mode: Mode) -> Result<Option<String>, StageError> {
    let format = t.fs.format.as_deref().unwrap_or("");
    let dev = if mode.applies() {
        devices::resolve(&t.fs.device, devices::timeout())
            .map_err(|m| fail(StageName::Mount, &t.entry.key("device"), m))?
    } else {
        match devices::resolve_now(&t.fs.device) {
            Some(d) => d,
            None => return Ok(None),
        }
    };
    // Checked again here: a filesystem mounted earlier in this stage may hold the path.
    let Some(dir) = t.open(StageName::Mount, mode.applies())? else {
        return Ok(None);
    };
    if mounted_here(&dev, &t.dir) {
        return Ok(Some(format!(
            "{} already mounted on {}",
            dev.display(),
            t.dir.display()
        )));
    }
    let mut options = t.fs.mount_options.clone();
    if !mode.applies() {
        // Only a filesystem that will be kept is worth looking into; nothing may be written.
        let keeps = probe::probe(&dev)
            .ok()
            .flatten()
            .is_some_and(|f| f.kind == probe::blkid_type(format));
        if !keeps {
            return Ok(None);
        }
        options.push("ro".into());
        match format {
            "ext4" => options.push("noload".into()),
            "xfs" => options.push("norecovery".into()),
            _ => {}
        }
    }
    mount::mount_on(&dev, &dir, format, &options).map_err(|e| {
        fail(
            StageName::Mount,
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

/// Unmounts directories a plan mounted read-only, deepest first.
pub(crate) fn release(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        mount::release(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oem_partition_at_usr_share_oem_mounts_at_oem() {
        let fs = |device: &str, path: &str| Filesystem {
            device: device.into(),
            format: Some("btrfs".into()),
            path: Some(path.into()),
            ..Default::default()
        };
        let oem = "/dev/disk/by-label/OEM";
        assert_eq!(mount_path(&fs(oem, "/usr/share/oem")), "/oem");
        // Only that path and that device, as Flatcar's patch matches them.
        assert_eq!(mount_path(&fs(oem, "/usr/share/oem/")), "/usr/share/oem/");
        assert_eq!(mount_path(&fs(oem, "/oem")), "/oem");
        assert_eq!(
            mount_path(&fs("/dev/vda6", "/usr/share/oem")),
            "/usr/share/oem"
        );
        let c = Config {
            storage: flint_ignition::types::Storage {
                filesystems: vec![fs(oem, "/usr/share/oem"), fs("/dev/vdb", "/oem/sub")],
                ..Default::default()
            },
            ..Default::default()
        };
        let t = targets(&c, Path::new("/sysroot"));
        let dirs: Vec<_> = t.iter().map(|t| t.dir.display().to_string()).collect();
        assert_eq!(dirs, ["/sysroot/oem", "/sysroot/oem/sub"]);
    }
}
