//! Budget (issue 5): apply 10,000 files of 1 KiB plus 1,000 directories and 100 units into
//! an empty root in <= 1 s wall; a second (no-op) apply in <= 0.3 s. Prints both, for a root
//! in $TMPDIR (default /tmp, on this machine's disk) — run with TMPDIR=/dev/shm to take the
//! disk out of the figure.

#[path = "support/inputs.rs"]
mod inputs;

use std::process::Command;
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("flint-bench-apply-{}", std::process::id()));
    let root = dir.join("root");
    inputs::empty_root(&root);
    let config = inputs::apply_config();
    std::fs::write(dir.join("c.ign"), config).unwrap();
    let flint = env!("CARGO_BIN_EXE_flint");
    let run = || {
        let t = Instant::now();
        let out = Command::new(flint)
            .args(["apply", "--root", "root", "c.ign"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            t.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .to_string(),
        )
    };
    let (first, summary) = run();
    let (second, noop) = run();
    println!(
        "apply 10,000 files + 1,000 dirs + 100 units: {first:.3} s wall ({summary}; budget 1 s)"
    );
    println!("second apply: {second:.3} s wall ({noop}; budget 0.3 s)");
    if std::env::var_os("FLINT_BENCH_KEEP").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
