//! The disks, mount and umount stages on real loop devices with the real mkfs tools: a full
//! layout provisioned and re-applied, every row of the partition decision table, the
//! filesystem reuse rule, refusing a disk in use, unmounting after a failure.
//! (RAID, LUKS open and vfat mounts need kernel features this host lacks; the VM tests cover
//! them.)
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::Path;
use std::process::Output;
use support::devices::{Loop, Mounted, blkid, sh};

fn flint(args: &[&str]) -> Output {
    std::process::Command::new(common::flint())
        .args(args)
        .env("FLINT_DEVICE_TIMEOUT", "2")
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `flint apply|plan` of `config` with the root and state under `dir`.
fn provision(verb: &str, dir: &Path, config: &str) -> Output {
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
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

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{out}\nstderr:\n{err}",
        o.status
    );
    out
}

fn failed(o: &Output) -> String {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(1), "stdout:\n{out}\nstderr:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// `sgdisk -i N` fields of an image: (first sector, last sector, name, unique GUID).
fn sgdisk_info(image: &Path, n: u32) -> Option<(u64, u64, String, String)> {
    let out = std::process::Command::new("sgdisk")
        .args(["-i", &n.to_string(), image.to_str().unwrap()])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    if s.contains("does not exist") {
        return None;
    }
    let field = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let num = |k: &str| {
        field(k)
            .split(' ')
            .next()
            .unwrap_or("")
            .parse()
            .unwrap_or(0)
    };
    Some((
        num("First sector:"),
        num("Last sector:"),
        field("Partition name:").trim_matches('\'').to_string(),
        field("Partition unique GUID:"),
    ))
}

const ESP: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
const SWAP: &str = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F";

#[test]
fn a_full_layout_provisions_then_reapplies_nothing_and_keeps_data() {
    let dir = TempDir::new("disks-full");
    let disk = Loop::new(&dir, "disk", 1100);
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},
        "storage":{{
          "disks":[{{"device":"{dev}","partitions":[
            {{"number":1,"label":"ESP","sizeMiB":64,"typeGuid":"{ESP}"}},
            {{"number":2,"label":"SWAP","sizeMiB":32,"typeGuid":"{SWAP}"}},
            {{"number":3,"label":"ROOT","sizeMiB":128}},
            {{"number":4,"label":"VAR","sizeMiB":400}},
            {{"label":"SRV","sizeMiB":0}}]}}],
          "filesystems":[
            {{"device":"/dev/disk/by-partlabel/ESP","format":"vfat","label":"EFI-SYSTEM"}},
            {{"device":"/dev/disk/by-partlabel/SWAP","format":"swap","label":"swap"}},
            {{"device":"/dev/disk/by-partlabel/ROOT","format":"ext4","label":"root","path":"/"}},
            {{"device":"/dev/disk/by-partlabel/VAR","format":"xfs","label":"var","path":"/var"}},
            {{"device":"/dev/disk/by-partlabel/SRV","format":"btrfs","label":"srv","path":"/srv",
              "mountOptions":["noatime"]}}],
          "files":[
            {{"path":"/etc/hostname","contents":{{"source":"data:,flint-test"}},"mode":420}},
            {{"path":"/var/lib/app/state","contents":{{"source":"data:,v1"}}}},
            {{"path":"/srv/hello","contents":{{"source":"data:,hi"}}}}]}}}}"#,
        dev = disk.path()
    );
    let o = provision("apply", &dir, &config);
    let out = ok(&o);
    let (_, err) = text(&o);
    for line in [
        format!(
            "create partition 1 \"ESP\" 64 MiB at 1 MiB on {}",
            disk.path()
        ),
        "create partition 5 \"SRV\" ".to_string(),
        format!(
            "create ext4 filesystem labelled \"root\" on {}",
            disk.part(3)
        ),
        format!("create xfs filesystem labelled \"var\" on {}", disk.part(4)),
        "create file /etc/hostname".to_string(),
    ] {
        assert!(out.contains(&line), "missing {line:?} in:\n{out}");
    }
    assert!(err.contains("stage times: fetch"), "{err}");
    for s in ["disks", "mount", "files", "umount"] {
        assert!(err.contains(&format!(", {s} ")), "no time for {s}: {err}");
    }
    // What the host's own tools see.
    assert_eq!(sgdisk_info(&disk.image, 1).unwrap().0, 2048);
    assert_eq!(sgdisk_info(&disk.image, 5).unwrap().2, "SRV");
    let expect = [
        (1, "vfat", "EFI-SYSTEM"),
        (2, "swap", "swap"),
        (3, "ext4", "root"),
        (4, "xfs", "var"),
        (5, "btrfs", "srv"),
    ];
    for (n, kind, label) in expect {
        assert_eq!(blkid(&disk.part(n), "TYPE"), kind, "partition {n}");
        assert_eq!(blkid(&disk.part(n), "LABEL"), label, "partition {n}");
    }
    // Nothing stays mounted; the files landed on their filesystems.
    let left = support::devices::mounts_of(disk.path());
    assert!(left.is_empty(), "{left:?}");
    {
        let m = Mounted::new(&disk.part(3), &dir.join("m3"), "ro");
        assert_eq!(
            std::fs::read_to_string(m.0.join("etc/hostname")).unwrap(),
            "flint-test"
        );
        assert!(m.0.join("var").is_dir() && m.0.join("srv").is_dir());
        let m4 = Mounted::new(&disk.part(4), &dir.join("m4"), "ro");
        assert_eq!(
            std::fs::read_to_string(m4.0.join("lib/app/state")).unwrap(),
            "v1"
        );
    }
    // Data written between runs survives the second run.
    {
        let m = Mounted::new(&disk.part(5), &dir.join("m5"), "rw");
        assert_eq!(std::fs::read_to_string(m.0.join("hello")).unwrap(), "hi");
        std::fs::write(m.0.join("user-data"), "keep me").unwrap();
    }
    let plan = ok(&provision("plan", &dir, &config));
    assert_eq!(plan, "", "plan after apply must be empty");
    let again = ok(&provision("apply", &dir, &config));
    assert_eq!(again, "apply: nothing to change\n");
    let m = Mounted::new(&disk.part(5), &dir.join("m5"), "ro");
    assert_eq!(
        std::fs::read_to_string(m.0.join("user-data")).unwrap(),
        "keep me"
    );
}

/// A 64 MiB disk whose partition 1 ("old", 1–11 MiB) was made by sgdisk.
fn disk_with_old(dir: &Path) -> Loop {
    let d = Loop::new(dir, "disk", 64);
    sh(
        "sgdisk",
        &[
            "-n",
            "1:2048:+10M",
            "-c",
            "1:old",
            d.image.to_str().unwrap(),
        ],
    );
    d
}

fn one_partition(dev: &str, part: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"disks":[{{"device":"{dev}","partitions":[{part}]}}]}}}}"#
    )
}

#[test]
fn every_row_of_the_partition_decision_table() {
    struct Row {
        name: &'static str,
        part: &'static str,
        /// Whether partition 1 exists before.
        present: bool,
        /// Ok(partition 1 after: (start, last, name)) or Err(message part).
        want: Result<Option<(u64, u64, &'static str)>, &'static str>,
    }
    let old = Some((2048, 22527, "old"));
    let rows = [
        Row {
            name: "absent, shouldExist false",
            part: r#"{"number":1,"shouldExist":false}"#,
            present: false,
            want: Ok(None),
        },
        Row {
            name: "absent, shouldExist false, wipe",
            part: r#"{"number":1,"shouldExist":false,"wipePartitionEntry":true}"#,
            present: false,
            want: Ok(None),
        },
        Row {
            name: "absent, create",
            part: r#"{"number":1,"label":"new","sizeMiB":5}"#,
            present: false,
            want: Ok(Some((2048, 12287, "new"))),
        },
        Row {
            name: "absent, create, wipe",
            part: r#"{"number":1,"label":"new","sizeMiB":5,"wipePartitionEntry":true}"#,
            present: false,
            want: Ok(Some((2048, 12287, "new"))),
        },
        Row {
            name: "present, shouldExist false",
            part: r#"{"number":1,"shouldExist":false}"#,
            present: true,
            want: Err("exists but is specified as nonexistent"),
        },
        Row {
            name: "present, shouldExist false, wipe",
            part: r#"{"number":1,"shouldExist":false,"wipePartitionEntry":true}"#,
            present: true,
            want: Ok(None),
        },
        Row {
            name: "present, matches",
            part: r#"{"number":1,"label":"old","startMiB":1,"sizeMiB":10}"#,
            present: true,
            want: Ok(old),
        },
        Row {
            name: "present, differs",
            part: r#"{"number":1,"label":"other"}"#,
            present: true,
            want: Err("label did not match"),
        },
        Row {
            name: "present, differs only in size, resize",
            part: r#"{"number":1,"sizeMiB":20,"resize":true}"#,
            present: true,
            want: Ok(Some((2048, 43007, "old"))),
        },
        Row {
            name: "present, differs, wipe",
            part: r#"{"number":1,"label":"other","startMiB":20,"sizeMiB":5,"wipePartitionEntry":true}"#,
            present: true,
            want: Ok(Some((40960, 51199, "other"))),
        },
        // Start and size left out with wipePartitionEntry are where upstream's pretend run
        // puts the partition (the whole free disk once it is gone): made again there.
        Row {
            name: "present, unsized, wipe",
            part: r#"{"number":1,"label":"old","wipePartitionEntry":true}"#,
            present: true,
            want: Ok(Some((2048, 131038, "old"))),
        },
        Row {
            name: "present, matches, wipe",
            part: r#"{"number":1,"label":"old","startMiB":1,"sizeMiB":10,"wipePartitionEntry":true}"#,
            present: true,
            want: Ok(old),
        },
    ];
    for row in rows {
        let dir = TempDir::new("disks-row");
        let disk = if row.present {
            disk_with_old(&dir)
        } else {
            Loop::new(&dir, "disk", 64)
        };
        let guid_before = sgdisk_info(&disk.image, 1).map(|i| i.3);
        let o = provision("apply", &dir, &one_partition(disk.path(), row.part));
        match row.want {
            Ok(want) => {
                ok(&o);
                let got = sgdisk_info(&disk.image, 1);
                assert_eq!(
                    got.as_ref().map(|g| (g.0, g.1, g.2.as_str())),
                    want,
                    "{}",
                    row.name
                );
                // The kernel sees the same.
                assert_eq!(
                    Path::new(&disk.part(1)).exists(),
                    want.is_some(),
                    "{}",
                    row.name
                );
                if row.name.contains("resize") || row.name.contains("matches") {
                    assert_eq!(got.map(|g| g.3), guid_before, "{}: identity kept", row.name);
                }
                let again = ok(&provision(
                    "apply",
                    &dir,
                    &one_partition(disk.path(), row.part),
                ));
                assert_eq!(again, "apply: nothing to change\n", "{}", row.name);
            }
            Err(msg) => {
                let err = failed(&o);
                assert!(
                    err.contains("error: disks stage failed at $.storage.disks.0.partitions.0"),
                    "{}: {err}",
                    row.name
                );
                assert!(err.contains(msg), "{}: {err}", row.name);
                assert_eq!(
                    sgdisk_info(&disk.image, 1).map(|i| i.2),
                    Some("old".into()),
                    "{}: untouched",
                    row.name
                );
            }
        }
    }
}

#[test]
fn a_partition_that_does_not_fit_fails_before_anything_is_written() {
    let dir = TempDir::new("disks-fit");
    let disk = Loop::new(&dir, "disk", 64);
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"disks":[{{"device":"{}","partitions":[
          {{"number":1,"label":"a","sizeMiB":30}},{{"number":2,"label":"b","sizeMiB":40}}]}}],
          "filesystems":[{{"device":"/dev/disk/by-partlabel/a","format":"ext4"}}]}}}}"#,
        disk.path()
    );
    let err = failed(&provision("apply", &dir, &config));
    assert!(
        err.contains("disks stage failed at $.storage.disks.0.partitions.1"),
        "{err}"
    );
    assert!(err.contains("does not fit"), "{err}");
    assert!(sgdisk_info(&disk.image, 1).is_none(), "nothing written");
}

#[test]
fn a_mounted_partition_is_not_changed() {
    let dir = TempDir::new("disks-busy");
    let disk = disk_with_old(&dir);
    sh("partx", &["-a", disk.path()]);
    sh("mkfs.ext4", &["-q", &disk.part(1)]);
    let _m = Mounted::new(&disk.part(1), &dir.join("busy"), "rw");
    let part = r#"{"number":1,"shouldExist":false,"wipePartitionEntry":true}"#;
    let err = failed(&provision("apply", &dir, &one_partition(disk.path(), part)));
    assert!(
        err.contains("refusing to change partition 1: in use (mounted on"),
        "{err}"
    );
    assert!(sgdisk_info(&disk.image, 1).is_some());
}

#[test]
fn filesystems_are_reused_only_when_they_match() {
    let dir = TempDir::new("disks-fs");
    let disk = disk_with_old(&dir);
    sh("partx", &["-a", disk.path()]);
    sh("mkfs.ext4", &["-q", "-L", "data", &disk.part(1)]);
    let cfg = |fs: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{}",{fs}}}]}}}}"#,
            disk.part(1)
        )
    };
    // Same type and label: kept, nothing to do.
    assert_eq!(
        ok(&provision(
            "apply",
            &dir,
            &cfg(r#""format":"ext4","label":"data""#)
        )),
        "apply: nothing to change\n"
    );
    // Another type: refused, device untouched.
    let err = failed(&provision("apply", &dir, &cfg(r#""format":"btrfs""#)));
    assert!(
        err.contains("disks stage failed at $.storage.filesystems.0"),
        "{err}"
    );
    assert!(err.contains("holds ext4 labelled \"data\""), "{err}");
    assert!(err.contains("set wipeFilesystem"), "{err}");
    assert_eq!(blkid(&disk.part(1), "TYPE"), "ext4");
    // Another label with wipe: replaced; swap and "none" as well.
    let out = ok(&provision(
        "apply",
        &dir,
        &cfg(r#""format":"ext4","label":"fresh","wipeFilesystem":true"#),
    ));
    assert!(out.contains("wipe ext4 labelled \"data\""), "{out}");
    assert_eq!(blkid(&disk.part(1), "LABEL"), "fresh");
    ok(&provision(
        "apply",
        &dir,
        &cfg(
            r#""format":"swap","wipeFilesystem":true,"uuid":"8d5a4a3c-2b5e-4f4e-9d0a-2f1f6d1b8e11""#,
        ),
    ));
    assert_eq!(
        blkid(&disk.part(1), "UUID"),
        "8d5a4a3c-2b5e-4f4e-9d0a-2f1f6d1b8e11"
    );
    let err = failed(&provision("apply", &dir, &cfg(r#""format":"none""#)));
    assert!(err.contains("holds swap"), "{err}");
    ok(&provision(
        "apply",
        &dir,
        &cfg(r#""format":"none","wipeFilesystem":true"#),
    ));
    assert_eq!(blkid(&disk.part(1), "TYPE"), "");
}

#[test]
fn an_empty_uuid_goes_to_mkfs_as_given() {
    // mkfs.btrfs takes `-U ""` and draws a UUID (the other tools refuse it, as under
    // upstream); the check after mkfs does not ask for the empty one.
    let dir = TempDir::new("disks-empty-uuid");
    let disk = Loop::new(&dir, "disk", 160);
    let cfg = |format: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"{format}","label":"b","uuid":"","wipeFilesystem":true}}]}}}}"#,
            disk.path()
        )
    };
    ok(&provision("apply", &dir, &cfg("btrfs")));
    assert_eq!(blkid(disk.path(), "TYPE"), "btrfs");
    assert_eq!(blkid(disk.path(), "UUID").len(), 36);
    let err = failed(&provision("apply", &dir, &cfg("ext4")));
    assert!(err.contains("mkfs.ext4"), "{err}");
}

#[test]
fn a_failed_mount_unmounts_what_was_mounted() {
    let dir = TempDir::new("disks-mountfail");
    let disk = Loop::new(&dir, "disk", 300);
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{
          "disks":[{{"device":"{dev}","partitions":[{{"number":1,"label":"R","sizeMiB":100}},{{"number":2,"label":"S","sizeMiB":150}}]}}],
          "filesystems":[
            {{"device":"{dev}p1","format":"ext4","path":"/"}},
            {{"device":"{dev}p2","format":"btrfs","path":"/srv","mountOptions":["no-such-option"]}}]}}}}"#,
        dev = disk.path()
    );
    let err = failed(&provision("apply", &dir, &config));
    assert!(
        err.contains("mount stage failed at $.storage.filesystems.1"),
        "{err}"
    );
    let left = support::devices::mounts_of(disk.path());
    assert!(left.is_empty(), "left mounted: {left:?}");
}

#[test]
fn disk_aliases_resolve_without_udev() {
    let dir = TempDir::new("disks-alias");
    let disk = disk_with_old(&dir);
    sh("partx", &["-a", disk.path()]);
    let label = format!("fl{}", std::process::id() % 100_000);
    sh("mkfs.ext4", &["-q", "-L", &label, &disk.part(1)]);
    let uuid = blkid(&disk.part(1), "UUID");
    let partuuid = sgdisk_info(&disk.image, 1).unwrap().3;
    assert!(
        !Path::new("/run/udev/control").exists(),
        "this test is about hosts without udev"
    );
    for device in [
        format!("/dev/disk/by-label/{label}"),
        format!("/dev/disk/by-uuid/{uuid}"),
        format!("/dev/disk/by-partuuid/{}", partuuid.to_lowercase()),
    ] {
        let config = format!(
            r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{device}","format":"ext4","label":"{label}"}}]}}}}"#
        );
        assert_eq!(
            ok(&provision("apply", &dir, &config)),
            "apply: nothing to change\n",
            "{device}"
        );
    }
    let config = r#"{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/disk/by-label/flint-nowhere","format":"ext4"}]}}"#;
    let err = failed(&provision("apply", &dir, config));
    assert!(err.contains("disks stage failed at $.storage.filesystems.0.device: device /dev/disk/by-label/flint-nowhere did not appear within 2 s"), "{err}");
}

/// Several signatures on a device (blkid: "ambivalent"): upstream's fallback probe takes the
/// first in libblkid's order, so vfat with an old ext4 superblock is vfat, kept for a vfat
/// entry and refused for an ext4 one (both as the reference does).
#[test]
fn an_ambivalent_probe_reads_as_upstreams_fallback() {
    let dir = TempDir::new("disks-ambivalent");
    let disk = Loop::new(&dir, "amb", 64);
    let old = dir.join("ext4.img");
    std::fs::File::create(&old)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    sh("mkfs.ext4", &["-q", "-F", old.to_str().unwrap()]);
    let ambivalent = || {
        sh("mkfs.vfat", &[disk.path()]);
        // The ext4 superblock at 1 KiB, inside vfat's reserved sectors.
        let sb = &std::fs::read(&old).unwrap()[1024..2048];
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(disk.path())
            .unwrap();
        f.seek(std::io::SeekFrom::Start(1024)).unwrap();
        f.write_all(sb).unwrap();
        f.sync_all().unwrap();
        let st = std::process::Command::new("blkid")
            .args(["-p", disk.path()])
            .output()
            .unwrap()
            .status;
        assert_eq!(st.code(), Some(8), "the device is ambivalent for blkid");
    };
    let config = |format: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"{format}"}}]}}}}"#,
            disk.path()
        )
    };
    ambivalent();
    let uuid = blkid(disk.path(), "UUID");
    assert_eq!(
        ok(&provision("apply", &dir, &config("vfat"))),
        "apply: nothing to change\n"
    );
    assert_eq!(blkid(disk.path(), "UUID"), uuid, "kept, not made again");
    let err = failed(&provision("apply", &dir, &config("ext4")));
    assert!(
        err.contains("holds vfat") && err.contains("wipeFilesystem"),
        "{err}"
    );
}

/// A mount point the mount stage creates under the home of a user the config adds becomes
/// the user's (0700), as upstream's mount stage notes it and its files stage hands it over;
/// the user's SSH keys can then be written. The directory below the mount stays root's.
#[test]
fn a_mount_point_made_in_a_new_users_home_is_theirs() {
    let dir = TempDir::new("disks-home-mount");
    let disk = Loop::new(&dir, "home", 64);
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\nusers:x:100:\n").unwrap();
    std::fs::write(root.join("etc/shadow"), "root:*:19000:0:99999:7:::\n").unwrap();
    std::fs::write(root.join("etc/gshadow"), "root:*::\nusers:*::\n").unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    let config = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"ext4","path":"/home/core/data/x","wipeFilesystem":true}}]}},"passwd":{{"users":[{{"name":"core","sshAuthorizedKeys":["ssh-ed25519 K"]}}]}}}}"#,
        disk.path()
    );
    ok(&provision("apply", &dir, &config));
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap();
    let line = passwd.lines().find(|l| l.starts_with("core:")).unwrap();
    let f: Vec<&str> = line.split(':').collect();
    let (uid, gid): (u32, u32) = (f[2].parse().unwrap(), f[3].parse().unwrap());
    use std::os::unix::fs::MetadataExt;
    for d in ["home/core", "home/core/data"] {
        let m = std::fs::metadata(root.join(d)).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o7777),
            (uid, gid, 0o700),
            "{d}"
        );
    }
    let x = std::fs::metadata(root.join("home/core/data/x")).unwrap();
    assert_eq!(
        (x.uid(), x.mode() & 0o7777),
        (0, 0o755),
        "the directory under the mount"
    );
    let keys = root.join("home/core/.ssh/authorized_keys.d/ignition");
    assert_eq!(std::fs::read_to_string(keys).unwrap(), "ssh-ed25519 K\n");
}

// Found by the storage differential run (tests/differential, seed 201): after wipeTable,
// partition 5 without start or size takes the disk from the first MiB on, and the
// `number: 0` entry then gets the 2014 sectors before it, unaligned, as sgdisk places it.
// Re-applying changes nothing.
#[test]
fn number_zero_takes_the_gap_before_the_first_mib_as_sgdisk_does() {
    let dir = TempDir::new("disks-gap");
    let disk = disk_with_old(&dir);
    let config = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}","wipeTable":true,
          "partitions":[{{"label":"first","wipePartitionEntry":true}},{{"number":5,"label":"new"}}]}}]}}}}"#,
        disk.path()
    );
    ok(&provision("apply", &dir, &config));
    let (first, last, name, _) = sgdisk_info(&disk.image, 1).expect("partition 1");
    assert_eq!((first, last, name.as_str()), (34, 2047, "first"));
    let (first, _, name, _) = sgdisk_info(&disk.image, 5).expect("partition 5");
    assert_eq!((first, name.as_str()), (2048, "new"));
    assert_eq!(
        ok(&provision("plan", &dir, &config)),
        "",
        "a re-run changes nothing"
    );
}

// The same run: a `number: 0` entry with the label of a partition flint did not make is a new
// partition, as upstream makes it (in the gap before the first MiB, after the numbered ones
// took their places); on a re-run the partition of that label flint made is that entry, and
// nothing changes.
#[test]
fn number_zero_with_a_label_on_a_foreign_table_is_a_new_partition_then_found_again() {
    let dir = TempDir::new("disks-label");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    sh(
        "sgdisk",
        &[
            "-n",
            "1:1M:+8M",
            "-c",
            "1:A",
            "-n",
            "2:11M:+4M",
            "-c",
            "2:B",
            image,
        ],
    );
    let config = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}",
          "partitions":[{{"number":9}},{{"number":5}},{{"label":"B","wipePartitionEntry":true}}]}}]}}}}"#,
        disk.path()
    );
    ok(&provision("apply", &dir, &config));
    let at = |n| sgdisk_info(&disk.image, n).map(|(f, l, name, _)| (f, l, name));
    assert_eq!(at(2), Some((22528, 30719, "B".into())));
    assert_eq!(at(3), Some((34, 2047, "B".into())));
    assert_eq!(at(5).map(|p| (p.0, p.1)), Some((18432, 22527)));
    assert_eq!(at(9).map(|p| p.0), Some(30720));
    assert_eq!(
        ok(&provision("plan", &dir, &config)),
        "",
        "a re-run changes nothing"
    );
    ok(&provision("apply", &dir, &config));
    assert_eq!(at(4), None, "no second partition labelled B");
}

// The same run: a partition listed with wipePartitionEntry and a start but no size is placed
// by upstream's pretend run up to the end of the largest free block, where it collides with
// the next partition: upstream fails, and so does flint on a table it did not make.
#[test]
fn an_unsized_wiped_entry_fails_as_upstream_on_a_foreign_table_and_reruns_on_its_own() {
    let dir = TempDir::new("disks-unsized");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    sh(
        "sgdisk",
        &["-n", "1:1M:+4M", "-n", "2:5M:+8M", "-n", "3:13M:+4M", image],
    );
    let config = |dev: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{dev}",
              "partitions":[{{"number":1,"startMiB":1,"wipePartitionEntry":true}}]}}]}}}}"#
        )
    };
    let err = failed(&provision("apply", &dir, &config(disk.path())));
    assert!(err.contains("partitions.0"), "{err}");
    // Made by flint: the entry creates partition 1 over an empty disk, then re-runs cleanly.
    let dir2 = TempDir::new("disks-unsized-own");
    let own = Loop::new(&dir2, "disk", 64);
    ok(&provision("apply", &dir2, &config(own.path())));
    let (first, _, _, _) = sgdisk_info(&own.image, 1).expect("partition 1");
    assert_eq!(first, 2048);
    assert_eq!(ok(&provision("plan", &dir2, &config(own.path()))), "");
}

/// A wipe that leaves no partition to make leaves no table at all, as upstream's (its
/// `sgdisk --zap-all` is not followed by a run that writes one); a re-run changes nothing.
#[test]
fn a_wipe_with_nothing_to_make_leaves_no_table() {
    let dir = TempDir::new("disks-wipe-none");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    sh("sgdisk", &["-n", "1:3M:+4M", "-c", "1:A", image]);
    let config = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}",
          "wipeTable":true,"partitions":[{{"number":9,"shouldExist":false}}]}}]}}}}"#,
        disk.path()
    );
    ok(&provision("apply", &dir, &config));
    assert_eq!(sgdisk_info(&disk.image, 1), None);
    assert_eq!(blkid(image, "PTTYPE"), "", "no table left");
    assert_eq!(
        ok(&provision("plan", &dir, &config)),
        "",
        "a re-run changes nothing"
    );
}

// The storage harness's gen-1800-15: over a partition at 3 MiB, partition 1 with start 0 and
// wipePartitionEntry is made again at 1 MiB, then a `number: 0` entry at 5 MiB, as upstream
// makes them. flint used to fail its own check after writing: planning that table again by
// upstream's rule alone moves partition 1 to the largest free block. flint made it, so its
// start of 0 keeps it in place, as a start left out does; the apply succeeds and a re-run
// changes nothing.
#[test]
fn a_start_of_zero_on_a_wiped_entry_succeeds_and_reruns_in_place() {
    let dir = TempDir::new("disks-start0");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    sh("sgdisk", &["-n", "1:3M:+4M", "-c", "1:C", image]);
    let config = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}",
          "partitions":[{{"number":1,"label":"B","startMiB":0,"sizeMiB":4,"wipePartitionEntry":true}},
                        {{"number":0,"label":"new","startMiB":5,"sizeMiB":2}}]}}]}}}}"#,
        disk.path()
    );
    ok(&provision("apply", &dir, &config));
    let at = |n| sgdisk_info(&disk.image, n).map(|(f, l, name, _)| (f, l, name));
    assert_eq!(at(1), Some((2048, 10239, "B".into())));
    assert_eq!(at(2), Some((10240, 14335, "new".into())));
    assert_eq!(
        ok(&provision("plan", &dir, &config)),
        "",
        "a re-run changes nothing"
    );
}

/// A wiped table is kept only when it already is what wiping would give, partition GUIDs
/// the config names included (upstream's `partition.create.wipetable`, found by the
/// storage harness's port of upstream's scenarios): another GUID there means a new table.
#[test]
fn a_wipe_keeps_a_table_only_with_the_guids_the_config_gives() {
    let dir = TempDir::new("disks-wipe-guid");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    let (old, new) = (
        "2B7A6E26-5E8F-4CCA-A654-46215D4696AC",
        "8A7A6E26-5E8F-4CCA-A654-46215D4696AC",
    );
    sh(
        "sgdisk",
        &[
            "-n",
            "1:1M:+8M",
            "-c",
            "1:a",
            "-u",
            &format!("1:{old}"),
            image,
        ],
    );
    let config = |guid: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}",
              "wipeTable":true,"partitions":[{{"number":1,"label":"a","sizeMiB":8,"guid":"{guid}"}}]}}]}}}}"#,
            disk.path()
        )
    };
    // The same GUID in other letters: the table is kept.
    assert_eq!(
        ok(&provision("plan", &dir, &config(&old.to_lowercase()))),
        ""
    );
    ok(&provision("apply", &dir, &config(new)));
    assert_eq!(
        sgdisk_info(&disk.image, 1).map(|i| i.3),
        Some(new.to_string())
    );
    assert_eq!(
        ok(&provision("plan", &dir, &config(new))),
        "",
        "a re-run changes nothing"
    );
}

/// A partition that should not exist, numbered beyond a GPT's 128 entries, cannot exist:
/// nothing to do, on a disk with a table or without one (upstream's
/// `partition.no-op.nonexistent`); one that should exist there is refused.
#[test]
fn should_not_exist_beyond_the_table_is_nothing_to_do() {
    let dir = TempDir::new("disks-beyond");
    let disk = Loop::new(&dir, "disk", 64);
    let image = disk.image.to_str().unwrap();
    let config = |number: u32, exist: bool| {
        format!(
            r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"disks":[{{"device":"{}",
              "partitions":[{{"number":{number},"shouldExist":{exist}}}]}}]}}}}"#,
            disk.path()
        )
    };
    ok(&provision("apply", &dir, &config(999, false)));
    assert_eq!(blkid(image, "PTTYPE"), "", "no table made");
    sh("sgdisk", &["-n", "1:1M:+4M", image]);
    ok(&provision("apply", &dir, &config(129, false)));
    assert!(sgdisk_info(&disk.image, 1).is_some());
    assert!(failed(&provision("apply", &dir, &config(129, true))).contains("beyond the 128"));
}

#[test]
fn a_plan_says_at_once_which_disk_it_cannot_see_and_plans_the_rest() {
    let dir = TempDir::new("plan-absent-disk");
    let config = r#"{"ignition":{"version":"3.4.0"},
        "storage":{"disks":[{"device":"/dev/disk/by-id/flint-test-no-such-disk",
                             "partitions":[{"label":"DATA","number":1}]}],
                   "files":[{"path":"/etc/hostname","contents":{"source":"data:,web01"}}]}}"#;
    let file = dir.path().join("config.ign");
    std::fs::write(&file, config).unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let start = std::time::Instant::now();
    let out = std::process::Command::new(common::flint())
        .args(["plan", "--root", root.to_str().unwrap(), "--state-dir"])
        .arg(dir.path().join("state"))
        .arg(&file)
        .env("FLINT_DEVICE_TIMEOUT", "30")
        .output()
        .unwrap();
    let took = start.elapsed();
    let (stdout, stderr) = text(&out);
    // No wait for the device (an apply would wait the 30 s).
    assert!(
        took < std::time::Duration::from_secs(5),
        "plan took {took:?}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains(
            "disks: would wait for /dev/disk/by-id/flint-test-no-such-disk: not present on this machine"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("plan: incomplete: 1 device(s) not present on this machine"),
        "{stderr}"
    );
    // The rest is planned all the same.
    assert!(
        stdout.contains("would create file /etc/hostname (5 bytes"),
        "{stdout}"
    );
}
