//! The upstream validator's corpora: every case must pass.
mod common;

#[test]
fn ignition_validate_corpus_passes() {
    let script = common::corpus("ignition").join("check.sh");
    let cmd = format!("{} validate", common::flint().display());
    common::run_check_script(&script, &cmd, 120);
}

/// Spec 3.5.0, 3.6.0 and 3.7.0-experimental (and the validator's edge cases in them): the
/// reference's exact report lines, under upstream's rules (its `oem://` verdicts).
#[test]
fn ignition_validate_3_5_plus_corpus_passes_strictly() {
    let script = common::corpus("ignition-3.5plus").join("check.sh");
    let cmd = format!("{} validate --rules upstream", common::flint().display());
    common::run_check_script_env(&script, &cmd, 274, &[("STRICT", "1")]);
}
