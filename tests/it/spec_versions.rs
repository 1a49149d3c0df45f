//! What spec 3.5.0, 3.6.0 and 3.7.0-experimental change when a config is planned and applied:
//! special mode bits (applied from 3.6.0, dropped before), and Clevis/CEX volumes, which flint
//! cannot bind and refuses before touching any disk.
use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A directory removed when the test ends.
struct Tmp(PathBuf);

impl Tmp {
    fn new(tag: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("flint-spec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode_of(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn special_modes_config(version: &str) -> String {
    // 2541 = 0o4755 (setuid), 1023 = 0o1777 (sticky), 1512 = 0o2750 (setgid).
    format!(
        r#"{{"ignition":{{"version":"{version}"}},"storage":{{"files":[{{"path":"/usr/local/bin/s","mode":2541,"contents":{{"source":"data:,x"}}}}],"directories":[{{"path":"/var/shared","mode":1023}},{{"path":"/srv/g","mode":1512}}]}}}}"#
    )
}

fn apply(root: &Path, cfg: &Path) -> std::process::Output {
    let root_s = root.to_string_lossy().into_owned();
    let cfg_s = cfg.to_string_lossy().into_owned();
    common::run_in(
        root,
        &common::flint(),
        &["apply", "--root", &root_s, "--stage", "files", &cfg_s],
    )
}

#[test]
fn special_mode_bits_apply_from_3_6_0_and_are_dropped_before() {
    let tmp = Tmp::new("t1");
    for (version, file, dir, gdir) in [
        ("3.4.0", 0o755, 0o777, 0o750),
        ("3.5.0", 0o755, 0o777, 0o750),
        ("3.6.0", 0o4755, 0o1777, 0o2750),
        ("3.7.0-experimental", 0o4755, 0o1777, 0o2750),
    ] {
        let root = tmp.path().join(version);
        std::fs::create_dir(&root).unwrap();
        let cfg = tmp.path().join(format!("{version}.ign"));
        std::fs::write(&cfg, special_modes_config(version)).unwrap();
        let out = apply(&root, &cfg);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{version}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(mode_of(&root.join("usr/local/bin/s")), file, "{version}");
        assert_eq!(mode_of(&root.join("var/shared")), dir, "{version}");
        assert_eq!(mode_of(&root.join("srv/g")), gdir, "{version}");
        let again = apply(&root, &cfg);
        assert_eq!(
            String::from_utf8_lossy(&again.stdout),
            "apply: nothing to change\n",
            "{version}"
        );
    }
}

#[test]
fn the_special_bits_warning_stops_at_3_6_0() {
    let tmp = Tmp::new("t2");
    for (version, warns) in [
        ("3.5.0", true),
        ("3.6.0", false),
        ("3.7.0-experimental", false),
    ] {
        std::fs::write(tmp.path().join("in.ign"), special_modes_config(version)).unwrap();
        let out = common::run_in(tmp.path(), &common::flint(), &["validate", "in.ign"]);
        assert_eq!(out.status.code(), Some(0), "{version}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.matches("setuid/setgid/sticky bits are not supported")
                .count(),
            if warns { 3 } else { 0 },
            "{version}: {text}"
        );
    }
}

#[test]
fn cex_volumes_are_refused_before_any_disk_is_touched() {
    let tmp = Tmp::new("t3");
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let root_s = root.to_string_lossy().into_owned();
    // The device does not exist: the refusal must come before the disks stage looks for it.
    // (Clevis volumes are provisioned: tests/it/clevis.rs, the VM tier.)
    let cases = [
        (
            "3.5.0",
            r#""cex":{"enabled":true}"#,
            "$.storage.luks.0.cex",
            "CEX",
        ),
        (
            "3.7.0-experimental",
            r#""cex":{"enabled":true}"#,
            "$.storage.luks.0.cex",
            "CEX",
        ),
    ];
    for (version, extra, path, word) in cases {
        let cfg = tmp.path().join("c.ign");
        std::fs::write(
            &cfg,
            format!(
                r#"{{"ignition":{{"version":"{version}"}},"storage":{{"luks":[{{"name":"data","device":"/dev/disk/by-partlabel/flint-none",{extra}}}]}}}}"#
            ),
        )
        .unwrap();
        let cfg_s = cfg.to_string_lossy().into_owned();
        for cmd in ["plan", "apply"] {
            let out = common::run_in(
                tmp.path(),
                &common::flint(),
                &[cmd, "--root", &root_s, &cfg_s],
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd} {version} {extra}: {err}");
            assert!(
                err.contains(&format!("fetch stage failed at {path}")) && err.contains(word),
                "{cmd} {version} {extra}: {err}"
            );
        }
    }
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

#[test]
fn cex_is_an_unused_key_before_3_5_0() {
    let tmp = Tmp::new("t4");
    std::fs::write(
        tmp.path().join("in.ign"),
        r#"{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"a","device":"/dev/sdb","cex":{"enabled":true}}]}}"#,
    )
    .unwrap();
    let out = common::run_in(tmp.path(), &common::flint(), &["validate", "in.ign"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "warning at $.storage.luks.0.cex, line 1 col 84: unused key cex\n"
    );
}
