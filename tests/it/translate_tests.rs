//! The project's own Butane cases in `translate-tests/NNN-name/`: `in.bu`, `args` (flags),
//! optional `files/`, and the exact expected output: `expected.ign` (stdout), and either
//! `expected.err` (exit code on the first line, then stderr) or `expected.stderr` (stderr of
//! a successful run). Run as `butane --pretty $(cat args) in.bu` from inside the case.
use crate::common;

use std::path::Path;

fn check_case(dir: &Path) -> Result<(), String> {
    let args = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
    let mut argv: Vec<&str> = vec!["--pretty"];
    argv.extend(args.split_whitespace());
    argv.push("in.bu");
    let out = common::run_in(dir, Path::new(env!("CARGO_BIN_EXE_butane")), &argv);
    let read = |f: &str| std::fs::read(dir.join(f)).ok();
    let rc = out.status.code().unwrap_or(-1);
    let (want_rc, want_err) = match read("expected.err") {
        Some(e) => {
            let text = String::from_utf8(e).unwrap();
            let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
            (first.parse::<i32>().unwrap(), rest.as_bytes().to_vec())
        }
        None => (0, read("expected.stderr").unwrap_or_default()),
    };
    let want_out = read("expected.ign").unwrap_or_default();
    let mut problems = Vec::new();
    if rc != want_rc {
        problems.push(format!("exit {rc}, want {want_rc}"));
    }
    if out.stdout != want_out {
        problems.push(format!(
            "stdout differs:\n{}\n--- want:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want_out)
        ));
    }
    if out.stderr != want_err {
        problems.push(format!(
            "stderr differs:\n{}\n--- want:\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&want_err)
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn every_translate_test_gives_its_expected_output() {
    let dirs = common::case_dirs(&common::repo().join("translate-tests"));
    assert!(!dirs.is_empty(), "no cases in translate-tests/");
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| check_case(d).err().map(|e| format!("{}: {e}", d.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
