//! What each fuzz target does with its input, shared by the fuzz targets (`fuzz/fuzz_targets/`)
//! and the regression tests (`tests/fuzz_regressions.rs`), which include this file with
//! `#[path]`: a saved crashing input is replayed through exactly the code the fuzzer ran.
//!
//! Every function panics when a property fails; the library under test must never panic.
//! Only `flint`, `serde` and `serde_json` are used here (the main crate has them), so the
//! file builds in both places; input generation with `arbitrary` stays in the fuzz crate.

#![allow(dead_code)]

use flint_ignition::types::{Config, Partition};
use flint_provision::stages::disks::partitions::{self, Layout, Slot};
use serde::{Deserialize, Serialize};

/// The GUID the planner gets for partitions the config leaves without one.
pub const FIXED_GUID: &str = "11111111-2222-3333-4444-555555555555";

/// The largest output `gunzip` is allowed to give in the `data_url` target.
pub const GUNZIP_LIMIT: u64 = 1 << 20;

/// A fixed parent config the `ignition_config` target merges every input into.
pub const PARENT: &str = r#"{
  "ignition": {"version": "3.4.0", "config": {"merge": [{"source": "data:,%7B%7D"}]}},
  "kernelArguments": {"shouldExist": ["quiet"], "shouldNotExist": ["debug"]},
  "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}],
             "groups": [{"name": "wheel"}]},
  "storage": {
    "disks": [{"device": "/dev/vda", "wipeTable": false,
               "partitions": [{"number": 9, "label": "ROOT", "sizeMiB": 0, "resize": true}]}],
    "filesystems": [{"device": "/dev/disk/by-partlabel/ROOT", "format": "ext4", "path": "/"}],
    "directories": [{"path": "/etc/d", "mode": 493}],
    "files": [{"path": "/etc/hostname", "mode": 420, "overwrite": true,
               "contents": {"source": "data:,parent"}}],
    "links": [{"path": "/etc/l", "target": "/etc/hostname", "hard": false}]
  },
  "systemd": {"units": [{"name": "a.service", "enabled": true,
                         "dropins": [{"name": "x.conf", "contents": "[Unit]"}]}]}
}"#;

/// `butane_translate`: translate a Butane document; when a config comes out, it must be one
/// that Ignition reads back.
pub fn butane_translate(data: &[u8]) {
    let out = flint_butane::translate(data, flint_butane::Options::default());
    // Rendering the diagnostics exercises location arithmetic on hostile input too.
    for d in &out.diagnostics {
        let _ = format!("{d:?}");
    }
    if let Some(config) = &out.config {
        let json = flint_go::json::to_vec(config, true);
        if let Err(d) = flint_ignition::parse(&json) {
            panic!(
                "translated config does not parse back: {d:?}\n{}",
                String::from_utf8_lossy(&json)
            );
        }
    }
}

fn parent() -> Config {
    flint_ignition::parse(PARENT.as_bytes())
        .expect("the fixed parent parses")
        .config
}

/// Writes `config` and reads it back, panicking when that fails; the config read back.
fn reparse(config: &Config, what: &str) -> Config {
    let json = flint_go::json::to_vec(config, true);
    match flint_ignition::parse(&json) {
        Ok(p) => p.config,
        Err(d) => panic!(
            "{what} does not parse back: {d:?}\n{}",
            String::from_utf8_lossy(&json)
        ),
    }
}

/// `ignition_config`: parse; when that works validate, merge (with itself and into a fixed
/// parent), and round-trip through the writer.
pub fn ignition_config(data: &[u8]) {
    // The whole-document check (parse + validate + locate) must not panic either.
    let _ = flint_ignition::check(data);
    let Ok(parsed) = flint_ignition::parse(data) else {
        return;
    };
    let config = parsed.config;
    let _ = flint_ignition::validate::validate(&config, parsed.version);
    let _ = flint_ignition::validate::validate(&config, flint_ignition::Version::NEWEST);

    // Writing and reading back gives the same model.
    let back = reparse(&config, "config");
    assert_eq!(back, config, "config changed in a write/read round trip");

    let doubled = flint_ignition::merge::merge(config.clone(), config.clone());
    let doubled_back = reparse(&doubled, "config merged with itself");
    let _ = flint_ignition::validate::validate(&doubled_back, flint_ignition::Version::NEWEST);

    let merged = flint_ignition::merge::merge(parent(), config.clone());
    let merged_back = reparse(&merged, "config merged into the parent");
    let _ = flint_ignition::validate::validate(&merged_back, flint_ignition::Version::NEWEST);
    let _ = flint_ignition::merge::merge(config, parent());
}

/// `data_url`: decode the input as a data URL, percent-decode and base64-decode it, gunzip it
/// under a limit, and check that `encode` output decodes back to what was encoded.
pub fn data_url(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(out) = flint_ignition::dataurl::decode(&text) {
        // A data URL's payload is never longer than the URL.
        assert!(
            out.len() <= text.len(),
            "decoded payload longer than the URL"
        );
    }
    let _ = flint_ignition::dataurl::decode_base64(&text);
    let pct = flint_ignition::dataurl::percent_decode(&text);
    assert!(pct.len() <= text.len());

    if let Ok(out) = flint_provision::fetch::gunzip(data, GUNZIP_LIMIT) {
        assert!(out.len() as u64 <= GUNZIP_LIMIT, "gunzip beyond its limit");
    }

    // encode/decode round trip (bounded: gzip_best of a large input is slow).
    let input = &data[..data.len().min(4096)];
    let (url, compression) = flint_ignition::dataurl::encode(input, None);
    let payload = flint_ignition::dataurl::decode(&url).expect("encoded URL decodes");
    let plain = if compression.as_deref() == Some("gzip") {
        flint_provision::fetch::gunzip(&payload, GUNZIP_LIMIT).expect("encoded gzip decompresses")
    } else {
        payload
    };
    assert_eq!(plain, input, "encode/decode round trip changed the data");
}

/// The partition planner's input: an observed table and what the config asks for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannerInput {
    pub sector_size: u64,
    pub first_usable: u64,
    pub last_usable: u64,
    /// (number, start, size, type GUID, GUID, label)
    pub slots: Vec<(u32, u64, u64, String, String, String)>,
    pub wipe_table: bool,
    pub desired: Vec<Partition>,
}

impl PlannerInput {
    pub fn layout(&self) -> Layout {
        let mut slots: Vec<Slot> = self
            .slots
            .iter()
            .map(|(number, start, size, type_guid, guid, label)| Slot {
                number: *number,
                start: *start,
                size: *size,
                type_guid: type_guid.clone(),
                guid: guid.clone(),
                label: label.clone(),
            })
            .collect();
        // A Layout's slots are sorted by number (the GPT reader gives them so).
        slots.sort_by_key(|s| s.number);
        Layout {
            sector_size: self.sector_size,
            first_usable: self.first_usable,
            last_usable: self.last_usable,
            slots,
        }
    }
}

/// True when a table could be a real one: numbers 1..=128 and distinct, every partition
/// non-empty, inside the usable space, and no two overlapping.
pub fn sound(layout: &Layout) -> bool {
    if layout.first_usable > layout.last_usable {
        return false;
    }
    let mut numbers: Vec<u32> = layout.slots.iter().map(|s| s.number).collect();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.len() != layout.slots.len() {
        return false;
    }
    for s in &layout.slots {
        if s.number == 0 || s.number > partitions::MAX_PARTITIONS || s.size == 0 {
            return false;
        }
        let Some(end) = s.start.checked_add(s.size - 1) else {
            return false;
        };
        if s.start < layout.first_usable || end > layout.last_usable {
            return false;
        }
    }
    let mut spans: Vec<(u64, u64)> = layout
        .slots
        .iter()
        .map(|s| (s.start, s.start + (s.size - 1)))
        .collect();
    spans.sort_unstable();
    spans.windows(2).all(|w| w[0].1 < w[1].0)
}

/// True when a config with the input's partitions on one disk passes validation, as every
/// config does before the disks stage plans it (validation refuses duplicate numbers, for
/// one, which the planner relies on).
pub fn desired_valid(input: &PlannerInput) -> bool {
    use flint_ignition::types::{Disk, Storage};
    let mut config = Config {
        storage: Storage {
            disks: vec![Disk {
                device: "/dev/vda".into(),
                partitions: input.desired.clone(),
                wipe_table: Some(input.wipe_table),
            }],
            ..Storage::default()
        },
        ..Config::default()
    };
    config.ignition.version = "3.4.0".into();
    flint_ignition::validate::validate(&config, flint_ignition::Version::NEWEST)
        .iter()
        .all(|i| i.severity != flint_go::diag::Severity::Error)
}

/// `partition_planner`: plan; it must not panic, whatever the table and the config. When the
/// observed table is sound, the config valid, and planning succeeds, the planned table must
/// be sound too.
pub fn partition_planner(input: &PlannerInput) {
    let layout = input.layout();
    let mut new_guid = || FIXED_GUID.to_string();
    let result = partitions::plan(&input.desired, input.wipe_table, &layout, &mut new_guid);
    let Ok(plan) = result else {
        return;
    };
    for a in &plan.actions {
        let _ = a.describe(layout.sector_size);
        let _ = (a.index(), a.slot_number());
    }
    if sound(&layout) && desired_valid(input) {
        assert!(
            sound(&plan.result),
            "planned table is not sound: {:#?}\nfrom {layout:#?}\nactions {:#?}",
            plan.result,
            plan.actions
        );
        assert_eq!(plan.result.sector_size, layout.sector_size);
        assert_eq!(plan.result.first_usable, layout.first_usable);
        assert_eq!(plan.result.last_usable, layout.last_usable);
    }
}
