//! Output into a pipe nobody reads any more (`butane big.bu | head -1`) ends the process the
//! way it ends upstream's tools, by SIGPIPE, without a panic message.
use crate::common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs `cmd` with `input` on stdin and its stdout closed before it writes: the signal that
/// ended it and its stderr.
fn closed_stdout(cmd: &mut Command, input: &[u8]) -> (Option<i32>, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    // The process may be gone before all of it is read.
    let _ = stdin.write_all(input);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn butane_and_plan_end_by_sigpipe_without_a_panic() {
    // Well over a pipe's 64 KiB of output.
    let mut bu = String::from("variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n");
    for i in 0..5000 {
        bu.push_str(&format!(
            "    - path: /etc/f{i}\n      contents:\n        inline: line {i}\n"
        ));
    }
    let (sig, err) = closed_stdout(
        Command::new(env!("CARGO_BIN_EXE_butane")).arg("--strict"),
        bu.as_bytes(),
    );
    assert_eq!(sig, Some(libc::SIGPIPE), "butane: {err}");
    assert!(!err.contains("panicked"), "{err}");

    let files: Vec<String> = (0..5000)
        .map(|i| format!(r#"{{"path":"/f{i}","contents":{{"source":"data:,x"}}}}"#))
        .collect();
    let ign = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{}]}}}}"#,
        files.join(",")
    );
    let dir = common::TempDir::new("closed-output");
    let (sig, err) = closed_stdout(
        Command::new(common::flint())
            .args(["plan", "--format", "json", "--root"])
            .arg(dir.path())
            .arg("-"),
        ign.as_bytes(),
    );
    assert_eq!(sig, Some(libc::SIGPIPE), "plan: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "plan wrote nothing"
    );
}
