//! Budget (issue 5): apply 10,000 files of 1 KiB plus 1,000 directories and 100 units into
//! an empty root in <= 1 s wall; a second (no-op) apply in <= 0.3 s. Prints both, for a root
//! in $TMPDIR (default /tmp, on this machine's disk) — run with TMPDIR=/dev/shm to take the
//! disk out of the figure.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

fn main() {
    let dir = std::env::temp_dir().join(format!("flint-bench-apply-{}", std::process::id()));
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    let mut files = String::new();
    for i in 0..10_000 {
        let body: String = (0..1024)
            .map(|k| (b'a' + ((i + k) % 26) as u8) as char)
            .collect();
        let _ = write!(
            files,
            r#"{}{{"path":"/opt/data/d{:03}/f{i:05}.txt","mode":420,"contents":{{"source":"data:,{body}"}}}}"#,
            if i == 0 { "" } else { "," },
            i % 1000
        );
    }
    let dirs: Vec<String> = (0..1000)
        .map(|i| format!(r#"{{"path":"/opt/data/d{i:03}","mode":493}}"#))
        .collect();
    let units: Vec<String> = (0..100)
        .map(|i| {
            format!(
                r#"{{"name":"app{i}.service","enabled":true,"contents":"[Service]\nExecStart=/usr/bin/app {i}\n[Install]\nWantedBy=multi-user.target\n"}}"#
            )
        })
        .collect();
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{files}],"directories":[{}]}},"systemd":{{"units":[{}]}}}}"#,
        dirs.join(","),
        units.join(",")
    );
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
