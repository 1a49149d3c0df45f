//! The disks stage, in upstream's order: partition tables, then RAID arrays, then LUKS
//! volumes, then filesystems. Each part observes the devices, plans, and (for `apply`) acts and
//! observes again to check that nothing is left to do.

pub mod filesystems;
pub mod luks;
pub mod partitions;
pub mod raid;
pub mod tables;

use super::resources::Fetched;
use super::{Planned, Stage, StageError};
use crate::system::devices;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::path::{Path, PathBuf};

/// What the disks stage works with.
pub struct Context<'a> {
    pub config: &'a Config,
    pub fetched: &'a Fetched,
    pub apply: bool,
    /// Where generated LUKS keys are kept until the files stage copies them into the root.
    pub state_dir: PathBuf,
    /// The target root (a generated key may already be there from an earlier run).
    pub root: PathBuf,
}

/// The stage's output: changes (planned or made), and notes about what was reused.
#[derive(Default)]
pub struct Outcome {
    pub changes: Vec<Planned>,
    pub notes: Vec<String>,
}

pub(crate) fn fail(path: JsonPath, message: impl Into<String>) -> StageError {
    StageError {
        stage: Stage::Disks,
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
    }
}

/// The node a config's device path stands for, waiting for it to appear.
pub(crate) fn device(path: &str, entry: &JsonPath) -> Result<PathBuf, StageError> {
    devices::resolve(path, devices::timeout()).map_err(|m| fail(entry.clone(), m))
}

impl Context<'_> {
    /// A device of the config: waited for when applying; when planning, looked at once, and
    /// `None` when it is not there yet (a partition, array or volume this run would create).
    pub(crate) fn device(
        &self,
        path: &str,
        entry: &JsonPath,
    ) -> Result<Option<PathBuf>, StageError> {
        if self.apply {
            return device(path, entry).map(Some);
        }
        Ok(devices::resolve_now(path))
    }
}

/// Runs the stage.
pub fn run(cx: &Context) -> Result<Outcome, StageError> {
    let mut out = Outcome::default();
    tables::run(cx, &mut out)?;
    raid::run(cx, &mut out)?;
    luks::run(cx, &mut out)?;
    filesystems::run(cx, &mut out)?;
    Ok(out)
}
