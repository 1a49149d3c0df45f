//! `flint validate` as CI uses it: many files, directories, formats, exit codes.
mod common;

use std::fs;

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("flint-cli-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
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
