//! Partition tables on real disks: observe the GPT, plan with [`super::partitions`], write the
//! new table and tell the kernel (BLKPG), refusing to touch partitions that are in use.

use super::partitions::{self, Action, Layout, Slot};
use super::{Job, change, device, fail};
use crate::stage::{Outcome, StageError};
use crate::system::{blockdev, devices, gpt};
use flint_go::tree::JsonPath;
use flint_ignition::types::Disk;
use std::path::Path;

pub(crate) fn run(cx: &Job, out: &mut Outcome) -> Result<(), StageError> {
    let disks = JsonPath::root().key("storage").key("disks");
    for (i, disk) in cx.config.storage.disks.iter().enumerate() {
        let entry = disks.index(i);
        // A plan does not wait for a disk: it says what it cannot see and goes on.
        if !cx.mode.applies() && devices::resolve_now(&disk.device).is_none() {
            out.unseen.push(format!(
                "would wait for {}: not present on this machine",
                disk.device
            ));
            continue;
        }
        let dev = device(&disk.device, &entry.key("device"))?;
        one_disk(cx, disk, &dev, &entry, out)?;
    }
    Ok(())
}

/// The disk's table as the planner sees it; `None` when it has none or a corrupt one (with why).
fn observe(dev: &Path, entry: &JsonPath) -> Result<(Layout, Option<String>), StageError> {
    let io = |e: std::io::Error| fail(entry.clone(), format!("{}: {e}", dev.display()));
    let geo = blockdev::geometry(dev).map_err(io)?;
    let (table, corrupt) = match gpt::probe(dev).map_err(io)? {
        gpt::Probe::Found { table, .. } if table.sector_size == geo.sector_size => (table, None),
        gpt::Probe::Found { .. } | gpt::Probe::Absent => (
            gpt::Table::blank(geo.sector_size, geo.bytes / geo.sector_size),
            None,
        ),
        gpt::Probe::Corrupt { reason } => (
            gpt::Table::blank(geo.sector_size, geo.bytes / geo.sector_size),
            Some(reason),
        ),
    };
    Ok((to_layout(&table), corrupt))
}

fn to_layout(t: &gpt::Table) -> Layout {
    Layout {
        sector_size: t.sector_size,
        first_usable: t.first_usable,
        last_usable: t.last_usable,
        slots: t.partitions.clone(),
    }
}

fn one_disk(
    cx: &Job,
    disk: &Disk,
    dev: &Path,
    entry: &JsonPath,
    out: &mut Outcome,
) -> Result<(), StageError> {
    let wipe = disk.wipe_table == Some(true);
    let (observed, corrupt) = observe(dev, entry)?;
    if let Some(why) = &corrupt
        && !wipe
    {
        return Err(fail(
            entry.clone(),
            format!(
                "{}: the partition table is corrupt ({why}); set wipeTable to replace it",
                dev.display()
            ),
        ));
    }
    let parts = entry.key("partitions");
    let mut made = made_partitions(&cx.state_dir);
    let plan = partitions::plan_with(&disk.partitions, wipe, &observed, &made, &mut random_guid)
        .map_err(|e| {
            let at = e.index.map_or(entry.clone(), |i| parts.index(i));
            fail(at, format!("{}: {}", dev.display(), e.message))
        })?;
    if plan.actions.is_empty() {
        // The table is right; make sure the kernel knows its partitions (a kernel without
        // partition-table parsing, or a table written by another tool, leaves them unknown).
        if cx.mode.applies()
            && let Ok(Some(t)) = gpt::read(dev)
        {
            blockdev::sync_kernel(dev, t.sector_size, &t.byte_ranges())
                .map_err(|e| fail(entry.clone(), format!("{}: {e}", dev.display())))?;
        }
        return Ok(());
    }
    refuse_in_use(dev, &plan.actions, entry, &parts)?;
    for a in &plan.actions {
        let at = a.index().map_or(entry.clone(), |i| parts.index(i));
        out.changes.push(change(
            "partition",
            at,
            dev,
            format!("{} on {}", a.describe(observed.sector_size), dev.display()),
        ));
    }
    if !cx.mode.applies() {
        return Ok(());
    }
    let io = |e: std::io::Error| fail(entry.clone(), format!("{}: {e}", dev.display()));
    let geo = blockdev::geometry(dev).map_err(io)?;
    let mut table = gpt::read(dev)
        .map_err(io)?
        .filter(|_| !wipe)
        .unwrap_or_else(|| gpt::Table::blank(geo.sector_size, geo.bytes / geo.sector_size));
    if wipe {
        gpt::wipe(dev).map_err(io)?;
    }
    table.partitions = plan
        .result
        .slots
        .iter()
        .map(|s| Slot {
            type_guid: s.type_guid.to_uppercase(),
            guid: s.guid.to_uppercase(),
            ..s.clone()
        })
        .collect();
    // Upstream wipes with a run of sgdisk of its own, and runs it again only for partitions
    // to make: a wipe that leaves none leaves no table at all.
    if !(wipe && table.partitions.is_empty()) {
        gpt::write(dev, &table).map_err(io)?;
    }
    blockdev::sync_kernel(dev, table.sector_size, &table.byte_ranges()).map_err(io)?;
    for a in &plan.actions {
        if let Action::Create { slot, .. }
        | Action::Recreate { to: slot, .. }
        | Action::Resize { to: slot, .. } = a
        {
            made.push(slot.guid.to_uppercase());
        }
    }
    remember_made(&cx.state_dir, &made).map_err(io)?;
    // Verify: the table on the disk is the planned one.
    let (now, _) = observe(dev, entry)?;
    if let Some(why) = differs(&table.partitions, &now.slots) {
        return Err(fail(
            entry.clone(),
            format!(
                "{}: not in the desired state after writing the table: {why}",
                dev.display()
            ),
        ));
    }
    // Planning again should find nothing. Where upstream's rules are not idempotent (they
    // can move a partition again on every run) and the re-run extensions do not cover it,
    // this run still succeeded as upstream's does: the re-run is only announced.
    if let Ok(again) = partitions::plan_with(&disk.partitions, wipe, &now, &made, &mut random_guid)
        && let Some(a) = again.actions.first()
    {
        out.notes.push(format!(
            "{}: a re-run of this config would {}, as upstream's rules have it",
            dev.display(),
            a.describe(now.sector_size)
        ));
    }
    Ok(())
}

/// How the table read back differs from the one written (`None` when it is the same).
fn differs(written: &[Slot], read: &[Slot]) -> Option<String> {
    let same = |a: &Slot, b: &Slot| {
        a.number == b.number
            && a.start == b.start
            && a.size == b.size
            && a.label == b.label
            && a.guid.eq_ignore_ascii_case(&b.guid)
            && a.type_guid.eq_ignore_ascii_case(&b.type_guid)
    };
    if written.len() != read.len() {
        return Some(format!(
            "{} partitions written, {} read back",
            written.len(),
            read.len()
        ));
    }
    let (w, r) = written.iter().zip(read).find(|(w, r)| !same(w, r))?;
    Some(format!(
        "partition {} written as {:?} at sector {} ({} sectors), read back as partition {} {:?} at sector {} ({} sectors)",
        w.number, w.label, w.start, w.size, r.number, r.label, r.start, r.size
    ))
}

/// The state file listing the GUIDs of the partitions flint made (see
/// [`partitions::plan_with`]): one per line.
const MADE: &str = "partitions-made";

fn made_partitions(state_dir: &Path) -> Vec<String> {
    std::fs::read_to_string(state_dir.join(MADE))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_uppercase())
        .filter(|l| !l.is_empty())
        .collect()
}

fn remember_made(state_dir: &Path, made: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    let mut text = made.join("\n");
    text.push('\n');
    // Written aside and renamed: a failed write leaves the list as it was.
    let tmp = state_dir.join(format!("{MADE}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, state_dir.join(MADE))
}

/// A partition the plan deletes or moves must not be mounted, swapped on or held (by md, dm).
fn refuse_in_use(
    dev: &Path,
    actions: &[Action],
    entry: &JsonPath,
    parts: &JsonPath,
) -> Result<(), StageError> {
    for a in actions {
        let (what, at) = match a {
            Action::WipeTable => (blockdev::in_use(dev), entry.clone()),
            Action::Delete { index, slot }
            | Action::Resize {
                index, from: slot, ..
            }
            | Action::Recreate {
                index, from: slot, ..
            } => (
                blockdev::in_use_exact(&blockdev::partition_node(dev, slot.number)),
                parts.index(*index),
            ),
            Action::Create { .. } => continue,
        };
        if let Ok(Some(why)) = what {
            return Err(fail(
                at,
                format!(
                    "{}: refusing to {}: in use ({why})",
                    dev.display(),
                    match a {
                        Action::WipeTable => "wipe the partition table".to_string(),
                        other => format!("change partition {}", other.slot_number()),
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// A random GUID, upper case, as the planner needs for new partitions.
pub(crate) fn random_guid() -> String {
    uuid::Uuid::new_v4().to_string().to_uppercase()
}
