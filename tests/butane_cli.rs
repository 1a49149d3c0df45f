//! The `butane` command line answers as upstream's: each line of `butane-cli/cases.jsonl` is
//! a command line and the reference's exit code, standard output and standard error, recorded
//! with the program called `butane`, in a directory holding `in.bu` (also on standard input)
//! and `bad.bu` (a relative file path: one error).
mod common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

const IN: &str = "variant: fcos\nversion: 1.5.0\n";
const BAD: &str = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n  - path: rel\n";

#[test]
fn command_lines_answer_as_upstreams() {
    let cases = std::fs::read_to_string(common::repo().join("tests/butane-cli/cases.jsonl"))
        .expect("cases.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let dir = common::TempDir::new("butane-cli");
        std::fs::write(dir.path().join("in.bu"), IN).unwrap();
        std::fs::write(dir.path().join("bad.bu"), BAD).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_butane"))
            .arg0("butane")
            .args(&args)
            .current_dir(dir.path())
            .env_remove("NO_COLOR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A usage error exits before reading its input: a closed pipe is no failure.
        let _ = child.stdin.take().unwrap().write_all(IN.as_bytes());
        let out = child.wait_with_output().unwrap();
        let got = (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        let want = (
            case["rc"].as_i64().map(|c| c as i32),
            case["stdout"].as_str().unwrap().to_string(),
            case["stderr"].as_str().unwrap().to_string(),
        );
        if got != want {
            failures.push(format!("{args:?}:\n got {got:?}\nwant {want:?}"));
        }
        count += 1;
    }
    assert!(count >= 40, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
