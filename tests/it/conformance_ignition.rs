//! The upstream validator's corpora: every case must pass.
use crate::common;

#[test]
fn ignition_validate_corpus_passes() {
    let script = common::corpus("ignition").join("check.sh");
    let cmd = format!("{} validate", common::flint().display());
    common::run_check_script(&script, &cmd);
}

/// Spec 3.5.0, 3.6.0 and 3.7.0-experimental (and the validator's edge cases in them): the
/// reference's exact report lines, under upstream's rules (its `oem://` verdicts).
#[test]
fn ignition_validate_3_5_plus_corpus_passes_strictly() {
    let script = common::corpus("ignition-3.5plus").join("check.sh");
    let cmd = format!("{} validate --rules upstream", common::flint().display());
    common::run_check_script_env(&script, &cmd, &[("STRICT", "1")]);
}

/// The validator's regression cases (divergences the differential harness found), line for
/// line and in upstream's order (but where upstream's order is random), with flint run under
/// upstream's name.
#[test]
fn ignition_validate_regressions_pass_strictly() {
    let dir = common::TempDir::new("ignition-regressions");
    let bin = dir.join("ignition-validate");
    std::os::unix::fs::symlink(common::flint(), &bin).unwrap();
    let bin = bin.display().to_string();
    common::run_check_script_with(
        &common::corpus("ignition").join("check.sh"),
        &bin,
        Some(&common::corpus("ignition-regressions")),
        &[("STRICT", "2")],
    );
}
