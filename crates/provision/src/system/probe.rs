//! What is on a block device: a low-level blkid probe (superblocks read from the device, no
//! cache), as upstream does with libblkid.

use super::tool::{self, ToolError};
use std::path::Path;

/// A signature found on a device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// blkid's TYPE: ext4, xfs, btrfs, vfat, swap, crypto_LUKS, linux_raid_member, …
    pub kind: String,
    pub label: String,
    pub uuid: String,
    /// A partition table (PTTYPE) rather than a filesystem.
    pub table: String,
}

impl Found {
    pub(crate) fn is_empty(&self) -> bool {
        self.kind.is_empty() && self.table.is_empty()
    }
}

/// libblkid's probing order for the signatures flint meets: with several signatures on a
/// device ("ambivalent"), upstream takes the first one libblkid's full probe finds.
const PROBE_ORDER: &[&str] = &[
    "linux_raid_member",
    "crypto_LUKS",
    "vfat",
    "swap",
    "xfs",
    "ext4",
    "ext3",
    "ext2",
    "btrfs",
];

/// Probes `dev`. `Ok(None)` when blkid finds nothing. When it finds several signatures
/// (blkid's "ambivalent result"), the one upstream's fallback probe returns: the first in
/// libblkid's probing order (a device holding vfat and an old ext4 superblock is vfat).
pub(crate) fn probe(dev: &Path) -> Result<Option<Found>, ToolError> {
    // The udev format: its `_ENC` values escape every byte that is not plain as `\xNN`, so
    // labels with spaces, backslashes or non-ASCII text read back exactly (the export
    // format escapes with backslashes and mangles bytes above 127).
    let out = tool::run_with(
        "blkid",
        [
            "-p".as_ref(),
            "-o".as_ref(),
            "udev".as_ref(),
            dev.as_os_str(),
        ],
        &[2, 8],
        &[],
    )?;
    if out.status == 2 {
        return Ok(None);
    }
    if out.status == 8 {
        return ambivalent(dev);
    }
    let mut f = Found::default();
    for (k, v) in tool::export_pairs(&out.stdout) {
        match k.as_str() {
            "ID_FS_TYPE" => f.kind = v,
            "ID_FS_LABEL_ENC" => f.label = udev_decode(&v),
            "ID_FS_UUID_ENC" => f.uuid = udev_decode(&v),
            "ID_PART_TABLE_TYPE" => f.table = v,
            _ => {}
        }
    }
    Ok((!f.is_empty()).then_some(f))
}

/// A udev `_ENC` value: `\xNN` escapes back to bytes (invalid UTF-8 replaced).
fn udev_decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let Some(n) = v
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The signature upstream settles on when blkid finds several (see [`PROBE_ORDER`]), from
/// wipefs's list of every signature on the device.
fn ambivalent(dev: &Path) -> Result<Option<Found>, ToolError> {
    let out = tool::run_with(
        "wipefs",
        ["--no-act".as_ref(), "--parsable".as_ref(), dev.as_os_str()],
        &[],
        &[],
    )?;
    // offset,uuid,label,type
    let found: Vec<Found> = out
        .stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(4, ',').collect();
            (f.len() == 4).then(|| Found {
                kind: f[3].to_string(),
                label: f[2].to_string(),
                uuid: f[1].to_string(),
                table: String::new(),
            })
        })
        .collect();
    let rank = |f: &Found| {
        PROBE_ORDER
            .iter()
            .position(|k| *k == f.kind)
            .unwrap_or(PROBE_ORDER.len())
    };
    Ok(found.iter().min_by_key(|f| rank(f)).cloned())
}

/// blkid's TYPE for an Ignition filesystem format.
pub(crate) fn blkid_type(format: &str) -> &str {
    match format {
        "luks" => "crypto_LUKS",
        other => other,
    }
}

/// UUIDs compare without case and, for vfat volume IDs, without the dash.
pub(crate) fn same_uuid(format: &str, want: &str, got: &str) -> bool {
    let norm = |s: &str| {
        let s = s.to_ascii_lowercase();
        if format == "vfat" {
            s.replace('-', "")
        } else {
            s
        }
    };
    norm(want) == norm(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vfat_ids_compare_without_dash_and_case() {
        assert!(same_uuid("vfat", "ABCD1234", "abcd-1234"));
        assert!(same_uuid("ext4", "AA-BB", "aa-bb"));
        assert!(!same_uuid("ext4", "aabb", "aa-bb"));
    }

    #[test]
    fn udev_values_decode_to_the_bytes_written() {
        assert_eq!(udev_decode(r"with\x20space"), "with space");
        assert_eq!(udev_decode(r"a\x5cb"), "a\\b");
        assert_eq!(udev_decode(r"tab\x09x"), "tab\tx");
        assert_eq!(udev_decode("Ünï"), "Ünï");
        // not an escape: kept as written
        assert_eq!(udev_decode(r"x\xZZ\"), r"x\xZZ\");
    }
}
