//! Replays fuzz inputs without a fuzzer: every file under `tests/fuzz-regressions/<target>/`
//! (crashes the fuzzers found, minimized, and a few inputs chosen to reach far) goes through
//! the same code as the fuzz target of that name (`fuzz/harness.rs`, shared with
//! `fuzz/fuzz_targets/`). The fuzzers' seeds, the Butane and Ignition test documents of the
//! repository and its conformance corpora, are replayed too, so that the harness itself stays tested.
//!
//! The `partition_planner` inputs are JSON (`harness::PlannerInput`): the fuzzer's raw bytes
//! only mean something through `arbitrary`, so `fuzz/src/planner_input_json.rs` converts them.

#[path = "../../fuzz/harness.rs"]
mod harness;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files under `dir`, recursively, that `keep` accepts, sorted.
fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path, keep));
        } else if keep(&path) {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn saved(target: &str) -> Vec<PathBuf> {
    files(&repo().join("tests/fuzz-regressions").join(target), &|p| {
        !p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    })
}

/// Runs `run` on every file, and fails naming each file it panicked on.
fn replay(paths: &[PathBuf], run: &dyn Fn(&[u8])) {
    let mut failures = Vec::new();
    for path in paths {
        let data = std::fs::read(path).unwrap();
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| run(&data))) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {why}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn butane_translate_saved_inputs() {
    let paths = saved("butane_translate");
    assert!(paths.len() >= 3, "expected saved inputs, found {paths:?}");
    replay(&paths, &harness::butane_translate);
}

#[test]
fn butane_translate_repository_documents() {
    // The fuzzer's seeds: the repository's translate tests and the butane conformance corpus.
    let is_bu = |p: &Path| p.extension().is_some_and(|e| e == "bu");
    let mut paths = files(&repo().join("translate-tests"), &is_bu);
    assert!(
        paths.len() >= 10,
        "expected translate-tests, found {}",
        paths.len()
    );
    paths.extend(files(&repo().join("conformance/butane"), &is_bu));
    replay(&paths, &harness::butane_translate);
}

#[test]
fn ignition_config_saved_inputs() {
    let paths = saved("ignition_config");
    assert!(paths.len() >= 3, "expected saved inputs, found {paths:?}");
    replay(&paths, &harness::ignition_config);
}

#[test]
fn ignition_config_repository_documents() {
    let is_config = |p: &Path| p.extension().is_some_and(|e| e == "ign" || e == "json");
    let mut paths = files(&repo().join("fixtures"), &is_config);
    assert!(
        paths.len() >= 10,
        "expected fixtures, found {}",
        paths.len()
    );
    paths.extend(files(&repo().join("conformance/ignition"), &is_config));
    replay(&paths, &harness::ignition_config);
}

#[test]
fn ignition_config_fixed_parent_parses() {
    // The target merges every input into this parent; it must itself be a valid config.
    let parsed = flint_ignition::parse(harness::PARENT.as_bytes()).expect("parent parses");
    let issues = flint_ignition::validate::validate(&parsed.config, parsed.version);
    assert!(
        issues
            .iter()
            .all(|i| i.severity != flint_go::diag::Severity::Error),
        "{issues:?}"
    );
    harness::ignition_config(harness::PARENT.as_bytes());
}

#[test]
fn data_url_saved_inputs() {
    let paths = saved("data_url");
    assert!(paths.len() >= 3, "expected saved inputs, found {paths:?}");
    replay(&paths, &harness::data_url);
}

#[test]
fn data_url_gunzip_stops_at_its_limit() {
    // A gzip bomb: 64 MiB of zeros in about 64 KiB.
    let mut gz = flate2_free_gzip_of_zeros(64 << 20);
    assert!(flint_provision::fetch::gunzip(&gz, harness::GUNZIP_LIMIT).is_err());
    harness::data_url(&gz);
    gz.truncate(gz.len() / 2);
    harness::data_url(&gz);
}

/// Gzip of `n` zero bytes made with the library's own encoder (the test has no flate2).
fn flate2_free_gzip_of_zeros(n: usize) -> Vec<u8> {
    flint_ignition::dataurl::gzip_best(&vec![0u8; n])
}

fn planner_input(name: &str) -> harness::PlannerInput {
    let path = repo()
        .join("tests/fuzz-regressions/partition_planner")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

type PlanResult = Result<
    flint_provision::stages::disks::partitions::Plan,
    flint_provision::stages::disks::partitions::PlanError,
>;

fn plan_of(input: &harness::PlannerInput) -> PlanResult {
    let mut guid = || harness::FIXED_GUID.to_string();
    flint_provision::stages::disks::partitions::plan(
        &input.desired,
        input.wipe_table,
        &input.layout(),
        &mut guid,
    )
}

#[test]
fn partition_planner_refuses_huge_start_and_number() {
    // Without overflow checks (release), startMiB 2^53 + 1 used to wrap to 2048 sectors and
    // the partition was made at 1 MiB; partition number 2^32 + 1 was truncated to 1.
    let input = planner_input("huge-start-mib.json");
    let err = plan_of(&input).unwrap_err();
    assert_eq!(err.index, Some(0), "{err:?}");
    assert!(err.message.contains("startMiB"), "{err:?}");
    let only_number = harness::PlannerInput {
        desired: input.desired[1..].to_vec(),
        ..input
    };
    let err = plan_of(&only_number).unwrap_err();
    assert!(err.message.contains("beyond the 128 entries"), "{err:?}");
}

#[test]
fn partition_planner_saved_inputs() {
    // `raw/` holds the fuzzer's bytes of the same crashes, for `cargo fuzz run`.
    let paths: Vec<PathBuf> = saved("partition_planner")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(paths.len() >= 3, "expected saved inputs, found {paths:?}");
    replay(&paths, &|data| {
        let input: harness::PlannerInput =
            serde_json::from_slice(data).expect("a planner input (JSON)");
        harness::partition_planner(&input);
    });
}

#[test]
fn partition_planner_soundness_check_is_not_vacuous() {
    // The harness only asserts soundness of plans made on sound tables from valid configs:
    // these must count as both, or the fuzzer checks nothing.
    for name in ["flatcar-resize-root.json", "wipe-table.json"] {
        let input = planner_input(name);
        assert!(harness::sound(&input.layout()), "{name}");
        assert!(harness::desired_valid(&input), "{name}");
        let plan = plan_of(&input).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(harness::sound(&plan.result), "{name}");
        assert!(!plan.actions.is_empty(), "{name}");
    }
    // And an invalid config is recognised as such (duplicate numbers).
    assert!(!harness::desired_valid(&planner_input(
        "duplicate-numbers-invalid-config.json"
    )));
}
