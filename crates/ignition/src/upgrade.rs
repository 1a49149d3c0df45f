//! The upgrade chain: a config of any supported version, as the newest version's config.
//!
//! Every version reads into the same model, so upgrading is mostly renaming the version. The
//! one change of meaning is the mode of files and directories: versions before 3.6.0 never
//! applied the setuid, setgid and sticky bits, so upgrading drops them (as upstream's
//! 3.5.0 → 3.6.0 translation does) instead of suddenly applying bits the author was warned
//! would be ignored. The other is upstream's: 3.4.0 → 3.5.0 drops the Tang servers'
//! `advertisement` ([`Version::keeps_tang_advertisement`]), which a drop-in keeps doing
//! (it decides whether the network is brought up while provisioning).

use super::Version;
use super::types::Config;

/// `config`, written for spec `from`, as a config of [`Version::NEWEST`].
pub fn upgrade(mut config: Config, from: Version) -> Config {
    if !from.applies_special_mode_bits() {
        let drop_special = |m: &mut Option<i64>| {
            if let Some(mode) = m {
                *mode &= !0o7000;
            }
        };
        config
            .storage
            .files
            .iter_mut()
            .for_each(|f| drop_special(&mut f.mode));
        config
            .storage
            .directories
            .iter_mut()
            .for_each(|d| drop_special(&mut d.mode));
    }
    if !from.keeps_tang_advertisement() {
        (config.storage.luks.iter_mut())
            .flat_map(|l| l.clevis.tang.iter_mut())
            .for_each(|t| t.advertisement = None);
    }
    config.ignition.version = Version::NEWEST.to_string();
    config
}

/// Like [`upgrade`], taking the version from the config itself; a config whose version is
/// not one this implementation reads is upgraded as the oldest (nothing special applied).
pub fn upgrade_declared(config: Config) -> Config {
    let from = Version::parse(&config.ignition.version).unwrap_or(Version::V3_0);
    upgrade(config, from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Directory, File};

    fn with_modes(version: Version) -> Config {
        let mut c = Config::default();
        c.ignition.version = version.to_string();
        c.storage.files.push(File {
            path: "/f".into(),
            mode: Some(0o4755),
            ..Default::default()
        });
        c.storage.directories.push(Directory {
            path: "/d".into(),
            mode: Some(0o1777),
            ..Default::default()
        });
        c
    }

    #[test]
    fn older_versions_lose_special_bits() {
        for v in [Version::V3_0, Version::V3_4, Version::V3_5] {
            let c = upgrade(with_modes(v), v);
            assert_eq!(c.storage.files[0].mode, Some(0o755), "{v}");
            assert_eq!(c.storage.directories[0].mode, Some(0o777), "{v}");
            assert_eq!(c.ignition.version, "3.7.0-experimental");
        }
    }

    #[test]
    fn newer_versions_keep_them() {
        for v in [Version::V3_6, Version::V3_7Exp] {
            let c = upgrade_declared(with_modes(v));
            assert_eq!(c.storage.files[0].mode, Some(0o4755), "{v}");
            assert_eq!(c.storage.directories[0].mode, Some(0o1777), "{v}");
        }
    }

    #[test]
    fn tang_advertisements_are_dropped_before_3_5() {
        use crate::types::{Luks, Tang};
        let with_adv = |v: Version| {
            let mut c = Config::default();
            c.ignition.version = v.to_string();
            let mut l = Luks::default();
            l.clevis.tang.push(Tang {
                url: "http://t".into(),
                thumbprint: Some("abc".into()),
                advertisement: Some("{}".into()),
            });
            c.storage.luks.push(l);
            upgrade(c, v).storage.luks[0].clevis.tang[0].clone()
        };
        assert_eq!(with_adv(Version::V3_4).advertisement, None);
        assert_eq!(with_adv(Version::V3_4).thumbprint.as_deref(), Some("abc"));
        assert_eq!(with_adv(Version::V3_5).advertisement.as_deref(), Some("{}"));
    }
}
