//! The upstream butane corpus: every case must pass.
//!
//! The shared copy of the corpus lost its symbolic links in packaging: each became a regular
//! file holding the link's target (the expected outputs were made with the links). The test
//! runs the corpus from a scratch copy with those links restored.
mod common;

use std::process::Command;

/// Files of the shared corpus that were symbolic links; each holds its target.
const MATERIALIZED_LINKS: &[&str] = &[
    "008-docs-tree-override/files/tree/directory/symlink",
    "039-trees-nested-exec/files/root/etc/app/link-abs",
    "039-trees-nested-exec/files/root/etc/app/link-rel",
    "041-trees-override-link/files/t/lnk",
];

fn restored_copy() -> std::path::PathBuf {
    let dst = std::env::temp_dir().join(format!("flint-butane-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    let src = common::shared().join("conformance");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dst)
        .status()
        .unwrap()
        .success()
        && Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(&dst)
            .status()
            .unwrap()
            .success();
    assert!(ok, "copying the corpus failed");
    for rel in MATERIALIZED_LINKS {
        let p = dst.join(rel);
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            continue; // a corpus with real links needs no repair
        }
        let target = std::fs::read_to_string(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(target.trim_end_matches('\n'), &p).unwrap();
    }
    dst
}

#[test]
fn butane_corpus_passes() {
    let corpus = restored_copy();
    let script = corpus.join("check.sh");
    let bin = env!("CARGO_BIN_EXE_butane");
    let out = Command::new("bash")
        .arg(&script)
        .arg(bin)
        .arg(&corpus)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir_all(&corpus);
    assert!(
        stdout.trim_end().ends_with("96 passed, 0 failed"),
        "{stdout}"
    );
    assert!(out.status.success());
}
