//! The upstream validator's corpus: every case must pass.
mod common;

#[test]
fn ignition_validate_corpus_passes() {
    let script = common::corpus("ignition").join("check.sh");
    let cmd = format!("{} validate", common::flint().display());
    common::run_check_script(&script, &cmd, 120);
}
