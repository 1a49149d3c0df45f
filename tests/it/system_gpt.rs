//! The block-device layer on real images and loop devices, cross-checked with
//! `sgdisk`. Needs root, loop devices, gdisk, e2fsprogs and btrfs-progs
//! (scripts/install-deps.sh).

use crate::common::TempDir;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::{Duration, Instant};

use flint_provision::system::blockdev::{self, KernelPart};
use flint_provision::system::gpt::{self, Entry, Probe, Table};

const LINUX_FS: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
const ESP: &str = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
const FLATCAR_USR: &str = "5DFBF5F4-2848-4BAC-AA5E-0D9A20B745A6";
const MIB: u64 = 1024 * 1024;

/// A sparse image file of `bytes` in `dir`.
fn image(dir: &TempDir, name: &str, bytes: u64) -> PathBuf {
    let path = dir.join(name);
    File::create(&path).unwrap().set_len(bytes).unwrap();
    path
}

/// A loop device, detached on drop (also when the test panics).
struct Loop(PathBuf);

impl Loop {
    fn attach(image: &Path, sector_size: u64) -> Loop {
        // -P: detaching then drops the partitions added with BLKPG (without
        // it they outlive the loop device), and attaching drops stale ones.
        let out = run(
            "losetup",
            &[
                "-f",
                "--show",
                "-P",
                "--sector-size",
                &sector_size.to_string(),
                image.to_str().unwrap(),
            ],
        );
        Loop(PathBuf::from(out.trim()))
    }

    fn name(&self) -> String {
        self.0.file_name().unwrap().to_string_lossy().into_owned()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("partx")
            .arg("-d")
            .arg(&self.0)
            .stderr(std::process::Stdio::null())
            .status();
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

/// A mounted filesystem, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(dev: &Path, dir: &Path) -> Mount {
        fs::create_dir_all(dir).unwrap();
        run("mount", &[dev.to_str().unwrap(), dir.to_str().unwrap()]);
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Runs a command, panicking unless it succeeds; returns its stdout.
fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sgdisk(dev: &Path, args: &[&str]) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.push(dev.to_str().unwrap());
    run("sgdisk", &all)
}

fn assert_sgdisk_clean(dev: &Path) {
    let out = sgdisk(dev, &["-v"]);
    assert!(out.contains("No problems found"), "sgdisk -v:\n{out}");
    assert!(
        !out.contains("Creating new GPT"),
        "sgdisk sees no GPT:\n{out}"
    );
}

/// One field ("First sector", "Partition name", ...) of `sgdisk -i N`.
fn sgdisk_info(dev: &Path, number: u32) -> std::collections::HashMap<String, String> {
    sgdisk(dev, &["-i", &number.to_string()])
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn entry(number: u32, start: u64, size: u64, type_guid: &str, guid: &str, label: &str) -> Entry {
    Entry {
        number,
        start,
        size,
        type_guid: type_guid.into(),
        guid: guid.into(),
        label: label.into(),
    }
}

/// Three partitions in slots 1, 2 and 4 (slot 3 left empty) of a 64 MiB disk.
fn three_partitions(sector_size: u64, sectors: u64) -> Table {
    let mib = MIB / sector_size;
    let mut table = Table::blank(sector_size, sectors);
    table.disk_guid = "8A3E1C9B-2F4D-4E6A-9B7C-1D2E3F405162".into();
    table.partitions = vec![
        entry(
            1,
            mib,
            8 * mib,
            ESP,
            "11111111-2222-4333-8444-555555555555",
            "EFI-SYSTEM",
        ),
        entry(
            2,
            9 * mib,
            16 * mib,
            FLATCAR_USR,
            "C4E0A9D2-7B3F-4E1A-8D6C-9F2B1A3C4D5E",
            "USR-A",
        ),
        entry(
            4,
            30 * mib,
            20 * mib,
            LINUX_FS,
            "0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3",
            "ROOT",
        ),
    ];
    table
}

#[test]
fn written_table_is_what_sgdisk_sees_and_read_returns() {
    let dir = TempDir::new("write");
    let img = image(&dir, "disk.img", 64 * MIB);
    let table = three_partitions(512, 131072);
    assert_eq!((table.first_usable, table.last_usable), (34, 131038));
    gpt::write(&img, &table).unwrap();

    assert_sgdisk_clean(&img);
    let print = sgdisk(&img, &["-p"]);
    assert!(
        print.contains("Disk identifier (GUID): 8A3E1C9B-2F4D-4E6A-9B7C-1D2E3F405162"),
        "{print}"
    );
    assert!(print.contains("holds up to 128 entries"), "{print}");
    assert!(
        print.contains("First usable sector is 34, last usable sector is 131038"),
        "{print}"
    );
    for e in &table.partitions {
        let info = sgdisk_info(&img, e.number);
        assert!(
            info["Partition GUID code"].starts_with(&e.type_guid),
            "{info:?}"
        );
        assert_eq!(info["Partition unique GUID"], e.guid);
        assert!(
            info["First sector"].starts_with(&format!("{} ", e.start)),
            "{info:?}"
        );
        assert!(
            info["Last sector"].starts_with(&format!("{} ", e.start + e.size - 1)),
            "{info:?}"
        );
        assert_eq!(info["Partition name"], format!("'{}'", e.label));
    }
    // Slot 3 stays empty: the entries are not packed.
    let slot3 = sgdisk(&img, &["-i", "3"]);
    assert!(slot3.contains("does not exist"), "{slot3}");

    assert_eq!(gpt::read(&img).unwrap(), Some(table.clone()));
    assert_eq!(
        gpt::probe(&img).unwrap(),
        Probe::Found {
            table,
            primary_ok: true,
            backup_ok: true
        }
    );
}

#[test]
fn rewrite_replaces_entries_and_keeps_boot_code_and_attributes() {
    let dir = TempDir::new("rewrite");
    let img = image(&dir, "disk.img", 64 * MIB);
    // An MBR with boot code, as a Flatcar image has.
    let mut lba0 = [0u8; 512];
    lba0[..440].fill(0xEB);
    lba0[510] = 0x55;
    lba0[511] = 0xAA;
    File::options()
        .write(true)
        .open(&img)
        .unwrap()
        .write_all_at(&lba0, 0)
        .unwrap();

    let mut table = three_partitions(512, 131072);
    gpt::write(&img, &table).unwrap();
    // Flatcar keeps boot priorities in the attribute bits of USR-A.
    sgdisk(&img, &["-A", "2:set:48", "-A", "2:set:56"]);

    table.partitions.remove(2);
    table.partitions.push(entry(
        3,
        40 * MIB / 512,
        2048,
        LINUX_FS,
        "9E8D7C6B-5A49-4382-9170-6F5E4D3C2B1A",
        "née-data",
    ));
    gpt::write(&img, &table).unwrap();
    assert_sgdisk_clean(&img);
    assert_eq!(gpt::read(&img).unwrap(), Some(table.clone()));
    assert_eq!(sgdisk_info(&img, 2)["Attribute flags"], "0101000000000000");
    assert_eq!(sgdisk_info(&img, 3)["Attribute flags"], "0000000000000000");
    assert!(sgdisk(&img, &["-i", "4"]).contains("does not exist"));

    let mut now = [0u8; 512];
    File::open(&img)
        .unwrap()
        .read_exact_at(&mut now, 0)
        .unwrap();
    assert_eq!(now[..440], lba0[..440], "boot code kept");
    assert_eq!(now[450], 0xEE, "protective partition record");
    assert_eq!(now[510..], [0x55, 0xAA]);

    // A moved partition is a new one: its attributes are not carried over.
    table.partitions[1].start += 2048;
    gpt::write(&img, &table).unwrap();
    assert_eq!(sgdisk_info(&img, 2)["Attribute flags"], "0000000000000000");
}

#[test]
fn reads_a_table_sgdisk_wrote() {
    let dir = TempDir::new("sgdisk");
    let img = image(&dir, "disk.img", 64 * MIB);
    sgdisk(
        &img,
        &[
            "-o",
            "-U",
            "0d5f3c1e-aaaa-4bbb-8ccc-123456789abc",
            "-n",
            "1:2048:+8M",
            "-t",
            "1:ef00",
            "-c",
            "1:EFI-SYSTEM",
            "-u",
            "1:a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            "-n",
            "3:0:+16M",
            "-t",
            "3:8300",
            "-c",
            "3:ROOT",
            "-u",
            "3:ffeeddcc-bbaa-4998-8776-554433221100",
            "-n",
            "9:0:0",
            "-t",
            "9:5dfbf5f4-2848-4bac-aa5e-0d9a20b745a6",
            "-c",
            "9:rest of it",
        ],
    );
    let table = gpt::read(&img).unwrap().expect("a table");
    assert_eq!(table.sector_size, 512);
    assert_eq!(table.sectors, 131072);
    assert_eq!((table.first_usable, table.last_usable), (34, 131038));
    assert_eq!(table.disk_guid, "0D5F3C1E-AAAA-4BBB-8CCC-123456789ABC");
    let guid9 = sgdisk_info(&img, 9)["Partition unique GUID"].clone();
    assert_eq!(
        table.partitions,
        vec![
            entry(
                1,
                2048,
                16384,
                ESP,
                "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D",
                "EFI-SYSTEM"
            ),
            entry(
                3,
                18432,
                32768,
                LINUX_FS,
                "FFEEDDCC-BBAA-4998-8776-554433221100",
                "ROOT"
            ),
            entry(
                9,
                51200,
                131038 - 51200 + 1,
                FLATCAR_USR,
                &guid9,
                "rest of it"
            ),
        ]
    );
}

#[test]
fn no_table_on_blank_mbr_only_or_filesystem_images() {
    let dir = TempDir::new("none");
    let blank = image(&dir, "blank.img", 64 * MIB);
    assert_eq!(gpt::read(&blank).unwrap(), None);
    assert_eq!(gpt::probe(&blank).unwrap(), Probe::Absent);

    let dos = image(&dir, "dos.img", 64 * MIB);
    let out = Command::new("sfdisk")
        .arg(&dos)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"label: dos\n,8M,83\n")?;
            child.wait()
        });
    if matches!(out, Ok(status) if status.success()) {
        assert_eq!(gpt::probe(&dos).unwrap(), Probe::Absent);
    }

    let ext4 = image(&dir, "ext4.img", 64 * MIB);
    run("mkfs.ext4", &["-q", "-F", ext4.to_str().unwrap()]);
    assert_eq!(gpt::probe(&ext4).unwrap(), Probe::Absent);

    // Too small for any table.
    let tiny = image(&dir, "tiny.img", 1024);
    assert_eq!(gpt::read(&tiny).unwrap(), None);
    let err = gpt::write(&tiny, &Table::blank(512, 2)).unwrap_err();
    assert!(err.to_string().contains("too small"), "{err}");
}

#[test]
fn wipe_leaves_no_table() {
    let dir = TempDir::new("wipe");
    let img = image(&dir, "disk.img", 64 * MIB);
    gpt::write(&img, &three_partitions(512, 131072)).unwrap();
    gpt::wipe(&img).unwrap();
    assert_eq!(gpt::probe(&img).unwrap(), Probe::Absent);
    let out = sgdisk(&img, &["-v"]);
    assert!(
        out.contains("Creating new GPT"),
        "sgdisk still sees a GPT:\n{out}"
    );

    let data = fs::read(&img).unwrap();
    assert!(data[..34 * 512].iter().all(|&b| b == 0));
    assert!(data[data.len() - 33 * 512..].iter().all(|&b| b == 0));

    // A table sgdisk wrote, zapped by wipe, with a mark inside the first
    // partition that must survive.
    sgdisk(&img, &["-o", "-n", "1:34:+1M"]);
    File::options()
        .write(true)
        .open(&img)
        .unwrap()
        .write_all_at(b"DATA", 34 * 512)
        .unwrap();
    gpt::wipe(&img).unwrap();
    assert_eq!(gpt::read(&img).unwrap(), None);
    let mut mark = [0u8; 4];
    File::open(&img)
        .unwrap()
        .read_exact_at(&mut mark, 34 * 512)
        .unwrap();
    assert_eq!(&mark, b"DATA");
}

#[test]
fn corrupt_primary_falls_back_to_backup() {
    let dir = TempDir::new("corrupt");
    let img = image(&dir, "disk.img", 64 * MIB);
    let table = three_partitions(512, 131072);
    gpt::write(&img, &table).unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&img)
        .unwrap();

    // Primary header zeroed.
    file.write_all_at(&[0u8; 512], 512).unwrap();
    assert_eq!(gpt::read(&img).unwrap(), Some(table.clone()));
    assert_eq!(
        gpt::probe(&img).unwrap(),
        Probe::Found {
            table: table.clone(),
            primary_ok: false,
            backup_ok: true
        }
    );
    // Writing it back repairs the primary.
    gpt::write(&img, &table).unwrap();
    assert_sgdisk_clean(&img);

    // Primary entry array damaged under a sound primary header.
    file.write_all_at(b"garbage", 2 * 512 + 40).unwrap();
    assert!(matches!(
        gpt::probe(&img).unwrap(),
        Probe::Found { table: ref t, primary_ok: false, backup_ok: true } if *t == table
    ));

    // Both headers damaged: no table, but probe says it is corrupt.
    let last = 131071 * 512;
    let mut sector = [0u8; 512];
    file.read_exact_at(&mut sector, last).unwrap();
    sector[60] ^= 0xFF; // inside the disk GUID: checksum no longer matches
    file.write_all_at(&sector, last).unwrap();
    file.read_exact_at(&mut sector, 512).unwrap();
    sector[60] ^= 0xFF;
    file.write_all_at(&sector, 512).unwrap();
    assert_eq!(gpt::read(&img).unwrap(), None);
    match gpt::probe(&img).unwrap() {
        Probe::Corrupt { reason } => assert!(reason.contains("CRC"), "{reason}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // Wipe clears even a corrupt table.
    gpt::wipe(&img).unwrap();
    assert_eq!(gpt::probe(&img).unwrap(), Probe::Absent);
}

#[test]
fn write_refuses_bad_tables_and_touches_nothing() {
    let dir = TempDir::new("refuse");
    let img = image(&dir, "disk.img", 64 * MIB);
    let good = three_partitions(512, 131072);

    let mut overlap = good.clone();
    overlap.partitions[1].start -= 1;
    let mut wrong_size = good.clone();
    wrong_size.sectors += 1;
    let mut bad_guid = good.clone();
    bad_guid.partitions[0].guid = "not-a-guid".into();
    let mut past_end = good.clone();
    past_end.partitions[2].size = 131038 - past_end.partitions[2].start + 2;
    for bad in [overlap, wrong_size, bad_guid, past_end] {
        assert!(gpt::write(&img, &bad).is_err());
        assert_eq!(gpt::probe(&img).unwrap(), Probe::Absent);
    }
    // Lower-case GUIDs are accepted and read back upper-case.
    let mut lower = good.clone();
    lower.disk_guid = lower.disk_guid.to_lowercase();
    lower.partitions[0].guid = lower.partitions[0].guid.to_lowercase();
    gpt::write(&img, &lower).unwrap();
    assert_eq!(gpt::read(&img).unwrap(), Some(good));
}

/// The kernel's view of a disk as (number, start, size) in sectors of `ss`.
fn kernel_view(disk: &Path, ss: u64) -> Vec<(u32, u64, u64)> {
    blockdev::kernel_partitions(disk)
        .unwrap()
        .iter()
        .map(|p: &KernelPart| (p.number, p.start_bytes / ss, p.size_bytes / ss))
        .collect()
}

fn table_view(table: &Table) -> Vec<(u32, u64, u64)> {
    table
        .partitions
        .iter()
        .map(|e| (e.number, e.start, e.size))
        .collect()
}

fn wait_gone(path: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while path.exists() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn loop_device_kernel_sync_and_in_use() {
    let dir = TempDir::new("loop");
    let img = image(&dir, "disk.img", 64 * MIB);
    let lo = Loop::attach(&img, 512);
    let name = lo.name();

    let geometry = blockdev::geometry(&lo.0).unwrap();
    assert_eq!(
        geometry,
        blockdev::Geometry {
            sector_size: 512,
            bytes: 64 * MIB
        }
    );
    assert!(blockdev::kernel_partitions(&lo.0).unwrap().is_empty());

    let mut table = three_partitions(512, geometry.bytes / 512);
    // Slot 3 for the kernel too: 1, 2, 3.
    table.partitions[2].number = 3;
    gpt::write(&lo.0, &table).unwrap();
    assert_eq!(gpt::read(&lo.0).unwrap(), Some(table.clone()));
    blockdev::sync_kernel(&lo.0, table.sector_size, &table.byte_ranges()).unwrap();
    assert_eq!(kernel_view(&lo.0, 512), table_view(&table));
    for e in &table.partitions {
        let node = blockdev::partition_node(&lo.0, e.number);
        assert_eq!(node, PathBuf::from(format!("/dev/{name}p{}", e.number)));
        assert!(node.exists(), "{}", node.display());
        let size =
            fs::read_to_string(format!("/sys/class/block/{name}p{}/size", e.number)).unwrap();
        assert_eq!(size.trim().parse::<u64>().unwrap(), e.size);
    }
    let parts = blockdev::kernel_partitions(&lo.0).unwrap();
    assert_eq!(parts[1].name, format!("{name}p2"));
    // Nothing to do the second time.
    blockdev::sync_kernel(&lo.0, table.sector_size, &table.byte_ranges()).unwrap();

    // Delete 3, grow 2, add 4 elsewhere.
    table.partitions.remove(2);
    table.partitions[1].size += 4 * 2048;
    table.partitions.push(entry(
        4,
        50 * 2048,
        10 * 2048,
        LINUX_FS,
        "3C2B1A09-8F7E-4D6C-9B5A-493827161504",
        "DATA",
    ));
    gpt::write(&lo.0, &table).unwrap();
    blockdev::sync_kernel(&lo.0, table.sector_size, &table.byte_ranges()).unwrap();
    assert_eq!(kernel_view(&lo.0, 512), table_view(&table));
    assert!(
        wait_gone(Path::new(&format!("/dev/{name}p3"))),
        "p3 node left behind"
    );
    assert!(Path::new(&format!("/dev/{name}p4")).exists());
    let size = fs::read_to_string(format!("/sys/class/block/{name}p2/size")).unwrap();
    assert_eq!(size.trim(), (20 * 2048).to_string());
    assert_sgdisk_clean(&lo.0);

    // In use: a mounted ext4 on partition 1.
    let p1 = blockdev::partition_node(&lo.0, 1);
    let p2 = blockdev::partition_node(&lo.0, 2);
    run("mkfs.ext4", &["-q", "-F", p1.to_str().unwrap()]);
    let mnt = dir.join("mnt");
    let mount = Mount::new(&p1, &mnt);
    let why = blockdev::in_use(&p1).unwrap().expect("p1 in use");
    assert_eq!(why, format!("mounted on {}", mnt.display()));
    assert_eq!(blockdev::in_use(&p2).unwrap(), None);
    let why = blockdev::in_use(&lo.0).unwrap().expect("disk in use");
    assert_eq!(
        why,
        format!("partition {name}p1 mounted on {}", mnt.display())
    );
    assert_eq!(blockdev::in_use_exact(&lo.0).unwrap(), None);

    // The kernel refuses to drop a mounted partition.
    let mut moved = table.clone();
    moved.partitions[0].start += 2048;
    moved.partitions[0].size -= 2048;
    let err = blockdev::sync_kernel(&lo.0, moved.sector_size, &moved.byte_ranges()).unwrap_err();
    assert!(err.to_string().contains("partition 1"), "{err}");
    drop(mount);
    assert_eq!(blockdev::in_use(&p1).unwrap(), None);
    assert_eq!(blockdev::in_use(&lo.0).unwrap(), None);

    // btrfs shows an anonymous device number in mountinfo: found by its source.
    run("mkfs.btrfs", &["-q", "-f", "-M", p2.to_str().unwrap()]);
    let mnt2 = dir.join("mnt2");
    let mount2 = Mount::new(&p2, &mnt2);
    assert_eq!(
        blockdev::in_use(&p2).unwrap(),
        Some(format!("mounted on {}", mnt2.display()))
    );
    drop(mount2);
    assert_eq!(blockdev::in_use(&p2).unwrap(), None);
}

#[test]
fn loop_device_with_4k_sectors() {
    let dir = TempDir::new("loop4k");
    let img = image(&dir, "disk.img", 64 * MIB);
    let lo = Loop::attach(&img, 4096);

    let geometry = blockdev::geometry(&lo.0).unwrap();
    assert_eq!(geometry.sector_size, 4096);
    let sectors = geometry.bytes / 4096;
    assert_eq!(sectors, 16384);
    let mut table = three_partitions(4096, sectors);
    assert_eq!((table.first_usable, table.last_usable), (6, 16378));
    table.partitions[2].number = 3;
    // Use the space right after the header too.
    table.partitions.push(entry(
        4,
        6,
        250,
        LINUX_FS,
        "76543210-FEDC-4A98-B654-3210FEDCBA98",
        "small",
    ));
    table.partitions.sort_by_key(|e| e.number);
    gpt::write(&lo.0, &table).unwrap();
    assert_eq!(gpt::read(&lo.0).unwrap(), Some(table.clone()));
    assert_sgdisk_clean(&lo.0);
    let print = sgdisk(&lo.0, &["-p"]);
    assert!(
        print.contains("Sector size (logical/physical): 4096/"),
        "{print}"
    );
    assert!(
        print.contains("First usable sector is 6, last usable sector is 16378"),
        "{print}"
    );
    let info = sgdisk_info(&lo.0, 4);
    assert!(info["First sector"].starts_with("6 "), "{info:?}");
    assert_eq!(info["Partition name"], "'small'");

    blockdev::sync_kernel(&lo.0, table.sector_size, &table.byte_ranges()).unwrap();
    assert_eq!(kernel_view(&lo.0, 4096), table_view(&table));
    let name = lo.name();
    let size = fs::read_to_string(format!("/sys/class/block/{name}p2/size")).unwrap();
    assert_eq!(
        size.trim().parse::<u64>().unwrap(),
        table.partitions[1].size * 8
    );

    // The same image read as a file: found with 4096-byte sectors.
    drop(lo);
    let from_file = gpt::read(&img).unwrap().expect("table in the image");
    assert_eq!(from_file, table);
    gpt::wipe(&img).unwrap();
    assert_eq!(gpt::read(&img).unwrap(), None);
}
