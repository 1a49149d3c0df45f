//! The stages run as a distribution runs them, one process each (as upstream's `ignition`,
//! and as `flint apply --stage`): each resource is downloaded once a boot (a large one at
//! most twice), stages that need no resource never touch the network, and a resource that
//! changed between the fetch stage and the files stage fails the files stage before anything
//! is written.
use crate::cli_ignition::{lines, setup, stage, text};
use crate::common::{self, TempDir};
use crate::support::{Server, ok};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const STAGES: [&str; 7] = [
    "fetch-offline",
    "fetch",
    "kargs",
    "disks",
    "mount",
    "files",
    "umount",
];

/// Kept: anything up to 1 MiB, so that the 3 MB resource is a large one.
const KEEP: (&str, &str) = ("FLINT_KEEP_BYTES", "1048576");

fn large_bytes(seed: u8) -> Vec<u8> {
    (0..3_000_000u32).map(|i| (i % 251) as u8 ^ seed).collect()
}

/// A config of one file per (path, url), giving up on a fetch after 2 s.
fn config(files: &[(&str, String)]) -> String {
    let files: Vec<String> = (files.iter())
        .map(|(p, u)| format!(r#"{{"path":"{p}","contents":{{"source":"{u}"}}}}"#))
        .collect();
    format!(
        r#"{{"ignition":{{"version":"3.4.0","timeouts":{{"httpTotal":2}}}},"storage":{{"files":[{}]}}}}"#,
        files.join(",")
    )
}

/// A server with /small and /large, a directory with flint linked as `ignition`, the
/// config of both.
fn boot(name: &str) -> (Server, TempDir, std::path::PathBuf) {
    let s = Server::start(None);
    s.route("/small", ok("small\n"));
    s.route("/large", ok(large_bytes(0)));
    let dir = TempDir::new(name);
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let c = config(&[
        ("/etc/small", s.url("/small")),
        ("/etc/large", s.url("/large")),
    ]);
    std::fs::write(dir.join("config.ign"), c).unwrap();
    (s, dir, ign)
}

fn run_ok(dir: &Path, ign: &Path, name: &str) -> Output {
    let o = stage(dir, ign, name, &[], &[KEEP]);
    assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
    o
}

/// Runs every stage in `dir` as `ign`; after each, what `hits` counts.
fn by_stage(
    dir: &Path,
    ign: &Path,
    hits: impl Fn() -> (usize, usize),
) -> Vec<(&'static str, usize, usize)> {
    (STAGES.iter())
        .map(|name| {
            run_ok(dir, ign, name);
            let (a, b) = hits();
            (*name, a, b)
        })
        .collect()
}

#[test]
fn each_resource_is_downloaded_once_a_large_one_twice() {
    let (s, dir, ign) = boot("stages-counted");
    let seen = by_stage(&dir, &ign, || (s.hits("/small"), s.hits("/large")));
    // Downloads so far after each stage: the fetch stage fetches and verifies everything,
    // the files stage takes the small one from what was kept and fetches the large one again.
    assert_eq!(
        seen,
        [
            ("fetch-offline", 0, 0),
            ("fetch", 1, 1),
            ("kargs", 1, 1),
            ("disks", 1, 1),
            ("mount", 1, 1),
            ("files", 1, 2),
            ("umount", 1, 2),
        ]
    );
    assert_eq!(
        std::fs::read(dir.join("root/etc/small")).unwrap(),
        b"small\n"
    );
    assert_eq!(
        std::fs::read(dir.join("root/etc/large")).unwrap(),
        large_bytes(0)
    );
}

#[test]
fn a_network_gone_after_the_fetch_stage() {
    // Only small resources: every stage after the fetch stage does without the network.
    let s = Server::start(None);
    s.route("/small", ok("small\n"));
    let dir = TempDir::new("stages-offline-small");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(
        dir.join("config.ign"),
        config(&[("/etc/small", s.url("/small"))]),
    )
    .unwrap();
    run_ok(&dir, &ign, "fetch-offline");
    run_ok(&dir, &ign, "fetch");
    s.stop();
    for name in ["kargs", "disks", "mount", "files"] {
        run_ok(&dir, &ign, name);
    }
    let start = Instant::now();
    run_ok(&dir, &ign, "umount");
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        std::fs::read(dir.join("root/etc/small")).unwrap(),
        b"small\n"
    );

    // A large resource must be fetched again: the files stage fails, naming it, and writes
    // nothing.
    let (s, dir, ign) = boot("stages-offline-large");
    for name in ["fetch-offline", "fetch", "kargs", "disks"] {
        run_ok(&dir, &ign, name);
    }
    s.stop();
    run_ok(&dir, &ign, "mount");
    let o = stage(&dir, &ign, "files", &[], &[KEEP]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let last = lines(&o).last().unwrap().clone();
    assert!(
        last.starts_with("CRITICAL : Ignition failed: files stage failed at $.storage.files.1.contents: fetching http://127.0.0.1:"),
        "{last}"
    );
    assert!(last.contains("/large"), "{last}");
    assert!(!dir.join("root/etc").exists(), "nothing is written");
    let start = Instant::now();
    run_ok(&dir, &ign, "umount");
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_resource_that_changed_fails_the_files_stage() {
    let (s, dir, ign) = boot("stages-changed");
    for name in ["fetch-offline", "fetch", "kargs", "disks", "mount"] {
        run_ok(&dir, &ign, name);
    }
    s.route("/large", ok(large_bytes(1)));
    let o = stage(&dir, &ign, "files", &[], &[KEEP]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let last = lines(&o).last().unwrap().clone();
    let then = crate::support::sha512(&large_bytes(0));
    let now = crate::support::sha512(&large_bytes(1));
    let want = format!(
        "CRITICAL : Ignition failed: files stage failed at $.storage.files.1.contents: fetching {}: changed since the fetch stage verified it: {then} then, {now} now",
        s.url("/large")
    );
    assert_eq!(last, want);
    assert!(!dir.join("root/etc").exists(), "nothing is written");
}

/// `flint apply` (or `plan`) in `dir` with `args`, the keep budget of [`KEEP`].
fn flint(dir: &Path, args: &[&str]) -> Output {
    flint_with(dir, args, &[KEEP])
}

/// `flint ARGS` in `dir`, with the kernel command line and the system config directories
/// of `dir` (nothing of the host's), plus `env`.
pub(crate) fn flint_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(common::flint());
    c.args(args)
        .current_dir(dir)
        .env("FLINT_CMDLINE", dir.join("cmdline"))
        .env("IGNITION_SYSTEM_CONFIG_DIR", dir.join("sys"))
        .env("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", dir.join("sys-run"))
        .env("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", dir.join("sys-etc"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn flint_ok(dir: &Path, args: &[&str]) {
    let o = flint(dir, args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

#[test]
fn flint_apply_stage_by_stage_and_in_one_process() {
    // As flint's dracut module runs it: `flint apply --stage X --config-cache …`.
    let (s, dir, _) = boot("stages-flint");
    let mut seen = Vec::new();
    for name in STAGES {
        let mut args = vec!["apply", "--root", "root", "--stage", name];
        args.extend([
            "--config-cache",
            "run/config.json",
            "--state-dir",
            "run/flint",
        ]);
        args.extend(["--neednet", "run/neednet", "config.ign"]);
        flint_ok(&dir, &args);
        seen.push((name, s.hits("/small"), s.hits("/large")));
    }
    assert_eq!(
        seen,
        [
            ("fetch-offline", 0, 0),
            ("fetch", 1, 1),
            ("kargs", 1, 1),
            ("disks", 1, 1),
            ("mount", 1, 1),
            ("files", 1, 2),
            ("umount", 1, 2),
        ]
    );
    assert_eq!(
        std::fs::read(dir.join("root/etc/large")).unwrap(),
        large_bytes(0)
    );

    // All stages in one process: each resource once; a plan too.
    let (s, dir, _) = boot("stages-flint-one");
    flint_ok(
        &dir,
        &["plan", "--root", "root", "--state-dir", "run", "config.ign"],
    );
    assert_eq!((s.hits("/small"), s.hits("/large")), (1, 1));
    flint_ok(
        &dir,
        &[
            "apply",
            "--root",
            "root",
            "--state-dir",
            "run",
            "config.ign",
        ],
    );
    assert_eq!((s.hits("/small"), s.hits("/large")), (2, 2));
    assert_eq!(
        std::fs::read(dir.join("root/etc/small")).unwrap(),
        b"small\n"
    );
}

#[test]
fn what_was_kept_serves_only_its_own_config() {
    // The fetch stage of config A keeps /small; the server then changes /small, and config
    // B (of /small alone) is applied with the same state directory: its files stage must
    // not take A's copy, and a stage other than fetch leaves no store of its own.
    let (s, dir, _) = boot("stages-kept-other");
    let args = |stage: &'static str, config: &'static str| {
        vec![
            "apply",
            "--root",
            "root",
            "--stage",
            stage,
            "--state-dir",
            "run/flint",
            config,
        ]
    };
    flint_ok(&dir, &args("fetch", "config.ign"));
    assert!(dir.join("run/flint/keep/index.json").exists());
    s.route("/small", ok("changed\n"));
    let b = config(&[("/etc/small", s.url("/small"))]);
    std::fs::write(dir.join("b.ign"), b).unwrap();
    flint_ok(&dir, &args("files", "b.ign"));
    assert_eq!(
        std::fs::read(dir.join("root/etc/small")).unwrap(),
        b"changed\n"
    );
    assert_eq!(s.hits("/small"), 2);
    // A's store is left as it was: a files stage does not fill one.
    std::fs::remove_dir_all(dir.join("run/flint/keep")).unwrap();
    flint_ok(&dir, &args("files", "b.ign"));
    assert!(!dir.join("run/flint/keep").exists());
    assert_eq!(s.hits("/small"), 3);
}

#[test]
fn a_remote_ca_is_fetched_once_a_boot() {
    // The CA comes over http, the file over https signed by it: the fetch stage fetches
    // both; the cache holds the CA inline, so no later stage asks for it again.
    let ca = crate::support::test_ca();
    let plain = Server::start(None);
    plain.route("/ca.pem", ok(ca.ca_pem.clone()));
    let tls = Server::start(Some(&ca));
    tls.route("/small", ok("small\n"));
    let dir = TempDir::new("stages-ca");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let c = format!(
        r#"{{"ignition":{{"version":"3.4.0","timeouts":{{"httpTotal":2}},"security":{{"tls":{{"certificateAuthorities":[{{"source":"{}"}}]}}}}}},"storage":{{"files":[{{"path":"/etc/small","contents":{{"source":"{}"}}}}]}}}}"#,
        plain.url("/ca.pem"),
        tls.url("/small")
    );
    std::fs::write(dir.join("config.ign"), c).unwrap();
    let seen = by_stage(&dir, &ign, || (plain.hits("/ca.pem"), tls.hits("/small")));
    assert_eq!(
        seen,
        [
            ("fetch-offline", 0, 0),
            ("fetch", 1, 1),
            ("kargs", 1, 1),
            ("disks", 1, 1),
            ("mount", 1, 1),
            ("files", 1, 1),
            ("umount", 1, 1),
        ]
    );
    assert_eq!(
        std::fs::read(dir.join("root/etc/small")).unwrap(),
        b"small\n"
    );
}
