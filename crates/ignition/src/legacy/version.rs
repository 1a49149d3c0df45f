//! The legacy spec versions: which keys each has, and how a config of each is brought to
//! 2.4.0's meaning before translation (each 2.x version is 2.4.0 minus some keys, plus the
//! few value changes the old translations between versions made).

use super::types::Config;
use std::fmt;

/// A legacy spec version. Ordered: later versions compare greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LegacyVersion {
    /// `"ignitionVersion": 1`, the Container Linux format before 2.0.0.
    V1,
    V2_0,
    V2_1,
    V2_2,
    V2_3,
    V2_4,
}

impl LegacyVersion {
    pub const ALL_2X: [LegacyVersion; 5] = [
        LegacyVersion::V2_0,
        LegacyVersion::V2_1,
        LegacyVersion::V2_2,
        LegacyVersion::V2_3,
        LegacyVersion::V2_4,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LegacyVersion::V1 => "1",
            LegacyVersion::V2_0 => "2.0.0",
            LegacyVersion::V2_1 => "2.1.0",
            LegacyVersion::V2_2 => "2.2.0",
            LegacyVersion::V2_3 => "2.3.0",
            LegacyVersion::V2_4 => "2.4.0",
        }
    }

    /// The 2.x version named exactly `s` (Flatcar reads no pre-release of 2.x, not even
    /// `2.4.0-experimental`).
    pub fn parse_2x(s: &str) -> Option<LegacyVersion> {
        LegacyVersion::ALL_2X.into_iter().find(|v| v.as_str() == s)
    }

    /// The first version that has key `key` (JSON name) on 2.x model struct `ty`.
    pub fn introducing(ty: &str, key: &str) -> LegacyVersion {
        use LegacyVersion::*;
        match (ty, key) {
            ("Ignition", "timeouts")
            | ("Storage", "directories" | "links")
            | ("NodeOwner", "name")
            | ("Mount", "label" | "options" | "uuid" | "wipeFilesystem")
            | (
                "User",
                "gecos" | "groups" | "homeDir" | "noCreateHome" | "noLogInit" | "noUserGroup"
                | "primaryGroup" | "shell" | "system" | "uid",
            )
            | ("Unit", "enabled")
            | ("Partition", "guid") => V2_1,
            ("Ignition", "security")
            | ("File", "append")
            | ("File" | "Directory" | "Link", "overwrite")
            | ("NetworkdUnit", "dropins")
            | ("Raid", "options") => V2_2,
            ("Partition", "sizeMiB" | "startMiB" | "shouldExist" | "wipePartitionEntry") => V2_3,
            ("Ignition", "proxy") | ("ConfigReference" | "FileContents", "httpHeaders") => V2_4,
            _ => V2_0,
        }
    }

    /// Whether this version has key `key` on 2.x model struct `ty`.
    pub fn has_key(self, ty: &str, key: &str) -> bool {
        LegacyVersion::introducing(ty, key) <= self
    }

    /// Brings a config read as this version to 2.4.0's meaning, the way the old Ignition
    /// translated each version into the next:
    ///
    /// - 2.0 → 2.1: a file's owner ids were plain numbers, so an absent one is 0 (root), and
    ///   an empty password hash means none;
    /// - 2.1 → 2.2: file and directory modes were plain numbers, so an absent mode is 0;
    /// - 2.2 → 2.3: partition labels, sizes and starts were plain values, so every partition
    ///   has them (and a size or start in sectors is what 2.3 deprecates).
    pub fn upgrade(self, cfg: &mut Config) {
        use LegacyVersion::*;
        if self <= V2_0 {
            for f in &mut cfg.storage.files {
                for owner in [&mut f.user, &mut f.group] {
                    let id = owner.as_ref().and_then(|o| o.id).unwrap_or(0);
                    *owner = Some(super::types::NodeOwner {
                        id: Some(id),
                        name: String::new(),
                    });
                }
            }
            for u in &mut cfg.passwd.users {
                if u.password_hash.as_deref() == Some("") {
                    u.password_hash = None;
                }
            }
        }
        if self <= V2_1 {
            for f in &mut cfg.storage.files {
                f.mode.get_or_insert(0);
            }
            for d in &mut cfg.storage.directories {
                d.mode.get_or_insert(0);
            }
        }
        if self <= V2_2 {
            for p in cfg.storage.disks.iter_mut().flat_map(|d| &mut d.partitions) {
                p.label.get_or_insert_with(String::new);
                p.size.get_or_insert(0);
                p.start.get_or_insert(0);
            }
        }
    }
}

impl fmt::Display for LegacyVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_keys_by_version() {
        assert!(!LegacyVersion::V2_0.has_key("Storage", "links"));
        assert!(LegacyVersion::V2_1.has_key("Storage", "links"));
        assert!(!LegacyVersion::V2_3.has_key("Ignition", "proxy"));
        assert!(LegacyVersion::V2_4.has_key("FileContents", "httpHeaders"));
        assert!(LegacyVersion::V2_0.has_key("File", "mode"));
        assert_eq!(LegacyVersion::parse_2x("2.4.0"), Some(LegacyVersion::V2_4));
        assert_eq!(LegacyVersion::parse_2x("2.4.0-experimental"), None);
    }

    #[test]
    fn upgrades_older_defaults() {
        let mut c = Config::default();
        c.storage.files.push(Default::default());
        c.storage.disks.push(super::super::types::Disk {
            partitions: vec![Default::default()],
            ..Default::default()
        });
        LegacyVersion::V2_3.upgrade(&mut c.clone());
        let mut old = c.clone();
        LegacyVersion::V2_0.upgrade(&mut old);
        assert_eq!(old.storage.files[0].mode, Some(0));
        assert_eq!(old.storage.files[0].user.as_ref().unwrap().id, Some(0));
        assert_eq!(old.storage.disks[0].partitions[0].size, Some(0));
        LegacyVersion::V2_3.upgrade(&mut c);
        assert_eq!(c.storage.files[0].mode, None);
        assert_eq!(c.storage.disks[0].partitions[0].size, None);
    }
}
