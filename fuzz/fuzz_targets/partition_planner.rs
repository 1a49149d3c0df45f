#![no_main]

#[path = "../harness.rs"]
mod harness;
#[path = "../planner_gen.rs"]
mod planner_gen;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(input) = planner_gen::planner_input(&mut u) {
        harness::partition_planner(&input);
    }
});
