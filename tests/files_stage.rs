//! The files stage on real directory trees as root: the upstream corpus, idempotent re-runs,
//! and `plan` never writing.
mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn files_corpus_passes() {
    let script = common::corpus("files").join("check.sh");
    let cmd = format!(
        "{} apply --root {{root}} {{config}}",
        common::flint().display()
    );
    common::run_check_script(&script, &cmd, 76);
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
    common::run_check_script_on(&script, &cmd, Some(&common::corpus("files-legacy")), 16);
}

fn manifest(root: &Path) -> String {
    let out = Command::new("python3")
        .arg(common::corpus("files").join("manifest.py"))
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// Every corpus case that succeeds and needs no HTTP server, with a fresh root.
fn local_tree_cases() -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let corpus = common::corpus("files");
    let mut out = Vec::new();
    for case in common::case_dirs(&corpus) {
        let config = case.join("config.ign");
        if !config.exists() || case.join("expected.fail").exists() {
            continue;
        }
        if std::fs::read_to_string(&config)
            .unwrap()
            .contains("127.0.0.1:18931")
        {
            continue;
        }
        let root = std::env::temp_dir().join(format!(
            "flint-files-{}-{}",
            case.file_name().unwrap().to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let ok = Command::new("sh")
            .arg(case.join("setup.sh"))
            .current_dir(&root)
            .status()
            .unwrap()
            .success();
        assert!(ok, "setup of {}", case.display());
        out.push((config, root));
    }
    out
}

#[test]
fn plan_changes_nothing_and_a_second_apply_finds_nothing_to_do() {
    let cases = local_tree_cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    for (config, root) in cases {
        let root_s = root.to_string_lossy().into_owned();
        let cfg = config.to_string_lossy().into_owned();
        let before = manifest(&root);
        let plan = common::run_in(&root, &common::flint(), &["plan", "--root", &root_s, &cfg]);
        assert_eq!(plan.status.code(), Some(0), "{cfg}");
        assert_eq!(manifest(&root), before, "plan changed the tree for {cfg}");

        let first = common::run_in(&root, &common::flint(), &["apply", "--root", &root_s, &cfg]);
        assert_eq!(
            first.status.code(),
            Some(0),
            "{cfg}: {}",
            String::from_utf8_lossy(&first.stderr)
        );
        let after = manifest(&root);
        let second = common::run_in(&root, &common::flint(), &["apply", "--root", &root_s, &cfg]);
        assert_eq!(second.status.code(), Some(0), "{cfg}");
        assert_eq!(
            String::from_utf8_lossy(&second.stdout),
            "apply: nothing to change\n",
            "{cfg}"
        );
        assert_eq!(manifest(&root), after, "the second apply changed {cfg}");
        let again = common::run_in(&root, &common::flint(), &["plan", "--root", &root_s, &cfg]);
        assert!(
            again.stdout.is_empty(),
            "{cfg}: {}",
            String::from_utf8_lossy(&again.stdout)
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn plan_lists_actions_in_human_and_json_form() {
    let dir = std::env::temp_dir().join(format!("flint-plan-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
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
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kernel_arguments_edit_the_oem_grub_cfg_once() {
    let dir = std::env::temp_dir().join(format!("flint-kargs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
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
    std::fs::remove_dir_all(&dir).unwrap();
}
