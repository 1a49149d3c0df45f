//! `flint validate` as CI uses it: many files, directories, formats, exit codes.
use crate::common;

use std::fs;

/// A scratch directory (with `sub/`), removed when dropped, also when the test fails.
fn tmpdir(name: &str) -> common::TempDir {
    let d = common::TempDir::new(&format!("cli-{name}"));
    fs::create_dir_all(d.join("sub")).unwrap();
    d
}

const GOOD: &str = r#"{"ignition":{"version":"3.3.0"}}"#;
const WARN: &str = r#"{"ignition":{"version":"3.3.0"},"bogus":1}"#;
const BAD: &str = r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"rel"}]}}"#;

#[test]
fn directories_are_searched_and_summarized() {
    let d = tmpdir("dirs");
    fs::write(d.join("a.ign"), GOOD).unwrap();
    fs::write(d.join("sub/b.json"), BAD).unwrap();
    fs::write(d.join("sub/notes.txt"), "not a config").unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "."]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains(
            "./sub/b.json: error at $.storage.files.0.path, line 1 col 61: path not absolute"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 files checked: 1 valid, 1 invalid (1 errors, 0 warnings)\n"),
        "{stdout}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn warnings_pass_unless_strict() {
    let d = tmpdir("strict");
    fs::write(d.join("w.ign"), WARN).unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "w.ign"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "warning at $.bogus, line 1 col 33: unused key bogus\n"
    );
    let out = common::run_in(&d, &common::flint(), &["validate", "--strict", "w.ign"]);
    assert_eq!(out.status.code(), Some(1));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn json_format_prints_one_object_per_diagnostic() {
    let d = tmpdir("json");
    fs::write(d.join("bad.ign"), BAD).unwrap();
    fs::write(d.join("warn.ign"), WARN).unwrap();
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format", "json", "bad.ign", "warn.ign"],
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "bad.ign");
    assert_eq!(lines[0]["severity"], "error");
    assert_eq!(lines[0]["path"], "$.storage.files.0.path");
    assert_eq!(lines[0]["line"], 1);
    assert_eq!(lines[0]["column"], 61);
    assert_eq!(lines[1]["severity"], "warning");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors_exit_2_and_missing_files_exit_1() {
    let d = tmpdir("usage");
    let out = common::run_in(&d, &common::flint(), &["validate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format", "xml", "a.ign"],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = common::run_in(&d, &common::flint(), &["validate", "missing.ign"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("couldn't read config"));
    let out = common::run_in(&d, &common::flint(), &["schema", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    fs::remove_dir_all(&d).unwrap();
}

/// A Butane config with one warning, at line 3 column 1.
const WARN_BU: &str = "variant: flatcar\nversion: 1.1.0\nbogus: 1\n";

#[test]
fn sarif_format_is_one_sarif_log() {
    let d = tmpdir("sarif");
    fs::write(d.join("bad.ign"), BAD).unwrap();
    fs::write(d.join("sub/warn.bu"), WARN_BU).unwrap();
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format", "sarif", "bad.ign", "./sub/warn.bu"],
    );
    assert_eq!(out.status.code(), Some(1));
    let log: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the output is one JSON document");
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "flint");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules: Vec<&str> = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = runs[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{log:#}");
    for (r, (uri, line, col, level, text)) in results.iter().zip([
        ("bad.ign", 1, 61, "error", "path not absolute"),
        ("sub/warn.bu", 3, 1, "warning", "unused key bogus"),
    ]) {
        assert_eq!(r["level"], level);
        assert_eq!(r["message"]["text"], text);
        let rule = r["ruleId"].as_str().unwrap();
        assert!(rules.contains(&rule), "{rule} not among {rules:?}");
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], rule);
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], uri);
        assert_eq!(loc["region"]["startLine"], line);
        assert_eq!(loc["region"]["startColumn"], col);
    }
    assert_eq!(
        results[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        "$.storage.files.0.path"
    );

    // Warnings alone pass unless --strict; a clean run is a log with no results.
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format=sarif", "sub/warn.bu"],
    );
    assert_eq!(out.status.code(), Some(0));
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format=sarif", "--strict", "sub/warn.bu"],
    );
    assert_eq!(out.status.code(), Some(1));
    fs::write(d.join("good.ign"), GOOD).unwrap();
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format=sarif", "good.ign"],
    );
    assert_eq!(out.status.code(), Some(0));
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn github_format_prints_escaped_workflow_commands() {
    let d = tmpdir("github");
    fs::write(d.join("bad.ign"), BAD).unwrap();
    fs::write(d.join("sub/warn.bu"), WARN_BU).unwrap();
    // A file name and a message that need escaping: `,` and `:` in the property, `%`, CR
    // and LF in the message.
    fs::write(
        d.join("a,b:c.bu"),
        "variant: \"odd%25\\r\\nvariant\"\nversion: 1.1.0\n",
    )
    .unwrap();
    fs::write(d.join("good.ign"), GOOD).unwrap();
    let out = common::run_in(
        &d,
        &common::flint(),
        &[
            "validate",
            "--format",
            "github",
            "bad.ign",
            "sub/warn.bu",
            "a,b:c.bu",
            "good.ign",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "::error file=bad.ign,line=1,col=61::path not absolute\n\
         ::warning file=sub/warn.bu,line=3,col=1::unused key bogus\n\
         ::error file=a%2Cb%3Ac.bu::Error translating config: No translator exists for variant odd%2525%0D%0Avariant with version 1.1.0\n"
    );
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--format", "github", "sub/warn.bu", "good.ign"],
    );
    assert_eq!(out.status.code(), Some(0));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn summary_counts_valid_invalid_errors_and_warnings() {
    let d = tmpdir("summary");
    fs::write(d.join("good.ign"), GOOD).unwrap();
    fs::write(d.join("bad.ign"), BAD).unwrap();
    fs::write(d.join("warn.ign"), WARN).unwrap();
    fs::write(d.join("sub/warn.bu"), WARN_BU).unwrap();
    fs::write(d.join("sub/bad.bu"), "variant: flatcar\nversion: 9.9.9\n").unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "."]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some("5 files checked: 3 valid, 2 invalid (2 errors, 2 warnings)"),
        "{stdout}"
    );
    let out = common::run_in(&d, &common::flint(), &["validate", "--strict", "."]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some("5 files checked: 1 valid, 4 invalid (2 errors, 2 warnings)"),
        "{stdout}"
    );
    // Several files given one by one are summarized too; one file alone is not.
    let out = common::run_in(&d, &common::flint(), &["validate", "good.ign", "warn.ign"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "warn.ign: warning at $.bogus, line 1 col 33: unused key bogus\n\
         2 files checked: 2 valid, 0 invalid (0 errors, 1 warnings)\n"
    );
    let out = common::run_in(&d, &common::flint(), &["validate", "good.ign"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn local_files_resolve_beside_each_config_unless_files_dir_is_given() {
    let d = tmpdir("filesdir");
    let config = "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        local: motd\n";
    for site in ["east", "west"] {
        fs::create_dir_all(d.join(site).join("files")).unwrap();
        fs::write(d.join(site).join("files/motd"), format!("hello {site}\n")).unwrap();
        fs::write(d.join(site).join("node.bu"), config).unwrap();
    }
    let out = common::run_in(&d, &common::flint(), &["validate", "--strict", "."]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with("2 files checked: 2 valid, 0 invalid (0 errors, 0 warnings)\n"),
        "{stdout}"
    );
    // -d overrides: a directory without motd fails both.
    let out = common::run_in(&d, &common::flint(), &["validate", "-d", "sub", "."]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("2 files checked: 0 valid, 2 invalid"),
        "{stdout}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn color_always_shows_snippets_and_never_keeps_plain_lines() {
    let d = tmpdir("color");
    fs::write(d.join("bad.ign"), BAD).unwrap();
    fs::write(d.join("warn.bu"), WARN_BU).unwrap();
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--color", "always", "bad.ign", "warn.bu"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\x1b[1;31merror\x1b[0m[$.storage.files.0.path]:\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\x1b[1;34m-->\x1b[0m bad.ign:1:61\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\x1b[1;33mwarning\x1b[0m[$.bogus]:\n"),
        "{stdout}"
    );
    assert!(stdout.contains(" | bogus: 1\n"), "{stdout}");
    assert!(
        stdout.ends_with("2 files checked: 1 valid, 1 invalid (1 errors, 1 warnings)\n"),
        "{stdout}"
    );
    // A Butane file alone: Butane's own report, in colour.
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--colour=always", "warn.bu"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("\x1b[1;33mwarning\x1b[0m[$.bogus]:\n"),
        "{stdout}"
    );
    // Never (and auto, off a terminal) keep the plain output.
    for color in ["never", "auto"] {
        let out = common::run_in(
            &d,
            &common::flint(),
            &["validate", "--color", color, "bad.ign"],
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "error at $.storage.files.0.path, line 1 col 61: path not absolute\n"
        );
    }
    let out = common::run_in(
        &d,
        &common::flint(),
        &["validate", "--color", "sometimes", "bad.ign"],
    );
    assert_eq!(out.status.code(), Some(2));
    fs::remove_dir_all(&d).unwrap();
}

/// Runs `bin args` with `input` on standard input.
fn with_stdin(bin: &std::path::Path, args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(bin)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

const UNUSED_KEY: &[u8] = br#"{"ignition":{"version":"3.3.0"},"x":1}"#;

#[test]
fn a_dash_reads_the_config_from_standard_input() {
    let out = with_stdin(&common::flint(), &["validate", "-"], UNUSED_KEY);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "warning at $.x, line 1 col 33: unused key x\n"
    );
    let dir = common::TempDir::new("plan-stdin");
    let cfg = br#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/etc/s","contents":{"source":"data:,x"}}]}}"#;
    let out = with_stdin(
        &common::flint(),
        &["plan", "--root", dir.to_str().unwrap(), "-"],
        cfg,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("would create file /etc/s (1 bytes"));
}

/// flint run as `ignition-validate` takes upstream's command line and answers as it does.
#[test]
fn run_as_ignition_validate_it_behaves_like_upstream() {
    let dir = common::TempDir::new("ignition-validate");
    let bin = dir.join("ignition-validate");
    std::os::unix::fs::symlink(common::flint(), &bin).unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(&bin)
            .args(args)
            .current_dir(&*dir)
            .output()
            .unwrap();
        (
            o.status.code().unwrap(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&["--version"]),
        (0, "Ignition v2.26.0\n".into(), String::new())
    );
    assert_eq!(run(&["-version"]).1, "Ignition v2.26.0\n");
    let (code, out, err) = run(&[]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("Usage:\n") && err.contains("[flags] config.ign"),
        "{err}"
    );
    assert_eq!(run(&["a.ign", "b.ign"]).0, 1);
    // Go's flag rules: flags end at the first argument, values are Go booleans.
    assert_eq!(run(&["c.ign", "-version"]).0, 1);
    assert_eq!(
        run(&["-version=F", "-version", "a", "b"]).1,
        "Ignition v2.26.0\n"
    );
    let (code, _, err) = run(&["-version=x"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("invalid boolean value \"x\" for -version: parse error\n"),
        "{err}"
    );
    // The value is quoted as Go's %q quotes it (as the reference prints it).
    let (code, _, err) = run(&["-version=a\"b"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("invalid boolean value \"a\\\"b\" for -version: parse error\n"),
        "{err}"
    );
    assert!(
        run(&["---version"])
            .2
            .starts_with("bad flag syntax: ---version\n")
    );
    assert_eq!(run(&["-h"]).0, 0);
    let (code, _, err) = run(&["-bogus", "x.ign"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("flag provided but not defined: -bogus\n"),
        "{err}"
    );
    assert_eq!(
        run(&["missing.ign"]),
        (
            1,
            String::new(),
            "couldn't read config: open missing.ign: no such file or directory\n".into()
        )
    );
    std::fs::write(dir.join("c.ign"), UNUSED_KEY).unwrap();
    assert_eq!(
        run(&["c.ign"]),
        (
            0,
            "warning at $.x, line 1 col 33: unused key x\n".into(),
            String::new()
        )
    );
    std::fs::write(
        dir.join("bad.ign"),
        br#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"rel"}]}}"#,
    )
    .unwrap();
    let (code, out, _) = run(&["bad.ign"]);
    assert_eq!(code, 1);
    assert!(out.contains("error at $.storage.files.0.path"), "{out}");
    // Upstream's validator knows no legacy config (flint validate follows Flatcar's).
    std::fs::write(
        dir.join("legacy.ign"),
        br#"{"ignition":{"version":"2.2.0"}}"#,
    )
    .unwrap();
    assert_eq!(
        run(&["legacy.ign"]),
        (
            1,
            String::new(),
            "couldn't parse config: unsupported config version\n".into()
        )
    );
    std::fs::write(dir.join("v1.ign"), br#"{"ignitionVersion":1}"#).unwrap();
    assert_eq!(
        run(&["v1.ign"]).2,
        "couldn't parse config: invalid config version (couldn't parse)\n"
    );
    let o = with_stdin(&bin, &["-"], UNUSED_KEY);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "warning at $.x, line 1 col 33: unused key x\n"
    );
}

#[test]
fn every_butane_variant_is_validated() {
    let d = tmpdir("variants");
    let meta =
        "metadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\n";
    let good = [
        ("fcos.bu", "variant: fcos\nversion: 1.5.0\ngrub:\n  users:\n    - name: root\n      password_hash: grub.pbkdf2.sha512.10000.AA\n".to_string()),
        ("os.bu", format!("variant: openshift\nversion: 4.18.0\n{meta}")),
        ("r4e.bu", "variant: r4e\nversion: 1.1.0\n".to_string()),
        ("fiot.yaml", "variant: fiot\nversion: 1.0.0\n".to_string()),
    ];
    for (name, text) in &good {
        fs::write(d.join(name), text).unwrap();
    }
    // A refusal each variant makes.
    fs::write(
        d.join("sub/edge.bu"),
        "variant: r4e\nversion: 1.0.0\nstorage:\n  disks:\n    - device: /dev/sdb\n",
    )
    .unwrap();
    fs::write(
        d.join("sub/os.bu"),
        format!("variant: openshift\nversion: 4.12.0\n{meta}storage:\n  links:\n    - path: /a\n      target: /b\n"),
    )
    .unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "."]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("./sub/edge.bu: error at $.storage.disks, line 5 col 5: disk customization is not supported in this spec version"),
        "{stdout}"
    );
    assert!(
        stdout.contains("./sub/os.bu: error at $.storage.links, line 9 col 5: links are not supported in this spec version"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("6 files checked: 4 valid, 2 invalid (2 errors, 0 warnings)\n"),
        "{stdout}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_utf16_butane_config_is_read_and_quoted_as_text() {
    let d = tmpdir("utf16");
    let text =
        "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /é\n      bogus: 1\n";
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    fs::write(d.join("c.bu"), bytes).unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "c.bu"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(" 6 |       bogus: 1\n"), "{stdout}");
    assert!(stdout.contains("unused key bogus"), "{stdout}");
    fs::remove_dir_all(&d).unwrap();
}

/// A 2.x config's `oem://` sources count in any letter case, as Flatcar's validator reads
/// them (Go's URL parser lowers the scheme before the translated config is checked).
#[test]
fn legacy_oem_sources_in_capitals_are_valid() {
    let d = tmpdir("legacy-oem");
    for scheme in ["oem", "OEM", "Oem"] {
        let cfg = format!(
            r#"{{"ignition":{{"version":"2.3.0"}},"storage":{{"files":[{{"filesystem":"root","path":"/x","contents":{{"source":"{scheme}:///x"}}}}]}}}}"#
        );
        fs::write(d.join("c.ign"), cfg).unwrap();
        let out = common::run_in(&d, &common::flint(), &["validate", "c.ign"]);
        assert_eq!(out.status.code(), Some(0), "{scheme}: {:?}", out);
    }
    let bad = r#"{"ignition":{"version":"2.3.0"},"storage":{"files":[{"filesystem":"root","path":"/x","contents":{"source":"oemx:///x"}}]}}"#;
    fs::write(d.join("c.ign"), bad).unwrap();
    let out = common::run_in(&d, &common::flint(), &["validate", "c.ign"]);
    assert_eq!(out.status.code(), Some(1));
    fs::remove_dir_all(&d).unwrap();
}
