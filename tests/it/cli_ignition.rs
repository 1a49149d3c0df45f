//! flint run as upstream's `ignition`, `ignition-apply` and `ignition-rmcfg` (links of
//! those names): the command lines (Go `flag` and pflag rules, usage, messages, exit codes),
//! a fetch-offline / fetch / files sequence through the files upstream keeps between stage
//! runs (the config cache, neednet, the state file, the result record), and the log lines.
//! Where the reference binary is at hand (../shared), the same runs go through it and must
//! agree; without it those comparisons are skipped, saying so.
use crate::common::{self, TempDir};
use crate::support::{Server, ok};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = "Ignition v2.26.0";

/// Links to flint under upstream's names in `dir/bin`, and an empty kernel command line.
pub(crate) fn setup(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["ignition", "ignition-apply", "ignition-rmcfg"] {
        std::os::unix::fs::symlink(common::flint(), bin.join(name)).unwrap();
    }
    std::fs::write(dir.join("cmdline"), "").unwrap();
    bin
}

/// The reference `ignition` linked as `name` into `dir/ref`, when ../shared is there.
pub(crate) fn reference(dir: &Path, name: &str) -> Option<PathBuf> {
    let real = common::repo().join("../shared/oracles/flatcar/ignition");
    if !real.exists() {
        eprintln!("skipping the comparison with the reference: ../shared is absent");
        return None;
    }
    let link = dir.join("ref").join(name);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    let _ = std::os::unix::fs::symlink(real, &link);
    Some(link)
}

/// Runs `prog args` in `dir` with the system config directories, the kernel command line
/// and the syslog socket of `dir` (nothing of the host's), plus `env`.
fn run(dir: &Path, prog: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let sys = dir.join("sys");
    let mut c = Command::new(prog);
    c.args(args)
        .current_dir(dir)
        .env("IGNITION_SYSTEM_CONFIG_DIR", sys.join("usr-lib"))
        .env("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", sys.join("run"))
        .env("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", sys.join("etc"))
        .env("FLINT_CMDLINE", dir.join("cmdline"))
        .env("FLINT_SYSLOG_SOCKET", dir.join("no-syslog"))
        .env("IGNITION_CONFIG_FILE", dir.join("config.ign"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("running {}: {e}", prog.display()))
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn usage(prog: &str) -> String {
    format!(
        "Usage of {prog}:
  -config-cache string
    \twhere to cache the config (default \"/run/ignition.json\")
  -fetch-timeout duration
    \tinitial duration for which to wait for config (default 2m0s)
  -log-to-stdout
    \tlog to stdout instead of the system log when set
  -neednet string
    \tflag file to write from fetch-offline if networking is needed (default \"/run/ignition/neednet\")
  -platform value
    \tcurrent platform. [akamai aliyun applehv aws azure azurestack brightbox cloudstack digitalocean exoscale file gcp hetzner hyperv ibmcloud kubevirt metal nutanix nvidiabluefield openstack oraclecloud packet powervs proxmoxve qemu scaleway upcloud virtualbox vmware vultr zvm]
  -root string
    \troot of the filesystem (default \"/\")
  -stage value
    \texecution stage. [disks fetch fetch-offline files kargs mount umount]
  -state-file string
    \twhere to store internal state (default \"/run/ignition/state\")
  -version
    \tprint the version and exit
"
    )
}

/// Command lines refused before anything runs: (arguments, exit code, first stderr line;
/// a flag error is followed by the usage).
const REFUSED: &[(&[&str], i32, &str)] = &[
    (&[], 2, "'--platform' must be provided"),
    (&["--platform=file"], 2, "'--stage' must be provided"),
    // What follows the flags is ignored, the empty argument of `${IGNITION_ARGS}` too.
    (
        &["-platform", "file", "", "--stage=files"],
        2,
        "'--stage' must be provided",
    ),
    (
        &["--platform=nope"],
        2,
        "invalid value \"nope\" for flag -platform: nope is not a valid platform",
    ),
    (
        &["--platform="],
        2,
        "invalid value \"\" for flag -platform:  is not a valid platform",
    ),
    (
        &["-stage", "nope"],
        2,
        "invalid value \"nope\" for flag -stage: nope is not a valid stage",
    ),
    (
        &["--fetch-timeout=5"],
        2,
        "invalid value \"5\" for flag -fetch-timeout: parse error",
    ),
    (&["--platform"], 2, "flag needs an argument: -platform"),
    (&["---version"], 2, "bad flag syntax: ---version"),
    (&["--bogus"], 2, "flag provided but not defined: -bogus"),
    (
        &["--log-to-stdout=yes"],
        2,
        "invalid boolean value \"yes\" for -log-to-stdout: parse error",
    ),
    (
        &[
            "--version=false",
            "--platform=file",
            "--fetch-timeout=1m30s",
        ],
        2,
        "'--stage' must be provided",
    ),
];

#[test]
fn ignition_flags_usage_and_exit_codes() {
    let dir = TempDir::new("ignition-flags");
    let bin = setup(&dir);
    let ign = bin.join("ignition");
    let prog = ign.to_str().unwrap();
    for help in ["-h", "--help", "-help"] {
        let o = run(&dir, &ign, &[help], &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stderr), usage(prog));
        assert!(o.stdout.is_empty());
    }
    for (args, code, first) in REFUSED {
        let o = run(&dir, &ign, args, &[]);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let (line, rest) = err.split_once('\n').unwrap_or((&err, ""));
        assert_eq!(line, *first, "{args:?}");
        let usage_follows = !first.starts_with('\'');
        assert_eq!(rest == usage(prog), usage_follows, "{args:?}: {rest}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // The version first, whatever else is (or is not) given; `-version 1` leaves the `1`.
    for args in [
        &["--version"][..],
        &["-version", "1"],
        &["--version=T", "--stage=files"],
    ] {
        let o = run(&dir, &ign, args, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{VERSION}\n"));
    }
    // Only that name is upstream's: flint stays flint under its own or any other name.
    let o = run(&dir, &common::flint(), &["--version"], &[]);
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("flint "),
        "{}",
        text(&o)
    );
    let other = dir.join("bin/ignition.real");
    std::os::unix::fs::symlink(common::flint(), &other).unwrap();
    let o = run(&dir, &other, &["--platform=file"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("Usage: "),
        "{}",
        text(&o)
    );

    // The reference answers every one of them alike (its version line aside).
    let Some(r) = reference(&dir, "ignition") else {
        return;
    };
    let theirs = |o: &Output| String::from_utf8_lossy(&o.stderr).replace(r.to_str().unwrap(), prog);
    for args in REFUSED.iter().map(|c| c.0).chain([&["-h"][..]]) {
        let (ours, refs) = (run(&dir, &ign, args, &[]), run(&dir, &r, args, &[]));
        assert_eq!(ours.status.code(), refs.status.code(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            theirs(&refs),
            "{args:?}"
        );
    }
}

/// A config of two files, one of them from a config it merges (a data URL), as cached.
const CONFIG: &str = r#"{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%2C%22storage%22%3A%7B%22files%22%3A%5B%7B%22path%22%3A%22%2Fetc%2Fm%22%7D%5D%7D%7D"}]}},"storage":{"files":[{"path":"/etc/foo","contents":{"source":"data:,hello"},"mode":420}]}}"#;
const CACHED: &str = r#"{"ignition":{"config":{"merge":[{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%2C%22storage%22%3A%7B%22files%22%3A%5B%7B%22path%22%3A%22%2Fetc%2Fm%22%7D%5D%7D%7D","verification":{}}],"replace":{"verification":{}}},"proxy":{},"security":{"tls":{}},"timeouts":{},"version":"3.7.0-experimental"},"kernelArguments":{},"passwd":{},"storage":{"files":[{"group":{},"path":"/etc/foo","user":{},"contents":{"source":"data:,hello","verification":{}},"mode":420},{"group":{},"path":"/etc/m","user":{},"contents":{"verification":{}}}]},"systemd":{}}"#;
const BASE: &str = r#"{"kind":"base","source":"system","referenced":false}"#;

fn state_text(entries: &[&str]) -> String {
    format!(
        "{{\"fetchedConfigs\":[{}],\"luksPersistKeyFiles\":null,\"notatedDirectories\":null,\"providerOutputFiles\":null,\"luksPersistVolumeKeyFiles\":null}}\n",
        entries.join(",")
    )
}

/// `ignition --stage STAGE` in `dir` with the files under `dir/run` and the root `dir/root`,
/// logging to stdout, the platform `file` unless `extra` names another.
pub(crate) fn stage(
    dir: &Path,
    prog: &Path,
    stage: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let p = |s: &str| dir.join(s).to_str().unwrap().to_string();
    let (cache, neednet, state, root) = (
        p("run/ignition.json"),
        p("run/ignition/neednet"),
        p("run/ignition/state"),
        p("root"),
    );
    let mut args = vec!["--root", &root, "--stage", stage, "--config-cache", &cache];
    args.extend([
        "--neednet",
        &neednet,
        "--state-file",
        &state,
        "--log-to-stdout",
    ]);
    if !extra.iter().any(|a| a.starts_with("--platform")) {
        args.push("--platform=file");
    }
    args.extend(extra);
    // As upstream's units call it: `${IGNITION_ARGS}` last, empty.
    args.push("");
    run(dir, prog, &args, env)
}

pub(crate) fn lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn fetch_offline_then_files_as_upstream_does() {
    let dir = TempDir::new("ignition-files");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::create_dir_all(dir.join("sys/usr-lib/base.d")).unwrap();
    std::fs::write(
        dir.join("sys/usr-lib/base.d/base.ign"),
        r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/base","contents":{"source":"data:,b"}}]}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("config.ign"), CONFIG).unwrap();
    let o = stage(&dir, &ign, "fetch-offline", &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let l = lines(&o);
    assert_eq!(
        l[..2],
        [
            format!("INFO     : {VERSION}"),
            "INFO     : Stage: fetch-offline".into()
        ]
    );
    assert_eq!(
        l[l.len() - 2..],
        [
            "INFO     : fetch-offline: fetch-offline passed",
            "INFO     : Ignition finished successfully"
        ]
    );
    // The user config alone, as Go writes it, no newline; no base config in it.
    let cache = dir.join("run/ignition.json");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), CACHED);
    assert_eq!(mode(&cache), 0o640);
    assert!(!dir.join("run/ignition/neednet").exists());
    let state = dir.join("run/ignition/state");
    let referenced = r#"{"kind":"user","source":"","referenced":true}"#;
    let user = r#"{"kind":"user","source":"file","referenced":false}"#;
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        state_text(&[BASE, user, referenced])
    );
    assert_eq!(
        (mode(&state), mode(&dir.join("run/ignition"))),
        (0o600, 0o700)
    );

    // The files stage reads the cache (the source may be gone) and the base configs again.
    std::fs::remove_file(dir.join("config.ign")).unwrap();
    let o = stage(&dir, &ign, "files", &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let l = lines(&o);
    assert!(
        l.contains(&"INFO     : files: create file /etc/foo (5 bytes, 0644, 0:0)".into()),
        "{}",
        text(&o)
    );
    assert_eq!(
        l.last().unwrap(),
        "INFO     : Ignition finished successfully"
    );
    let read = |p: &str| std::fs::read_to_string(dir.join("root").join(p)).unwrap();
    assert_eq!(
        (
            read("etc/foo").as_str(),
            read("etc/base").as_str(),
            read("etc/m").as_str()
        ),
        ("hello", "b", "")
    );
    let record: serde_json::Value =
        serde_json::from_str(&read("etc/.ignition-result.json")).unwrap();
    assert_eq!(record["userConfigProvided"], true);
    assert_eq!(mode(&dir.join("root/etc/.ignition-result.json")), 0o600);
    // Each stage run adds the base config it read, as upstream's do.
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        state_text(&[BASE, user, referenced, BASE])
    );
    assert_eq!(
        std::fs::read_to_string(&cache).unwrap(),
        CACHED,
        "the cache is only read"
    );
}

#[test]
fn neednet_and_the_fetch_stage() {
    let s = Server::start(None);
    s.route("/data", ok("from the network\n"));
    let with_net_file = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{{"path":"/etc/net","contents":{{"source":"{}"}}}}]}}}}"#,
        s.url("/data")
    );
    s.route("/c.ign", ok(with_net_file.clone()));
    let dir = TempDir::new("ignition-neednet");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let neednet = dir.join("run/ignition/neednet");
    let cache = dir.join("run/ignition.json");
    // The config's URL on the kernel command line: fetch-offline asks for the network and
    // caches nothing, so that the fetch stage runs (its unit's conditions).
    std::fs::write(
        dir.join("cmdline"),
        format!("quiet ignition.config.url={}\n", s.url("/c.ign")),
    )
    .unwrap();
    let metal = ["--platform", "metal"];
    let o = stage(&dir, &ign, "fetch-offline", &metal, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(&neednet).unwrap(), b"");
    assert_eq!(mode(&neednet), 0o644);
    assert!(!cache.exists(), "{}", text(&o));
    assert!(
        lines(&o).iter().any(|l| l.contains("needs the network")),
        "{}",
        text(&o)
    );
    let state = dir.join("run/ignition/state");
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        state_text(&[BASE])
    );
    let o = stage(&dir, &ign, "fetch", &metal, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cached: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    assert_eq!(
        cached["storage"]["files"][0]["contents"]["source"],
        s.url("/data")
    );
    let user = r#"{"kind":"user","source":"cmdline","referenced":false}"#;
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        state_text(&[BASE, BASE, user])
    );
    let o = stage(&dir, &ign, "files", &metal, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/net")).unwrap(),
        "from the network\n"
    );

    // A local config whose file needs the network: cached, and the network asked for (the
    // later stages fetch the file), as upstream does.
    std::fs::remove_dir_all(dir.join("run")).unwrap();
    std::fs::write(dir.join("cmdline"), "").unwrap();
    std::fs::write(dir.join("config.ign"), &with_net_file).unwrap();
    let o = stage(&dir, &ign, "fetch-offline", &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(neednet.exists() && cache.exists(), "{}", text(&o));
}

#[test]
fn failures_exit_and_log_as_upstream() {
    let dir = TempDir::new("ignition-failures");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("run/ignition")).unwrap();
    let state = dir.join("run/ignition/state");
    // An unreadable state file: 3.
    std::fs::write(&state, "garbage").unwrap();
    let o = stage(&dir, &ign, "files", &[], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(
        lines(&o).last().unwrap(),
        "CRITICAL : reading state: parsing state file: invalid character 'g' looking for beginning of value"
    );
    std::fs::remove_file(&state).unwrap();
    // No cache for a later stage: 1, and no state written.
    let o = stage(&dir, &ign, "files", &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let cache = dir.join("run/ignition.json");
    let want = format!(
        "CRITICAL : Ignition failed: files stage failed: failed to acquire config: open {}: no such file or directory",
        cache.display()
    );
    assert_eq!(lines(&o).last().unwrap(), &want);
    assert!(!state.exists());
    // A stage failure names the stage, the entry and the cause.
    std::fs::write(
        dir.join("config.ign"),
        r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"rel"}]}}"#,
    )
    .unwrap();
    let o = stage(&dir, &ign, "fetch-offline", &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let last = lines(&o).last().unwrap().clone();
    assert!(
        last.starts_with(
            "CRITICAL : Ignition failed: fetch-offline stage failed at $.storage.files.0.path: "
        ),
        "{last}"
    );
    assert!(!state.exists() && !cache.exists());
    // A platform of upstream's flint does not have: 3, as a fetcher upstream cannot make.
    let o = stage(&dir, &ign, "fetch", &["--platform=zvm"], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(
        lines(&o).last().unwrap(),
        "CRITICAL : failed to generate fetcher: platform zvm is not supported by flint"
    );
}

#[test]
fn logs_go_to_syslog_as_upstreams_do() {
    let dir = TempDir::new("ignition-syslog");
    let ign = setup(&dir).join("ignition");
    let sock = dir.join("log");
    let listener = std::os::unix::net::UnixDatagram::bind(&sock).unwrap();
    listener
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let socket = sock.to_str().unwrap();
    let o = run(
        &dir,
        &ign,
        &["--platform=zvm", "--stage=files"],
        &[("FLINT_SYSLOG_SOCKET", socket)],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    for _ in 0..3 {
        let n = listener.recv(&mut buf).unwrap();
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    // `<PRI>Mmm dd hh:mm:ss ignition[PID]: message`, the priority being the severity.
    let pid_part = |m: &str| {
        m.split_once("ignition[")
            .map(|(a, b)| (a.to_string(), b.to_string()))
    };
    for (m, (pri, msg)) in got.iter().zip([
        ("<6>", VERSION.to_string()),
        ("<6>", "Stage: files".into()),
        (
            "<2>",
            "failed to generate fetcher: platform zvm is not supported by flint".into(),
        ),
    ]) {
        let (head, tail) = pid_part(m).unwrap_or_else(|| panic!("{m:?}"));
        assert!(
            head.starts_with(pri) && head.len() == pri.len() + 16,
            "{m:?}"
        );
        let b = head.as_bytes();
        assert!(
            b[pri.len() + 3] == b' ' && b[pri.len() + 9] == b':' && b[pri.len() + 12] == b':',
            "{m:?}"
        );
        assert!(tail.ends_with(&format!("]: {msg}\n")), "{m:?}");
    }
    // No system log: standard output, said first in upstream's words.
    let o = run(&dir, &ign, &["--platform=zvm", "--stage=files"], &[]);
    assert_eq!(
        lines(&o)[0],
        "ERROR    : unable to open syslog: Unix syslog delivery error",
        "{}",
        text(&o)
    );
}

fn apply_usage(prog: &str) -> String {
    format!(
        "Usage: {prog} [options] config.ign
Options:
      --ignore-unsupported   ignore unsupported config sections
      --offline              error out if config references remote resources
      --root string          root of the filesystem (default \"/\")
      --version              print the version of ignition-apply
"
    )
}

#[test]
fn ignition_apply_as_upstream() {
    let dir = TempDir::new("ignition-apply");
    let apply = setup(&dir).join("ignition-apply");
    let prog = apply.to_str().unwrap();
    let container = [("container", "flint-test")];
    // (arguments, exit code, stderr after the usage)
    for (args, code, after) in [
        (&["-h"][..], 0, ""),
        (&[], 1, ""),
        (&["a", "b"], 1, ""),
        (&["--bogus"], 2, "unknown flag: --bogus\n"),
        (
            &["-version"],
            2,
            "unknown shorthand flag: 'v' in -version\n",
        ),
        (&["--root"], 2, "flag needs an argument: --root\n"),
        (
            &["--offline=yes", "c.ign"],
            2,
            "invalid argument \"yes\" for \"--offline\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax\n",
        ),
    ] {
        let o = run(&dir, &apply, args, &container);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            apply_usage(prog) + after,
            "{args:?}"
        );
    }
    let o = run(&dir, &apply, &["--version"], &container);
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{VERSION}\n"));
    // Flags after the config too; the files written, no record of a first boot.
    std::fs::write(dir.join("c.ign"), CONFIG).unwrap();
    let o = run(&dir, &apply, &["c.ign", "--root", "root"], &container);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lines(&o)[0], format!("INFO     : {VERSION}"));
    assert_eq!(
        std::fs::read_to_string(dir.join("root/etc/foo")).unwrap(),
        "hello"
    );
    assert!(dir.join("root/etc/m").exists());
    assert!(!dir.join("root/etc/.ignition-result.json").exists());
    assert!(!dir.join("root/etc/.flint-files-in-progress").exists());
    // What cannot change live is refused, or left out on request.
    let live = r#"{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"a"}]},"kernelArguments":{"shouldExist":["x"]},"storage":{"filesystems":[{"device":"/dev/x","format":"ext4","path":"/var"}],"files":[{"path":"/etc/live"}]}}"#;
    std::fs::write(dir.join("live.ign"), live).unwrap();
    let o = run(&dir, &apply, &["--root=root2", "live.ign"], &container);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        lines(&o).last().unwrap(),
        "CRITICAL : failed to apply: running stage 'kargs': cannot apply kargs modifications live"
    );
    let o = run(
        &dir,
        &apply,
        &["--root=root2", "--ignore-unsupported", "live.ign"],
        &container,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(dir.join("root2/etc/live").exists());
    // --offline: a file that needs the network is refused; a bad config is named.
    let http = r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/h","contents":{"source":"http://127.0.0.1:9/h"}}]}}"#;
    std::fs::write(dir.join("http.ign"), http).unwrap();
    let o = run(
        &dir,
        &apply,
        &["--offline", "--root=root3", "http.ign"],
        &container,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let last = lines(&o).last().unwrap().clone();
    assert!(
        last.starts_with("CRITICAL : failed to apply: ")
            && last.contains("resource requires networking"),
        "{last}"
    );
    let o = run(&dir, &apply, &["missing.ign"], &container);
    assert_eq!(
        lines(&o).last().unwrap(),
        "CRITICAL : couldn't read config: open missing.ign: no such file or directory"
    );
    std::fs::write(dir.join("empty.ign"), "").unwrap();
    let o = run(&dir, &apply, &["-"], &container);
    assert_eq!(
        (o.status.code(), lines(&o).last().unwrap().as_str()),
        (
            Some(1),
            "CRITICAL : couldn't parse config: not a config (empty)"
        )
    );
}

#[test]
fn ignition_rmcfg_as_upstream() {
    let dir = TempDir::new("ignition-rmcfg");
    let rmcfg = setup(&dir).join("ignition-rmcfg");
    let prog = rmcfg.to_str().unwrap();
    let usage = format!(
        "Usage: {prog} [options]
Options:
      --log-to-stdout     log to stdout instead of the system log
      --platform string   current platform. [akamai aliyun applehv aws azure azurestack brightbox cloudstack digitalocean exoscale file gcp hetzner hyperv ibmcloud kubevirt metal nutanix nvidiabluefield openstack oraclecloud packet powervs proxmoxve qemu scaleway upcloud virtualbox vmware vultr zvm]
      --version           print the version and exit
"
    );
    for (args, code, err) in [
        (&["--help"][..], 0, usage.clone()),
        (&["x"], 2, usage.clone()),
        (&["--bogus"], 2, usage.clone() + "unknown flag: --bogus\n"),
        (&[], 2, "'--platform' must be provided\n".into()),
    ] {
        let o = run(&dir, &rmcfg, args, &[]);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stderr), err, "{args:?}");
    }
    let o = run(&dir, &rmcfg, &["--platform=file", "--log-to-stdout"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        lines(&o),
        [
            format!("INFO     : {VERSION}"),
            "CRITICAL : couldn't delete config: cannot delete config on this platform".into()
        ]
    );
    let o = run(&dir, &rmcfg, &["--platform=nope", "--log-to-stdout"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid platform name \"nope\" provided"));
}

/// The same sequence through the reference and flint: the same cache, state and files.
#[test]
fn cache_and_state_match_the_reference() {
    let dir = TempDir::new("ignition-reference");
    let ign = setup(&dir).join("ignition");
    let Some(r) = reference(&dir, "ignition") else {
        return;
    };
    std::fs::create_dir_all(dir.join("sys/usr-lib/base.d")).unwrap();
    std::fs::write(dir.join("sys/usr-lib/base.d/b.ign"), r#"{"ignition":{"version":"3.4.0"},"storage":{"directories":[{"path":"/var/b","mode":448}]}}"#).unwrap();
    let configs = [
        CONFIG.to_string(),
        String::new(),
        r#"{"ignition":{"version":"3.4.0"},"storage":{"links":[{"path":"/etc/l","target":"/x"}],"directories":[{"path":"/d","user":{"id":7}}]},"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Unit]\n"}]}}"#.into(),
        r#"{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/two","mode":511,"contents":{"source":"data:,2"}}]}}"#.into(),
    ];
    for config in configs {
        let mut got = Vec::new();
        for prog in [&ign, &r] {
            let _ = std::fs::remove_dir_all(dir.join("run"));
            let _ = std::fs::remove_dir_all(dir.join("root"));
            std::fs::create_dir_all(dir.join("run")).unwrap();
            std::fs::create_dir_all(dir.join("root")).unwrap();
            std::fs::write(dir.join("config.ign"), &config).unwrap();
            let mut outcome = Vec::new();
            for st in ["fetch-offline", "files"] {
                let o = stage(&dir, prog, st, &[], &[]);
                assert_eq!(o.status.code(), Some(0), "{config}: {}", text(&o));
                let cache = std::fs::read_to_string(dir.join("run/ignition.json")).unwrap();
                let state = std::fs::read_to_string(dir.join("run/ignition/state")).unwrap();
                outcome.push((cache, state));
            }
            let record =
                std::fs::read_to_string(dir.join("root/etc/.ignition-result.json")).unwrap();
            let record: serde_json::Value = serde_json::from_str(&record).unwrap();
            got.push((outcome, record["userConfigProvided"].clone()));
        }
        assert_eq!(got[0], got[1], "{config}");
    }
}

/// The storage stages as separate runs on a real disk: the mount stage's new mount points
/// go through the state file to the files stage, and umount takes the filesystem down.
#[test]
fn storage_stages_carry_their_state_between_runs() {
    use crate::support::devices::{Loop, Mounted, mounts_of};
    let dir = TempDir::new("ignition-storage");
    let ign = setup(&dir).join("ignition");
    let disk = Loop::new(&dir, "disk", 64);
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"filesystems":[{{"device":"{}","format":"ext4","path":"/srv/data","wipeFilesystem":true}}],"files":[{{"path":"/srv/data/hello","contents":{{"source":"data:,on%20disk"}}}}]}}}}"#,
        disk.path()
    );
    std::fs::write(dir.join("config.ign"), config).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let env = [("FLINT_DEVICE_TIMEOUT", "5")];
    for st in ["fetch-offline", "disks", "mount"] {
        let o = stage(&dir, &ign, st, &[], &env);
        assert_eq!(o.status.code(), Some(0), "{st}: {}", text(&o));
    }
    let state = std::fs::read_to_string(dir.join("run/ignition/state")).unwrap();
    assert!(
        state.contains(r#""notatedDirectories":["/srv","/srv/data"]"#),
        "{state}"
    );
    let files = stage(&dir, &ign, "files", &[], &env);
    let umount = stage(&dir, &ign, "umount", &[], &env);
    assert_eq!(files.status.code(), Some(0), "{}", text(&files));
    assert_eq!(umount.status.code(), Some(0), "{}", text(&umount));
    assert_eq!(mounts_of(disk.path()), Vec::<String>::new());
    assert!(!dir.join("root/srv/data/hello").exists());
    let m = Mounted::new(disk.path(), &dir.join("check"), "ro");
    assert_eq!(
        std::fs::read_to_string(m.0.join("hello")).unwrap(),
        "on disk"
    );
}

/// A stand-in for the distribution's `ignition-kargs-helper` in `dir/helper`: records its
/// arguments (one a line) and `OEM_ID` in `dir/kargs-called`, prints, and exits with
/// `$HELPER_EXIT`.
fn kargs_helper(dir: &Path) -> String {
    let bin = dir.join("helper");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("ignition-kargs-helper");
    let called = dir.join("kargs-called");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" \"OEM_ID=$OEM_ID\" > '{}'\necho out; echo err >&2\nexit \"${{HELPER_EXIT:-0}}\"\n",
            called.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn kargs_through_the_distributions_helper() {
    let dir = TempDir::new("ignition-kargs");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let path = kargs_helper(&dir);
    let called = dir.join("kargs-called");
    let with_config = |prog: &Path, config: &str, exit: &str| {
        // A fresh run directory (upstream does not make the cache's directory).
        let _ = std::fs::remove_dir_all(dir.join("run"));
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let _ = std::fs::remove_file(&called);
        std::fs::write(dir.join("config.ign"), config).unwrap();
        let env = [
            ("PATH", path.as_str()),
            ("OEM_ID", "qemu"),
            ("HELPER_EXIT", exit),
        ];
        let o = stage(&dir, prog, "fetch-offline", &[], &env);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        stage(&dir, prog, "kargs", &[], &env)
    };
    let kargs = r#"{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldNotExist":["quiet"],"shouldExist":["a=1","b c"]}}"#;
    let none = r#"{"ignition":{"version":"3.4.0"}}"#;
    let want = "--should-exist\na=1\n--should-exist\nb c\n--should-not-exist\nquiet\nOEM_ID=qemu\n";
    let mut progs = vec![ign.clone()];
    progs.extend(reference(&dir, "ignition"));
    for prog in &progs {
        let who = prog.display();
        // No kernel arguments: the helper is not run.
        let o = with_config(prog, none, "0");
        assert_eq!(o.status.code(), Some(0), "{who}: {}", text(&o));
        assert!(!called.exists(), "{who}");
        // Arguments in the config's order, exist first, the environment passed through.
        let o = with_config(prog, kargs, "0");
        assert_eq!(o.status.code(), Some(0), "{who}: {}", text(&o));
        assert_eq!(std::fs::read_to_string(&called).unwrap(), want, "{who}");
        // The helper failing fails the stage (the unit's OnFailure then stops the boot).
        let o = with_config(prog, kargs, "3");
        assert_eq!(o.status.code(), Some(1), "{who}: {}", text(&o));
        let last = lines(&o).last().unwrap().clone();
        assert!(
            last.contains("failed adding kernel arguments: exit status 3")
                && last.contains(r#"Stdout: "out\n" Stderr: "err\n""#),
            "{who}: {last}"
        );
    }
    // flint says which entry of the config failed.
    let o = with_config(&ign, kargs, "3");
    let last = lines(&o).last().unwrap().clone();
    assert!(
        last.starts_with("CRITICAL : Ignition failed: kargs stage failed at $.kernelArguments: failed adding kernel arguments: exit status 3: Cmd: \"ignition-kargs-helper\" \"--should-exist\" \"a=1\""),
        "{last}"
    );
}

/// Every datagram waiting on `sock`, each as its sorted `KEY=value` lines.
fn journal_entries(sock: &std::os::unix::net::UnixDatagram) -> Vec<Vec<String>> {
    sock.set_nonblocking(true).unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65536];
    while let Ok(n) = sock.recv(&mut buf) {
        let mut fields: Vec<String> = String::from_utf8_lossy(&buf[..n])
            .lines()
            .map(String::from)
            .collect();
        fields.sort();
        out.push(fields);
    }
    out
}

#[test]
fn journal_entries_distributions_look_up() {
    let dir = TempDir::new("ignition-journal");
    let ign = setup(&dir).join("ignition");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::create_dir_all(root.join("root")).unwrap();
    for (f, line) in [
        ("passwd", "root:x:0:0:root:/root:/bin/sh\n"),
        ("group", "root:x:0:\n"),
        ("shadow", "root:*:19000:0:99999:7:::\n"),
    ] {
        std::fs::write(root.join("etc").join(f), line).unwrap();
    }
    let config = r#"{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%7D"}]}},"passwd":{"users":[{"name":"root","sshAuthorizedKeys":["ssh-ed25519 AAAA k"]}]}}"#;
    std::fs::write(dir.join("config.ign"), config).unwrap();
    let sock_path = dir.join("journal.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
    let env = [("FLINT_JOURNAL_SOCKET", sock_path.to_str().unwrap())];
    for s in ["fetch-offline", "files"] {
        let o = stage(&dir, &ign, s, &[], &env);
        assert_eq!(o.status.code(), Some(0), "{s}: {}", text(&o));
    }
    let fetched = |kind: &str, src: &str, referenced: bool| {
        let r = if referenced { "referenced " } else { "" };
        let mut v = vec![
            format!("IGNITION_CONFIG_REFERENCED={referenced}"),
            format!("IGNITION_CONFIG_SRC={src}"),
            format!("IGNITION_CONFIG_TYPE={kind}"),
            format!("MESSAGE=fetched {r}{kind} config from \"{src}\""),
            "MESSAGE_ID=57124006b5c94805b77ce473e92a8aeb".into(),
            "PRIORITY=6".into(),
        ];
        v.sort();
        v
    };
    let keys = root.join("root/.ssh/authorized_keys.d/ignition");
    let mut wrote = vec![
        format!("IGNITION_PATH={}", keys.display()),
        "IGNITION_USER_NAME=root".into(),
        "MESSAGE=wrote ssh authorized keys file for user: root".into(),
        "MESSAGE_ID=225067b87bbd4a0cb6ab151f82fa364b".into(),
        "PRIORITY=6".into(),
    ];
    wrote.sort();
    assert_eq!(
        journal_entries(&sock),
        [
            // Upstream lists the (empty) system base config too.
            fetched("base", "system", false),
            fetched("user", "file", false),
            fetched("user", "", true),
            wrote
        ]
    );
    // Without a journal listening, nothing is sent and nothing fails.
    drop(sock);
    std::fs::remove_file(&sock_path).unwrap();
    let o = stage(&dir, &ign, "fetch-offline", &[], &env);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn kernel_command_line_from_upstreams_hook() {
    let dir = TempDir::new("ignition-cmdline");
    let ign = setup(&dir).join("ignition");
    std::fs::create_dir_all(dir.join("run")).unwrap();
    let cmdline = dir.join("other-cmdline");
    std::fs::write(
        &cmdline,
        "quiet ignition.config.url=data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%7D\n",
    )
    .unwrap();
    let env = [
        ("FLINT_CMDLINE", ""),
        ("IGNITION_KERNEL_CMDLINE_PATH", cmdline.to_str().unwrap()),
    ];
    let o = stage(&dir, &ign, "fetch-offline", &[], &env);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let state = std::fs::read_to_string(dir.join("run/ignition/state")).unwrap();
    assert!(
        state.contains(r#"{"kind":"user","source":"cmdline","referenced":false}"#),
        "{state}"
    );
}
