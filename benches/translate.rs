//! Budget (issue 3): a config of N inline files (~200 bytes each), N/10 units (a fifth with
//! drop-ins) and N/10 directories translates, for N = 10,000, in <= 0.2 s wall and <= 60 MiB
//! peak RSS; for N = 50,000 in <= 1 s and <= 250 MiB; time linear in N; a trivial config in
//! <= 3 ms. Also a `trees` config of N local files. Prints wall time (best of 3) and peak RSS
//! of the release `butane` for each.

#[path = "support/inputs.rs"]
mod inputs;

use inputs::{inline_config, trees_config};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs butane on `input` once; returns (wall seconds, peak RSS in MiB).
// The child is reaped with wait4, which also reports its peak RSS.
#[allow(clippy::zombie_processes)]
fn run_once(butane: &Path, dir: &Path, input: &Path) -> (f64, f64) {
    let t = Instant::now();
    let child = Command::new(butane)
        .args(["--strict", "--files-dir", "files"])
        .arg(input)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "butane failed"
    );
    (wall, usage.ru_maxrss as f64 / 1024.0)
}

fn measure(butane: &Path, dir: &Path, input: &Path) -> (f64, f64) {
    (0..3)
        .map(|_| run_once(butane, dir, input))
        .fold((f64::MAX, 0.0), |(w, m), (w2, m2)| {
            (w.min(w2), f64::max(m, m2))
        })
}

fn main() {
    let butane = PathBuf::from(env!("CARGO_BIN_EXE_butane"));
    let dir = std::env::temp_dir().join(format!("flint-bench-translate-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("files")).unwrap();

    let trivial = dir.join("trivial.bu");
    std::fs::write(&trivial, "variant: flatcar\nversion: 1.0.0\n").unwrap();
    let (w, m) = measure(&butane, &dir, &trivial);
    println!(
        "trivial config: {:.2} ms wall, {m:.1} MiB peak (budget 3 ms)",
        w * 1000.0
    );

    for n in [100, 1_000, 10_000, 50_000] {
        let input = dir.join(format!("inline-{n}.bu"));
        std::fs::write(&input, inline_config(n)).unwrap();
        let (w, m) = measure(&butane, &dir, &input);
        let budget = match n {
            10_000 => " (budget 0.2 s, 60 MiB)",
            50_000 => " (budget 1 s, 250 MiB)",
            _ => "",
        };
        println!(
            "inline N={n:>6}: {w:.3} s wall, {m:.1} MiB peak, {:.1} us/file{budget}",
            w * 1e6 / n as f64
        );
    }
    for n in [1_000, 10_000, 50_000] {
        let tdir = dir.join(format!("trees-{n}"));
        std::fs::create_dir_all(&tdir).unwrap();
        let input = tdir.join("in.bu");
        std::fs::write(&input, trees_config(n, &tdir)).unwrap();
        let (w, m) = measure(&butane, &tdir, &input);
        println!("trees  N={n:>6}: {w:.3} s wall, {m:.1} MiB peak");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
