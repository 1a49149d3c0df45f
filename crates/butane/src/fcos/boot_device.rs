//! `boot_device`: the boot disk encrypted with LUKS (Tang, TPM2 or, from fcos 1.6, IBM
//! CEX) and/or mirrored across several disks (RAID1), written out as the partitions, RAID
//! arrays, LUKS volume and filesystems the OS image expects.

use super::sugar::{self, Origins};
use super::{Variant, bu, ig, jpath};
use crate::pathmap::PathMap;
use flint_go::tree::JsonPath;
use flint_ignition::validate::Checker;

const LAYOUTS: &str =
    "layout must be one of: aarch64, ppc64le, s390x-eckd, s390x-virt, s390x-zfcp, x86_64";
const LAYOUTS_LEGACY: &str = "layout must be one of: aarch64, ppc64le, x86_64";
const TOO_FEW_MIRRORS: &str = "mirroring requires at least two devices";
const MIRROR_NEEDS_LAYOUT: &str =
    "boot_device.layout should be specified when boot_device.mirror is specified";
const NO_LUKS_DEVICE: &str = "device is required for layouts: s390x-eckd, s390x-zfcp";
const NO_MIRROR_S390X: &str =
    "mirroring not supported on layouts: s390x-eckd, s390x-zfcp, s390x-virt";
const BAD_LUKS_DEVICE: &str =
    "device name must start with /dev/dasd on s390x-eckd layout or /dev/sd on s390x-zfcp layout";
const CEX_ARCH: &str = "when using cex the targeted architecture must match s390x";
const CEX_WITH_CLEVIS: &str = "cannot use cex with clevis";
const NO_LUKS_METHOD: &str = "no method specified for luks";

// The partition layout of the OS image (coreos-assembler's create_disk.sh), which the
// generated partitions replicate; these must never change.
const RESERVED_TYPE: &str = "8DA63339-0007-60C0-C436-083AC8230908";
const BIOS_TYPE: &str = "21686148-6449-6E6F-744E-656564454649";
const PREP_TYPE: &str = "9E1A2D38-C612-4316-AA26-8B49521E5A8B";
const ESP_TYPE: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
const RESERVED_MIB: i64 = 1;
const BIOS_MIB: i64 = 1;
const PREP_MIB: i64 = 4;
const ESP_MIB: i64 = 127;
const BOOT_MIB: i64 = 384;

/// `/dev/` followed by `prefix` and one letter, at the end of `device`.
fn ends_with_disk(device: &str, prefix: &str) -> bool {
    let b = device.as_bytes();
    let needle = format!("/dev/{prefix}");
    b.len() > needle.len()
        && b[b.len() - 1].is_ascii_lowercase()
        && device[..device.len() - 1].ends_with(&needle)
}

fn mirror_check(c: &mut Checker, d: &bu::BootDevice, at: &JsonPath) {
    if d.mirror.devices.len() == 1 {
        c.error(at.key("mirror").key("devices"), TOO_FEW_MIRRORS);
    }
}

/// The boot device's rules, those of its version.
pub(super) fn check(c: &mut Checker, d: &bu::BootDevice, spec: &Variant) {
    let at = jpath(&["boot_device"]);
    if !d.mirror.devices.is_empty() && d.layout.is_none() {
        if spec.boot_device_strict() {
            c.error(at.key("mirror"), MIRROR_NEEDS_LAYOUT);
        } else {
            c.warning(at.key("mirror"), MIRROR_NEEDS_LAYOUT);
        }
    }
    let luks_device = d.luks.device.as_deref().filter(|s| !s.is_empty());
    if let Some(layout) = d.layout.as_deref() {
        check_layout(c, d, layout, luks_device, spec);
    }
    if spec.has_boot_device_s390x() && d.luks.cex.enabled == Some(true) {
        match d.layout.as_deref() {
            None => c.error(at.key("luks").key("cex"), CEX_ARCH),
            Some(l) if !l.starts_with("s390x") => c.error(at.key("layout"), CEX_ARCH),
            Some(_) => {}
        }
        if !d.luks.tang.is_empty() || d.luks.tpm2 == Some(true) {
            c.error(at.key("luks"), CEX_WITH_CLEVIS);
        }
    }
    mirror_check(c, d, &at);
    // The fields' own rules follow: the LUKS section's, then the mirror's again (upstream
    // checks it both from the boot device and on its own, and reports it twice).
    if spec.boot_device_strict() && luks_device.is_some() {
        let method = d.luks.tang.iter().any(|t| *t != bu::Tang::default())
            || d.luks.tpm2 == Some(true)
            || d.luks.cex.enabled == Some(true);
        if !method {
            c.error(at.key("luks").key("luks"), NO_LUKS_METHOD);
        }
    }
    mirror_check(c, d, &at);
}

/// The layout named, and what it needs of the LUKS device and the mirror.
fn check_layout(
    c: &mut Checker,
    d: &bu::BootDevice,
    layout: &str,
    luks_device: Option<&str>,
    spec: &Variant,
) {
    let at = jpath(&["boot_device", "layout"]);
    let s390x = spec.has_boot_device_s390x();
    match layout {
        "aarch64" | "ppc64le" | "x86_64" => {}
        "s390x-eckd" | "s390x-zfcp" | "s390x-virt" if s390x => {
            let prefix = if layout == "s390x-eckd" { "dasd" } else { "sd" };
            if layout != "s390x-virt" {
                match luks_device {
                    None => c.error(at.clone(), NO_LUKS_DEVICE),
                    Some(dev) if !ends_with_disk(dev, prefix) => {
                        c.error(at.clone(), BAD_LUKS_DEVICE)
                    }
                    Some(_) => {}
                }
            }
        }
        _ if s390x => c.error(at.clone(), LAYOUTS),
        _ => c.error(at.clone(), LAYOUTS_LEGACY),
    }
    if s390x && layout.starts_with("s390x") && !d.mirror.devices.is_empty() {
        c.error(at, NO_MIRROR_S390X);
    }
}

fn tang(t: &bu::Tang) -> ig::Tang {
    ig::Tang {
        thumbprint: t.thumbprint.clone(),
        url: t.url.clone(),
        advertisement: t.advertisement.clone(),
    }
}

fn partition(label: String, size: Option<i64>, type_guid: Option<&str>) -> ig::Partition {
    ig::Partition {
        label: Some(label),
        size_mib: size,
        type_guid: type_guid.map(str::to_string),
        ..Default::default()
    }
}

/// Whether the boot device asks for LUKS: Tang, TPM2, or (fcos 1.6 on) CEX.
fn wants_luks(d: &bu::BootDevice, spec: &Variant) -> bool {
    d.luks.tpm2 == Some(true)
        || !d.luks.tang.is_empty()
        || (spec.has_boot_device_s390x() && d.luks.cex.enabled == Some(true))
}

/// Whether the boot device generates anything (LUKS or a mirror), which is then merged
/// into the config.
pub(crate) fn generates(d: &bu::BootDevice, spec: &Variant) -> bool {
    spec.has_boot_device() && (wants_luks(d, spec) || !d.mirror.devices.is_empty())
}

/// The partitions before `boot` that a layout's firmware needs.
#[derive(Clone, Copy)]
struct Firmware {
    bios: bool,
    efi: bool,
    prep: bool,
}

impl Firmware {
    fn of(layout: &str) -> Firmware {
        let (bios, efi, prep) = match layout {
            "x86_64" => (true, true, false),
            "aarch64" => (false, true, false),
            "ppc64le" => (false, false, true),
            _ => (false, false, false),
        };
        Firmware { bios, efi, prep }
    }
}

/// The config the sugar generates, and where each of its entries came from.
#[derive(Default)]
struct Generated {
    config: ig::Config,
    origins: Origins,
}

impl Generated {
    fn origin(&mut self, list: &'static str, index: usize, from: JsonPath) {
        self.origins
            .push((jpath(&["storage"]).key(list).index(index), from, true));
    }

    fn add_filesystem(&mut self, fs: ig::Filesystem, from: JsonPath) {
        self.origin("filesystems", self.config.storage.filesystems.len(), from);
        self.config.storage.filesystems.push(fs);
    }
}

/// The boot device written out: the mirror's disks, RAID arrays and filesystems, the
/// LUKS volume, and the root filesystem, merged under the user's config.
pub(super) fn apply(d: &bu::BootDevice, spec: &Variant, cfg: &mut ig::Config, map: &mut PathMap) {
    let want_luks = wants_luks(d, spec);
    let want_mirror = !d.mirror.devices.is_empty();
    if !want_luks && !want_mirror {
        return;
    }
    let layout = d.layout.as_deref().unwrap_or("x86_64");
    let mut g = Generated::default();
    if want_mirror {
        mirror(d, Firmware::of(layout), &mut g);
    }
    if want_luks {
        luks(d, spec, layout, want_mirror, &mut g);
    }
    let root = ig::Filesystem {
        device: if want_luks {
            "/dev/mapper/root".into()
        } else {
            "/dev/md/md-root".into()
        },
        format: Some("xfs".into()),
        label: Some("root".into()),
        wipe_filesystem: Some(true),
        ..Default::default()
    };
    g.add_filesystem(root, jpath(&["boot_device"]));
    sugar::merge(g.config, &g.origins, cfg, map);
}

/// Each mirror device partitioned as the OS image is (with its ESP filesystem), and the
/// RAID1 arrays of `boot` and `root` across them, with the `boot` filesystem.
fn mirror(d: &bu::BootDevice, fw: Firmware, g: &mut Generated) {
    let src = jpath(&["boot_device", "mirror"]);
    for (i, device) in d.mirror.devices.iter().enumerate() {
        let n = i + 1;
        let from = src.key("devices").index(i);
        g.origin("disks", g.config.storage.disks.len(), from.clone());
        g.config.storage.disks.push(mirror_disk(device, n, fw));
        if fw.efi {
            let fs = ig::Filesystem {
                device: format!("/dev/disk/by-partlabel/esp-{n}"),
                format: Some("vfat".into()),
                label: Some(format!("esp-{n}")),
                wipe_filesystem: Some(true),
                ..Default::default()
            };
            g.add_filesystem(fs, from);
        }
    }
    let members = |prefix: &str| -> Vec<String> {
        (1..=d.mirror.devices.len())
            .map(|i| format!("/dev/disk/by-partlabel/{prefix}-{i}"))
            .collect()
    };
    g.config.storage.raid = vec![
        ig::Raid {
            devices: members("boot"),
            level: Some("raid1".into()),
            name: "md-boot".into(),
            // The superblock at the end of the partition, so that BIOS GRUB need not
            // understand RAID.
            options: vec!["--metadata=1.0".into()],
            spares: None,
        },
        ig::Raid {
            devices: members("root"),
            level: Some("raid1".into()),
            name: "md-root".into(),
            ..Default::default()
        },
    ];
    for k in 0..2 {
        g.origin("raid", k, src.clone());
    }
    let boot = ig::Filesystem {
        device: "/dev/md/md-boot".into(),
        format: Some("ext4".into()),
        label: Some("boot".into()),
        wipe_filesystem: Some(true),
        ..Default::default()
    };
    g.add_filesystem(boot, src);
}

/// Mirror device number `n` (from 1), wiped and partitioned as the OS image is.
fn mirror_disk(device: &str, n: usize, fw: Firmware) -> ig::Disk {
    let reserved = || {
        partition(
            format!("reserved-{n}"),
            Some(RESERVED_MIB),
            Some(RESERVED_TYPE),
        )
    };
    let first = if fw.bios {
        partition(format!("bios-{n}"), Some(BIOS_MIB), Some(BIOS_TYPE))
    } else if fw.prep {
        partition(format!("prep-{n}"), Some(PREP_MIB), Some(PREP_TYPE))
    } else {
        reserved()
    };
    let second = if fw.efi {
        partition(format!("esp-{n}"), Some(ESP_MIB), Some(ESP_TYPE))
    } else {
        reserved()
    };
    ig::Disk {
        device: device.to_string(),
        partitions: vec![
            first,
            second,
            partition(format!("boot-{n}"), Some(BOOT_MIB), None),
            partition(format!("root-{n}"), None, None),
        ],
        wipe_table: Some(true),
    }
}

/// The LUKS volume `root` on the root partition (or the root array), bound with Clevis,
/// or on s390x with CEX.
fn luks(d: &bu::BootDevice, spec: &Variant, layout: &str, mirrored: bool, g: &mut Generated) {
    let base = d.luks.device.clone().unwrap_or_default();
    let device = match layout {
        "s390x-eckd" => format!("{base}2"),
        "s390x-zfcp" => format!("{base}4"),
        _ if mirrored => "/dev/md/md-root".into(),
        _ => "/dev/disk/by-partlabel/root".into(),
    };
    // CEX (s390x) replaces Clevis: the key comes from the crypto card.
    let cex = spec.has_boot_device_s390x() && d.luks.cex.enabled == Some(true);
    let (clevis, cex_part) = if cex {
        (
            ig::Clevis::default(),
            ig::Cex {
                enabled: Some(true),
            },
        )
    } else {
        let clevis = ig::Clevis {
            tang: d.luks.tang.iter().map(tang).collect(),
            threshold: d.luks.threshold,
            tpm2: d.luks.tpm2,
            ..Default::default()
        };
        (clevis, ig::Cex::default())
    };
    g.config.storage.luks = vec![ig::Luks {
        cex: cex_part,
        clevis,
        device: Some(device),
        discard: d.luks.discard,
        label: Some("luks-root".into()),
        name: "root".into(),
        wipe_volume: Some(true),
        ..Default::default()
    }];
    let src = jpath(&["boot_device", "luks"]);
    let at = jpath(&["storage", "luks"]).index(0);
    g.origins.push((at.clone(), src.clone(), true));
    let part = if cex { "cex" } else { "clevis" };
    g.origins.push((at.key(part), src.clone(), false));
    g.origins
        .push((at.key("discard"), src.key("discard"), true));
}
