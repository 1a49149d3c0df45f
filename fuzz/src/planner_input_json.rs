//! `planner_input_json FILE...`: prints each partition_planner fuzzer input as the JSON that
//! tests/fuzz_regressions.rs replays (tests/fuzz-regressions/partition_planner/*.json).
//!
//! `planner_input_json --stats FILE...` instead counts how many inputs reach the harness's
//! soundness assertion (sound table, valid config, plan made): a check that the generator
//! does not leave the property vacuous.

#[path = "../harness.rs"]
mod harness;
#[path = "../planner_gen.rs"]
mod planner_gen;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let stats = args.first().is_some_and(|a| a == "--stats");
    if stats {
        args.remove(0);
    }
    let (mut total, mut sound, mut valid, mut planned, mut checked) = (0, 0, 0, 0, 0);
    for path in args {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut u = arbitrary::Unstructured::new(&data);
        let input = match planner_gen::planner_input(&mut u) {
            Ok(input) => input,
            Err(e) => {
                eprintln!("{path}: not an input: {e}");
                continue;
            }
        };
        if !stats {
            println!("{}", serde_json::to_string_pretty(&input).unwrap());
            continue;
        }
        total += 1;
        let layout = input.layout();
        let s = harness::sound(&layout);
        let v = harness::desired_valid(&input);
        let mut guid = || harness::FIXED_GUID.to_string();
        let ok = flint_provision::stages::disks::partitions::plan(
            &input.desired,
            input.wipe_table,
            &layout,
            &mut guid,
        )
        .is_ok_and(|p| !p.actions.is_empty());
        sound += s as u32;
        valid += v as u32;
        planned += ok as u32;
        checked += (s && v && ok) as u32;
    }
    if stats {
        println!(
            "{total} inputs: {sound} sound tables, {valid} valid configs, {planned} non-empty plans, {checked} reach the soundness assertion"
        );
    }
}
