//! Builds a partition planner input from fuzzer bytes with `arbitrary`: mostly plausible
//! values (small MiB counts, a few labels and GUIDs that collide on purpose) so plans get
//! far, and now and then raw integers (negative, huge) and hostile observed tables.

use crate::harness::PlannerInput;
use arbitrary::{Result, Unstructured};
use flint_ignition::types::Partition;

const GUIDS: &[&str] = &[
    "11111111-2222-3333-4444-555555555555",
    "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
    "0fc63daf-8483-4772-8e79-3d69d8477de4",
    "5DFBF5F4-2848-4BAC-AA5E-0D9A20B745A6",
    "",
];
const LABELS: &[&str] = &["ROOT", "USR-A", "OEM", "EFI-SYSTEM", "", "ROOT "];

fn guid(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(1, 8)? {
        u.arbitrary()?
    } else {
        u.choose(GUIDS)?.to_string()
    })
}

fn label(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(1, 8)? {
        u.arbitrary()?
    } else {
        u.choose(LABELS)?.to_string()
    })
}

fn opt<T>(
    u: &mut Unstructured,
    f: impl FnOnce(&mut Unstructured) -> Result<T>,
) -> Result<Option<T>> {
    Ok(if u.arbitrary()? { Some(f(u)?) } else { None })
}

/// A sector count: usually a whole number of MiB (plus a little) within 80 MiB, sometimes raw.
fn sectors(u: &mut Unstructured, per_mib: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => u.int_in_range(0..=4096)?,
        _ => u.int_in_range(0..=80u64)? * per_mib + u.choose(&[0, 0, 0, 1, 33, 2047])?,
    })
}

/// A MiB count from a config: usually small, sometimes negative or huge.
fn mib(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[i64::MIN, i64::MAX, -1, i64::MAX / 256, 1 << 44])?,
        _ => u.int_in_range(-1..=80)?,
    })
}

pub fn planner_input(u: &mut Unstructured) -> Result<PlannerInput> {
    let sector_size: u64 = if u.arbitrary()? { 512 } else { 4096 };
    let per_mib = (1 << 20) / sector_size;
    let first_usable: u64 = match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => u.int_in_range(0..=1 << 16)?,
        2 => 2048,
        _ => {
            if sector_size == 512 {
                34
            } else {
                6
            }
        }
    };
    let last_usable: u64 = match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => first_usable.saturating_add(u.int_in_range(0..=1u64 << 44)?),
        2 => u64::MAX - u.int_in_range(0..=4096)?,
        _ => first_usable.saturating_add(sectors(u, per_mib)?),
    };
    let mut slots = Vec::new();
    for _ in 0..u.int_in_range(0..=8)? {
        let number = if u.ratio(1, 8)? {
            u.arbitrary()?
        } else {
            u.int_in_range(0..=10)?
        };
        let start = first_usable.saturating_add(sectors(u, per_mib)?);
        let start = if u.ratio(1, 8)? {
            u.arbitrary()?
        } else {
            start
        };
        let size = sectors(u, per_mib)?;
        slots.push((number, start, size, guid(u)?, guid(u)?, label(u)?));
    }
    let mut desired = Vec::new();
    for _ in 0..u.int_in_range(0..=8)? {
        let number = match u.int_in_range(0..=7)? {
            0 => u.arbitrary()?,
            1 => *u.choose(&[i64::MIN, -1, 128, 129, i64::from(u32::MAX) + 1, i64::MAX])?,
            _ => u.int_in_range(0..=10)?,
        };
        desired.push(Partition {
            guid: opt(u, guid)?,
            label: opt(u, label)?,
            number,
            resize: u.arbitrary()?,
            should_exist: u.arbitrary()?,
            size_mib: opt(u, mib)?,
            start_mib: opt(u, mib)?,
            type_guid: opt(u, guid)?,
            wipe_partition_entry: u.arbitrary()?,
        });
    }
    let wipe_table = u.arbitrary()?;
    // Read last, so that inputs saved before it decode as they did (an exhausted input
    // reads false): half the time, make the config more likely to pass validation (distinct
    // numbers and labels), since the planner's soundness is only asserted for valid configs.
    if u.arbitrary()? {
        let absent = desired.iter().any(|p| p.should_exist == Some(false));
        for (i, p) in desired.iter_mut().enumerate() {
            if p.number > 0 || (absent && p.number == 0) || p.number < 0 {
                p.number = i as i64 + 1;
            }
            if let Some(l) = &mut p.label {
                l.push_str(&i.to_string());
            }
        }
    }
    Ok(PlannerInput {
        sector_size,
        first_usable,
        last_usable,
        slots,
        wipe_table,
        desired,
    })
}
