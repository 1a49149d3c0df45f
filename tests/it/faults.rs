//! Faults during provisioning, on real parts: a download cut short, a full filesystem, a
//! missing tool, a device that is not there, and kill -9 in the middle of an apply. After
//! each, the error names the stage and the entry, no file is left half-written, and running
//! the same config again converges.
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::devices::{Loop, Mounted, blkid, sh};
use support::{Reply, Server, ok};

fn apply(dir: &Path, root: &Path, config: &str, env: &[(&str, &str)]) -> Output {
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    let mut c = Command::new(common::flint());
    c.arg("apply")
        .arg("--root")
        .arg(root)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--kargs-file")
        .arg(dir.join("grub.cfg"))
        .arg(&file)
        .env("FLINT_DEVICE_TIMEOUT", "2");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fails_with(o: &Output, wanted: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stdout:\n{}\nstderr:\n{err}",
        stdout(o)
    );
    assert!(err.contains(wanted), "missing {wanted:?} in:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn succeeds(o: &Output) -> String {
    assert!(
        o.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Files under `dir` (recursively) whose names mark an unfinished write.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(temp_files(&p));
        } else if p.to_string_lossy().contains(".flint-tmp") {
            out.push(p);
        }
    }
    out
}

fn files_config(files: &[(String, String)]) -> String {
    let list: Vec<String> = files
        .iter()
        .map(|(p, src)| format!(r#"{{"path":"{p}","contents":{{"source":"{src}"}}}}"#))
        .collect();
    format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{}]}}}}"#,
        list.join(",")
    )
}

#[test]
fn a_download_cut_short_touches_nothing_and_a_rerun_converges() {
    let dir = TempDir::new("fault-fetch");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let server = Server::start(None);
    let body = vec![b'z'; 256 * 1024];
    server.route("/big", Reply::Truncated(body.len(), body[..1000].to_vec()));
    let config = files_config(&[
        ("/etc/first".into(), "data:,one".into()),
        ("/etc/big".into(), server.url("/big")),
    ]);
    let o = apply(&dir, &root, &config, &[]);
    fails_with(&o, "fetch stage failed at $.storage.files.1.contents");
    assert!(
        std::fs::read_dir(&root).unwrap().next().is_none(),
        "nothing may be written before everything is fetched"
    );
    server.route("/big", ok(body.clone()));
    succeeds(&apply(&dir, &root, &config, &[]));
    assert_eq!(std::fs::read(root.join("etc/big")).unwrap(), body);
    assert_eq!(
        succeeds(&apply(&dir, &root, &config, &[])),
        "apply: nothing to change\n"
    );
}

#[test]
fn a_full_filesystem_leaves_no_partial_file_and_a_rerun_converges() {
    let dir = TempDir::new("fault-full");
    let disk = Loop::new(&dir, "small", 8);
    sh("mkfs.ext4", &["-q", "-m", "0", disk.path()]);
    let root = dir.join("root");
    let _m = Mounted::new(disk.path(), &root, "rw");
    // Ballast that is not the config's: the disk is too full until it goes.
    std::fs::write(root.join("ballast"), vec![0u8; 4 << 20]).unwrap();
    let a = "A".repeat(1 << 20);
    let b = "B".repeat(3 << 20);
    let url = |s: &str| {
        format!(
            "data:;base64,{}",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, s)
        )
    };
    let config = files_config(&[("/a".into(), url(&a)), ("/b".into(), url(&b))]);
    let o = apply(&dir, &root, &config, &[]);
    fails_with(&o, "files stage failed at $.storage.files.1");
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    assert!(!root.join("b").exists(), "no half-written /b");
    assert!(temp_files(&root).is_empty(), "{:?}", temp_files(&root));
    // The root is marked as half-done: the next run finishes the job (where a first run
    // meets existing files as upstream does).
    assert!(root.join("etc/.flint-files-in-progress").exists());
    // Room made, the same config again.
    std::fs::remove_file(root.join("ballast")).unwrap();
    succeeds(&apply(&dir, &root, &config, &[]));
    assert!(!root.join("etc/.flint-files-in-progress").exists());
    assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), a);
    assert_eq!(std::fs::read_to_string(root.join("b")).unwrap(), b);
    assert_eq!(
        succeeds(&apply(&dir, &root, &config, &[])),
        "apply: nothing to change\n"
    );
}

#[test]
fn a_missing_tool_is_named_and_a_rerun_with_it_converges() {
    let dir = TempDir::new("fault-tool");
    let disk = Loop::new(&dir, "disk", 320);
    // A PATH with every tool but mkfs.xfs.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for t in [
        "blkid",
        "wipefs",
        "mkfs.ext4",
        "mke2fs",
        "mkfs.btrfs",
        "mkswap",
        "mdadm",
    ] {
        let real = String::from_utf8(
            Command::new("sh")
                .args(["-c", &format!("command -v {t}")])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        if !real.trim().is_empty() {
            std::os::unix::fs::symlink(real.trim(), bin.join(t)).unwrap();
        }
    }
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"xfs","label":"data"}}]}}}}"#,
        disk.path()
    );
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let o = apply(&dir, &root, &config, &[("PATH", bin.to_str().unwrap())]);
    fails_with(
        &o,
        "disks stage failed at $.storage.filesystems.0: mkfs.xfs: not found",
    );
    assert_eq!(blkid(disk.path(), "TYPE"), "", "nothing written");
    succeeds(&apply(&dir, &root, &config, &[]));
    assert_eq!(blkid(disk.path(), "TYPE"), "xfs");
    assert_eq!(
        succeeds(&apply(&dir, &root, &config, &[])),
        "apply: nothing to change\n"
    );
}

#[test]
fn a_device_that_is_not_there_is_named_and_a_rerun_converges() {
    let dir = TempDir::new("fault-device");
    let label = format!("gone{}", std::process::id() % 100_000);
    let image = dir.join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    sh(
        "sgdisk",
        &[
            "-n",
            "1:2048:+20M",
            "-c",
            &format!("1:{label}"),
            image.to_str().unwrap(),
        ],
    );
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"/dev/disk/by-partlabel/{label}","format":"ext4"}}]}}}}"#
    );
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    // The disk is detached: the partition never appears.
    let o = apply(&dir, &root, &config, &[]);
    fails_with(
        &o,
        &format!(
            "disks stage failed at $.storage.filesystems.0.device: device /dev/disk/by-partlabel/{label} did not appear within 2 s"
        ),
    );
    // Attached (and its partitions told to the kernel, as udev-less boots do): converges.
    let dev = sh("losetup", &["-f", "--show", "-P", image.to_str().unwrap()]);
    let dev = dev.trim().to_string();
    let _guard = Detach(dev.clone());
    sh("partx", &["-a", &dev]);
    succeeds(&apply(&dir, &root, &config, &[]));
    assert_eq!(blkid(&format!("{dev}p1"), "TYPE"), "ext4");
    assert_eq!(
        succeeds(&apply(&dir, &root, &config, &[])),
        "apply: nothing to change\n"
    );
}

struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = Command::new("partx").args(["-d", &self.0]).output();
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn kill_9_in_the_middle_then_a_rerun_converges() {
    let dir = TempDir::new("fault-kill");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let content = |i: usize| format!("{i:06}-").repeat(600);
    let files: Vec<(String, String)> = (0..4000)
        .map(|i| (format!("/srv/f{i:05}"), format!("data:,{}", content(i))))
        .collect();
    let config = files_config(&files);
    let file = dir.join("config.ign");
    std::fs::write(&file, &config).unwrap();
    let mut child = Command::new(common::flint())
        .args(["apply", "--root", root.to_str().unwrap(), "--state-dir"])
        .arg(dir.join("state"))
        .arg("--kargs-file")
        .arg(dir.join("grub.cfg"))
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some, but not all, files are there.
    let start = Instant::now();
    loop {
        let n = std::fs::read_dir(root.join("srv"))
            .map(|r| r.count())
            .unwrap_or(0);
        // A slow machine (a debug build, a loaded CI host) may take long to parse and fetch.
        if n > 50 || start.elapsed() > Duration::from_secs(180) {
            break;
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the run finished before it could be killed"
    );
    // Whatever is at a final path is whole.
    let mut whole = 0;
    for e in std::fs::read_dir(root.join("srv")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(i) = name.strip_prefix('f').and_then(|n| n.parse::<usize>().ok()) {
            assert_eq!(
                std::fs::read_to_string(e.path()).unwrap(),
                content(i),
                "{name} half-written"
            );
            whole += 1;
        }
    }
    assert!(
        whole < files.len(),
        "all {whole} files were written before the kill"
    );
    succeeds(&apply(&dir, &root, &config, &[]));
    for (i, (p, _)) in files.iter().enumerate() {
        let got = std::fs::read_to_string(root.join(p.trim_start_matches('/'))).unwrap();
        assert_eq!(got, content(i), "{p}");
    }
    assert!(temp_files(&root).is_empty(), "{:?}", temp_files(&root));
    assert_eq!(
        succeeds(&apply(&dir, &root, &config, &[])),
        "apply: nothing to change\n"
    );
}

/// Two applies on one root at once: the second is refused at once with a clear message (the
/// first holds a lock on the root while it runs), and writes nothing; once the first is done,
/// it runs. A run on another root with the same state directory waits its turn.
#[test]
fn a_second_apply_is_refused_while_one_runs_on_the_same_root() {
    let dir = TempDir::new("fault-lock");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let server = Server::start(None);
    server.route(
        "/slow",
        Reply::Stall(Duration::from_secs(3), b"first".to_vec()),
    );
    let first_config = dir.join("first.ign");
    let slow = files_config(&[("/srv/a".into(), server.url("/slow"))]);
    std::fs::write(&first_config, &slow).unwrap();
    // Killed if the test fails before it ends: it would wait on this test's server.
    struct KillOnDrop(Option<std::process::Child>);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            if let Some(c) = self.0.as_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
    let mut first = KillOnDrop(Some(
        Command::new(common::flint())
            .arg("apply")
            .arg("--root")
            .arg(&root)
            .arg("--state-dir")
            .arg(dir.join("state-first"))
            .arg("--kargs-file")
            .arg(dir.join("grub.cfg"))
            .arg(&first_config)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    // The first run is fetching (its locks taken) once the server has its request.
    let start = Instant::now();
    while server.hits("/slow") == 0 {
        assert!(start.elapsed() < Duration::from_secs(60), "no request came");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = files_config(&[("/srv/b".into(), "data:,second".into())]);
    let o = apply(&dir, &root, &second, &[]);
    fails_with(&o, "another flint run is using the target root");
    assert!(
        stderr(&o).contains(&root.display().to_string()),
        "{}",
        stderr(&o)
    );
    assert!(!root.join("srv").exists(), "the refused run wrote");
    // Another root, the same state directory: it waits for the first run, saying so.
    let other = dir.join("other-root");
    std::fs::create_dir_all(&other).unwrap();
    let waiting = Instant::now();
    let o = Command::new(common::flint())
        .arg("apply")
        .arg("--root")
        .arg(&other)
        .arg("--state-dir")
        .arg(dir.join("state-first"))
        .arg("--kargs-file")
        .arg(dir.join("grub.cfg"))
        .arg(dir.join("config.ign"))
        .output()
        .unwrap();
    succeeds(&o);
    assert!(
        stderr(&o).contains("another flint run is using the state directory"),
        "{}",
        stderr(&o)
    );
    assert!(
        root.join("srv/a").exists(),
        "it ran before the first run finished"
    );
    assert!(waiting.elapsed() > Duration::from_millis(500));
    assert_eq!(
        std::fs::read_to_string(other.join("srv/b")).unwrap(),
        "second"
    );
    let out = first.0.take().unwrap().wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("srv/a")).unwrap(),
        "first"
    );
    // Now the second runs, with no lock in its way.
    succeeds(&apply(&dir, &root, &second, &[]));
    assert_eq!(
        std::fs::read_to_string(root.join("srv/b")).unwrap(),
        "second"
    );
    assert!(temp_files(&root).is_empty(), "{:?}", temp_files(&root));
}
