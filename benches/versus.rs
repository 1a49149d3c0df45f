//! flint side by side with the reference implementations (issue 18), on the same generated
//! inputs, run in alternation (flint, reference, flint, …) so that drift of the machine hits
//! both alike. Prints, per input, the median wall time and peak RSS of each and the ratio,
//! with the goal beside it.
//!
//! The references are looked for in `$FLINT_REFERENCES`, else `../shared/oracles` beside the
//! checkout (`butane`, and `run-ignition.sh` for Flatcar's Ignition). Without them only
//! flint's figures are printed. `FLINT_BENCH_ROUNDS` sets the number of rounds (default 5).
//! The files-stage rows need root (the reference chowns), as the test suite does.

#[path = "support/inputs.rs"]
mod inputs;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One process run to completion: wall seconds and peak RSS in MiB (its children included).
#[derive(Clone, Copy)]
struct Figure {
    wall: f64,
    rss: f64,
}

// The child is reaped with wait4, which also reports its peak RSS.
#[allow(clippy::zombie_processes)]
fn run(cmd: &mut Command) -> Figure {
    let t = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    // Read while it runs: a long error log would otherwise fill the pipe and stall it.
    let mut stderr = child.stderr.take().expect("piped");
    let drain = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
        err
    });
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    assert_eq!(pid, child.id() as i32);
    let err = drain.join().unwrap_or_default();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        // Upstream's files stage refuses a root it already provisioned: the time is still
        // the work it did; say so rather than end the run.
        let tail: Vec<&str> = err.lines().rev().take(2).collect();
        eprintln!(
            "note: {:?} exited with status {status}: {}",
            cmd.get_program(),
            tail.join(" | ")
        );
    }
    Figure {
        wall,
        rss: usage.ru_maxrss as f64 / 1024.0,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What a row asks of flint: a speed-up over the reference, an RSS ceiling, a wall ceiling.
#[derive(Default)]
struct Goal {
    ratio: Option<f64>,
    rss: Option<f64>,
    wall: Option<f64>,
}

struct Bench {
    rounds: usize,
    met: usize,
    missed: usize,
}

impl Bench {
    /// Runs `prep` then the measured command for flint and the reference in turn, `rounds`
    /// times, and prints the row.
    fn row(
        &mut self,
        name: &str,
        goal: Goal,
        flint: &mut dyn FnMut() -> Figure,
        reference: Option<&mut dyn FnMut() -> Figure>,
    ) {
        let (mut fw, mut fr, mut rw, mut rr) = (vec![], vec![], vec![], vec![]);
        let mut reference = reference;
        for _ in 0..self.rounds {
            let f = flint();
            fw.push(f.wall);
            fr.push(f.rss);
            if let Some(r) = reference.as_mut() {
                let r = r();
                rw.push(r.wall);
                rr.push(r.rss);
            }
        }
        let (fw, fr) = (median(fw), median(fr));
        let mut line = format!("{name:<46} {:>8.3} s {fr:>6.1} MiB", fw);
        let mut verdicts = vec![];
        if !rw.is_empty() {
            let (rw, rr) = (median(rw), median(rr));
            let ratio = rw / fw;
            line += &format!("   {rw:>7.3} s {rr:>6.1} MiB   {ratio:>6.1}x");
            if let Some(g) = goal.ratio {
                verdicts.push((ratio >= g, format!(">= {g}x")));
            }
        } else {
            line += &format!("   {:>24}", "(no reference)");
        }
        if let Some(g) = goal.rss {
            verdicts.push((fr <= g, format!("<= {g} MiB")));
        }
        if let Some(g) = goal.wall {
            verdicts.push((fw <= g, format!("<= {g} s")));
        }
        let goals: Vec<String> = verdicts
            .iter()
            .map(|(ok, g)| format!("{g} {}", if *ok { "met" } else { "MISSED" }))
            .collect();
        for (ok, _) in &verdicts {
            if *ok {
                self.met += 1;
            } else {
                self.missed += 1;
            }
        }
        println!("{line}   {}", goals.join(", "));
    }
}

fn references() -> Option<PathBuf> {
    let dir = std::env::var_os("FLINT_REFERENCES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/oracles"));
    dir.join("butane").is_file().then_some(dir)
}

fn butane_cmd(program: &Path, dir: &Path, input: &Path) -> Command {
    let mut c = Command::new(program);
    c.args(["--strict", "--files-dir", "files"])
        .arg(input)
        .current_dir(dir);
    c
}

fn main() {
    let rounds = std::env::var("FLINT_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let refs = references();
    let butane = PathBuf::from(env!("CARGO_BIN_EXE_butane"));
    let flint = PathBuf::from(env!("CARGO_BIN_EXE_flint"));
    let dir = std::env::temp_dir().join(format!("flint-bench-versus-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("files")).unwrap();
    let mut b = Bench {
        rounds,
        met: 0,
        missed: 0,
    };
    println!(
        "{:<46} {:>19}   {:>19}   {:>7}   goals (median of {rounds}, in alternation)",
        "work", "flint", "reference", "ratio"
    );

    // Translation.
    for n in [1_000, 10_000] {
        let input = dir.join(format!("inline-{n}.bu"));
        std::fs::write(&input, inputs::inline_config(n)).unwrap();
        let goal = Goal {
            ratio: Some(50.0),
            rss: (n == 10_000).then_some(40.0),
            ..Goal::default()
        };
        let mut f = || run(&mut butane_cmd(&butane, &dir, &input));
        let mut r = refs
            .as_ref()
            .map(|refs| || run(&mut butane_cmd(&refs.join("butane"), &dir, &input)));
        b.row(
            &format!("butane, {n} inline files"),
            goal,
            &mut f,
            r.as_mut().map(|r| r as &mut dyn FnMut() -> Figure),
        );
    }
    {
        let tdir = dir.join("trees");
        std::fs::create_dir_all(&tdir).unwrap();
        let input = tdir.join("in.bu");
        std::fs::write(&input, inputs::trees_config(10_000, &tdir)).unwrap();
        let mut f = || run(&mut butane_cmd(&butane, &tdir, &input));
        let mut r = refs
            .as_ref()
            .map(|refs| || run(&mut butane_cmd(&refs.join("butane"), &tdir, &input)));
        b.row(
            "butane, tree of 10000 files",
            Goal {
                ratio: Some(50.0),
                ..Goal::default()
            },
            &mut f,
            r.as_mut().map(|r| r as &mut dyn FnMut() -> Figure),
        );
    }

    // The files stage on a root on disk ($TMPDIR), from an empty root and then again.
    let config = dir.join("apply.ign");
    std::fs::write(&config, inputs::apply_config()).unwrap();
    let fresh = |name: &str| {
        let root = dir.join(name);
        if root.exists() {
            std::fs::remove_dir_all(&root).unwrap();
        }
        inputs::empty_root(&root);
        root
    };
    let apply = |root: &Path| {
        run(Command::new(&flint)
            .args(["apply", "--root"])
            .arg(root)
            .arg(&config))
    };
    let reference_apply = |refs: &Path, root: &Path| {
        run(Command::new(refs.join("run-ignition.sh"))
            .arg(root)
            .arg(&config))
    };
    let run_ref = refs.is_some() && unsafe { libc::geteuid() } == 0;
    {
        let mut f = || apply(&fresh("root-flint"));
        let mut r =
            run_ref.then_some(|| reference_apply(refs.as_ref().unwrap(), &fresh("root-ref")));
        b.row(
            "files stage, 10000 files, 1000 dirs, 100 units",
            Goal {
                ratio: Some(5.0),
                rss: Some(48.0),
                ..Goal::default()
            },
            &mut f,
            r.as_mut().map(|r| r as &mut dyn FnMut() -> Figure),
        );
    }
    {
        // The roots the previous row left are already provisioned: apply again.
        let (froot, rroot) = (dir.join("root-flint"), dir.join("root-ref"));
        let mut f = || apply(&froot);
        let mut r = run_ref.then_some(|| reference_apply(refs.as_ref().unwrap(), &rroot));
        b.row(
            "the same, applied again (nothing to change)",
            Goal {
                wall: Some(0.3),
                rss: Some(48.0),
                ..Goal::default()
            },
            &mut f,
            r.as_mut().map(|r| r as &mut dyn FnMut() -> Figure),
        );
    }

    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dist/flint");
    match std::fs::metadata(&dist) {
        Ok(m) => {
            let mb = m.len() as f64 / 1e6;
            let ok = mb <= 8.0;
            println!(
                "dist binary target/dist/flint: {mb:.2} MB (<= 8 MB {})",
                if ok { "met" } else { "MISSED" }
            );
            if ok { b.met += 1 } else { b.missed += 1 }
        }
        Err(_) => println!("dist binary: build it with `cargo build --profile dist --bin flint`"),
    }
    println!("goals: {} met, {} missed", b.met, b.missed);
    std::fs::remove_dir_all(&dir).unwrap();
}
