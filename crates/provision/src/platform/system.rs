//! The system config directories, as upstream Ignition reads them: `user.ign` (which
//! preempts the platform's config), `base.d/*` and `base.platform.d/PLATFORM/*` (merged
//! underneath the user config). v2.26.0 reads only `/usr/lib/ignition`; later versions also
//! `/run/ignition` and `/etc/ignition`, searched in that priority order: the first
//! directory holding `user.ign` wins, and fragments are the union by file name (the
//! highest-priority directory claims a name) merged in name order. With only
//! `/usr/lib/ignition` present both behave the same. Each directory is overridable with
//! upstream's variables: `IGNITION_SYSTEM_RUNTIME_CONFIG_DIR`,
//! `IGNITION_SYSTEM_LOCAL_CONFIG_DIR`, `IGNITION_SYSTEM_CONFIG_DIR`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The user config's file name in a system config directory.
pub const USER_FILE: &str = "user.ign";

/// The system config directories in descending priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemDirs {
    pub runtime: PathBuf,
    pub local: PathBuf,
    pub vendor: PathBuf,
}

impl Default for SystemDirs {
    fn default() -> Self {
        let var = |name: &str, default: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| default.into())
        };
        SystemDirs {
            runtime: var("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", "/run/ignition"),
            local: var("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", "/etc/ignition"),
            vendor: var("IGNITION_SYSTEM_CONFIG_DIR", "/usr/lib/ignition"),
        }
    }
}

impl SystemDirs {
    /// All three under one directory (tests, and images that keep them together).
    pub fn under(dir: &Path) -> SystemDirs {
        SystemDirs {
            runtime: dir.join("run"),
            local: dir.join("etc"),
            vendor: dir.join("usr-lib"),
        }
    }

    /// In descending priority.
    pub fn dirs(&self) -> [&Path; 3] {
        [&self.runtime, &self.local, &self.vendor]
    }

    /// The first `user.ign` found, with its bytes.
    pub fn user_config(&self) -> Result<Option<(PathBuf, Vec<u8>)>, String> {
        for d in self.dirs() {
            let p = d.join(USER_FILE);
            match std::fs::read(&p) {
                Ok(b) => return Ok(Some((p, b))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("reading {}: {e}", p.display())),
            }
        }
        Ok(None)
    }

    /// The fragments of `sub` (e.g. `base.d`) across the directories, in merge order.
    pub fn fragments(&self, sub: &str) -> Result<Vec<PathBuf>, String> {
        let mut by_name: BTreeMap<Vec<u8>, PathBuf> = BTreeMap::new();
        for d in self.dirs() {
            let dir = d.join(sub);
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("reading {}: {e}", dir.display())),
            };
            for entry in rd {
                let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
                use std::os::unix::ffi::OsStrExt;
                let name = entry.file_name().as_bytes().to_vec();
                by_name.entry(name).or_insert_with(|| entry.path());
            }
        }
        Ok(by_name.into_values().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_and_union() {
        let t = std::env::temp_dir().join(format!("flint-sysdirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        let d = SystemDirs::under(&t);
        assert_eq!(d.user_config().unwrap(), None);
        for (dir, name) in [
            (&d.vendor, "10-a.ign"),
            (&d.vendor, "20-b.ign"),
            (&d.local, "20-b.ign"),
            (&d.runtime, "05-c.ign"),
        ] {
            std::fs::create_dir_all(dir.join("base.d")).unwrap();
            std::fs::write(dir.join("base.d").join(name), name).unwrap();
        }
        let f = d.fragments("base.d").unwrap();
        assert_eq!(
            f,
            vec![
                d.runtime.join("base.d/05-c.ign"),
                d.vendor.join("base.d/10-a.ign"),
                d.local.join("base.d/20-b.ign"),
            ]
        );
        std::fs::write(d.vendor.join(USER_FILE), b"v").unwrap();
        assert_eq!(d.user_config().unwrap().unwrap().1, b"v");
        std::fs::write(d.local.join(USER_FILE), b"l").unwrap();
        assert_eq!(d.user_config().unwrap().unwrap().1, b"l");
        std::fs::remove_dir_all(&t).unwrap();
    }
}
