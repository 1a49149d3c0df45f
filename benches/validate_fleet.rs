//! Budget (issue 2): 10,000 small configs in one directory validated in <= 2 s wall on the
//! 2-core CI machine. Generates the fleet, runs the release `flint validate` on it three
//! times and prints the best wall time.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const N: usize = 10_000;

fn config(i: usize) -> String {
    // Realistic variety: files with data URLs, a unit, a user, some with a mistake.
    let bad = i.is_multiple_of(97);
    let path = if bad {
        "etc/relative".to_string()
    } else {
        format!("/etc/app/{i}.conf")
    };
    format!(
        r#"{{"ignition":{{"version":"3.{minor}.0"}},"passwd":{{"users":[{{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{i} core@host"]}}]}},"storage":{{"files":[{{"path":"{path}","mode":420,"contents":{{"source":"data:,setting%3D{i}%0A"}}}},{{"path":"/etc/hostname","mode":420,"overwrite":true,"contents":{{"source":"data:,node{i}"}}}}],"directories":[{{"path":"/opt/app{i}","mode":493}}]}},"systemd":{{"units":[{{"name":"app{i}.service","enabled":true,"contents":"[Unit]\nDescription=app {i}\n[Service]\nExecStart=/usr/bin/app --id {i}\n[Install]\nWantedBy=multi-user.target\n"}}]}}}}"#,
        minor = 3 + i % 2,
    )
}

fn main() {
    let dir = std::env::temp_dir().join(format!("flint-bench-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = 0;
    for i in 0..N {
        let c = config(i);
        bytes += c.len();
        std::fs::write(dir.join(format!("node-{i:05}.ign")), c).unwrap();
    }
    let flint = Path::new(env!("CARGO_BIN_EXE_flint"));
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new(flint)
            .arg("validate")
            .arg(&dir)
            .output()
            .unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        assert_eq!(
            out.status.code(),
            Some(1),
            "the fleet holds some invalid configs"
        );
        let summary = String::from_utf8_lossy(&out.stdout);
        assert!(summary.contains(&format!("{N} files checked")), "{summary}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "validate fleet: {N} configs ({:.1} MiB) in {best:.3} s wall (budget 2 s)",
        bytes as f64 / 1048576.0
    );
}
