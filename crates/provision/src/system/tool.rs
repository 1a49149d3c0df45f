//! Running the storage tools (mkfs.*, mdadm, cryptsetup, wipefs, blkid): one place that turns
//! a failed or missing tool into a message naming the tool, its exit status and what it said.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// A tool that could not be run or did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolError {
    pub tool: String,
    pub status: Option<i32>,
    pub message: String,
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.tool, self.message)
    }
}

/// What a tool printed, when it exited 0.
pub(crate) struct Output {
    pub stdout: String,
    pub status: i32,
}

/// Runs `tool args…` with no input; `ok` lists the exit codes that count as success besides 0.
pub(crate) fn run_with<I, S>(
    tool: &str,
    args: I,
    ok: &[i32],
    env: &[(&str, &str)],
) -> Result<Output, ToolError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(tool);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Tools print in the language of the machine otherwise; the messages are parsed.
        .env("LC_ALL", "C");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| ToolError {
        tool: tool.into(),
        status: None,
        message: if e.kind() == std::io::ErrorKind::NotFound {
            "not found: the tool is missing from this system (PATH)".into()
        } else {
            format!("could not be started: {e}")
        },
    })?;
    let status = out.status.code().unwrap_or(-1);
    if status == 0 || ok.contains(&status) {
        return Ok(Output {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            status,
        });
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.trim();
    // The last lines say what went wrong; the rest is progress chatter.
    let tail: Vec<&str> = said.lines().rev().take(4).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(ToolError {
        tool: tool.into(),
        status: Some(status),
        message: format!(
            "exited with status {status}{}{}",
            if tail.is_empty() { "" } else { ": " },
            tail.join(" / ")
        ),
    })
}

/// Runs `tool args…`; success is exit status 0.
pub(crate) fn run<I, S>(tool: &str, args: I) -> Result<String, ToolError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_with(tool, args, &[], &[]).map(|o| o.stdout)
}

/// Whether udev runs: without it, device-mapper tools must create their nodes themselves.
pub(crate) fn udev_running() -> bool {
    std::path::Path::new("/run/udev/control").exists()
}

/// The environment of a tool that opens a device-mapper device (cryptsetup, clevis): without
/// udev, libdevmapper must make /dev/mapper/NAME itself.
pub(crate) fn dm_env() -> &'static [(&'static str, &'static str)] {
    if udev_running() {
        &[]
    } else {
        &[("DM_DISABLE_UDEV", "1")]
    }
}

/// `KEY=value` lines (blkid/mdadm `--export`) as pairs.
pub(crate) fn export_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_named() {
        let e = run("flint-no-such-tool", ["x"]).err().unwrap();
        assert_eq!(e.tool, "flint-no-such-tool");
        assert!(e.message.contains("not found"), "{e}");
    }

    #[test]
    fn a_failing_tool_reports_status_and_stderr() {
        let e = run(
            "sh",
            ["-c", "echo progress >&2; echo 'bad thing' >&2; exit 3"],
        )
        .err()
        .unwrap();
        assert_eq!(e.status, Some(3));
        assert_eq!(e.message, "exited with status 3: progress / bad thing");
    }

    #[test]
    fn export_lines_split_once() {
        assert_eq!(
            export_pairs("TYPE=ext4\nLABEL=a=b\n"),
            vec![
                ("TYPE".into(), "ext4".into()),
                ("LABEL".into(), "a=b".into())
            ]
        );
    }
}
