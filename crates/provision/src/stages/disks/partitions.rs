//! The partition planner: (desired partitions, observed table) → actions and the table that
//! results. Pure: no device is touched here, so every rule is unit-tested on synthetic tables.
//!
//! The rules are upstream Ignition's ("Partition Reuse Semantics" in its operator notes), which
//! drives `sgdisk`; the parts of sgdisk's behaviour that the rules depend on are modelled by
//! [`Space`]: 1 MiB alignment of starts, `start 0` = start of the largest free block, `size 0`
//! = to the end of that block, all deletions before all creations.
//!
//! Extensions for safe re-runs, on partitions flint itself made (`made`: their GUIDs, kept in
//! the state directory; on any other partition the rules are upstream's alone):
//! - a partition with `number: 0` and a label that such a partition carries, and that it
//!   already satisfies, is that partition (upstream would add a second one, or fail for lack
//!   of space, on every re-run);
//! - such a partition listed with `wipePartitionEntry` and no start (or 0) or size stays where it is
//!   when the others are placed (upstream's pretend run moves it to the largest free block,
//!   where it can collide with the next one and fail the re-run of a config that succeeded).

use flint_ignition::types::Partition;

/// Linux filesystem data: sgdisk's default type, and so upstream's.
pub const DEFAULT_TYPE: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
/// GPT has 128 entries.
pub const MAX_PARTITIONS: u32 = 128;

/// One partition of a table, observed or planned (sizes in logical sectors): the GPT entry.
pub use crate::system::gpt::Entry as Slot;

impl Slot {
    pub fn end(&self) -> u64 {
        // Fuzzing (fuzz/partition_planner): `start + size - 1` overflowed for a slot reaching
        // the end of the address space, and underflowed for an empty slot at 0. Clamped
        // instead; an empty slot still ends just before it starts (at 0 when it starts at 0).
        match self.size {
            0 => self.start.saturating_sub(1),
            n => self.start.saturating_add(n - 1),
        }
    }
}

/// A partition table's usable space and partitions (sorted by number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub sector_size: u64,
    pub first_usable: u64,
    pub last_usable: u64,
    pub slots: Vec<Slot>,
}

impl Layout {
    pub fn get(&self, number: u32) -> Option<&Slot> {
        self.slots.iter().find(|s| s.number == number)
    }

    /// Sectors per MiB: sgdisk's alignment, and the unit of the config's sizes.
    pub fn per_mib(&self) -> u64 {
        (1 << 20) / self.sector_size.max(1)
    }

    fn remove(&mut self, number: u32) {
        self.slots.retain(|s| s.number != number);
    }

    fn insert(&mut self, slot: Slot) {
        self.slots.push(slot);
        self.slots.sort_by_key(|s| s.number);
    }

    /// Free blocks (first, last) in disk order.
    fn free_blocks(&self) -> Vec<(u64, u64)> {
        let mut used: Vec<(u64, u64)> = self.slots.iter().map(|s| (s.start, s.end())).collect();
        used.sort();
        let mut out = Vec::new();
        let mut at = self.first_usable;
        for (s, e) in used {
            if s > at {
                out.push((at, s - 1));
            }
            at = at.max(e.saturating_add(1));
        }
        if at <= self.last_usable {
            out.push((at, self.last_usable));
        }
        out
    }

    /// The largest free block (the first of equals), as sgdisk picks it for defaults.
    fn largest_block(&self) -> Option<(u64, u64)> {
        let mut best: Option<(u64, u64)> = None;
        for b in self.free_blocks() {
            if best.is_none_or(|x| b.1 - b.0 > x.1 - x.0) {
                best = Some(b);
            }
        }
        best
    }

    /// Whether every sector of `first..=last` is usable and in no partition.
    fn all_free(&self, first: u64, last: u64) -> bool {
        first >= self.first_usable
            && last <= self.last_usable
            && !self
                .slots
                .iter()
                .any(|o| o.start <= last && first <= o.end())
    }

    /// A start aligned as sgdisk aligns it: down to the MiB boundary when every sector from
    /// there is free, else up to the next one when every sector up to it is free, else left
    /// where it is (a free block smaller than the alignment: the gap before the first
    /// partition of a table made elsewhere). `None` past u64::MAX.
    fn align(&self, sector: u64) -> Option<u64> {
        let a = self.per_mib().max(1);
        if sector.is_multiple_of(a) {
            return Some(sector);
        }
        let earlier = sector - sector % a;
        if earlier >= self.first_usable && self.all_free(earlier, sector - 1) {
            return Some(earlier);
        }
        let later = earlier.checked_add(a)?;
        if later <= self.last_usable && self.all_free(sector + 1, later) {
            return Some(later);
        }
        Some(sector)
    }

    /// Places a partition as `sgdisk --new=N:START:SIZE` would: `None` for a default. A
    /// default start is the aligned first sector of the largest free block; a given start is
    /// aligned too, but a given size counts from the start as given (sgdisk computes the end
    /// before it aligns the start).
    fn place(&self, start: Option<u64>, size: Option<u64>) -> Result<(u64, u64), String> {
        let (low, high) = match self.largest_block() {
            Some((s, e)) => (self.align(s), e),
            None => return Err("no free space left on the disk".into()),
        };
        let mib = |s: u64| mib_text(s, self.sector_size);
        // Fuzzing (fuzz/partition_planner): aligning a start near u64::MAX, and the sizes in
        // the message below, overflowed on hostile tables (last usable sector near u64::MAX,
        // partitions there). Such a start does not fit, and the arithmetic saturates.
        let given = start;
        let start = match given {
            Some(s) => self.align(s),
            None => low,
        };
        let Some(start) = start else {
            return Err(format!(
                "a partition past the end of any disk does not fit (usable space ends at {})",
                mib(self.last_usable.saturating_add(1))
            ));
        };
        let end = match size {
            Some(n) => given.unwrap_or(start).saturating_add(n).saturating_sub(1),
            None => high,
        };
        if start < self.first_usable || end > self.last_usable || end < start {
            return Err(format!(
                "{} at {} does not fit on the disk (usable space ends at {})",
                mib(end.saturating_sub(start).saturating_add(1)),
                mib(start),
                mib(self.last_usable.saturating_add(1))
            ));
        }
        if let Some(o) = self
            .slots
            .iter()
            .find(|o| o.start <= end && start <= o.end())
        {
            return Err(format!(
                "{} at {} does not fit: it overlaps partition {} ({} at {})",
                mib((end - start).saturating_add(1)),
                mib(start),
                o.number,
                mib(o.size),
                mib(o.start)
            ));
        }
        Ok((start, (end - start).saturating_add(1)))
    }

    fn free_number(&self) -> Option<u32> {
        (1..=MAX_PARTITIONS).find(|n| self.get(*n).is_none())
    }
}

/// Sectors as MiB for messages: whole when whole.
pub fn mib_text(sectors: u64, sector_size: u64) -> String {
    let bytes = sectors as u128 * sector_size as u128;
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// What the planner decided for the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    WipeTable,
    Delete {
        index: usize,
        slot: Slot,
    },
    Create {
        index: usize,
        slot: Slot,
    },
    /// Delete and create again in place with a new size (`resize: true`).
    Resize {
        index: usize,
        from: Slot,
        to: Slot,
    },
    /// Delete and create again because it did not match (`wipePartitionEntry: true`).
    Recreate {
        index: usize,
        from: Slot,
        to: Slot,
    },
}

impl Action {
    /// The config index of the partition the action is for.
    pub fn index(&self) -> Option<usize> {
        match self {
            Action::WipeTable => None,
            Action::Delete { index, .. }
            | Action::Create { index, .. }
            | Action::Resize { index, .. }
            | Action::Recreate { index, .. } => Some(*index),
        }
    }

    /// The number of the partition the action is about (0 for the table).
    pub fn slot_number(&self) -> u32 {
        match self {
            Action::WipeTable => 0,
            Action::Delete { slot, .. } | Action::Create { slot, .. } => slot.number,
            Action::Resize { to, .. } | Action::Recreate { to, .. } => to.number,
        }
    }

    /// One line, without the device: "create partition 2 \"ROOT\" 4096 MiB at 1 MiB".
    pub fn describe(&self, sector_size: u64) -> String {
        let m = |s| mib_text(s, sector_size);
        let name = |s: &Slot| {
            if s.label.is_empty() {
                format!("partition {}", s.number)
            } else {
                format!("partition {} {:?}", s.number, s.label)
            }
        };
        match self {
            Action::WipeTable => "wipe the partition table".into(),
            Action::Delete { slot, .. } => format!("delete {}", name(slot)),
            Action::Create { slot, .. } => {
                format!(
                    "create {} {} at {}",
                    name(slot),
                    m(slot.size),
                    m(slot.start)
                )
            }
            Action::Resize { from, to, .. } => format!(
                "resize {} from {} to {}",
                name(to),
                m(from.size),
                m(to.size)
            ),
            Action::Recreate { from, to, .. } => format!(
                "recreate {} ({} at {}) as {} at {}",
                name(to),
                m(from.size),
                m(from.start),
                m(to.size),
                m(to.start)
            ),
        }
    }
}

/// The planner's answer: actions in order, and the table after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub result: Layout,
}

/// A partition the config asks for that cannot be had; `index` is its place in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub index: Option<usize>,
    pub message: String,
}

/// A config partition with sizes in sectors, as resolved against the table.
#[derive(Debug, Clone)]
struct Want {
    index: usize,
    number: u32,
    start: Option<u64>,
    size: Option<u64>,
    label: Option<String>,
    guid: Option<String>,
    type_guid: Option<String>,
    should_exist: bool,
    wipe_entry: bool,
    resize: bool,
    /// A `number: 0` entry taken as the existing partition with its label: it stays as it
    /// is, and takes no part in placing the others (upstream never deletes it).
    by_label: bool,
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_ref()
        .filter(|s| !s.is_empty())
        .map(|s| s.to_uppercase())
}

/// Plans the partitions of one disk as upstream does. `new_guid` gives GUIDs for partitions
/// the config leaves without one (random in use, fixed in tests).
pub fn plan(
    desired: &[Partition],
    wipe_table: bool,
    observed: &Layout,
    new_guid: &mut dyn FnMut() -> String,
) -> Result<Plan, PlanError> {
    plan_with(desired, wipe_table, observed, &[], new_guid)
}

/// [`plan`], with the re-run extensions for the partitions whose GUIDs (upper case) are in
/// `made`: those flint made on an earlier run.
pub fn plan_with(
    desired: &[Partition],
    wipe_table: bool,
    observed: &Layout,
    made: &[String],
    new_guid: &mut dyn FnMut() -> String,
) -> Result<Plan, PlanError> {
    let made = |s: &Slot| made.iter().any(|g| g.eq_ignore_ascii_case(&s.guid));
    if wipe_table {
        let mut empty = observed.clone();
        empty.slots.clear();
        let mut invented = Vec::new();
        let mut p = plan_on(desired, &empty, &made, &mut || {
            let g = new_guid();
            invented.push(g.clone());
            g
        })?;
        // Beyond upstream: when the table already is what wiping and creating would give, a
        // re-run leaves it alone instead of wiping it again.
        if same_table(&p.result, observed, &invented) {
            return Ok(Plan {
                actions: Vec::new(),
                result: observed.clone(),
            });
        }
        p.actions.insert(0, Action::WipeTable);
        return unique_guids(desired, p);
    }
    unique_guids(desired, plan_on(desired, observed, &made, new_guid)?)
}

/// A partition made with the GUID another partition of the table has is refused. sgdisk
/// writes it (upstream's run succeeds), but the GPT wants each unique, and two partitions of
/// one GUID make `/dev/disk/by-partuuid` name either: a mount by it could take the wrong one.
/// Only GUIDs the config gives are checked: made-up ones are random.
fn unique_guids(desired: &[Partition], plan: Plan) -> Result<Plan, PlanError> {
    // The partitions made here with a GUID of the config's (index, slot), and those whose
    // GUID was made up (numbers).
    let mut given = Vec::new();
    let mut made_up = Vec::new();
    for a in &plan.actions {
        if let Action::Create { index, slot }
        | Action::Recreate {
            index, to: slot, ..
        } = a
        {
            match desired.get(*index).and_then(|p| p.guid.as_ref()) {
                Some(_) => given.push((*index, slot)),
                None => made_up.push(slot.number),
            }
        }
    }
    for (index, slot) in given {
        let twin = (plan.result.slots.iter()).find(|s| {
            s.number != slot.number
                && !made_up.contains(&s.number)
                && s.guid.eq_ignore_ascii_case(&slot.guid)
        });
        if let Some(twin) = twin {
            return Err(PlanError {
                index: Some(index),
                message: format!(
                    "partition {}: GUID {} is partition {}'s already: a disk's partition GUIDs must be unique",
                    slot.number, slot.guid, twin.number
                ),
            });
        }
    }
    Ok(plan)
}

/// Equal but for GUIDs the planner made up (`invented`): a GUID the config gives must be
/// the one there (in any letter case).
fn same_table(planned: &Layout, observed: &Layout, invented: &[String]) -> bool {
    planned.slots.len() == observed.slots.len()
        && planned.slots.iter().zip(&observed.slots).all(|(p, o)| {
            p.number == o.number
                && p.start == o.start
                && p.size == o.size
                && p.type_guid.eq_ignore_ascii_case(&o.type_guid)
                && p.label == o.label
                && (invented.contains(&p.guid) || p.guid.eq_ignore_ascii_case(&o.guid))
        })
}

fn plan_on(
    desired: &[Partition],
    layout: &Layout,
    made: &dyn Fn(&Slot) -> bool,
    new_guid: &mut dyn FnMut() -> String,
) -> Result<Plan, PlanError> {
    within_any_disk(desired, layout.per_mib())?;
    let mut wants = wants_of(desired, layout, made)?;
    resolve_defaults(&mut wants, layout, made)?;
    let (deletes, creates) = decide(&wants, layout, new_guid)?;
    carry_out(layout, deletes, creates)
}

/// A partition to create: the entry's index, the slot, the one it replaces, and whether
/// that is a resize.
type Creation = (usize, Slot, Option<Slot>, bool);

/// Fuzzing (fuzz/partition_planner): a huge startMiB/sizeMiB overflowed the sector count
/// (a panic with overflow checks, a wrapped and so wrong place without), and a number
/// beyond u32 was truncated (2^32 + 1 became partition 1). The first is refused here, the
/// second by the MAX_PARTITIONS check in `wants_of`. Sizes in MiB are refused beyond any disk.
fn within_any_disk(desired: &[Partition], per_mib: u64) -> Result<(), PlanError> {
    for (index, p) in desired.iter().enumerate() {
        for (key, mib) in [("startMiB", p.start_mib), ("sizeMiB", p.size_mib)] {
            if let Some(m) = mib
                && (m.max(0) as u64).checked_mul(per_mib).is_none()
            {
                return Err(PlanError {
                    index: Some(index),
                    message: format!("{key} {m} is beyond any disk"),
                });
            }
        }
    }
    Ok(())
}

/// What each entry wants, in the order upstream takes them (partitions that take the next
/// free number last).
fn wants_of(
    desired: &[Partition],
    layout: &Layout,
    made: &dyn Fn(&Slot) -> bool,
) -> Result<Vec<Want>, PlanError> {
    let per_mib = layout.per_mib();
    let number_of = |p: &Partition| u32::try_from(p.number.max(0)).unwrap_or(u32::MAX);
    let to_sectors = |mib: Option<i64>| mib.map(|m| (m.max(0) as u64) * per_mib);
    let explicit: Vec<u32> = desired
        .iter()
        .filter(|p| p.number > 0)
        .map(number_of)
        .collect();
    let mut wants: Vec<Want> = desired
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let mut w = Want {
                index,
                number: number_of(p),
                start: to_sectors(p.start_mib),
                size: to_sectors(p.size_mib),
                label: p.label.clone(),
                guid: non_empty(&p.guid),
                type_guid: non_empty(&p.type_guid),
                should_exist: p.should_exist != Some(false),
                wipe_entry: p.wipe_partition_entry == Some(true),
                resize: p.resize == Some(true),
                by_label: false,
            };
            // The extension (see the module's comment): only a partition that is already
            // what the entry asks for (a start or size of 0: wherever it was put) is taken
            // for it; any other entry is upstream's new partition.
            if w.number == 0
                && w.should_exist
                && let Some(label) = &p.label
                && let Some(found) = layout
                    .slots
                    .iter()
                    .filter(|s| &s.label == label && !explicit.contains(&s.number) && made(s))
                    .find_map(|s| {
                        let found = Want {
                            number: s.number,
                            start: w.start.filter(|s| *s != 0),
                            size: w.size.filter(|s| *s != 0),
                            by_label: true,
                            ..w.clone()
                        };
                        mismatch(s, &found, true).is_none().then_some(found)
                    })
            {
                w = found;
            }
            w
        })
        .collect();
    // (A partition that should not exist beyond the table's entries cannot exist: upstream
    // has nothing to do for it.)
    for w in wants.iter().filter(|w| w.should_exist) {
        if w.number > MAX_PARTITIONS {
            return Err(PlanError {
                index: Some(w.index),
                message: format!(
                    "partition number {} is beyond the {MAX_PARTITIONS} entries of a GPT",
                    w.number
                ),
            });
        }
    }
    // Partitions that take the next free number come last, as upstream sorts them.
    wants.sort_by_key(|w| w.number == 0);
    Ok(wants)
}

/// The deletions and creations that make the table as the entries want it.
fn decide(
    wants: &[Want],
    layout: &Layout,
    new_guid: &mut dyn FnMut() -> String,
) -> Result<(Vec<Action>, Vec<Creation>), PlanError> {
    let mut deletes: Vec<Action> = Vec::new();
    let mut creates: Vec<Creation> = Vec::new();
    for w in wants {
        let existing = layout.get(w.number).filter(|_| w.number > 0);
        match (existing, w.should_exist) {
            (None, false) => {}
            (None, true) => creates.push((w.index, slot_for(w, None, new_guid), None, false)),
            (Some(e), false) => {
                if !w.wipe_entry {
                    return Err(PlanError {
                        index: Some(w.index),
                        message: format!(
                            "partition {} exists but is specified as nonexistent and wipePartitionEntry is false",
                            w.number
                        ),
                    });
                }
                deletes.push(Action::Delete {
                    index: w.index,
                    slot: e.clone(),
                });
            }
            (Some(e), true) => match mismatch(e, w, true) {
                None => {}
                Some(_) if w.wipe_entry => {
                    deletes.push(Action::Delete {
                        index: w.index,
                        slot: e.clone(),
                    });
                    creates.push((w.index, slot_for(w, None, new_guid), Some(e.clone()), false));
                }
                Some(why) => {
                    if w.resize && mismatch(e, w, false).is_none() {
                        deletes.push(Action::Delete {
                            index: w.index,
                            slot: e.clone(),
                        });
                        creates.push((
                            w.index,
                            slot_for(w, Some(e), new_guid),
                            Some(e.clone()),
                            true,
                        ));
                    } else {
                        return Err(PlanError {
                            index: Some(w.index),
                            message: format!("partition {} didn't match: {why}", w.number),
                        });
                    }
                }
            },
        }
    }
    Ok((deletes, creates))
}

/// The actions in sgdisk's order, and the table they leave: every deletion, then the
/// creations in order, each placed as sgdisk places it.
fn carry_out(
    layout: &Layout,
    deletes: Vec<Action>,
    creates: Vec<Creation>,
) -> Result<Plan, PlanError> {
    let mut result = layout.clone();
    for d in &deletes {
        if let Action::Delete { slot, .. } = d {
            result.remove(slot.number);
        }
    }
    let mut actions: Vec<Action> = deletes
        .iter()
        .filter(|d| {
            // A deletion that a creation undoes is reported as that creation's recreate/resize.
            let Action::Delete { slot, .. } = d else {
                return true;
            };
            !creates
                .iter()
                .any(|(_, _, from, _)| from.as_ref().is_some_and(|f| f.number == slot.number))
        })
        .cloned()
        .collect();
    for (index, mut slot, from, resize) in creates {
        if slot.number == 0 {
            slot.number = result.free_number().ok_or_else(|| PlanError {
                index: Some(index),
                message: format!("no free partition number: the table has {MAX_PARTITIONS}"),
            })?;
        }
        let want_start = (slot.start != u64::MAX).then_some(slot.start);
        let want_size = (slot.size != 0).then_some(slot.size);
        let (start, size) = result.place(want_start, want_size).map_err(|m| PlanError {
            index: Some(index),
            message: format!("partition {}: {m}", slot.number),
        })?;
        slot.start = start;
        slot.size = size;
        result.insert(slot.clone());
        actions.push(match (from, resize) {
            (None, _) => Action::Create { index, slot },
            (Some(from), true) => Action::Resize {
                index,
                from,
                to: slot,
            },
            (Some(from), false) => Action::Recreate {
                index,
                from,
                to: slot,
            },
        });
    }
    Ok(Plan { actions, result })
}

/// Upstream resolves `start`/`size` of 0, and unspecified ones, by pretending to delete every
/// listed partition and create them again in order (an existing partition without
/// wipePartitionEntry at its own start and size); a numbered partition's, and `start 0` and
/// `size 0` of any, then take the places that pretend run gave them.
fn resolve_defaults(
    wants: &mut [Want],
    layout: &Layout,
    made: &dyn Fn(&Slot) -> bool,
) -> Result<(), PlanError> {
    let mut pretend = layout.clone();
    for w in wants.iter_mut().filter(|w| !w.by_label) {
        if let Some(e) = layout.get(w.number).filter(|_| w.number > 0) {
            pretend.remove(w.number);
            if !w.wipe_entry {
                w.start = w.start.or(Some(e.start));
                w.size = w.size.or(Some(e.size));
            }
        }
    }
    for w in wants.iter_mut() {
        if !w.should_exist || w.by_label {
            continue;
        }
        // The re-run extension (see the module's comment): a partition flint made stays in
        // place; upstream's pretend run moves any other to the largest free block.
        let here = layout.get(w.number).filter(|s| w.number > 0 && made(s));
        // A start of 0 is "the default" as much as one left out: a made partition keeps its
        // own. (A size of 0 still fills the free block: a disk grown since may want it.)
        let start = w.start.filter(|s| *s != 0).or(here.map(|e| e.start));
        let size = w.size.or(here.map(|e| e.size)).filter(|s| *s != 0);
        let (s, n) = pretend.place(start, size).map_err(|m| PlanError {
            index: Some(w.index),
            message: match w.number {
                0 => format!("partition: {m}"),
                n => format!("partition {n}: {m}"),
            },
        })?;
        let number = match w.number {
            0 => pretend.free_number().unwrap_or(0),
            n => n,
        };
        pretend.insert(Slot {
            number,
            start: s,
            size: n,
            type_guid: String::new(),
            guid: String::new(),
            label: String::new(),
        });
        // A numbered partition's start and size, 0 or left out, are where the pretend run
        // put it: an existing one listed with wipePartitionEntry (left out here above) is
        // compared with that place, and made again there when it is elsewhere.
        if w.number > 0 || w.start == Some(0) {
            w.start = w.start.filter(|s| *s != 0).or(Some(s));
        }
        if w.number > 0 || w.size == Some(0) {
            w.size = w.size.filter(|s| *s != 0).or(Some(n));
        }
    }
    Ok(())
}

/// Why the existing partition is not the wanted one (the size only when `with_size`).
fn mismatch(e: &Slot, w: &Want, with_size: bool) -> Option<String> {
    if let Some(s) = w.start
        && s != e.start
    {
        return Some(format!(
            "starting sector did not match (specified {s}, got {})",
            e.start
        ));
    }
    if let Some(g) = &w.guid
        && !g.eq_ignore_ascii_case(&e.guid)
    {
        return Some(format!(
            "GUID did not match (specified {g:?}, got {:?})",
            e.guid
        ));
    }
    if let Some(t) = &w.type_guid
        && !t.eq_ignore_ascii_case(&e.type_guid)
    {
        return Some(format!(
            "type GUID did not match (specified {t:?}, got {:?})",
            e.type_guid
        ));
    }
    if let Some(l) = &w.label
        && *l != e.label
    {
        return Some(format!(
            "label did not match (specified {l:?}, got {:?})",
            e.label
        ));
    }
    if with_size
        && let Some(n) = w.size
        && n != e.size
    {
        return Some(format!(
            "size did not match (specified {n}, got {})",
            e.size
        ));
    }
    None
}

/// The slot to create; `start == u64::MAX` and `size == 0` stand for sgdisk's defaults. A
/// resize keeps the identity and place of the partition it replaces.
fn slot_for(w: &Want, resize_of: Option<&Slot>, new_guid: &mut dyn FnMut() -> String) -> Slot {
    if let Some(e) = resize_of {
        return Slot {
            size: w.size.unwrap_or(0),
            ..e.clone()
        };
    }
    Slot {
        number: w.number,
        start: w.start.unwrap_or(u64::MAX),
        size: w.size.unwrap_or(0),
        type_guid: w.type_guid.clone().unwrap_or_else(|| DEFAULT_TYPE.into()),
        guid: w.guid.clone().unwrap_or_else(new_guid),
        label: w.label.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests;
