//! Flatcar's first boot, outside the VM: kernel arguments as Flatcar's helper edits them
//! (the corpus in conformance/kargs, recorded from bootengine's helper) and on a real OEM
//! partition; `oem://` sources from the lookaside directory, from the OEM partition itself
//! (a loop device) and on the kernel command line; the fetch-offline step and its neednet
//! flag; an OEM filesystem of another format kept by the disks stage.
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::Path;
use std::process::{Command, Output};
use support::devices::{Loop, Mounted, blkid, sh};

fn flint(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(common::flint());
    c.args(args)
        .current_dir(dir)
        .env("FLINT_DEVICE_TIMEOUT", "2")
        // Nothing of the host's command line or system config directories leaks in.
        .env("FLINT_CMDLINE", dir.join("cmdline"))
        .env("IGNITION_SYSTEM_CONFIG_DIR", dir.join("sys"))
        .env("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", dir.join("sys-run"))
        .env("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", dir.join("sys-etc"))
        .env("IGNITION_OEM_LOOKASIDE_DIR", dir.join("oem"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A label nobody else's filesystem carries, for the OEM partition of one test.
fn oem_label(tag: &str) -> String {
    format!("OEMT{}{tag}", std::process::id() % 100_000)
}

#[test]
fn kernel_arguments_as_flatcars_helper_edits_them() {
    let corpus = common::corpus("kargs");
    let cases = common::case_dirs(&corpus.join("cases"));
    assert!(!cases.is_empty(), "no kargs cases");
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let dir = TempDir::new(&format!("kargs-{name}"));
        std::fs::create_dir_all(dir.join("root")).unwrap();
        let input = case.join("grub.cfg");
        if input.exists() {
            std::fs::copy(&input, dir.join("grub.cfg")).unwrap();
        }
        let args: Vec<String> = std::fs::read_to_string(case.join("args"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let (mut add, mut del) = (Vec::new(), Vec::new());
        for pair in args.chunks(2) {
            match pair[0].as_str() {
                "--should-exist" => add.push(pair[1].clone()),
                "--should-not-exist" => del.push(pair[1].clone()),
                other => panic!("{name}: unknown helper argument {other}"),
            }
        }
        let config = serde_json::json!({
            "ignition": {"version": "3.4.0"},
            "kernelArguments": {"shouldExist": add, "shouldNotExist": del},
        });
        std::fs::write(dir.join("c.ign"), config.to_string()).unwrap();
        let run = || {
            flint(
                &dir,
                &[
                    "apply",
                    "--root",
                    "root",
                    "--stage",
                    "kargs",
                    "--kargs-file",
                    "grub.cfg",
                    "--kargs-reboot-flag",
                    "reboot",
                    "c.ign",
                ],
                &[],
            )
        };
        let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap();
        let flint_own = case.join("flint-expected").exists();
        for (round, (expected, reboot)) in [("expected", "reboot"), ("expected2", "reboot2")]
            .into_iter()
            .enumerate()
        {
            let _ = std::fs::remove_file(dir.join("reboot"));
            let out = ok(&run());
            let (want, reboot) = if flint_own {
                (
                    read("flint-expected"),
                    if round == 0 { "yes" } else { "no" }.to_string(),
                )
            } else {
                (read(expected), read(reboot).trim().to_string())
            };
            let got = std::fs::read_to_string(dir.join("grub.cfg")).unwrap_or_default();
            assert_eq!(got, want, "{name}, run {}: grub.cfg differs", round + 1);
            assert_eq!(
                dir.join("reboot").exists(),
                reboot == "yes",
                "{name}, run {}: reboot flag (want {reboot})",
                round + 1
            );
            assert_eq!(
                out.contains("takes effect after a reboot"),
                reboot == "yes",
                "{name}, run {}: {out}",
                round + 1
            );
            if reboot == "no" {
                assert_eq!(out, "apply: nothing to change\n", "{name}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn kernel_arguments_on_the_oem_partition() {
    let dir = TempDir::new("kargs-oem");
    let disk = Loop::new(&dir, "oem", 128);
    let label = oem_label("k");
    sh("mkfs.btrfs", &["-q", "-f", "-L", &label, disk.path()]);
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::fs::write(m.0.join("grub.cfg"), "set oem_id=\"qemu\"\n").unwrap();
    }
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["flint.test=1"]}}"#,
    )
    .unwrap();
    let env = [("FLINT_OEM_LABEL", label.as_str())];
    let args = [
        "apply",
        "--root",
        "root",
        "--kargs-reboot-flag",
        "reboot",
        "c.ign",
    ];
    let plan = ok(&flint(&dir, &["plan", "--root", "root", "c.ign"], &env));
    assert!(
        plan.contains(
            "would set kernel arguments \"flint.test=1\" in grub.cfg on the OEM partition"
        ),
        "{plan}"
    );
    let out = ok(&flint(&dir, &args, &env));
    assert!(
        out.contains("set kernel arguments \"flint.test=1\""),
        "{out}"
    );
    assert!(dir.join("reboot").exists());
    let left = support::devices::mounts_of(disk.path());
    assert!(
        left.is_empty(),
        "the OEM partition was left mounted: {left:?}"
    );
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "ro");
        assert_eq!(
            std::fs::read_to_string(m.0.join("grub.cfg")).unwrap(),
            "set oem_id=\"qemu\"\nset linux_append=\"$linux_append flint.test=1\"\n"
        );
    }
    std::fs::remove_file(dir.join("reboot")).unwrap();
    assert_eq!(ok(&flint(&dir, &args, &env)), "apply: nothing to change\n");
    assert!(!dir.join("reboot").exists());
    // No OEM partition: the stage fails and says why.
    let o = flint(&dir, &args, &[("FLINT_OEM_LABEL", "flint-no-such-label")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stderr(&o).contains("error: kargs stage failed at $.kernelArguments: kernel arguments are kept on the OEM partition, but there is no OEM partition"),
        "{}",
        text(&o)
    );
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A grub.cfg on the OEM partition that is a symbolic link to a file outside it (the
/// initramfs's /etc/shadow, say): the kargs stage refuses it, naming it, rather than read
/// the file it leads to and write its contents back as a readable grub.cfg; in plan too.
#[test]
fn a_grub_cfg_linked_out_of_the_oem_partition_is_refused() {
    let dir = TempDir::new("kargs-oem-link");
    let disk = Loop::new(&dir, "oem", 128);
    let label = oem_label("l");
    sh("mkfs.btrfs", &["-q", "-f", "-L", &label, disk.path()]);
    let secret = dir.join("shadow");
    std::fs::write(&secret, "root:$6$secret:19000::::::\n").unwrap();
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::os::unix::fs::symlink(&secret, m.0.join("grub.cfg")).unwrap();
    }
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["flint.test=1"]}}"#,
    )
    .unwrap();
    let env = [("FLINT_OEM_LABEL", label.as_str())];
    for verb in ["plan", "apply"] {
        let o = flint(&dir, &[verb, "--root", "root", "c.ign"], &env);
        assert_eq!(o.status.code(), Some(1), "{verb}: {}", text(&o));
        assert!(
            stderr(&o)
                .contains("kargs stage failed at $.kernelArguments: grub.cfg on the OEM partition")
                && stderr(&o)
                    .contains("is a symbolic link that leads outside the partition: refused"),
            "{verb}: {}",
            text(&o)
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains("secret"));
    }
    let left = support::devices::mounts_of(disk.path());
    assert!(
        left.is_empty(),
        "the OEM partition was left mounted: {left:?}"
    );
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "ro");
        let g = std::fs::symlink_metadata(m.0.join("grub.cfg")).unwrap();
        assert!(g.file_type().is_symlink(), "grub.cfg was replaced");
        assert_eq!(
            std::fs::read_dir(&m.0).unwrap().count(),
            1,
            "something was written"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "root:$6$secret:19000::::::\n"
    );
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The OEM partition is mounted on a private directory made fresh for it, never on a name a
/// local user could guess and plant a link at: a link at the name earlier versions used
/// (`$TMPDIR/flint-oem-PID-0`, planted while the run is stopped before it starts) leads
/// nothing anywhere, and the partition's grub.cfg is edited.
#[test]
fn the_oem_partition_is_mounted_on_a_fresh_private_directory() {
    let dir = TempDir::new("kargs-oem-tmp");
    let disk = Loop::new(&dir, "oem", 128);
    let label = oem_label("t");
    sh("mkfs.btrfs", &["-q", "-f", "-L", &label, disk.path()]);
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::fs::write(m.0.join("grub.cfg"), "set oem_id=\"qemu\"\n").unwrap();
    }
    let (tmp, elsewhere) = (dir.join("tmp"), dir.join("elsewhere"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["flint.test=1"]}}"#,
    )
    .unwrap();
    // The run stops itself before flint starts (a shell that becomes flint, keeping its pid),
    // so that the links can be planted at the names its pid would give.
    let mut c = std::process::Command::new("sh");
    c.args(["-c", "kill -STOP $$; exec \"$0\" \"$@\""])
        .arg(common::flint())
        .args([
            "apply",
            "--root",
            "root",
            "--kargs-reboot-flag",
            "reboot",
            "c.ign",
        ])
        .current_dir(&dir)
        .env("FLINT_DEVICE_TIMEOUT", "2")
        .env("FLINT_OEM_LABEL", &label)
        .env("TMPDIR", &tmp)
        .env("FLINT_CMDLINE", dir.join("cmdline"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: waits (without reaping) for our own child to stop.
    assert_eq!(
        unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) },
        pid
    );
    for n in 0..4 {
        std::os::unix::fs::symlink(&elsewhere, tmp.join(format!("flint-oem-{pid}-{n}"))).unwrap();
    }
    // SAFETY: a signal to our own stopped child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let left = support::devices::mounts_of(disk.path());
    assert!(
        left.is_empty(),
        "the OEM partition was left mounted: {left:?}"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "written through the link"
    );
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "ro");
        assert_eq!(
            std::fs::read_to_string(m.0.join("grub.cfg")).unwrap(),
            "set oem_id=\"qemu\"\nset linux_append=\"$linux_append flint.test=1\"\n"
        );
    }
    // The private directory is gone; the planted links are as they were.
    let left: Vec<String> = (std::fs::read_dir(&tmp).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(&format!("flint-oem-{pid}-")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn files_config(sources: &[(&str, &str)]) -> String {
    let files: Vec<serde_json::Value> = sources
        .iter()
        .map(|(path, src)| serde_json::json!({"path": path, "contents": {"source": src}}))
        .collect();
    serde_json::json!({"ignition": {"version": "3.4.0"}, "storage": {"files": files}}).to_string()
}

#[test]
fn oem_sources_from_the_lookaside_directory() {
    let dir = TempDir::new("oem-lookaside");
    std::fs::create_dir_all(dir.join("oem/sub")).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(dir.join("oem/sub/motd"), "from the OEM partition\n").unwrap();
    let gz = flint_ignition::dataurl::gzip_best(b"gzipped on OEM");
    std::fs::write(dir.join("oem/z.gz"), &gz).unwrap();
    let sum =
        flint_provision::fetch::hex(&<sha2::Sha256 as sha2::Digest>::digest(b"gzipped on OEM"));
    let config = serde_json::json!({
        "ignition": {"version": "3.3.0"},
        "storage": {"files": [
            {"path": "/etc/motd", "contents": {"source": "oem:///sub/motd"}},
            {"path": "/etc/clean", "contents": {"source": "oem:///sub/../sub/./motd"}},
            {"path": "/etc/z", "contents": {"source": "oem:///z.gz", "compression": "gzip",
              "verification": {"hash": format!("sha256-{sum}")}}},
        ]},
    });
    std::fs::write(dir.join("c.ign"), config.to_string()).unwrap();
    ok(&flint(&dir, &["apply", "--root", "root", "c.ign"], &[]));
    let read = |p: &str| std::fs::read_to_string(dir.join("root").join(p)).unwrap();
    assert_eq!(read("etc/motd"), "from the OEM partition\n");
    assert_eq!(read("etc/clean"), "from the OEM partition\n");
    assert_eq!(read("etc/z"), "gzipped on OEM");

    // Failures name the stage, the entry and the URL; nothing is written.
    for (src, why) in [
        ("oem:///missing", "OEM file /missing is not in"),
        ("oem:relative", "oem path is not absolute"),
        ("oem:///sub", "is a directory"),
    ] {
        std::fs::write(dir.join("bad.ign"), files_config(&[("/etc/bad", src)])).unwrap();
        let o = flint(
            &dir,
            &["apply", "--root", "root", "bad.ign"],
            &[("FLINT_OEM_LABEL", "flint-no-such-label")],
        );
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!(
                "error: fetch stage failed at $.storage.files.0.contents: fetching {src}:"
            )) && e.contains(why),
            "{src}: {e}"
        );
        assert!(!dir.join("root/etc/bad").exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn oem_config_on_the_kernel_command_line_and_merged() {
    let dir = TempDir::new("oem-cmdline");
    std::fs::create_dir_all(dir.join("oem")).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let child = files_config(&[("/etc/merged", "data:,merged")]);
    std::fs::write(dir.join("oem/child.ign"), child).unwrap();
    let main = serde_json::json!({
        "ignition": {"version": "3.4.0", "config": {"merge": [{"source": "oem:///child.ign"}]}},
        "storage": {"files": [{"path": "/etc/main", "contents": {"source": "oem:///data"}}]},
    });
    std::fs::write(dir.join("oem/config.ign"), main.to_string()).unwrap();
    std::fs::write(dir.join("oem/data"), "main data").unwrap();
    std::fs::write(
        dir.join("cmdline"),
        "console=ttyS0 flatcar.first_boot=detected ignition.config.url=oem:///config.ign\n",
    )
    .unwrap();
    let args = ["apply", "--root", "root", "--platform", "metal"];
    let o = flint(&dir, &args, &[]);
    ok(&o);
    assert!(
        stderr(&o).contains("config from oem:///config.ign"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/main")).unwrap(),
        "main data"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/merged")).unwrap(),
        "merged"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn oem_sources_from_the_partition_itself() {
    let dir = TempDir::new("oem-partition");
    let disk = Loop::new(&dir, "oem", 128);
    let label = oem_label("p");
    sh("mkfs.btrfs", &["-q", "-f", "-L", &label, disk.path()]);
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::fs::create_dir_all(m.0.join("files")).unwrap();
        std::fs::write(m.0.join("files/hello"), "on the partition\n").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", m.0.join("escape")).unwrap();
        std::os::unix::fs::symlink("files/hello", m.0.join("inside")).unwrap();
    }
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let env = [("FLINT_OEM_LABEL", label.as_str())];
    std::fs::write(
        dir.join("c.ign"),
        files_config(&[
            ("/etc/a", "oem:///files/hello"),
            ("/etc/b", "oem:///inside"),
        ]),
    )
    .unwrap();
    // The lookaside directory does not exist: the partition is mounted read-only and read.
    ok(&flint(&dir, &["apply", "--root", "root", "c.ign"], &env));
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/a")).unwrap(),
        "on the partition\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/b")).unwrap(),
        "on the partition\n"
    );
    let left = support::devices::mounts_of(disk.path());
    assert!(left.is_empty(), "left mounted: {left:?}");
    // A link leading out of the partition is refused; a missing file is named.
    for (src, why) in [
        ("oem:///escape", "leads outside it"),
        ("oem:///nope", "OEM file /nope not found"),
    ] {
        std::fs::write(dir.join("bad.ign"), files_config(&[("/etc/bad", src)])).unwrap();
        let o = flint(&dir, &["apply", "--root", "root", "bad.ign"], &env);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(stderr(&o).contains(why), "{src}: {}", text(&o));
    }
    // The lookaside directory wins over the partition.
    std::fs::create_dir_all(dir.join("oem/files")).unwrap();
    std::fs::write(dir.join("oem/files/hello"), "lookaside\n").unwrap();
    std::fs::write(
        dir.join("c2.ign"),
        files_config(&[("/etc/c", "oem:///files/hello")]),
    )
    .unwrap();
    ok(&flint(&dir, &["apply", "--root", "root", "c2.ign"], &env));
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/c")).unwrap(),
        "lookaside\n"
    );
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `flint apply --stage fetch-offline` in `dir` with `config` (or the platform chain).
fn fetch_offline(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec![
        "apply",
        "--root",
        "root",
        "--stage",
        "fetch-offline",
        "--config-cache",
        "run/config.json",
        "--neednet",
        "run/neednet",
    ];
    args.extend_from_slice(extra);
    flint(dir, &args, env)
}

#[test]
fn fetch_offline_asks_for_the_network_only_when_needed() {
    let dir = TempDir::new("fetch-offline");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::create_dir_all(dir.join("oem")).unwrap();
    std::fs::write(dir.join("oem/x"), "x").unwrap();
    let reset = || {
        let _ = std::fs::remove_dir_all(dir.join("run"));
    };
    // (config, platform args, cmdline, needs the network)
    let http = files_config(&[("/etc/a", "http://127.0.0.1:9/a")]);
    let local = files_config(&[("/etc/a", "data:,a"), ("/etc/b", "oem:///x")]);
    let merge_http = r#"{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"https://127.0.0.1:9/c.ign"}]}}}"#;
    let ca_http = r#"{"ignition":{"version":"3.4.0","security":{"tls":{"certificateAuthorities":[{"source":"http://127.0.0.1:9/ca.pem"}]}}}}"#;
    let s3 = files_config(&[("/etc/a", "s3://bucket/key")]);
    let tftp = files_config(&[("/etc/a", "tftp://127.0.0.1/a")]);
    for (name, config, platform, cmdline, want_net) in [
        ("data and oem", local.as_str(), "", "", false),
        ("an http file", http.as_str(), "", "", true),
        ("an https merge", merge_http, "", "", true),
        ("an http CA", ca_http, "", "", true),
        ("s3", s3.as_str(), "", "", true),
        ("tftp", tftp.as_str(), "", "", true),
        ("metal, nothing", "", "metal", "", false),
        ("hetzner's metadata service", "", "hetzner", "", true),
        ("aws, always", "", "aws", "", true),
        ("qemu fw_cfg", "", "qemu", "", false),
        (
            "command line http",
            "",
            "hetzner",
            "ignition.config.url=http://127.0.0.1:9/c.ign",
            true,
        ),
        (
            "command line oem",
            "",
            "hetzner",
            "ignition.config.url=oem:///user.ign",
            false,
        ),
    ] {
        reset();
        std::fs::write(dir.join("cmdline"), cmdline).unwrap();
        std::fs::write(dir.join("oem/user.ign"), &local).unwrap();
        let o = if platform.is_empty() {
            std::fs::write(dir.join("c.ign"), config).unwrap();
            fetch_offline(&dir, &["c.ign"], &[])
        } else {
            let fw = dir.join("fw_cfg");
            let fw = fw.to_str().unwrap();
            fetch_offline(&dir, &["--platform", platform], &[("FLINT_FW_CFG", fw)])
        };
        ok(&o);
        assert_eq!(
            dir.join("run/neednet").exists(),
            want_net,
            "{name}: {}",
            text(&o)
        );
        assert_eq!(
            dir.join("run/config.json").exists(),
            !want_net,
            "{name}: {}",
            text(&o)
        );
        if want_net {
            assert!(
                stderr(&o).contains("fetch-offline: the config needs the network (")
                    && stderr(&o).contains("resource requires networking"),
                "{name}: {}",
                text(&o)
            );
        }
    }
    // A system user.ign answers before the platform is asked: no network for hetzner.
    reset();
    std::fs::write(dir.join("cmdline"), "").unwrap();
    std::fs::create_dir_all(dir.join("sys")).unwrap();
    std::fs::write(dir.join("sys/user.ign"), &local).unwrap();
    ok(&fetch_offline(&dir, &["--platform", "hetzner"], &[]));
    assert!(!dir.join("run/neednet").exists());
    // Then the later stages read the rendered config without fetching anything.
    let o = flint(
        &dir,
        &[
            "apply",
            "--root",
            "root",
            "--config-cache",
            "run/config.json",
            "--platform",
            "hetzner",
            "--stage",
            "files",
        ],
        &[],
    );
    ok(&o);
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/b")).unwrap(),
        "x"
    );
    std::fs::remove_file(dir.join("sys/user.ign")).unwrap();
    // A broken config is an error of the fetch-offline stage, not a request for network.
    reset();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"rel"}]}}"#,
    )
    .unwrap();
    let o = fetch_offline(&dir, &["c.ign"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stderr(&o).contains("error: fetch-offline stage failed at $.storage.files.0.path"),
        "{}",
        text(&o)
    );
    assert!(!dir.join("run/neednet").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_oem_filesystem_of_another_format_is_kept() {
    let dir = TempDir::new("oem-reuse");
    let disk = Loop::new(&dir, "disk", 160);
    sh("mkfs.btrfs", &["-q", "-f", "-L", "OEM", disk.path()]);
    let uuid = blkid(disk.path(), "UUID");
    {
        let m = Mounted::new(disk.path(), &dir.join("mnt"), "rw");
        std::fs::write(m.0.join("config.ign"), "{}").unwrap();
    }
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let config = serde_json::json!({
        "ignition": {"version": "3.4.0"},
        "storage": {"filesystems": [{"device": disk.path(), "format": "ext4", "label": "OEM"}]},
    });
    std::fs::write(dir.join("c.ign"), config.to_string()).unwrap();
    let o = flint(
        &dir,
        &["apply", "--root", "root", "--stage", "disks", "c.ign"],
        &[],
    );
    assert_eq!(ok(&o), "apply: nothing to change\n", "{}", text(&o));
    assert_eq!(blkid(disk.path(), "TYPE"), "btrfs");
    assert_eq!(blkid(disk.path(), "UUID"), uuid);
    drop(disk);
    std::fs::remove_dir_all(&dir).unwrap();
}
