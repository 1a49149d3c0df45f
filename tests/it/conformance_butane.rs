//! The upstream butane corpus (`conformance/butane`, with its symbolic links): every case
//! must pass.
use crate::common;

use std::process::Command;

#[test]
fn butane_corpus_passes() {
    let corpus = common::corpus("butane");
    let script = corpus.join("check.sh");
    let bin = env!("CARGO_BIN_EXE_butane");
    let out = Command::new("bash")
        .arg(&script)
        .arg(bin)
        .arg(&corpus)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.trim_end().ends_with("96 passed, 0 failed"),
        "{stdout}"
    );
    assert!(out.status.success());
}
