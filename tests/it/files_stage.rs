//! The files stage on real directory trees as root: the upstream corpus, idempotent re-runs,
//! and `plan` never writing.
use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn files_corpus_passes() {
    let script = common::corpus("files").join("check.sh");
    let cmd = format!(
        "{} apply --root {{root}} {{config}}",
        common::flint().display()
    );
    common::run_check_script(&script, &cmd);
}

/// The project's own cases in the corpus's format (conformance/files-regressions: each a
/// divergence from upstream found by the differential harness, recorded with the reference).
#[test]
fn files_regressions_pass() {
    let script = common::corpus("files").join("check.sh");
    let cmd = format!(
        "{} apply --root {{root}} {{config}}",
        common::flint().display()
    );
    common::run_check_script_on(&script, &cmd, &common::corpus("files-regressions"));
}

/// `plan` fails where `apply` would, for every regression case upstream fails on (the preset
/// file appended through a link that a storage entry of the same config makes included: the
/// plan follows the links it would make). The shadow tools' refusals are found by rehearsing
/// them (usermod moving a home onto a missing parent), the kernel's refusal of a keys file by
/// asking it as the user (a `.ssh` owned by root).
#[test]
fn plan_fails_where_apply_would() {
    let (checked, served) = plan_each(true);
    assert_eq!(checked + served, regression_cases(true), "cases planned");
}

/// `plan` succeeds where `apply` does: it foresees no failure the run does not have (a home
/// that an earlier user's `--move-home` takes away, then made anew for a new user, once
/// looked like a root-only `.ssh` to it).
#[test]
fn plan_succeeds_where_apply_does() {
    let (checked, served) = plan_each(false);
    assert_eq!(checked + served, regression_cases(false), "cases planned");
}

/// How many regression cases fail upstream (`fails`) or succeed there.
fn regression_cases(fails: bool) -> usize {
    let dir = common::corpus("files-regressions");
    (common::corpus_cases(&dir).iter())
        .filter(|n| dir.join(n).join("expected.fail").exists() == fails)
        .count()
}

/// Plans every regression case that fails upstream (`fails`) or succeeds there on a fresh
/// root, checks the plan's verdict and that it changed nothing;
/// returns how many were planned, and how many were left to the corpus runs (they fetch
/// over HTTP from the runner's server).
fn plan_each(fails: bool) -> (usize, usize) {
    let (mut checked, mut served) = (0, 0);
    let dir = common::corpus("files-regressions");
    for name in common::corpus_cases(&dir) {
        let case = dir.join(&name);
        if case.join("expected.fail").exists() != fails {
            continue;
        }
        // (Cases that fetch over HTTP are planned in the corpus runs, which serve them.)
        let config = std::fs::read(case.join("config.ign"))
            .unwrap_or_else(|e| panic!("{name}: config.ign: {e}"));
        if String::from_utf8_lossy(&config).contains("127.0.0.1:18931") {
            served += 1;
            continue;
        }
        let root = common::TempDir::new(&format!("plan-fail-{name}"));
        assert!(
            Command::new("sh")
                .arg(case.join("setup.sh"))
                .current_dir(&*root)
                .status()
                .unwrap()
                .success()
        );
        let before = manifest(&root);
        let cfg = case.join("config.ign");
        let out = flint_in(
            &root,
            &[],
            &[
                "plan",
                "--root",
                root.to_str().unwrap(),
                cfg.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if fails {
            assert_eq!(out.status.code(), Some(1), "{name}: plan did not fail");
            assert!(
                stderr.contains("error: files stage failed"),
                "{name}: {stderr}"
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}: plan failed: {stderr}");
        }
        assert_eq!(manifest(&root), before, "{name}: plan changed the tree");
        checked += 1;
    }
    (checked, served)
}

/// Spec 1 and 2.x configs: the fetch and files stages leave the tree Flatcar's Ignition
/// leaves (`conformance/files-legacy/`, made with run-ignition.sh).
#[test]
fn legacy_files_corpus_passes() {
    let script = common::corpus("files").join("check.sh");
    let cmd = format!(
        "{} apply --stage files --root {{root}} {{config}}",
        common::flint().display()
    );
    common::run_check_script_on(&script, &cmd, &common::corpus("files-legacy"));
}

fn manifest(root: &Path) -> String {
    let out = Command::new("python3")
        .arg(common::corpus("files").join("manifest.py"))
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    // A case's file names need not be UTF-8: compared as they are listed.
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Environment variables a case sets (its `env` file).
type Env = Vec<(String, String)>;

/// Every case of both corpora that succeeds and needs no HTTP server, with a fresh root
/// (removed when dropped).
fn local_tree_cases() -> Vec<(std::path::PathBuf, common::TempDir, Env)> {
    let mut out = Vec::new();
    let cases = common::case_dirs(&common::corpus("files"))
        .into_iter()
        .chain(common::case_dirs(&common::corpus("files-regressions")));
    for case in cases {
        let config = case.join("config.ign");
        if !config.exists() || case.join("expected.fail").exists() {
            continue;
        }
        // Read as bytes: a case's config may hold strings that are not UTF-8.
        if String::from_utf8_lossy(&std::fs::read(&config).unwrap()).contains("127.0.0.1:18931") {
            continue;
        }
        let dir = common::TempDir::new(&format!(
            "files-{}",
            case.file_name().unwrap().to_string_lossy()
        ));
        let ok = Command::new("sh")
            .arg(case.join("setup.sh"))
            .current_dir(&*dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "setup of {}", case.display());
        let env = std::fs::read_to_string(case.join("env"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        out.push((config, dir, env));
    }
    out
}

/// Runs flint with a case's environment.
fn flint_in(root: &Path, env: &[(String, String)], args: &[&str]) -> std::process::Output {
    Command::new(common::flint())
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .output()
        .unwrap()
}

#[test]
fn plan_changes_nothing_and_a_second_apply_finds_nothing_to_do() {
    let cases = local_tree_cases();
    assert!(!cases.is_empty(), "no local cases");
    for (config, root, env) in cases {
        let root_s = root.to_string_lossy().into_owned();
        let cfg = config.to_string_lossy().into_owned();
        let before = manifest(&root);
        let plan = flint_in(&root, &env, &["plan", "--root", &root_s, &cfg]);
        assert_eq!(plan.status.code(), Some(0), "{cfg}");
        assert_eq!(manifest(&root), before, "plan changed the tree for {cfg}");

        let first = flint_in(&root, &env, &["apply", "--root", &root_s, &cfg]);
        assert_eq!(
            first.status.code(),
            Some(0),
            "{cfg}: {}",
            String::from_utf8_lossy(&first.stderr)
        );
        // A case whose entries are displaced by later ones (made through a link that a
        // later entry replaces, as upstream makes them) converges on the second run. One
        // whose storage entry the units step undoes (a /dev/null link an unmask removes, a
        // preset file with overwrite that the preset lines are appended to) is made and
        // undone again on every run, as upstream: each later run succeeds and changes it.
        let every_run = config.with_file_name("changes-on-every-run").exists();
        if config.with_file_name("converges-on-second-run").exists() || every_run {
            for _ in 0..if every_run { 2 } else { 1 } {
                let again = flint_in(&root, &env, &["apply", "--root", &root_s, &cfg]);
                assert_eq!(again.status.code(), Some(0), "{cfg}");
                assert_ne!(
                    String::from_utf8_lossy(&again.stdout),
                    "apply: nothing to change\n",
                    "{cfg} needs no second run: remove its marker"
                );
            }
            if every_run {
                continue;
            }
        }
        // A case that takes away what an earlier entry needs (SSH keys in a directory a
        // later file replaces) cannot be applied again, here as upstream.
        if config.with_file_name("second-run-fails").exists() {
            let after = manifest(&root);
            let second = flint_in(&root, &env, &["apply", "--root", &root_s, &cfg]);
            assert_ne!(
                second.status.code(),
                Some(0),
                "{cfg}: a second run succeeded"
            );
            assert_eq!(
                manifest(&root),
                after,
                "the failed second apply changed {cfg}"
            );
            continue;
        }
        let after = manifest(&root);
        let second = flint_in(&root, &env, &["apply", "--root", &root_s, &cfg]);
        assert_eq!(second.status.code(), Some(0), "{cfg}");
        assert_eq!(
            String::from_utf8_lossy(&second.stdout),
            "apply: nothing to change\n",
            "{cfg}"
        );
        assert_eq!(manifest(&root), after, "the second apply changed {cfg}");
        let again = flint_in(&root, &env, &["plan", "--root", &root_s, &cfg]);
        assert!(
            again.stdout.is_empty(),
            "{cfg}: {}",
            String::from_utf8_lossy(&again.stdout)
        );
    }
}

#[test]
fn plan_lists_actions_in_human_and_json_form() {
    let dir = common::TempDir::new("plan-out");
    std::fs::create_dir_all(dir.join("root/etc")).unwrap();
    std::fs::write(
        dir.join("root/etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\n",
    )
    .unwrap();
    std::fs::write(dir.join("root/etc/group"), "root:x:0:\n").unwrap();
    std::fs::write(
        dir.join("c.bu"),
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /etc/hostname\n      mode: 0644\n      contents:\n        inline: web01\nsystemd:\n  units:\n    - name: docker.service\n      enabled: true\n",
    )
    .unwrap();
    let out = common::run_in(&dir, &common::flint(), &["plan", "--root", "root", "c.bu"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "would create file /etc/hostname (5 bytes, 0644, root:root)\n\
         would create directory /etc/systemd (0755, root:root)\n\
         would create directory /etc/systemd/system-preset (0755, root:root)\n\
         would create file /etc/systemd/system-preset/20-ignition.preset (22 bytes, 0644, root:root)\n"
    );
    let out = common::run_in(
        &dir,
        &common::flint(),
        &["plan", "--format", "json", "--root", "root", "c.bu"],
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["stage"], "files");
    assert_eq!(lines[0]["action"], "write-file");
    assert_eq!(lines[0]["path"], "/etc/hostname");
    assert!(out.stderr.is_empty(), "JSON output prints nothing else");
}

/// `--root` relative to the working directory: the shadow tools get it absolute.
#[test]
fn a_relative_root_works_with_users() {
    let dir = common::TempDir::new("relative-root");
    std::fs::create_dir_all(dir.join("root/etc")).unwrap();
    std::fs::write(
        dir.join("root/etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\n",
    )
    .unwrap();
    std::fs::write(dir.join("root/etc/group"), "root:x:0:\nusers:x:100:\n").unwrap();
    std::fs::write(dir.join("root/etc/shadow"), "root:*:19000:0:99999:7:::\n").unwrap();
    std::fs::write(dir.join("root/etc/gshadow"), "root:*::\nusers:*::\n").unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"passwd":{"users":[{"name":"core","passwordHash":""}]}}"#,
    )
    .unwrap();
    let out = common::run_in(
        &dir,
        &common::flint(),
        &["apply", "--root", "root", "c.ign"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passwd = std::fs::read_to_string(dir.join("root/etc/passwd")).unwrap();
    assert!(passwd.contains("\ncore:x:"), "{passwd}");
    let shadow = std::fs::read_to_string(dir.join("root/etc/shadow")).unwrap();
    assert!(
        shadow.contains("\ncore:*:"),
        "an empty hash is `*`: {shadow}"
    );
}

#[test]
fn kernel_arguments_edit_the_oem_grub_cfg_once() {
    let dir = common::TempDir::new("kargs");
    std::fs::create_dir_all(dir.join("root/etc")).unwrap();
    std::fs::write(
        dir.join("grub.cfg"),
        "set oem_id=\"qemu\"\nset linux_append=\"quiet splash\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"kernelArguments":{"shouldExist":["console=ttyS0"],"shouldNotExist":["splash"]}}"#,
    )
    .unwrap();
    let args = [
        "apply",
        "--root",
        "root",
        "--kargs-file",
        "grub.cfg",
        "c.ign",
    ];
    let out = common::run_in(&dir, &common::flint(), &args);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("takes effect after a reboot"));
    assert_eq!(
        std::fs::read_to_string(dir.join("grub.cfg")).unwrap(),
        "set oem_id=\"qemu\"\n\nset linux_append=\"$linux_append quiet console=ttyS0\"\n"
    );
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("root/etc/.ignition-result.json")).unwrap())
            .unwrap();
    assert_eq!(record["userConfigProvided"], true);
    assert!(record["provisioningDate"].as_str().unwrap().ends_with('Z'));
    let again = common::run_in(&dir, &common::flint(), &args);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "apply: nothing to change\n"
    );
}

/// A preset file that is a link out of the root (absolute, or with `..` climbing out): upstream
/// appends the preset lines where the link leads on the machine it runs on, which shows
/// nowhere in the root; flint writes nothing there and nothing anywhere else, and succeeds
/// as upstream does. (A link inside the root, and one into a missing directory, are in
/// conformance/files-regressions, recorded with the reference.)
#[test]
fn the_preset_file_through_a_link_out_of_the_root_is_not_written() {
    let dir = common::TempDir::new("preset-link");
    let outside = dir.join("outside.preset");
    std::fs::write(&outside, "host\n").unwrap();
    let preset_dir = dir.join("root/etc/systemd/system-preset");
    let climbing = format!("{}{}", "../".repeat(40), outside.to_string_lossy());
    for link in [outside.to_string_lossy().into_owned(), climbing] {
        let _ = std::fs::remove_dir_all(dir.join("root"));
        std::fs::create_dir_all(&preset_dir).unwrap();
        std::fs::write(dir.join("root/etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
        std::fs::write(dir.join("root/etc/group"), "root:x:0:\n").unwrap();
        std::os::unix::fs::symlink(&link, preset_dir.join("20-ignition.preset")).unwrap();
        std::fs::write(
            dir.join("c.ign"),
            r#"{"ignition":{"version":"3.3.0"},"systemd":{"units":[{"name":"b.service","enabled":true}]}}"#,
        )
        .unwrap();
        let before = manifest(&dir.join("root"));
        let out = common::run_in(
            &dir,
            &common::flint(),
            &["apply", "--root", "root", "c.ign"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "host\n",
            "{link}"
        );
        assert_eq!(manifest(&dir.join("root")), before, "{link}");
    }
}

/// flint's own files in /etc (the run record, the in-progress mark) follow /etc as the root
/// sees it, never out of the root: with /etc an absolute link, the record lands where that
/// link leads inside the root (where upstream writes it); a link standing at the mark's name
/// is neither followed nor removed.
#[test]
fn the_run_record_and_mark_stay_in_the_root() {
    let dir = common::TempDir::new("record-link");
    let outside = dir.join("outside/etc");
    std::fs::create_dir_all(&outside).unwrap();
    let root = dir.join("root");
    let inner_etc = root.join(outside.strip_prefix("/").unwrap());
    std::fs::create_dir_all(&inner_etc).unwrap();
    std::fs::write(inner_etc.join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    std::fs::write(inner_etc.join("group"), "root:x:0:\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("etc")).unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/srv/x","contents":{"source":"data:,new"}}]}}"#,
    )
    .unwrap();
    let apply = || {
        common::run_in(
            &dir,
            &common::flint(),
            &["apply", "--root", "root", "c.ign"],
        )
    };
    let out = apply();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written out of the root"
    );
    assert!(inner_etc.join(".ignition-result.json").is_file());
    assert!(!inner_etc.join(".flint-files-in-progress").exists());

    // A dangling link at the mark's name: nothing made where it points, the link kept.
    std::fs::remove_file(inner_etc.join(".ignition-result.json")).unwrap();
    std::fs::remove_file(root.join("srv/x")).unwrap();
    let mark = inner_etc.join(".flint-files-in-progress");
    let target = dir.join("outside/made-by-mark");
    std::os::unix::fs::symlink(&target, &mark).unwrap();
    let out = apply();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists(), "the mark followed its link");
    assert!(
        std::fs::symlink_metadata(&mark)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// SSH keys and the account databases never lead out of the root. A keys file that is a
/// link out of the root (absolute, or climbing with `..`): upstream writes the keys where it
/// leads on the machine it runs on, as the user (wherever that user may write), which shows
/// nowhere in the root; flint writes nothing and succeeds. An `/etc/passwd` that is a link
/// out of the root is read as a chrooted useradd reads it: inside the root, so the host's
/// entries are never used (here: no user `eve`, so the run fails).
#[test]
fn ssh_keys_and_account_files_never_lead_out_of_the_root() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::TempDir::new("keys-link");
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o777)).unwrap();
    // The user may reach `outside`: the scratch directory is the test's own.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let keys = outside.join("keys");
    let climbing = format!("{}{}", "../".repeat(40), keys.to_string_lossy());
    let base = |root: &Path| {
        let _ = std::fs::remove_dir_all(root);
        std::fs::create_dir_all(root.join("etc")).unwrap();
        std::fs::write(
            root.join("etc/passwd"),
            "root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/sh\n",
        )
        .unwrap();
        std::fs::write(root.join("etc/group"), "root:x:0:\nalice:x:1001:\n").unwrap();
        let fragment = root.join("home/alice/.ssh/authorized_keys.d");
        std::fs::create_dir_all(&fragment).unwrap();
        for d in [
            "home/alice",
            "home/alice/.ssh",
            "home/alice/.ssh/authorized_keys.d",
        ] {
            std::os::unix::fs::chown(root.join(d), Some(1001), Some(1001)).unwrap();
        }
        fragment.join("ignition")
    };
    std::fs::write(
        dir.join("keys.ign"),
        r#"{"ignition":{"version":"3.3.0"},"passwd":{"users":[{"name":"alice","sshAuthorizedKeys":["ssh-ed25519 AAAA a"]}]}}"#,
    )
    .unwrap();
    let root = dir.join("root");
    for link in [keys.to_string_lossy().into_owned(), climbing] {
        let at = base(&root);
        std::os::unix::fs::symlink(&link, &at).unwrap();
        let before = manifest(&root);
        let out = common::run_in(
            &dir,
            &common::flint(),
            &["apply", "--root", "root", "keys.ign"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !keys.exists(),
            "keys written out of the root through {link}"
        );
        let after = manifest(&root);
        let changed: Vec<&str> = after
            .lines()
            .filter(|l| !before.contains(l) && !l.contains(".ignition-result.json"))
            .collect();
        assert!(changed.is_empty(), "{link}: {changed:?}");
    }

    // The host's account database beside the root, with a user the root does not have.
    std::fs::write(
        outside.join("passwd"),
        "root:x:0:0::/root:/bin/sh\neve:x:1002:1002::/home/eve:/bin/sh\n",
    )
    .unwrap();
    base(&root);
    std::fs::remove_file(root.join("etc/passwd")).unwrap();
    std::os::unix::fs::symlink(outside.join("passwd"), root.join("etc/passwd")).unwrap();
    std::fs::write(
        dir.join("owner.ign"),
        r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/srv/f","contents":{"source":"data:,x"},"user":{"name":"eve"}}]}}"#,
    )
    .unwrap();
    let out = common::run_in(
        &dir,
        &common::flint(),
        &["apply", "--root", "root", "owner.ign"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("eve"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join("srv/f").exists());
}

/// The record of an earlier run is kept in the new one as `previousReport`, as upstream
/// keeps it (laid out as Go's MarshalIndent); one that is no JSON fails the run, as it fails
/// upstream's, but here before anything is written (plan fails too).
#[test]
fn an_earlier_record_is_kept_and_a_broken_one_fails_first() {
    let dir = common::TempDir::new("record-previous");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    let record = root.join("etc/.ignition-result.json");
    std::fs::write(
        &record,
        r#"{"provisioningBootID":"old","provisioningDate":"2020-01-01T00:00:00Z","userConfigProvided":true,"n":1.0}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/srv/x","contents":{"source":"data:,a"}}]}}"#,
    )
    .unwrap();
    let run =
        |verb: &str| common::run_in(&dir, &common::flint(), &[verb, "--root", "root", "c.ign"]);
    let out = run("apply");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(
        text.starts_with("{\n  \"provisioningBootID\": \""),
        "{text}"
    );
    assert!(text.ends_with("}\n"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["previousReport"],
        serde_json::json!({"provisioningBootID":"old","provisioningDate":"2020-01-01T00:00:00Z","userConfigProvided":true,"n":1})
    );
    assert!(
        text.contains("\"n\": 1,\n"),
        "a whole number as Go writes it: {text}"
    );

    std::fs::remove_file(root.join("srv/x")).unwrap();
    std::fs::write(&record, "not json\n").unwrap();
    let before = manifest(&root);
    for verb in ["plan", "apply"] {
        let out = run(verb);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{verb}: {err}");
        assert!(
            err.contains("couldn't unmarshal previous report"),
            "{verb}: {err}"
        );
        assert_eq!(manifest(&root), before, "{verb} wrote");
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "not json\n");
    }
}

/// What stands at flint's temporary names (`.NAME.flint-tmp`) in the root and is not a file
/// (a link, also one out of the root; a directory) belongs to the root: it is neither
/// followed, nor removed, nor in the way (upstream has no such names, and writes the files).
#[test]
fn entries_at_the_temporary_names_are_left_alone() {
    let dir = common::TempDir::new("temp-names");
    let outside = dir.join("outside");
    std::fs::write(&outside, "host\n").unwrap();
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::create_dir_all(root.join("srv/.y.flint-tmp")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("srv/.x.flint-tmp")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("etc/..ignition-result.json.flint-tmp"))
        .unwrap();
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/srv/x","contents":{"source":"data:,x"}},{"path":"/srv/y","contents":{"source":"data:,y"}}]}}"#,
    )
    .unwrap();
    let out = common::run_in(
        &dir,
        &common::flint(),
        &["apply", "--root", "root", "c.ign"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "host\n");
    assert_eq!(std::fs::read_to_string(root.join("srv/x")).unwrap(), "x");
    assert_eq!(std::fs::read_to_string(root.join("srv/y")).unwrap(), "y");
    assert!(root.join("srv/.y.flint-tmp").is_dir());
    for l in ["srv/.x.flint-tmp", "etc/..ignition-result.json.flint-tmp"] {
        let m = std::fs::symlink_metadata(root.join(l)).unwrap();
        assert!(m.file_type().is_symlink(), "{l}");
    }
    let mut names: Vec<String> = std::fs::read_dir(root.join("srv"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".x.flint-tmp", ".y.flint-tmp", "x", "y"],
        "nothing left behind"
    );
}

/// A plan sees the root's filesystems as the VM's plan mounts them, read-only: a keys file
/// that already holds the keys is no change there (the user's open for writing fails with
/// "read-only file system", which is no refusal by its permissions), on a first and a later
/// run.
#[test]
fn keys_in_place_on_a_read_only_root_plan_nothing() {
    let dir = common::TempDir::new("keys-ro");
    let root = dir.join("root");
    let keys = root.join("home/alice/.ssh/authorized_keys.d");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(
        root.join("etc/passwd"),
        "root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/sh\n",
    )
    .unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\nalice:x:1001:\n").unwrap();
    std::fs::write(keys.join("ignition"), "ssh-ed25519 AAAA a\n").unwrap();
    for d in [
        "home/alice",
        "home/alice/.ssh",
        "home/alice/.ssh/authorized_keys.d",
        "home/alice/.ssh/authorized_keys.d/ignition",
    ] {
        std::os::unix::fs::chown(root.join(d), Some(1001), Some(1001)).unwrap();
    }
    std::fs::write(
        dir.join("c.ign"),
        r#"{"ignition":{"version":"3.3.0"},"passwd":{"users":[{"name":"alice","sshAuthorizedKeys":["ssh-ed25519 AAAA a"]}]}}"#,
    )
    .unwrap();
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mount = |args: &[&str]| {
        let ok = Command::new("mount").args(args).status().unwrap().success();
        assert!(ok, "mount {args:?}");
    };
    mount(&["--bind", root.to_str().unwrap(), ro.to_str().unwrap()]);
    mount(&["-o", "remount,ro,bind", ro.to_str().unwrap()]);
    let plan = || common::run_in(&dir, &common::flint(), &["plan", "--root", "ro", "c.ign"]);
    let first = plan();
    // A later run: the record of a run is there.
    Command::new("umount").arg(&ro).status().unwrap();
    std::fs::write(root.join("etc/.ignition-result.json"), "{}\n").unwrap();
    mount(&["--bind", root.to_str().unwrap(), ro.to_str().unwrap()]);
    mount(&["-o", "remount,ro,bind", ro.to_str().unwrap()]);
    let later = plan();
    Command::new("umount").arg(&ro).status().unwrap();
    for (run, out) in [("first", first), ("later", later)] {
        assert!(
            out.status.success(),
            "{run}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{run}");
    }
}

/// A directory path deeper than the kernel takes (3,000 levels, 6,000 bytes): refused before
/// anything is made (flint made 2,000 of its directories before the kernel refused the rest).
#[test]
fn a_path_longer_than_the_kernel_takes_makes_nothing() {
    let dir = common::TempDir::new("too-deep");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let config = serde_json::json!({
        "ignition": {"version": "3.4.0"},
        "storage": {
            "files": [{"path": "/etc/first", "contents": {"source": "data:,x"}}],
            "directories": [{"path": "/a".repeat(3000)}],
        },
    });
    std::fs::write(dir.join("c.ign"), config.to_string()).unwrap();
    let out = common::run_in(
        &dir,
        &common::flint(),
        &["apply", "--root", "root", "--state-dir", "state", "c.ign"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("files stage failed at $.storage.directories.0: its path is 6")
            && err.contains("longer than the kernel takes (4095): nothing of it was made"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "something was made"
    );
}
