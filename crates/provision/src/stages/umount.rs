//! The umount stage: what the mount stage mounted is unmounted, deepest first, so that the
//! system can take over the root.

use super::mount::{fail, mounted_here, targets};
use crate::stage::{Context, Mode, Outcome, Stage, StageError, StageName};
use crate::system::{devices, mount};
use flint_ignition::Config;
use std::path::Path;

pub(crate) struct Umount;

impl Stage for Umount {
    fn name(&self) -> StageName {
        StageName::Umount
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        if !mode.applies() {
            return Ok(Outcome::default());
        }
        let acq = cx.acquired(StageName::Umount)?;
        Ok(Outcome {
            changes: Vec::new(),
            notes: umount_all(&acq.config, &cx.options.root)?,
            unseen: Vec::new(),
        })
    }
}

/// Unmounts every target that is mounted, deepest first; returns notes.
pub(crate) fn umount_all(config: &Config, root: &Path) -> Result<Vec<String>, StageError> {
    let mut notes = Vec::new();
    for t in targets(config, root).iter().rev() {
        let Some(dev) = devices::resolve_now(&t.fs.device) else {
            continue;
        };
        // A path through a link was never mounted by flint: leave whatever it reaches alone.
        if !matches!(t.open(StageName::Umount, false), Ok(Some(_))) || !mounted_here(&dev, &t.dir) {
            continue;
        }
        mount::umount_patiently(&t.dir).map_err(|e| {
            fail(
                StageName::Umount,
                &t.entry,
                format!("unmounting {}: {e}", t.dir.display()),
            )
        })?;
        notes.push(format!("unmounted {}", t.dir.display()));
    }
    Ok(notes)
}
