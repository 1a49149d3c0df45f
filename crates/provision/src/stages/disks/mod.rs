//! The disks stage, in upstream's order: partition tables, then RAID arrays, then LUKS
//! volumes, then filesystems. Each part observes the devices, plans, and (for `apply`) acts and
//! observes again to check that nothing is left to do.

pub(crate) mod clevis;
pub(crate) mod filesystems;
pub(crate) mod luks;
pub mod partitions;
pub(crate) mod raid;
pub(crate) mod tables;

use crate::resources::Fetched;
use crate::stage::{Context, Mode, Outcome, Planned, Stage, StageError, StageName};
use crate::system::devices;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::path::{Path, PathBuf};

pub struct Disks;

impl Stage for Disks {
    fn name(&self) -> StageName {
        StageName::Disks
    }

    /// The key files of LUKS volumes it formats or opens.
    fn needs(&self) -> crate::stage::Needed {
        crate::stage::Needed::LuksKeys
    }

    /// The Clevis bindings the stage will make are tried (the TPM, the Tang servers and
    /// their thumbprints) before any disk is touched.
    fn check(&self, cx: &Context, mode: Mode) -> Result<(), StageError> {
        let config = &cx.acquired(StageName::Disks)?.config;
        luks::check(config, mode)
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let acq = cx.acquired(StageName::Disks)?;
        let job = Job {
            config: &acq.config,
            fetched: &acq.fetched,
            mode,
            state_dir: cx.options.state_dir.clone(),
            root: cx.options.root.clone(),
        };
        run(&job)
    }
}

/// What the disks stage works with.
pub struct Job<'a> {
    pub config: &'a Config,
    pub fetched: &'a Fetched,
    pub mode: Mode,
    /// Where generated LUKS keys are kept until the files stage copies them into the root.
    pub state_dir: PathBuf,
    /// The target root (a generated key may already be there from an earlier run).
    pub root: PathBuf,
}

pub(crate) fn fail(path: JsonPath, message: impl Into<String>) -> StageError {
    StageError {
        stage: StageName::Disks,
        path: Some(path),
        message: message.into(),
    }
}

pub(crate) fn change(kind: &str, entry: JsonPath, target: &Path, text: String) -> Planned {
    Planned {
        kind: kind.into(),
        entry,
        path: target.display().to_string(),
        text,
        user: None,
    }
}

/// The node a config's device path stands for, waiting for it to appear.
pub(crate) fn device(path: &str, entry: &JsonPath) -> Result<PathBuf, StageError> {
    devices::resolve(path, devices::timeout()).map_err(|m| fail(entry.clone(), m))
}

impl Job<'_> {
    /// A device of the config: waited for when applying; when planning, looked at once, and
    /// `None` when it is not there yet (a partition, array or volume this run would create).
    pub(crate) fn device(
        &self,
        path: &str,
        entry: &JsonPath,
    ) -> Result<Option<PathBuf>, StageError> {
        if self.mode.applies() {
            return device(path, entry).map(Some);
        }
        Ok(devices::resolve_now(path))
    }
}

/// Runs the stage.
pub fn run(cx: &Job) -> Result<Outcome, StageError> {
    let mut out = Outcome::default();
    tables::run(cx, &mut out)?;
    raid::run(cx, &mut out)?;
    luks::run(cx, &mut out)?;
    filesystems::run(cx, &mut out)?;
    if cx.mode.applies() && !out.changes.is_empty() {
        settle_udev()?;
    }
    Ok(out)
}

/// Where udev runs, waits for it to handle the events the stage's changes caused, as
/// upstream does at the end of its disks stage. A wiped or reformatted device loses its
/// /dev/disk/by-* links for a moment (an ext4 root made a LUKS volume labelled again on
/// /dev/mapper): a unit bound to such a link (systemd-fsck-root, sysroot.mount) that starts
/// when the stage ends would find it gone. Without udev (a busybox initramfs) there is
/// nothing to wait for.
fn settle_udev() -> Result<(), StageError> {
    if !crate::system::tool::udev_running() {
        return Ok(());
    }
    crate::system::tool::run("udevadm", ["settle"])
        .map(|_| ())
        .map_err(|e| StageError {
            stage: StageName::Disks,
            path: None,
            message: format!("waiting for udev to handle the changes: {e}"),
        })
}
