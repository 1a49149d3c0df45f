//! flint's integration tests, one binary: each module was a test file of its own. Modules
//! that change what the whole machine shares (mounts, loop devices) take
//! [`support::devices`]'s locks; everything else runs in parallel.

mod common;
mod support;

mod clevis;
mod cli_butane;
mod cli_completions;
mod cli_ignition;
mod cli_validate;
mod closed_output;
mod conformance_butane;
mod conformance_ignition;
mod disks_stage;
mod faults;
mod fetch;
mod files_stage;
mod firstboot;
mod fuzz_regressions;
mod guide_examples;
mod hostile_inputs;
mod json_roundtrip;
mod large_resource;
mod legacy_translate;
mod legacy_validate;
mod migrate_roundtrip;
mod mount_confinement;
mod object_storage;
mod platforms;
mod schema;
mod secrets;
mod spec_versions;
mod stage_processes;
mod system_gpt;
mod translate_corpus;
mod translate_tests;
mod validate_fixtures;
