//! The mount and umount stages never reach outside the target root: a mount path that goes
//! through a symbolic link (absolute, relative, `..`, to the host's own directories) or a
//! non-directory is refused before anything is mounted, in plan and in apply, and nothing
//! outside the root is ever mounted or written. Real loop devices with real ext4.
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::Path;
use std::process::Output;
use support::devices::{Loop, sh};

fn flint(args: &[&str]) -> Output {
    std::process::Command::new(common::flint())
        .args(args)
        .env("FLINT_DEVICE_TIMEOUT", "2")
        .output()
        .unwrap()
}

/// Held by each test for its whole run: they mount things, and compare the whole mount
/// table before and after, so one must not see another's mounts come and go.
static MOUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    MOUNTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the test's own devices are mounted (mount point and device), to compare before and
/// after: flint mounts only the config's devices, so a mount of one anywhere on the host is
/// flint's doing, whatever other tests mount meanwhile.
fn mount_table(devs: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            let source = *f.get(sep + 2)?;
            devs.contains(&source).then(|| format!("{} {source}", f[4]))
        })
        .collect();
    v.sort();
    v
}

fn config(fs: &[(&str, &str)]) -> String {
    let list: Vec<String> = fs
        .iter()
        .map(|(dev, path)| {
            format!(r#"{{"device":"{dev}","format":"ext4","path":"{path}","label":"x"}}"#)
        })
        .collect();
    format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{}],"files":[{{"path":"/marker","contents":{{"source":"data:,m"}}}}]}}}}"#,
        list.join(",")
    )
}

fn run(verb: &str, dir: &Path, root: &Path, config: &str) -> Output {
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    flint(&[
        verb,
        "--root",
        root.to_str().unwrap(),
        "--state-dir",
        dir.join("state").to_str().unwrap(),
        "--kargs-file",
        dir.join("grub.cfg").to_str().unwrap(),
        file.to_str().unwrap(),
    ])
}

/// A refusal: exit 1, the entry's path named, no panic.
fn refused(o: &Output, entry: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "stderr:\n{err}");
    assert!(
        err.contains(&format!("mount stage failed at {entry}")),
        "{err}"
    );
    assert!(err.contains("refusing to mount through it"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn mount_paths_through_links_are_refused_and_nothing_outside_the_root_changes() {
    let _one = one_at_a_time();
    let dir = TempDir::new("mount-confine");
    let disk = Loop::new(&dir, "d", 64);
    sh("mkfs.ext4", &["-q", "-L", "x", disk.path()]);
    // A host directory the links point at: it must stay empty and unmounted.
    let host = dir.join("host");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("sentinel"), "host").unwrap();
    let before = mount_table(&[disk.path()]);

    // (link name in the root, link target, mount path, component named in the error)
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("tmp0", "/".into(), "/tmp0", "/tmp0"),
        ("rel", "../../../../../../..".into(), "/rel", "/rel"),
        ("host", host.display().to_string(), "/host/sub", "/host"),
        ("srv", "/".into(), "/srv/data", "/srv"),
        ("dotdot", "..".into(), "/dotdot/x", "/dotdot"),
        ("etc", "/etc".into(), "/etc", "/etc"),
    ];
    for (name, target, path, component) in &cases {
        let root = dir.join(format!("root-{name}"));
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(target, root.join(name)).unwrap();
        let cfg = config(&[(disk.path(), path)]);
        for verb in ["plan", "apply"] {
            let o = run(verb, &dir, &root, &cfg);
            let err = refused(&o, "$.storage.filesystems.0.path");
            assert!(
                err.contains(&format!("component \"{component}\"")),
                "{path}: {err}"
            );
            assert_eq!(
                mount_table(&[disk.path()]),
                before,
                "{verb} {path}: the mount table changed"
            );
            assert!(
                !root.join("marker").exists(),
                "{verb} {path}: files stage ran"
            );
        }
        assert_eq!(
            std::fs::read_dir(&host).unwrap().count(),
            1,
            "the host directory was written"
        );
    }

    // A file where a directory should be is refused the same way.
    let root = dir.join("root-file");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notdir"), "f").unwrap();
    let o = run("apply", &dir, &root, &config(&[(disk.path(), "/notdir/x")]));
    let err = refused(&o, "$.storage.filesystems.0.path");
    assert!(err.contains("(not a directory)"), "{err}");
    assert_eq!(mount_table(&[disk.path()]), before);

    // The control: a plain path is made inside the root, mounted there and taken down.
    let root = dir.join("root-plain");
    std::fs::create_dir_all(&root).unwrap();
    let o = run("apply", &dir, &root, &config(&[(disk.path(), "/mnt/data")]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(root.join("mnt/data").is_dir());
    assert!(root.join("marker").is_file());
    assert_eq!(
        mount_table(&[disk.path()]),
        before,
        "the umount stage took it down again"
    );
    assert_eq!(std::fs::read_dir(&host).unwrap().count(), 1);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_link_inside_a_filesystem_mounted_earlier_is_refused_and_the_earlier_mount_undone() {
    let _one = one_at_a_time();
    let dir = TempDir::new("mount-confine-nested");
    let var = Loop::new(&dir, "var", 64);
    let lib = Loop::new(&dir, "lib", 64);
    sh("mkfs.ext4", &["-q", "-L", "x", var.path()]);
    sh("mkfs.ext4", &["-q", "-L", "x", lib.path()]);
    // The filesystem for /var carries `lib -> /`: only visible once /var is mounted.
    let m = dir.join("m");
    std::fs::create_dir_all(&m).unwrap();
    sh("mount", &[var.path(), m.to_str().unwrap()]);
    std::os::unix::fs::symlink("/", m.join("lib")).unwrap();
    sh("umount", &[m.to_str().unwrap()]);
    let before = mount_table(&[var.path(), lib.path()]);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let cfg = config(&[(var.path(), "/var"), (lib.path(), "/var/lib")]);
    let o = run("apply", &dir, &root, &cfg);
    let err = refused(&o, "$.storage.filesystems.1.path");
    assert!(err.contains("component \"/var/lib\""), "{err}");
    assert_eq!(
        mount_table(&[var.path(), lib.path()]),
        before,
        "/var was not unmounted again"
    );
    assert!(!root.join("marker").exists());
    drop((var, lib));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn umount_leaves_alone_what_a_link_in_the_root_reaches() {
    let _one = one_at_a_time();
    // A mount this run did not make, reached through a link in the root: the umount stage
    // must not take it down.
    let dir = TempDir::new("mount-confine-umount");
    let disk = Loop::new(&dir, "d", 64);
    sh("mkfs.ext4", &["-q", "-L", "x", disk.path()]);
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    sh("mount", &[disk.path(), elsewhere.to_str().unwrap()]);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("data")).unwrap();
    let cfg = config(&[(disk.path(), "/data")]);
    let file = dir.join("config.ign");
    std::fs::write(&file, cfg).unwrap();
    let o = flint(&[
        "apply",
        "--stage",
        "umount",
        "--root",
        root.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let still = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        still.contains(elsewhere.to_str().unwrap()),
        "the umount stage took down a mount outside the root"
    );
    sh("umount", &[elsewhere.to_str().unwrap()]);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `overwrite: true` on a link at `/var/lib` while the config keeps a filesystem mounted at
/// `/var/lib/data`: upstream removes the directory tree across the mount (the filesystem's
/// files with it) and then fails on the mount point. flint refuses the entry before the files
/// stage does anything, in plan and in apply, naming the entry and the filesystem; the
/// filesystem's files are intact and nothing is left mounted.
#[test]
fn overwrite_never_removes_across_a_mounted_filesystem() {
    let _one = one_at_a_time();
    let dir = TempDir::new("mount-crossing");
    let disk = Loop::new(&dir, "d", 64);
    sh("mkfs.ext4", &["-q", "-L", "x", disk.path()]);
    {
        let m = support::devices::Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::fs::write(m.0.join("keep.txt"), "kept").unwrap();
    }
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("var/lib/other")).unwrap();
    std::fs::write(root.join("var/lib/other/f"), "other").unwrap();
    let before = mount_table(&[disk.path()]);
    let cfg = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"ext4","path":"/var/lib/data","label":"x"}}],"files":[{{"path":"/marker","contents":{{"source":"data:,m"}}}}],"links":[{{"path":"/var/lib","target":"/srv","overwrite":true}}]}}}}"#,
        disk.path()
    );
    for verb in ["plan", "apply"] {
        let o = run(verb, &dir, &root, &cfg);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{verb}: {err}");
        assert!(
            err.contains("files stage failed at $.storage.links.0: overwrite would remove /var/lib, and with it the filesystem of $.storage.filesystems.0 mounted at /var/lib/data"),
            "{verb}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(mount_table(&[disk.path()]), before, "{verb}: left mounted");
        assert!(
            !root.join("marker").exists(),
            "{verb}: the files stage wrote"
        );
        let m = std::fs::symlink_metadata(root.join("var/lib")).unwrap();
        assert!(m.is_dir(), "{verb}: /var/lib replaced");
        assert_eq!(
            std::fs::read_to_string(root.join("var/lib/other/f")).unwrap(),
            "other"
        );
    }
    {
        let m = support::devices::Mounted::new(disk.path(), &dir.join("mnt"), "ro");
        assert_eq!(
            std::fs::read_to_string(m.0.join("keep.txt")).unwrap(),
            "kept",
            "the filesystem's files were removed"
        );
        // A filesystem the config does not name, mounted in the root now (here the same
        // one, read-only): a file over the directory above it is refused all the same.
        let cache = support::devices::Mounted::new(disk.path(), &root.join("srv/cache"), "ro");
        let cfg = r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/srv","overwrite":true,"contents":{"source":"data:,x"}}]}}"#;
        let o = run("apply", &dir, &root, cfg);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("files stage failed at $.storage.files.0: overwrite would remove /srv, and with it a filesystem mounted at /srv/cache"),
            "{err}"
        );
        assert!(cache.0.join("keep.txt").exists());
        drop(cache);
    }
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stages as separate runs, as the initramfs runs them, with a filesystem mounted on the
/// root itself: the umount stage's own run takes it down (its lock on the root holds no file
/// of the mounted filesystem open, which would keep it busy).
#[test]
fn the_umount_stage_run_alone_takes_down_a_filesystem_on_the_root_itself() {
    let _one = one_at_a_time();
    let dir = TempDir::new("mount-stages");
    let disk = Loop::new(&dir, "d", 64);
    sh("mkfs.ext4", &["-q", "-L", "x", disk.path()]);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let before = mount_table(&[disk.path()]);
    let file = dir.join("config.ign");
    std::fs::write(&file, config(&[(disk.path(), "/")])).unwrap();
    for stage in ["mount", "umount"] {
        let o = flint(&[
            "apply",
            "--stage",
            stage,
            "--root",
            root.to_str().unwrap(),
            "--state-dir",
            dir.join("state").to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{stage}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        if stage == "mount" {
            assert_ne!(mount_table(&[disk.path()]), before, "nothing was mounted");
        }
    }
    assert_eq!(
        mount_table(&[disk.path()]),
        before,
        "the umount stage left it mounted"
    );
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}
