//! The Fedora CoreOS variant: the base spec with `boot_device` (a LUKS-encrypted and/or
//! RAID1-mirrored boot disk, fcos 1.3 on), `grub` superusers (1.5 on), and warnings about
//! partitions that would not do what their labels suggest. OpenShift builds on these rules
//! (the registry's fcos spec column).

mod boot_device;
mod grub;
pub(crate) mod sugar;

pub(crate) use boot_device::generates as boot_device_generates;

use super::base::Settings;
use super::base::types as bu;
use super::pathmap::PathMap;
use super::{Finding, Variant, jpath};
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use flint_ignition::validate::{Checker, Issue};

const REUSE_BY_LABEL: &str = "partitions cannot be reused by label; number must be specified except on boot disk (/dev/disk/by-id/coreos-boot-disk) or when wipe_table is true";
const MOUNT_POINT: &str = "path must be under /etc or /var if with_mount_unit is true";
const WRONG_NUMBER: &str =
    "incorrect partition number; a new partition will be created using reserved label";
const ROOT_TOO_SMALL: &str = "root should have 8GiB of space assigned";
const ROOT_CONSTRAINED: &str = "root partition cannot expand; it is set to fill available space but is followed by an auto-positioned partition";

/// fcos 1.6 on: rules on the whole config (upstream's `Config.Validate`, which OpenShift's
/// own shadows).
pub(crate) fn check_config(c: &mut Checker, cfg: &bu::Config, spec: &Variant) {
    if !spec.has_fcos_config_rules() {
        return;
    }
    let mirrored = &cfg.boot_device.mirror.devices;
    for (i, d) in cfg.storage.disks.iter().enumerate() {
        if d.device == "/dev/disk/by-id/coreos-boot-disk"
            || d.wipe_table == Some(true)
            || mirrored.contains(&d.device)
        {
            continue;
        }
        for (p, part) in d.partitions.iter().enumerate() {
            if part.number == 0 && part.label.is_some() {
                c.warning(
                    jpath(&["storage", "disks"])
                        .index(i)
                        .key("partitions")
                        .index(p)
                        .key("number"),
                    REUSE_BY_LABEL,
                );
            }
        }
    }
    for (i, f) in cfg.storage.filesystems.iter().enumerate() {
        let Some(path) = &f.path else { continue };
        let allowed = ["/etc", "/var"].iter().any(|top| {
            path.strip_prefix(top)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        });
        if !allowed && f.with_mount_unit == Some(true) {
            c.error(
                jpath(&["storage", "filesystems"]).index(i).key("path"),
                MOUNT_POINT,
            );
        }
    }
}

/// The rules of the fcos sections, `boot_device` then `grub`, for fcos and OpenShift.
pub(crate) fn check_sections(c: &mut Checker, cfg: &bu::Config, spec: &Variant) {
    if spec.has_boot_device() {
        boot_device::check(c, &cfg.boot_device, spec);
    }
    if spec.has_grub() {
        grub::check(c, &cfg.grub);
    }
}

/// The fcos sugar on the translated config, and the partition warnings.
pub(crate) fn translate(
    src: &bu::Config,
    spec: &Variant,
    set: Settings<'_>,
    cfg: &mut ig::Config,
    map: &mut PathMap,
    findings: &mut Vec<Finding>,
) {
    if !spec.has_fcos_sections() {
        return;
    }
    if spec.has_boot_device() {
        boot_device::apply(&src.boot_device, spec, cfg, map);
    }
    reserved_labels(cfg, spec.checks_root_partition(), findings);
    if spec.has_grub() {
        grub::apply(&src.grub, set, cfg, map);
    }
}

fn warn_at(findings: &mut Vec<Finding>, path: JsonPath, message: &str, output: bool) {
    let issue = Issue {
        severity: flint_go::diag::Severity::Warning,
        path,
        message: message.into(),
    };
    findings.push(if output {
        Finding::Output(issue)
    } else {
        Finding::Source(issue)
    });
}

/// Partitions labelled like the OS's own but at other numbers would be created anew; from
/// fcos 1.3 also a root partition too small or unable to grow.
fn reserved_labels(cfg: &ig::Config, root_checks: bool, findings: &mut Vec<Finding>) {
    for (i, disk) in cfg.storage.disks.iter().enumerate() {
        for (p, part) in disk.partitions.iter().enumerate() {
            let Some(label) = part.label.as_deref() else {
                continue;
            };
            let at = jpath(&["storage", "disks"])
                .index(i)
                .key("partitions")
                .index(p);
            if root_checks && label == "root" {
                match part.size_mib {
                    None | Some(0) => {
                        let squeezed =
                            disk.partitions.iter().enumerate().any(|(q, other)| {
                                q != p && matches!(other.start_mib, None | Some(0))
                            });
                        if squeezed {
                            warn_at(findings, at.key("label"), ROOT_CONSTRAINED, true);
                        }
                    }
                    Some(size) if size < 8192 => {
                        // Upstream names this in Butane's spelling at the output's index,
                        // so no path map applies.
                        warn_at(findings, at.key("size_mib"), ROOT_TOO_SMALL, false);
                    }
                    Some(_) => {}
                }
            }
            if disk.wipe_table == Some(true) {
                continue;
            }
            let expected = match label {
                "BIOS-BOOT" | "PowerPC-PReP-boot" => 1,
                "EFI-SYSTEM" => 2,
                "boot" => 3,
                "root" => 4,
                _ => continue,
            };
            if part.number != expected {
                warn_at(findings, at.key("label"), WRONG_NUMBER, true);
            }
        }
    }
}
