//! GPT partition tables of block devices and image files, through the `gpt`
//! crate: protective MBR, primary and backup headers, 128 entries.
//!
//! The crate's headers, entries, checksums and protective MBR are used as
//! they are, but not its `GptDisk::write`: that packs the used entries into
//! the first slots of the array, so a table with a gap (partitions 1, 2 and 4)
//! would come back as 1, 2 and 3. [`write`] places every entry in the slot of
//! its number itself. Reading does not use `GptConfig::open` either, which
//! gives up when the primary header is sound but its entry array is not, and
//! panics on an entry size other than 128: [`probe`] checks each header and
//! its array on its own and falls back to the backup.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Cursor};
use std::os::unix::fs::FileExt;
use std::path::Path;

use gpt::disk::LogicalBlockSize;
use gpt::header::{Header, HeaderBuilder};
use gpt::mbr::ProtectiveMBR;
use gpt::partition::Partition;
use uuid::Uuid;

use super::blockdev;

/// Entries in the arrays this module writes.
pub const ENTRIES: u32 = 128;
/// Bytes per entry.
const ENTRY_SIZE: u32 = 128;
/// Bytes of one entry array.
const ARRAY_BYTES: u64 = ENTRIES as u64 * ENTRY_SIZE as u64;
/// A partition name holds at most this many UTF-16 code units.
pub const MAX_LABEL_UNITS: usize = 36;
/// The most entries a header read from a device may declare (a 2 MiB array);
/// anything larger is treated as corrupt rather than read.
const MAX_READ_ENTRIES: u32 = 16384;

/// One partition of a [`Table`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based GPT slot.
    pub number: u32,
    /// First LBA (logical sectors).
    pub start: u64,
    /// Size in logical sectors (last LBA = start + size - 1).
    pub size: u64,
    /// Upper-case canonical, e.g. "0FC63DAF-8483-4772-8E79-3D69D8477DE4".
    pub type_guid: String,
    /// Upper-case canonical.
    pub guid: String,
    /// GPT partition name (UTF-16 in the table, at most 36 code units).
    pub label: String,
}

/// A GPT partition table of a device of a given geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Logical sector size of the device (512 or 4096).
    pub sector_size: u64,
    /// Total logical sectors of the device.
    pub sectors: u64,
    /// First usable LBA (34 for 512-byte sectors with 128 entries; 6 for 4096).
    pub first_usable: u64,
    /// Last usable LBA (inclusive).
    pub last_usable: u64,
    /// Upper-case canonical.
    pub disk_guid: String,
    /// Sorted by number.
    pub partitions: Vec<Entry>,
}

impl Table {
    /// Each partition's start and size in bytes, by number: what the kernel is told.
    pub fn byte_ranges(&self) -> std::collections::BTreeMap<u32, (u64, u64)> {
        let ss = self.sector_size;
        (self.partitions.iter())
            .map(|e| (e.number, (e.start * ss, e.size * ss)))
            .collect()
    }

    /// An empty table for a device of this geometry (fresh random disk GUID).
    /// The usable range is that of a 128-entry table; on a device too small
    /// for one, `last_usable` is below `first_usable` and [`write`] refuses it.
    pub fn blank(sector_size: u64, sectors: u64) -> Table {
        let (first_usable, last_usable) = usable_range(sector_size, sectors);
        Table {
            sector_size,
            sectors,
            first_usable,
            last_usable,
            disk_guid: upper(&Uuid::new_v4()),
            partitions: Vec::new(),
        }
    }
}

/// What [`probe`] found on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// No GPT header signature at either end: blank, or only an MBR or a
    /// filesystem.
    Absent,
    /// A GPT header signature, but neither header with its entry array is
    /// sound.
    Corrupt {
        /// What was wrong with the primary and with the backup.
        reason: String,
    },
    /// A table, read from the primary header when that one is sound, else
    /// from the backup.
    Found {
        table: Table,
        primary_ok: bool,
        backup_ok: bool,
    },
}

/// Reads the GPT of a device or image file. `Ok(None)` when there is none, or
/// when both headers are corrupt ([`probe`] tells these apart). A corrupt
/// primary with a sound backup gives the backup's table.
///
/// `first_usable` and `last_usable` are those of the 128-entry table [`write`]
/// would put on the device as it is now (so a disk that grew since the table
/// was written shows its new end), not the header's. An image file is read
/// with 512-byte sectors, or 4096 when only that finds a table.
pub fn read(dev: &Path) -> io::Result<Option<Table>> {
    Ok(match probe(dev)? {
        Probe::Found { table, .. } => Some(table),
        Probe::Absent | Probe::Corrupt { .. } => None,
    })
}

/// Like [`read`], but tells a missing table from a corrupt one, and says
/// which headers are sound.
pub fn probe(dev: &Path) -> io::Result<Probe> {
    let file = File::open(dev).map_err(|e| context(e, dev))?;
    let (_, found) = probe_file(&file).map_err(|e| context(e, dev))?;
    Ok(found.map(|l| l.probe).unwrap_or(Probe::Absent))
}

/// Writes the table: protective MBR, primary and backup headers and entry
/// arrays (replacing whatever table was there), then fsyncs.
///
/// The disk GUID and every entry's GUID are written exactly; each entry goes
/// in the slot of its number. Everything is checked first (geometry against
/// the device, numbers 1..=128 and unique, extents inside the usable range
/// and not overlapping, GUIDs valid, labels at most 36 UTF-16 units): nothing
/// is written for a bad table. `first_usable`/`last_usable` are not taken
/// from the table: the headers get those of a 128-entry table.
///
/// Kept from what was on the device: the MBR's boot code and disk signature
/// when LBA 0 is an MBR (0x55AA), and the attribute bits of an entry whose
/// GUID and start are unchanged (Flatcar keeps USR-A/USR-B boot priorities
/// there). New entries get no attributes.
pub fn write(dev: &Path, table: &Table) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dev)
        .map_err(|e| context(e, dev))?;
    write_file(&mut file, table).map_err(|e| context(e, dev))
}

/// Wipes the partition table: zeroes LBA 0 (the MBR), the primary header and
/// entry array and the backup header and entry array, as `sgdisk --zap-all`
/// does, at the standard places and wherever a sound header says they are.
/// Then fsyncs.
pub fn wipe(dev: &Path) -> io::Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dev)
        .map_err(|e| context(e, dev))?;
    wipe_file(&file).map_err(|e| context(e, dev))
}

/// A probed table with the raw pieces [`write`] and [`wipe`] need.
struct Loaded {
    probe: Probe,
    /// Sound headers (primary first).
    headers: Vec<Header>,
    /// Attribute bits by entry GUID and start, from the table read.
    attributes: BTreeMap<(Uuid, u64), u64>,
}

/// What is on one side (primary or backup) of the disk.
enum Side {
    NoSignature,
    Bad(String),
    Sound(Header, BTreeMap<u32, Partition>),
}

/// Probes an open device, returning the sector size used and what was found
/// (`None` for absent). Image files are tried with 512-byte sectors and then
/// 4096.
fn probe_file(file: &File) -> io::Result<(u64, Option<Loaded>)> {
    let (geometry, is_block) = blockdev::file_geometry(file)?;
    let sizes: &[u64] = if is_block {
        &[geometry.sector_size]
    } else {
        &[512, 4096]
    };
    // A table wins; else the first corrupt one; else nothing.
    let mut fallback = None;
    for &ss in sizes {
        match probe_at(file, ss, geometry.bytes / ss)? {
            Some(l) if matches!(l.probe, Probe::Found { .. }) => return Ok((ss, Some(l))),
            Some(l) => {
                fallback.get_or_insert((ss, l));
            }
            None => {}
        }
    }
    Ok(match fallback {
        Some((ss, l)) => (ss, Some(l)),
        None => (sizes[0], None),
    })
}

fn probe_at(file: &File, ss: u64, sectors: u64) -> io::Result<Option<Loaded>> {
    if !matches!(ss, 512 | 4096) {
        return Err(unsupported_sector_size(ss));
    }
    if sectors < 3 {
        return Ok(None);
    }
    let primary = read_side(file, ss, sectors, 1)?;
    let last = sectors - 1;
    let backup_lba = match &primary {
        Side::Sound(h, _) if h.backup_lba < sectors && h.backup_lba > 1 => h.backup_lba,
        _ => last,
    };
    let mut backup = read_side(file, ss, sectors, backup_lba)?;
    if !matches!(backup, Side::Sound(..)) && backup_lba != last {
        // The primary points somewhere else (the disk grew?); look at the end too.
        if let s @ Side::Sound(..) = read_side(file, ss, sectors, last)? {
            backup = s;
        }
    }

    let (primary_ok, backup_ok) = (
        matches!(primary, Side::Sound(..)),
        matches!(backup, Side::Sound(..)),
    );
    let mut headers = Vec::new();
    let mut chosen = None;
    let mut reasons = Vec::new();
    for (which, side) in [("primary", primary), ("backup", backup)] {
        match side {
            Side::Sound(header, parts) => {
                headers.push(header.clone());
                chosen.get_or_insert((header, parts));
            }
            Side::Bad(why) => reasons.push(format!("{which}: {why}")),
            Side::NoSignature => reasons.push(format!("{which}: no GPT signature")),
        }
    }
    let Some((header, parts)) = chosen else {
        if !primary_ok && !backup_ok && reasons.iter().all(|r| r.ends_with("no GPT signature")) {
            return Ok(None);
        }
        return Ok(Some(Loaded {
            probe: Probe::Corrupt {
                reason: reasons.join("; "),
            },
            headers,
            attributes: BTreeMap::new(),
        }));
    };

    let (first_usable, last_usable) = usable_range(ss, sectors);
    let mut attributes = BTreeMap::new();
    let partitions = parts
        .iter()
        .filter(|(_, p)| p.is_used())
        .map(|(&number, p)| {
            attributes.insert((p.part_guid, p.first_lba), p.flags);
            Entry {
                number,
                start: p.first_lba,
                size: p.last_lba - p.first_lba + 1,
                type_guid: upper(&p.part_type_guid.guid),
                guid: upper(&p.part_guid),
                label: p.name.clone(),
            }
        })
        .collect();
    Ok(Some(Loaded {
        probe: Probe::Found {
            table: Table {
                sector_size: ss,
                sectors,
                first_usable,
                last_usable,
                disk_guid: upper(&header.disk_guid),
                partitions,
            },
            primary_ok,
            backup_ok,
        },
        headers,
        attributes,
    }))
}

/// Reads and checks the header at `lba` and the entry array it points to.
fn read_side(file: &File, ss: u64, sectors: u64, lba: u64) -> io::Result<Side> {
    let lb = LogicalBlockSize::try_from(ss)?;
    let ssz = ss as usize;
    // The crate reads a header at LBA 1 of a device: give it one whose LBA 1
    // is the sector wanted.
    let mut buf = vec![0u8; 2 * ssz];
    file.read_exact_at(&mut buf[ssz..], lba * ss)?;
    if &buf[ssz..ssz + 8] != b"EFI PART" {
        return Ok(Side::NoSignature);
    }
    let header = match gpt::header::read_header_from_arbitrary_device(&mut Cursor::new(buf), lb) {
        Ok(h) => h,
        Err(e) => return Ok(Side::Bad(e.to_string())),
    };
    if let Err(why) = check_header(&header, ss, sectors, lba) {
        return Ok(Side::Bad(why));
    }
    let mut reader = file;
    let parts = match gpt::partition::file_read_partitions(&mut reader, &header, lb) {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::Other => return Ok(Side::Bad(e.to_string())),
        Err(e) => return Err(e),
    };
    for (number, p) in parts.iter().filter(|(_, p)| p.is_used()) {
        if p.first_lba > p.last_lba || p.last_lba >= sectors {
            return Ok(Side::Bad(format!(
                "entry {number} spans LBA {}..={}, outside the device or reversed",
                p.first_lba, p.last_lba
            )));
        }
    }
    Ok(Side::Sound(header, parts))
}

/// Sanity checks on a header whose checksum is right, so that reading its
/// entry array is safe (the crate asserts 128-byte entries and would allocate
/// whatever size the header declares).
fn check_header(h: &Header, ss: u64, sectors: u64, lba: u64) -> Result<(), String> {
    if h.current_lba != lba {
        return Err(format!(
            "says it is at LBA {}, found at {lba}",
            h.current_lba
        ));
    }
    if h.header_size_le < 92 || u64::from(h.header_size_le) > ss {
        return Err(format!("header size {}", h.header_size_le));
    }
    if h.part_size != ENTRY_SIZE {
        return Err(format!("unsupported entry size {}", h.part_size));
    }
    if h.num_parts == 0 || h.num_parts > MAX_READ_ENTRIES {
        return Err(format!("unsupported entry count {}", h.num_parts));
    }
    let array_sectors = (u64::from(h.num_parts) * u64::from(ENTRY_SIZE)).div_ceil(ss);
    if h.part_start < 2 || h.part_start.saturating_add(array_sectors) > sectors {
        return Err(format!(
            "entry array at LBA {} outside the device",
            h.part_start
        ));
    }
    if h.first_usable > h.last_usable || h.last_usable >= sectors {
        return Err(format!(
            "usable range {}..={} invalid",
            h.first_usable, h.last_usable
        ));
    }
    Ok(())
}

fn write_file(file: &mut File, table: &Table) -> io::Result<()> {
    let (geometry, is_block) = blockdev::file_geometry(file)?;
    let ss = table.sector_size;
    if !matches!(ss, 512 | 4096) {
        return Err(unsupported_sector_size(ss));
    }
    if is_block && ss != geometry.sector_size {
        return Err(invalid(format!(
            "table is for {ss}-byte sectors, the device has {}",
            geometry.sector_size
        )));
    }
    let sectors = geometry.bytes / ss;
    if table.sectors != sectors {
        return Err(invalid(format!(
            "table is for {} sectors, the device has {sectors}",
            table.sectors
        )));
    }
    let checked = check_table(table)?;
    let lb = LogicalBlockSize::try_from(ss)?;

    let attributes = match probe_at(file, ss, sectors) {
        Ok(Some(loaded)) => loaded.attributes,
        _ => BTreeMap::new(),
    };

    // The entry array, each entry in the slot of its number.
    let mut array = Cursor::new(vec![0u8; ARRAY_BYTES as usize]);
    for (e, guid, type_guid) in &checked.entries {
        let part = Partition {
            part_type_guid: (*type_guid).into(),
            part_guid: *guid,
            first_lba: e.start,
            last_lba: e.start + e.size - 1,
            flags: attributes.get(&(*guid, e.start)).copied().unwrap_or(0),
            name: e.label.clone(),
        };
        part.write_to_device(&mut array, u64::from(e.number - 1), 0, lb, ENTRY_SIZE)?;
    }
    let array = array.into_inner();

    let mut primary = HeaderBuilder::new()
        .disk_guid(checked.disk_guid)
        .backup_lba(sectors - 1)
        .num_parts(ENTRIES)
        .part_size(ENTRY_SIZE)
        .primary(true)
        .build(lb)
        .map_err(header_error)?;
    let mut backup = HeaderBuilder::from_header(&primary)
        .primary(false)
        .build(lb)
        .map_err(header_error)?;
    debug_assert_eq!(
        (primary.first_usable, primary.last_usable),
        usable_range(ss, sectors)
    );

    // Arrays first: writing a header checksums the array on the device.
    file.write_all_at(&array, backup.part_start * ss)?;
    file.write_all_at(&array, primary.part_start * ss)?;
    backup.write_backup(file, lb).map_err(header_error)?;
    primary.write_primary(file, lb).map_err(header_error)?;

    let mbr = ProtectiveMBR::with_lb_size(u32::try_from(sectors - 1).unwrap_or(u32::MAX));
    let mut lba0 = [0u8; 512];
    file.read_exact_at(&mut lba0, 0)?;
    if lba0[510..] == [0x55, 0xAA] {
        // Keep the boot code and disk signature, replace the partition records.
        mbr.update_conservative(file).map_err(mbr_error)?;
    } else {
        if ss > 512 {
            file.write_all_at(&vec![0u8; ss as usize], 0)?;
        }
        mbr.overwrite_lba0(file).map_err(mbr_error)?;
    }
    file.sync_all()
}

/// A table that passed [`check_table`], with its GUIDs parsed.
#[derive(Debug)]
struct Checked<'a> {
    disk_guid: Uuid,
    entries: Vec<(&'a Entry, Uuid, Uuid)>,
}

fn check_table(table: &Table) -> io::Result<Checked<'_>> {
    let (first, last) = usable_range(table.sector_size, table.sectors);
    if first > last {
        return Err(invalid(format!(
            "a device of {} sectors is too small for a GPT",
            table.sectors
        )));
    }
    let disk_guid = parse_guid(&table.disk_guid, "disk GUID")?;
    let mut numbers = BTreeSet::new();
    let mut guids = BTreeSet::new();
    let mut entries = Vec::with_capacity(table.partitions.len());
    for e in &table.partitions {
        let what = |s: &str| format!("partition {}: {s}", e.number);
        if e.number == 0 || e.number > ENTRIES {
            return Err(invalid(what(&format!("number not in 1..={ENTRIES}"))));
        }
        if !numbers.insert(e.number) {
            return Err(invalid(what("number used twice")));
        }
        if e.size == 0 {
            return Err(invalid(what("size 0")));
        }
        let end = e.start.checked_add(e.size - 1);
        if e.start < first || end.is_none_or(|end| end > last) {
            return Err(invalid(what(&format!(
                "sectors {}+{} outside the usable range {first}..={last}",
                e.start, e.size
            ))));
        }
        let type_guid = parse_guid(&e.type_guid, &what("type GUID"))?;
        let guid = parse_guid(&e.guid, &what("GUID"))?;
        if !guids.insert(guid) {
            return Err(invalid(what("GUID used twice")));
        }
        if e.label.contains('\0') || e.label.encode_utf16().count() > MAX_LABEL_UNITS {
            return Err(invalid(what(&format!(
                "label {:?} is not at most {MAX_LABEL_UNITS} UTF-16 units without NUL",
                e.label
            ))));
        }
        entries.push((e, guid, type_guid));
    }
    let mut spans: Vec<(u64, u64, u32)> = table
        .partitions
        .iter()
        .map(|e| (e.start, e.start + e.size - 1, e.number))
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        if pair[1].0 <= pair[0].1 {
            return Err(invalid(format!(
                "partitions {} and {} overlap",
                pair[0].2, pair[1].2
            )));
        }
    }
    Ok(Checked { disk_guid, entries })
}

fn wipe_file(file: &File) -> io::Result<()> {
    let (geometry, is_block) = blockdev::file_geometry(file)?;
    let (ss, loaded) = probe_file(file)?;
    let ss = if is_block { geometry.sector_size } else { ss };
    let sectors = geometry.bytes / ss;
    let array_sectors = ARRAY_BYTES.div_ceil(ss);

    // Sector ranges [start, end) to zero.
    let mut ranges = vec![(0, 2 + array_sectors)];
    if sectors > array_sectors + 2 {
        ranges.push((sectors - 1 - array_sectors, sectors));
    }
    for h in loaded.iter().flat_map(|l| &l.headers) {
        let declared = (u64::from(h.num_parts) * u64::from(h.part_size)).div_ceil(ss);
        ranges.push((h.current_lba, h.current_lba + 1));
        ranges.push((h.part_start, h.part_start + declared));
        // The other header, which may not have been sound.
        if h.backup_lba < sectors {
            ranges.push((h.backup_lba, h.backup_lba + 1));
        }
    }
    for (start, end) in ranges {
        let end = end.min(sectors);
        if start < end {
            let zeros = vec![0u8; ((end - start) * ss) as usize];
            file.write_all_at(&zeros, start * ss)?;
        }
    }
    file.sync_all()
}

/// The usable LBAs of a 128-entry table on a device of `sectors` sectors:
/// after the MBR, the primary header and its array; before the backup array
/// and header. `last` is below `first` on a device too small.
fn usable_range(ss: u64, sectors: u64) -> (u64, u64) {
    let array_sectors = ARRAY_BYTES.div_ceil(ss.max(1));
    (2 + array_sectors, sectors.saturating_sub(2 + array_sectors))
}

fn upper(guid: &Uuid) -> String {
    format!("{:X}", guid.hyphenated())
}

fn parse_guid(s: &str, what: &str) -> io::Result<Uuid> {
    let guid = Uuid::parse_str(s).map_err(|e| invalid(format!("{what} {s:?}: {e}")))?;
    if guid.is_nil() {
        return Err(invalid(format!("{what} is all zeros")));
    }
    Ok(guid)
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn unsupported_sector_size(ss: u64) -> io::Error {
    invalid(format!(
        "unsupported logical sector size {ss} (512 or 4096)"
    ))
}

fn header_error(e: gpt::header::HeaderError) -> io::Error {
    match e {
        gpt::header::HeaderError::Io(e) => e,
        e => io::Error::other(format!("GPT header: {e}")),
    }
}

fn mbr_error(e: gpt::mbr::MBRError) -> io::Error {
    io::Error::other(format!("protective MBR: {e}"))
}

fn context(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_ranges() {
        assert_eq!(usable_range(512, 131072), (34, 131038));
        assert_eq!(usable_range(4096, 16384), (6, 16378));
        let blank = Table::blank(512, 131072);
        assert_eq!((blank.first_usable, blank.last_usable), (34, 131038));
        assert_eq!(blank.disk_guid, blank.disk_guid.to_uppercase());
        assert_eq!(blank.disk_guid.len(), 36);
    }

    fn entry(number: u32, start: u64, size: u64) -> Entry {
        Entry {
            number,
            start,
            size,
            type_guid: "0FC63DAF-8483-4772-8E79-3D69D8477DE4".into(),
            guid: upper(&Uuid::new_v4()),
            label: format!("p{number}"),
        }
    }

    #[test]
    fn rejects_bad_tables() {
        let mut t = Table::blank(512, 131072);
        t.partitions = vec![entry(1, 2048, 2048), entry(2, 4095, 10)];
        assert!(check_table(&t).unwrap_err().to_string().contains("overlap"));
        t.partitions = vec![entry(1, 33, 10)];
        assert!(check_table(&t).is_err());
        t.partitions = vec![entry(1, 131000, 39)];
        assert!(check_table(&t).is_ok());
        t.partitions = vec![entry(1, 131000, 40)];
        assert!(check_table(&t).is_err());
        t.partitions = vec![entry(129, 2048, 1)];
        assert!(check_table(&t).is_err());
        let mut long = entry(1, 2048, 1);
        long.label = "x".repeat(37);
        t.partitions = vec![long];
        assert!(check_table(&t).is_err());
        let mut a = entry(1, 2048, 1);
        let b = entry(2, 4096, 1);
        a.guid = b.guid.to_lowercase();
        t.partitions = vec![a, b];
        assert!(check_table(&t).unwrap_err().to_string().contains("twice"));
    }
}
