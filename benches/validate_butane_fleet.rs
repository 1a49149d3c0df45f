//! Budget (issue "Fit into users' toolchains"): 1,000 realistic Butane configs (Flatcar
//! 1.1.0, a few KiB each: users with SSH keys, ~10 inline files, directories, links, units
//! with drop-ins, a data disk; some embedding `local` files from a `files` directory beside
//! them) validated in <= 2 s wall on the 2-core CI machine. Generates the fleet, runs the
//! release `flint validate` on it three times and prints the best wall time.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const N: usize = 1_000;
/// Configs per site directory; every other site has a `files` directory its configs use.
const PER_SITE: usize = 50;
/// Every this-many-th config has a mistake (a relative path) and must be reported.
const BAD_EVERY: usize = 97;

fn key(i: usize, k: usize) -> String {
    let mut s = String::new();
    let mut x = (i as u64 * 31 + k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _ in 0..43 {
        x ^= x >> 29;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let c =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(x % 64) as usize];
        s.push(c as char);
    }
    format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{s} user{k}@node{i}")
}

fn config(i: usize, local: bool) -> String {
    let mut s = format!(
        "# node {i}: generated for the validate_butane_fleet bench\nvariant: flatcar\nversion: 1.1.0\npasswd:\n  users:\n"
    );
    for (k, name) in ["core", "ops", "deploy"].iter().enumerate() {
        let _ = write!(s, "    - name: {name}\n      ssh_authorized_keys:\n");
        for j in 0..2 {
            let _ = writeln!(s, "        - {}", key(i, k * 2 + j));
        }
        if k > 0 {
            let _ = write!(s, "      groups:\n        - docker\n        - sudo\n");
        }
    }
    let _ = write!(
        s,
        "storage:\n  disks:\n    - device: /dev/vdb\n      wipe_table: {}\n      partitions:\n        - label: DATA\n          number: 1\n          size_mib: {}\n        - label: LOGS\n          number: 2\n          size_mib: 0\n",
        i.is_multiple_of(2),
        8192 + (i % 8) * 1024
    );
    s.push_str(
        "  filesystems:\n    - device: /dev/disk/by-partlabel/DATA\n      format: ext4\n      label: DATA\n      path: /srv\n      with_mount_unit: true\n    - device: /dev/disk/by-partlabel/LOGS\n      format: xfs\n      label: LOGS\n      path: /var/log/app\n      with_mount_unit: true\n",
    );
    s.push_str("  files:\n");
    let _ = write!(
        s,
        "    - path: /etc/hostname\n      mode: 0644\n      overwrite: true\n      contents:\n        inline: node{i}.example.net\n"
    );
    for f in 0..9 {
        let path = if i.is_multiple_of(BAD_EVERY) && f == 4 {
            "etc/app/relative.conf".to_string()
        } else {
            format!("/etc/app/conf.d/{f:02}-node{i}.conf")
        };
        let _ = write!(
            s,
            "    - path: {path}\n      mode: 0{}\n      user:\n        name: {}\n      contents:\n        inline: |\n          # settings {f} for node {i}\n          listen = 10.{}.{}.{f}:{}\n          workers = {}\n          log_level = info\n          cache_dir = /var/cache/app/{f}\n          token = {:016x}\n",
            if f % 3 == 0 { "600" } else { "644" },
            if f % 2 == 0 { "root" } else { "ops" },
            i % 250,
            i / 250,
            8000 + f,
            1 + (i + f) % 16,
            ((i * 16 + f) as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
        );
    }
    if local {
        s.push_str(
            "    - path: /etc/app/ca.pem\n      mode: 0644\n      contents:\n        local: ca.pem\n    - path: /opt/bin/healthcheck\n      mode: 0755\n      contents:\n        local: bin/healthcheck\n",
        );
    }
    s.push_str("  directories:\n");
    for d in [
        "/opt/app",
        "/var/lib/app",
        "/var/cache/app",
        "/etc/app/conf.d",
    ] {
        let _ = write!(
            s,
            "    - path: {d}\n      mode: 0755\n      user:\n        name: ops\n"
        );
    }
    s.push_str("  links:\n");
    let _ = write!(
        s,
        "    - path: /etc/localtime\n      target: /usr/share/zoneinfo/Europe/Berlin\n      overwrite: true\n    - path: /opt/app/current\n      target: /opt/app/releases/{}\n      hard: false\n",
        i % 5
    );
    s.push_str("systemd:\n  units:\n");
    for u in 0..4 {
        let _ = write!(
            s,
            "    - name: app{u}.service\n      enabled: true\n      contents: |\n        [Unit]\n        Description=App {u} on node {i}\n        After=network-online.target srv.mount\n        Wants=network-online.target\n        Requires=srv.mount\n\n        [Service]\n        ExecStart=/usr/bin/docker run --rm --name app{u} -p {}:80 -v /srv/app{u}:/data registry.example.net/app:{}\n        ExecStop=/usr/bin/docker stop app{u}\n        Restart=always\n\n        [Install]\n        WantedBy=multi-user.target\n",
            8080 + u,
            i % 20
        );
        if u % 2 == 0 {
            let _ = write!(
                s,
                "      dropins:\n        - name: 10-env.conf\n          contents: |\n            [Service]\n            Environment=NODE={i}\n            Environment=SLOT={u}\n"
            );
        }
    }
    s.push_str(
        "    - name: docker.service\n      dropins:\n        - name: 20-limits.conf\n          contents: |\n            [Service]\n            LimitNOFILE=1048576\n    - name: locksmithd.service\n      mask: true\n",
    );
    s
}

fn main() {
    let dir = std::env::temp_dir().join(format!("flint-bench-butane-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut bytes, mut bad) = (0, 0);
    for i in 0..N {
        let site = i / PER_SITE;
        let site_dir = dir.join(format!("site-{site:02}"));
        let local = site % 2 == 1;
        if i % PER_SITE == 0 {
            std::fs::create_dir_all(&site_dir).unwrap();
            if local {
                let files = site_dir.join("files");
                std::fs::create_dir_all(files.join("bin")).unwrap();
                std::fs::write(
                    files.join("ca.pem"),
                    format!(
                        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
                        "MIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGUgZm9yIHNpdGU".repeat(8)
                    ),
                )
                .unwrap();
                std::fs::write(
                    files.join("bin/healthcheck"),
                    format!("#!/bin/sh\nexec curl -fsS http://localhost:8080/health?site={site}\n"),
                )
                .unwrap();
            }
        }
        let c = config(i, local);
        bytes += c.len();
        bad += usize::from(i.is_multiple_of(BAD_EVERY));
        std::fs::write(site_dir.join(format!("node-{i:04}.bu")), c).unwrap();
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
        let summary = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "the fleet holds some invalid configs"
        );
        // Only the planted mistakes: `local` files resolve against each site's own `files`.
        assert!(
            summary.ends_with(&format!(
                "{N} files checked: {} valid, {bad} invalid ({bad} errors, 0 warnings)\n",
                N - bad
            )),
            "{summary}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "validate butane fleet: {N} configs ({:.1} MiB, {:.1} KiB each) in {best:.3} s wall (budget 2 s)",
        bytes as f64 / 1048576.0,
        bytes as f64 / N as f64 / 1024.0
    );
}
