//! The record of a run that upstream leaves in the root (/etc/.ignition-result.json), and
//! flint's in-progress mark beside it, which tells a later run that an earlier one was cut
//! short.

use crate::root;
use crate::write::write_atomic;
use std::path::{Path, PathBuf};

/// Marks a root whose files stage started but did not finish (see `files_stage`), in /etc.
pub(crate) const IN_PROGRESS: &str = ".flint-files-in-progress";
/// The record of a run, in /etc, as upstream names it.
const RECORD: &str = ".ignition-result.json";

/// flint's own file `name` in the root's /etc, found as the root sees /etc: through a link
/// there inside the root, never out of it (upstream writes its record there too). `None`
/// where /etc is no directory.
pub(crate) fn etc_file(root: &Path, name: &str) -> Option<PathBuf> {
    root::Root::new(root.to_path_buf())
        .resolve(&format!("/etc/{name}"))
        .ok()
        .map(|r| r.host)
}

/// Whether `p` is flint's in-progress mark: a regular file (a link of that name is not).
pub(crate) fn is_mark(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}

/// Whether the root holds the record of a run, read as upstream reads it (through a link
/// inside the root): a link at the record's name that leads nowhere is none, since nothing
/// then says that a run happened.
pub(crate) fn has_record(root: &Path) -> bool {
    !matches!(previous_record(root), Ok(None))
}

/// The record an earlier run left, as upstream reads it into the new one: `None` where
/// there is none (or its link leads nowhere), an error where it is there but no JSON (or
/// cannot be read). Read as the root sees it, never through a link out of the root.
pub(crate) fn previous_record(root: &Path) -> Result<Option<serde_json::Value>, String> {
    let r = root::Root::new(root.to_path_buf());
    let text = match r.read_inside(&format!("/etc/{RECORD}")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("reading previous report: {e}")),
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("couldn't unmarshal previous report output: {e}"))?;
    Ok(Some(go_numbers(value)))
}

/// `v` with its whole numbers written as Go writes them after reading them into a float
/// (`1.0` and `1e3` as `1`, `1000`).
fn go_numbers(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(go_numbers).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, go_numbers(v))).collect()),
        other => other,
    }
}

/// What the record holds, in upstream's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(rename = "provisioningBootID")]
    provisioning_boot_id: String,
    provisioning_date: String,
    user_config_provided: bool,
    /// The earlier run's record (upstream leaves out a `null` one).
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_report: Option<serde_json::Value>,
}

/// The record of the run left in the root, as upstream's /etc/.ignition-result.json (the
/// record of an earlier run kept in it as `previousReport`, laid out as Go's MarshalIndent);
/// the in-progress mark goes.
pub(crate) fn write_result(root: &Path, user_config_provided: bool) -> std::io::Result<()> {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let record = Record {
        provisioning_boot_id: boot_id,
        provisioning_date: rfc3339_now(),
        user_config_provided,
        previous_report: previous_record(root)
            .map_err(std::io::Error::other)?
            .filter(|v| !v.is_null()),
    };
    let path = etc_file(root, RECORD)
        .ok_or_else(|| std::io::Error::other("/etc in the root is not a directory"))?;
    if let Some(etc) = path.parent() {
        std::fs::create_dir_all(etc)?;
    }
    write_atomic(&path, &flint_go::json::write::to_vec(&record, true), 0o600)?;
    clear_mark(root)
}

/// Removes the in-progress mark: the files stage finished.
pub(crate) fn clear_mark(root: &Path) -> std::io::Result<()> {
    match etc_file(root, IN_PROGRESS).filter(|m| is_mark(m)) {
        Some(mark) => std::fs::remove_file(mark),
        None => Ok(()),
    }
}

/// The current time in UTC as RFC 3339.
fn rfc3339_now() -> String {
    crate::civil::Utc::now().rfc3339()
}
