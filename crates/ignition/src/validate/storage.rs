//! Rules for disks and partitions, RAID arrays, filesystems and LUKS volumes.

use super::paths::{check_given_path, check_path};
use super::{Checker, resource};
use crate::types::{Clevis, Disk, Filesystem, Luks, Partition, Raid, Storage};
use crate::version::Version;
use flint_go::tree::JsonPath;
use std::collections::{HashMap, HashSet};

pub(super) fn check(c: &mut Checker, s: &Storage, path: &JsonPath) {
    let disks = path.key("disks");
    for (i, d) in s.disks.iter().enumerate() {
        check_disk(c, d, &disks.index(i));
    }
    c.unique(&disks, &s.disks, |d| d.device.as_str());

    let fss = path.key("filesystems");
    for (i, f) in s.filesystems.iter().enumerate() {
        check_filesystem(c, f, &fss.index(i));
    }
    c.unique(&fss, &s.filesystems, |f| f.device.as_str());
    check_filesystems_against_disks(c, s, &fss);

    let luks = path.key("luks");
    for (i, l) in s.luks.iter().enumerate() {
        check_luks(c, l, &luks.index(i));
    }
    c.unique(&luks, &s.luks, |l| l.name.as_str());

    let raid = path.key("raid");
    for (i, r) in s.raid.iter().enumerate() {
        check_raid(c, r, &raid.index(i));
    }
    c.unique(&raid, &s.raid, |r| r.name.as_str());
}

fn check_device(c: &mut Checker, device: &str, path: JsonPath) {
    if let Some(e) = check_path(device) {
        c.error(path, e);
    }
}

fn check_disk(c: &mut Checker, d: &Disk, path: &JsonPath) {
    // Upstream's order: the disk's own checks (its device, then those across its
    // partitions, which need a device), then each partition, then duplicates. Partitions
    // are checked whatever the disk.
    let parts = path.key("partitions");
    if d.device.is_empty() {
        c.error(path.key("device"), "disk device is required");
    } else {
        check_device(c, &d.device, path.key("device"));
        check_partitions_together(c, d, &parts);
    }
    for (i, p) in d.partitions.iter().enumerate() {
        check_partition(c, p, &parts.index(i));
    }
    c.unique(&parts, &d.partitions, partition_key);
}

fn check_partitions_together(c: &mut Checker, d: &Disk, parts: &JsonPath) {
    // Upstream groups the indexes by number in a Go map and reports the second index of the
    // first group with two that its (randomised) iteration meets: most often the group of
    // the number seen first, which is the one reported here.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of = std::collections::HashMap::new();
    for (i, p) in d
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.number != 0)
    {
        let g = *group_of.entry(p.number).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    if let Some(at) = groups.iter().find(|at| at.len() > 1) {
        c.error(parts.index(at[1]), "partition numbers collide");
    }
    if let Some(i) = first_overlap(&d.partitions) {
        c.error(parts.index(i), "partitions overlap");
    }
    let any_absent = d.partitions.iter().any(|p| p.should_exist == Some(false));
    if any_absent && d.partitions.iter().any(|p| p.number == 0) {
        c.error(
            parts.clone(),
            "shouldExist is false for a partition and other partition(s) has start or size 0",
        );
    }
    let mut labels = HashSet::new();
    if let Some(i) = d
        .partitions
        .iter()
        .position(|p| p.label.as_ref().is_some_and(|l| !labels.insert(l.as_str())))
    {
        c.error(parts.index(i), "cannot use the same partition label twice");
    }
}

/// Upstream identifies a partition by number, or by label when it has no number.
fn partition_key(p: &Partition) -> String {
    if p.number != 0 {
        format!("number:{}", p.number)
    } else if let Some(l) = &p.label {
        format!("label:{l}")
    } else {
        String::new()
    }
}

/// Index of the first partition another one overlaps, considering only partitions placed
/// explicitly (start and size given, start not 0); a size of 0 counts as one MiB.
fn first_overlap(parts: &[Partition]) -> Option<usize> {
    let ranges: Vec<(usize, i64, i64)> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match (p.start_mib, p.size_mib) {
            // Fuzzing (fuzz/partition_planner): `s + z - 1` overflowed for huge values (a
            // panic with overflow checks); it wraps, as the release build and Go's int64 do.
            (Some(s), Some(z)) if s != 0 => Some((
                i,
                s,
                if z == 0 {
                    s
                } else {
                    s.wrapping_add(z).wrapping_sub(1)
                },
            )),
            _ => None,
        })
        .collect();
    for &(i, ps, pe) in &ranges {
        for &(j, os, oe) in &ranges {
            if i == j {
                continue;
            }
            let inside = |x: i64| os <= x && x <= oe;
            if inside(ps) || inside(pe) || (ps < os && pe > oe) {
                return Some(j);
            }
        }
    }
    None
}

fn is_guid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    groups.len() == 5
        && groups
            .iter()
            .zip(lens)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn check_partition(c: &mut Checker, p: &Partition, path: &JsonPath) {
    let has_other = p.label.is_some()
        || p.type_guid.as_deref().is_some_and(|s| !s.is_empty())
        || p.guid.as_deref().is_some_and(|s| !s.is_empty())
        || p.start_mib.is_some()
        || p.size_mib.is_some();
    if p.should_exist == Some(false) && has_other {
        c.error(
            path.clone(),
            "shouldExist specified false with other options also specified",
        );
    }
    if p.number == 0 && p.label.is_none() {
        c.error(
            path.clone(),
            "a partition number >= 1 or a label must be specified",
        );
    }
    // One finding per label: a label too long is not also checked for a colon.
    if let Some(l) = &p.label {
        if l.len() > 36 {
            c.error(
                path.key("label"),
                "partition labels may not exceed 36 characters",
            );
        } else if l.contains(':') {
            c.error(
                path.key("label"),
                "partition label will be truncated to text before the colon",
            );
        }
    }
    for (key, v) in [("guid", &p.guid), ("typeGuid", &p.type_guid)] {
        if let Some(g) = v
            && !g.is_empty()
            && !is_guid(g)
        {
            c.error(
                path.key(key),
                "doesn't match the form \"01234567-89AB-CDEF-EDCB-A98765432101\"",
            );
        }
    }
}

/// Label length limits per filesystem format, in bytes.
pub(super) fn label_limit(format: &str) -> Option<usize> {
    match format {
        "ext4" => Some(16),
        "btrfs" => Some(256),
        "xfs" => Some(12),
        "swap" => Some(15),
        "vfat" => Some(11),
        _ => None,
    }
}

pub(super) fn format_known(format: &str, version: Version) -> bool {
    match format {
        "ext4" | "btrfs" | "xfs" | "swap" | "vfat" => true,
        "none" => version >= Version::V3_3,
        _ => false,
    }
}

/// The filesystem formats spec `version` accepts (for an editor to offer).
pub fn filesystem_formats(version: Version) -> Vec<&'static str> {
    ["ext4", "btrfs", "xfs", "swap", "vfat", "none"]
        .into_iter()
        .filter(|f| format_known(f, version))
        .collect()
}

fn check_filesystem(c: &mut Checker, f: &Filesystem, path: &JsonPath) {
    // Upstream's order: the mount path, then the device.
    if let Some(p) = f.path.as_deref().filter(|p| !p.is_empty())
        && let Some(e) = check_given_path(p)
    {
        c.error(path.key("path"), e);
    }
    check_device(c, &f.device, path.key("device"));
    let format = f.format.as_deref().unwrap_or("");
    if format.is_empty() {
        let nonempty = |o: &Option<String>| o.as_deref().is_some_and(|s| !s.is_empty());
        if nonempty(&f.path)
            || nonempty(&f.label)
            || nonempty(&f.uuid)
            || f.wipe_filesystem == Some(true)
            || !f.options.is_empty()
            || !f.mount_options.is_empty()
        {
            c.error(
                path.key("format"),
                "format cannot be empty when path, label, uuid, wipeFilesystem, options, or mountOptions is specified",
            );
        }
    } else if !format_known(format, c.version) {
        c.error(path.key("format"), "invalid filesystem format");
    }
    if let Some(label) = f.label.as_deref().filter(|l| !l.is_empty()) {
        if format.is_empty() {
            c.error(
                path.key("label"),
                "filesystem must specify format if label is specified",
            );
        } else if let Some(max) = label_limit(format)
            && label.len() > max
        {
            c.error(
                path.key("label"),
                format!(
                    "filesystem labels cannot be longer than {max} characters when using {format}"
                ),
            );
        }
    }
}

/// Messages of the storage-wide filesystem rule, which `in_upstream_order` places.
pub(super) const FS_OVER_PARTITIONS: &str = "filesystem overwrites partitioned device";
pub(super) const FS_OVER_WIPED_TABLE: &str =
    "device matches disk with wipeTable enabled; filesystem will be wiped";

fn check_filesystems_against_disks(c: &mut Checker, s: &Storage, fss: &JsonPath) {
    let disks: HashMap<&str, &Disk> = s.disks.iter().map(|d| (d.device.as_str(), d)).collect();
    for (i, f) in s.filesystems.iter().enumerate() {
        let Some(d) = disks.get(f.device.as_str()) else {
            continue;
        };
        if !d.partitions.is_empty() {
            c.warning(fss.index(i).key("device"), FS_OVER_PARTITIONS);
        } else if f.wipe_filesystem != Some(true) && d.wipe_table == Some(true) {
            c.warning(fss.index(i).key("device"), FS_OVER_WIPED_TABLE);
        }
    }
}

const RAID_LEVELS: &[&str] = &[
    "linear", "raid0", "0", "stripe", "raid1", "1", "mirror", "raid4", "4", "raid5", "5", "raid6",
    "6", "raid10", "10",
];

fn check_raid(c: &mut Checker, r: &Raid, path: &JsonPath) {
    match r.level.as_deref() {
        None | Some("") if c.version >= Version::V3_3 => {
            c.error(path.key("level"), "raid level is required")
        }
        Some(l) if RAID_LEVELS.contains(&l) => {
            let striped = matches!(l, "linear" | "raid0" | "0" | "stripe");
            if striped && r.spares.is_some_and(|s| s != 0) {
                c.error(
                    path.key("level"),
                    "spares unsupported for linear and raid0 arrays",
                );
            }
        }
        _ => c.error(path.key("level"), "unrecognized raid level"),
    }
    let devices = path.key("devices");
    if r.devices.is_empty() {
        c.error(devices.clone(), "raid devices required");
    }
    for (i, d) in r.devices.iter().enumerate() {
        check_device(c, d, devices.index(i));
    }
    c.unique(&devices, &r.devices, |d| d.as_str());
}

fn check_luks(c: &mut Checker, l: &Luks, path: &JsonPath) {
    if l.name.contains('/') {
        c.error(path.key("name"), "device names cannot contain slashes");
    }
    if l.label.as_ref().is_some_and(|s| s.len() > 47) {
        c.error(
            path.key("label"),
            "luks device labels cannot be longer than 47 characters",
        );
    }
    match l.device.as_deref() {
        None | Some("") => c.error(path.key("device"), "disk device is required"),
        Some(d) => check_device(c, d, path.key("device")),
    }
    // 3.2.0 held `custom` by pointer: any `custom` object counts, whatever its pin.
    let custom_given = if c.version == Version::V3_2 {
        l.clevis.custom != Default::default()
    } else {
        l.clevis
            .custom
            .pin
            .as_deref()
            .is_some_and(|p| !p.is_empty())
    };
    if custom_given
        && (!l.clevis.tang.is_empty()
            || l.clevis.tpm2 == Some(true)
            || l.clevis.threshold.is_some_and(|t| t != 0))
    {
        c.error(
            path.key("clevis"),
            "cannot use custom clevis config with tpm2, tang, or threshold",
        );
    }
    if let Some(src) = l.key_file.source.as_deref().filter(|s| !s.is_empty())
        && c.check_url(src).is_err()
    {
        // Upstream reports this at "keys", a path that does not exist in the config.
        c.error(path.key("keys"), "invalid key-file source");
    }
    if l.cex.is_present() {
        if l.clevis.is_present() {
            c.error(path.key("cex"), "cannot use cex with clevis");
        }
        if l.key_file.source.as_deref().is_some_and(|s| !s.is_empty()) {
            c.error(path.key("cex"), "cannot use key file with cex");
        }
    }
    // Then the volume's fields: its Clevis binding, its key file.
    check_clevis(c, &l.clevis, &path.key("clevis"));
    resource::check(c, &l.key_file, &path.key("keyFile"));
    let open = path.key("openOptions");
    c.unique(&open, &l.open_options, |o| o.as_str());
}

fn check_clevis(c: &mut Checker, cl: &Clevis, path: &JsonPath) {
    if c.version == Version::V3_2 {
        check_custom_3_2(c, cl, path);
        return;
    }
    let custom = &cl.custom;
    let custom_used = custom.pin.as_deref().is_some_and(|p| !p.is_empty())
        || custom.config.as_deref().is_some_and(|p| !p.is_empty())
        || custom.needs_network == Some(true);
    if custom_used {
        let cp = path.key("custom");
        match custom.pin.as_deref() {
            None | Some("") => c.error(cp.key("pin"), "missing required custom clevis pin"),
            Some("tpm2" | "tang" | "sss") => {}
            // 3.6.0 lets any pin through (clevis decides).
            Some(_) if c.version >= Version::V3_6 => {}
            Some(_) => c.error(cp.key("pin"), "unsupported clevis pin"),
        }
        if custom.config.as_deref().is_none_or(str::is_empty) {
            c.error(cp.key("config"), "missing required custom clevis config");
        }
    }
    check_tangs(c, cl, path, true);
}

/// 3.2.0's rules for `custom` (then plain strings): only a pin or a config makes it used,
/// and an empty pin is an unsupported one; tang servers had no advertisement.
fn check_custom_3_2(c: &mut Checker, cl: &Clevis, path: &JsonPath) {
    let custom = &cl.custom;
    let pin = custom.pin.as_deref().unwrap_or("");
    let config = custom.config.as_deref().unwrap_or("");
    if !(pin.is_empty() && config.is_empty()) {
        let cp = path.key("custom");
        if !matches!(pin, "tpm2" | "tang" | "sss") {
            c.error(cp.key("pin"), "unsupported clevis pin");
        }
        if config.is_empty() {
            c.error(cp.key("config"), "missing required custom clevis config");
        }
    }
    check_tangs(c, cl, path, false);
}

/// The tang servers: each URL and thumbprint, and the advertisement where the version has
/// one (`advertisement`); URLs unique.
fn check_tangs(c: &mut Checker, cl: &Clevis, path: &JsonPath, advertisement: bool) {
    let tangs = path.key("tang");
    for (i, t) in cl.tang.iter().enumerate() {
        let tp = tangs.index(i);
        match resource::parse_url(&t.url) {
            Err(e) => c.error(tp.key("url"), e),
            Ok(u) if !matches!(u.scheme.as_str(), "http" | "https") => {
                c.error(tp.key("url"), "invalid url scheme")
            }
            Ok(_) => {}
        }
        if t.thumbprint.as_deref().is_none_or(str::is_empty) {
            c.error(tp.key("thumbprint"), "thumbprint is required");
        }
        // (Upstream decodes it into Go values: a number beyond float64's range fails too.)
        if advertisement
            && let Some(ad) = t.advertisement.as_deref().filter(|a| !a.is_empty())
            && flint_go::json::parse(ad.as_bytes())
                .map_or(true, |tree| crate::overflows_float(&tree))
        {
            c.error(tp.key("advertisement"), "advertisement is not valid JSON");
        }
    }
    c.unique(&tangs, &cl.tang, |t| t.url.as_str());
}
