//! RAID arrays with mdadm. Beyond upstream: an array whose members already carry its
//! superblock (same name, level and array UUID on every member) is assembled and reused
//! instead of created again, so a re-run keeps the data.

use super::{Job, change, fail};
use crate::stage::{Outcome, StageError};
use crate::system::{devices, tool};
use flint_go::tree::JsonPath;
use flint_ignition::types::Raid;
use std::path::{Path, PathBuf};

/// What a member's md superblock says (`mdadm --examine --export`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Member {
    pub name: String,
    pub level: String,
    pub uuid: String,
}

/// The array name without mdadm's `homehost:` prefix.
pub(crate) fn bare_name(name: &str) -> &str {
    name.rsplit_once(':').map_or(name, |(_, n)| n)
}

fn examine(dev: &Path) -> Option<Member> {
    let out = tool::run(
        "mdadm",
        ["--examine".as_ref(), "--export".as_ref(), dev.as_os_str()],
    )
    .ok()?;
    let mut m = Member::default();
    for (k, v) in tool::export_pairs(&out) {
        match k.as_str() {
            "MD_NAME" => m.name = v,
            "MD_LEVEL" => m.level = v,
            "MD_UUID" => m.uuid = v,
            _ => {}
        }
    }
    (!m.uuid.is_empty()).then_some(m)
}

/// The running array called `name`, by its /dev/md/NAME link or by asking each md device.
pub(crate) fn find_array(name: &str) -> Option<PathBuf> {
    let link = PathBuf::from("/dev/md").join(name);
    if let Ok(p) = std::fs::canonicalize(&link) {
        return Some(p);
    }
    let rd = std::fs::read_dir("/sys/block").ok()?;
    for e in rd.flatten() {
        let dev = e.file_name().to_string_lossy().into_owned();
        if !dev.starts_with("md") {
            continue;
        }
        let node = PathBuf::from("/dev").join(&dev);
        let Ok(out) = tool::run(
            "mdadm",
            ["--detail".as_ref(), "--export".as_ref(), node.as_os_str()],
        ) else {
            continue;
        };
        let named = tool::export_pairs(&out).into_iter().any(|(k, v)| {
            (k == "MD_NAME" && bare_name(&v) == name) || (k == "MD_DEVNAME" && v == name)
        });
        if named {
            // Without udev nobody makes the link that configs refer to; make it.
            let _ = std::fs::create_dir_all("/dev/md");
            let _ = std::os::unix::fs::symlink(format!("../{dev}"), &link);
            return Some(node);
        }
    }
    None
}

pub(crate) fn run(cx: &Job, out: &mut Outcome) -> Result<(), StageError> {
    let base = JsonPath::root().key("storage").key("raid");
    for (i, r) in cx.config.storage.raid.iter().enumerate() {
        one(cx, r, &base.index(i), out)?;
    }
    Ok(())
}

fn one(cx: &Job, r: &Raid, entry: &JsonPath, out: &mut Outcome) -> Result<(), StageError> {
    let md = PathBuf::from("/dev/md").join(&r.name);
    if let Some(node) = find_array(&r.name) {
        out.notes.push(format!(
            "RAID array {} is running as {}: reused",
            r.name,
            node.display()
        ));
        return Ok(());
    }
    let mut members = Vec::new();
    for (j, d) in r.devices.iter().enumerate() {
        let at = entry.key("devices").index(j);
        members.push(cx.device(d, &at)?.unwrap_or_else(|| PathBuf::from(d)));
    }
    let level = r.level.clone().unwrap_or_default();
    let found: Vec<Option<Member>> = members.iter().map(|m| examine(m)).collect();
    let reusable = found.iter().all(|m| {
        m.as_ref().is_some_and(|m| {
            bare_name(&m.name) == r.name
                && m.level == level
                && found[0].as_ref().is_some_and(|f| f.uuid == m.uuid)
        })
    }) && !found.is_empty();
    let list = members
        .iter()
        .map(|m| m.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if reusable {
        out.notes.push(format!(
            "RAID array {} found on {list}: {}",
            r.name,
            if cx.mode.applies() {
                "assembled and reused"
            } else {
                "would be assembled and reused"
            }
        ));
        if cx.mode.applies() {
            let mut args: Vec<String> = vec![
                "--assemble".into(),
                md.display().to_string(),
                "--run".into(),
            ];
            args.extend(members.iter().map(|m| m.display().to_string()));
            tool::run("mdadm", &args)
                .map_err(|e| fail(entry.clone(), format!("assembling {}: {e}", r.name)))?;
            wait_array(&r.name, entry)?;
        }
        return Ok(());
    }
    out.changes.push(change(
        "raid",
        entry.clone(),
        &md,
        format!("create RAID array {} ({level}) on {list}", r.name),
    ));
    if !cx.mode.applies() {
        return Ok(());
    }
    let spares = r.spares.unwrap_or(0).max(0) as usize;
    let mut args: Vec<String> = vec![
        "--create".into(),
        md.display().to_string(),
        "--force".into(),
        "--run".into(),
        "--homehost=any".into(),
        format!("--level={level}"),
        format!("--raid-devices={}", members.len().saturating_sub(spares)),
    ];
    if spares > 0 {
        args.push(format!("--spare-devices={spares}"));
    }
    args.extend(r.options.iter().cloned());
    args.extend(members.iter().map(|m| m.display().to_string()));
    tool::run("mdadm", &args)
        .map_err(|e| fail(entry.clone(), format!("creating {}: {e}", r.name)))?;
    wait_array(&r.name, entry)?;
    Ok(())
}

fn wait_array(name: &str, entry: &JsonPath) -> Result<PathBuf, StageError> {
    let start = std::time::Instant::now();
    loop {
        if let Some(p) = find_array(name) {
            return Ok(p);
        }
        if start.elapsed() > devices::timeout() {
            return Err(fail(
                entry.clone(),
                format!("RAID array /dev/md/{name} did not appear"),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homehost_prefix_is_dropped() {
        assert_eq!(bare_name("any:root"), "root");
        assert_eq!(bare_name("root"), "root");
    }
}
