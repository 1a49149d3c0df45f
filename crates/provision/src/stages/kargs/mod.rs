//! The kargs stage: the config's kernel arguments set in grub.cfg (the pure edit is
//! `grub.rs`), on the OEM partition unless the options name a file; they hold after a reboot,
//! which the reboot flag asks for. Run as upstream's `ignition`, the stage hands the
//! arguments to the distribution's helper instead (`helper.rs`).

mod grub;
mod helper;

use crate::stage::{Context, Mode, Outcome, Planned, Stage, StageError, StageName};
use crate::write::write_atomic;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::path::{Path, PathBuf};

pub(crate) struct Kargs;

impl Stage for Kargs {
    fn name(&self) -> StageName {
        StageName::Kargs
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let opts = cx.options;
        let acq = cx.acquired(StageName::Kargs)?;
        let k = &acq.config.kernel_arguments;
        if let Some(program) = &opts.kargs_helper {
            if k.should_exist.is_empty() && k.should_not_exist.is_empty() {
                return Ok(Outcome::default());
            }
            let text = helper::run(program, k, mode)?;
            return Ok(Outcome {
                changes: vec![Planned {
                    kind: "set-kernel-arguments".into(),
                    entry: JsonPath::root().key("kernelArguments"),
                    path: program.clone(),
                    text,
                    user: None,
                }],
                notes: Vec::new(),
                unseen: Vec::new(),
            });
        }
        let target = match &opts.kargs_file {
            Some(f) => KargsTarget::File(f.clone()),
            None => KargsTarget::Oem(opts.fetch.oem.partition()),
        };
        let changed = edit_grub_cfg(&acq.config, &target, mode)?;
        if mode.applies()
            && changed.is_some()
            && let Some(flag) = &opts.kargs_reboot_flag
        {
            std::fs::write(flag, b"").map_err(|e| {
                let message = format!("writing the reboot flag {}: {e}", flag.display());
                StageError::new(StageName::Kargs, None, message)
            })?;
        }
        let changes = (changed.into_iter())
            .map(|text| Planned {
                kind: "set-kernel-arguments".into(),
                entry: JsonPath::root().key("kernelArguments"),
                path: target.to_string(),
                text,
                user: None,
            })
            .collect();
        Ok(Outcome {
            changes,
            notes: Vec::new(),
            unseen: Vec::new(),
        })
    }
}

/// Where the kargs stage edits grub.cfg.
#[derive(Debug, Clone)]
pub(crate) enum KargsTarget {
    /// This file (tests, images that keep the OEM partition mounted).
    File(PathBuf),
    /// `grub.cfg` at the top of the OEM partition, mounted for the edit as Flatcar's helper
    /// mounts it.
    Oem(crate::fetch::oem::Partition),
}

impl std::fmt::Display for KargsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KargsTarget::File(p) => write!(f, "{}", p.display()),
            KargsTarget::Oem(p) => write!(f, "grub.cfg on the OEM partition (label {})", p.label),
        }
    }
}

/// The kargs stage: applies the config's kernel arguments to grub.cfg as Flatcar does (see
/// [`kargs`]). Returns the plan line when they change; they hold after a reboot.
pub(crate) fn edit_grub_cfg(
    config: &Config,
    target: &KargsTarget,
    mode: Mode,
) -> Result<Option<String>, StageError> {
    let k = &config.kernel_arguments;
    if k.should_exist.is_empty() && k.should_not_exist.is_empty() {
        return Ok(None);
    }
    let fail = |message: String| StageError {
        stage: StageName::Kargs,
        path: Some(JsonPath::root().key("kernelArguments")),
        message,
    };
    // What grub.cfg holds (none: no such file), and how it is replaced.
    type Read<'a> = &'a dyn Fn() -> Result<Option<Vec<u8>>, String>;
    type Write<'a> = &'a dyn Fn(&[u8]) -> Result<(), String>;
    let edit = |read: Read, write: Write| -> Result<Option<String>, String> {
        let text = read()?.map(|t| String::from_utf8_lossy(&t).into_owned());
        let Some(new) = grub::apply_to(text.as_deref().unwrap_or(""), k) else {
            return Ok(None);
        };
        if mode.applies() {
            write(new.as_bytes())?;
        }
        Ok(Some(format!(
            "set kernel arguments \"{}\" in {target} (takes effect after a reboot)",
            grub::current(&new)
        )))
    };
    match target {
        KargsTarget::File(p) => {
            let read = || match std::fs::read(p) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("reading {}: {e}", p.display())),
            };
            let write = |b: &[u8]| {
                write_atomic(p, b, 0o644).map_err(|e| format!("writing {}: {e}", p.display()))
            };
            edit(&read, &write).map_err(fail)
        }
        KargsTarget::Oem(part) => {
            let dev = part
                .device(crate::system::devices::timeout())
                .map_err(|e| {
                    fail(format!(
                        "kernel arguments are kept on the OEM partition, but {e}"
                    ))
                })?;
            // Read and written beneath the mount: a grub.cfg that is a link out of the
            // partition is refused, not read (its target could be any file of the
            // initramfs) nor written through.
            use crate::system::beneath::Refused;
            let name = Path::new("grub.cfg");
            let shown = |e: Refused| match e {
                Refused::Escapes => format!(
                    "grub.cfg on the OEM partition {} is a symbolic link that leads outside \
                     the partition: refused",
                    dev.display()
                ),
                e => format!("grub.cfg on the OEM partition {}: {e}", dev.display()),
            };
            part.with_mounted(&dev, mode.applies(), |dir| {
                let read = || match dir.read(name, KARGS_FILE_LIMIT) {
                    Ok(t) => Ok(Some(t)),
                    Err(Refused::Missing) => Ok(None),
                    Err(e) => Err(shown(e)),
                };
                let write = |b: &[u8]| dir.write_atomic(name, b, 0o644).map_err(shown);
                edit(&read, &write)
            })
            .map_err(fail)
        }
    }
}

/// The largest grub.cfg the kargs stage edits (a real one is a few hundred bytes).
const KARGS_FILE_LIMIT: u64 = 16 << 20;
