//! Kernel arguments through the distribution's own program, as upstream's `ignition` sets
//! them: `ignition-kargs-helper --should-exist A … --should-not-exist B …`, found in PATH,
//! with this process's environment (Flatcar's helper reads `OEM_ID` from the unit's
//! environment). The helper owns the boot configuration and reboots when it changed it,
//! so flint neither reads grub.cfg nor reboots on this path.

use crate::stage::{Mode, StageError, StageName};
use flint_go::goquote::quote;
use flint_go::tree::JsonPath;
use flint_ignition::types::KernelArguments;
use std::process::{Command, Stdio};

/// The helper's arguments, in the config's order: every argument that should exist, then
/// every one that should not.
pub(super) fn arguments(k: &KernelArguments) -> Vec<String> {
    let exist = k.should_exist.iter().flat_map(|a| ["--should-exist", a]);
    let not = (k.should_not_exist.iter()).flat_map(|a| ["--should-not-exist", a]);
    exist.chain(not).map(str::to_string).collect()
}

/// Runs (or, planning, describes) the helper; returns the line that says what was asked.
/// A helper that cannot start or exits non-zero fails the stage with its output.
pub(super) fn run(helper: &str, k: &KernelArguments, mode: Mode) -> Result<String, StageError> {
    let args = arguments(k);
    let shown: Vec<String> = std::iter::once(helper)
        .chain(args.iter().map(String::as_str))
        .map(quote)
        .collect();
    let shown = shown.join(" ");
    if !mode.applies() {
        return Ok(format!(
            "would run {shown} (the distribution's helper decides and reboots)"
        ));
    }
    let fail = |message: String| StageError {
        stage: StageName::Kargs,
        path: Some(JsonPath::root().key("kernelArguments")),
        message: format!("failed adding kernel arguments: {message}"),
    };
    let out = Command::new(helper)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            // A file of that name that is not executable is skipped, as Go's PATH lookup does.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                fail(format!("{}: not found in PATH", quote(helper)))
            }
            _ => fail(format!("running {}: {e}", quote(helper))),
        })?;
    if !out.status.success() {
        return Err(fail(format!(
            "{}: Cmd: {shown} Stdout: {} Stderr: {}",
            exit_status(&out.status),
            flint_go::goquote::quote_bytes(&out.stdout),
            flint_go::goquote::quote_bytes(&out.stderr),
        )));
    }
    Ok(format!("ran {shown}"))
}

/// How the helper ended, in the words Go's os/exec uses.
fn exit_status(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_keep_the_config_order_exist_first() {
        let k = KernelArguments {
            should_exist: vec!["b=1".into(), "a".into()],
            should_not_exist: vec!["quiet".into()],
        };
        assert_eq!(
            arguments(&k),
            [
                "--should-exist",
                "b=1",
                "--should-exist",
                "a",
                "--should-not-exist",
                "quiet"
            ]
        );
    }
}
