//! Budget (issue 3): a config of N inline files (~200 bytes each), N/10 units (a fifth with
//! drop-ins) and N/10 directories translates, for N = 10,000, in <= 0.2 s wall and <= 60 MiB
//! peak RSS; for N = 50,000 in <= 1 s and <= 250 MiB; time linear in N; a trivial config in
//! <= 3 ms. Also a `trees` config of N local files, and the same N files for the other
//! variants: fcos with a mirrored, encrypted `boot_device` and GRUB users, and OpenShift
//! (MachineConfig YAML output), and the newest versions (flatcar 1.2.0-experimental, fcos
//! 1.8.0-experimental with a CEX `boot_device`, OpenShift 4.23.0-experimental), which must keep
//! Flatcar's speed. Prints wall time (best of 3)
//! and peak RSS of the release `butane` for each.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn inline_config(n: usize) -> String {
    variant_config("variant: flatcar\nversion: 1.0.0\n", n, true)
}

/// The files and units of `inline_config` (and its directories, where the variant allows
/// them) under `header`.
fn variant_config(header: &str, n: usize, directories: bool) -> String {
    let mut s = format!("{header}storage:\n  files:\n");
    for i in 0..n {
        // ~200 bytes of config-like text, different for every file.
        let _ = write!(
            s,
            "    - path: /etc/app/conf.d/{i:06}.conf\n      mode: 0644\n      contents:\n        inline: |\n          # generated settings for instance {i}\n          listen = 10.{}.{}.{}:{}\n          workers = {}\n          log_level = info\n          cache_dir = /var/cache/app/{i}\n          token = {:016x}\n",
            i % 250,
            (i / 250) % 250,
            i % 7,
            8000 + i % 1000,
            1 + i % 16,
            (i as u64).wrapping_mul(0x9e3779b97f4a7c15),
        );
    }
    if directories {
        s.push_str("  directories:\n");
        for i in 0..n / 10 {
            let _ = write!(s, "    - path: /opt/app/dir{i:06}\n      mode: 0755\n");
        }
    }
    s.push_str("systemd:\n  units:\n");
    for i in 0..n / 10 {
        let _ = write!(
            s,
            "    - name: app{i}.service\n      enabled: true\n      contents: |\n        [Unit]\n        Description=App instance {i}\n        [Service]\n        ExecStart=/usr/bin/app --instance {i}\n        [Install]\n        WantedBy=multi-user.target\n"
        );
        if i % 5 == 0 {
            let _ = write!(
                s,
                "      dropins:\n        - name: 10-env.conf\n          contents: |\n            [Service]\n            Environment=INSTANCE={i}\n"
            );
        }
    }
    s
}

fn trees_config(n: usize, dir: &Path) -> String {
    let root = dir.join("files/tree");
    for i in 0..n {
        let sub = root.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&sub).unwrap();
        }
        std::fs::write(
            sub.join(format!("f{i:06}.conf")),
            format!(
                "# file {i}\nvalue = {}\n",
                (i as u64).wrapping_mul(2654435761)
            ),
        )
        .unwrap();
    }
    "variant: flatcar\nversion: 1.0.0\nstorage:\n  trees:\n    - local: tree\n      path: /etc/tree\n".into()
}

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
    // The other variants on the same files: each within 10% of Flatcar's time.
    const FCOS: &str = "variant: fcos\nversion: 1.5.0\nboot_device:\n  layout: x86_64\n  luks:\n    tpm2: true\n    tang:\n      - url: https://tang.example.com\n        thumbprint: REPLACE\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\ngrub:\n  users:\n    - name: root\n      password_hash: grub.pbkdf2.sha512.10000.874A958E526409\n";
    const OPENSHIFT: &str = "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: 99-worker-custom\n  labels:\n    machineconfiguration.openshift.io/role: worker\nopenshift:\n  kernel_arguments: [loglevel=7]\n  fips: true\n";
    // The versions on Ignition 3.7.0-experimental: CEX on s390x, GRUB users in a MachineConfig.
    const FCOS18: &str = "variant: fcos\nversion: 1.8.0-experimental\nboot_device:\n  layout: s390x-eckd\n  luks:\n    device: /dev/dasda\n    cex:\n      enabled: true\n";
    const OPENSHIFT23: &str = "variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: 99-worker-custom\n  labels:\n    machineconfiguration.openshift.io/role: worker\nopenshift:\n  kernel_arguments: [loglevel=7]\ngrub:\n  users:\n    - name: root\n      password_hash: grub.pbkdf2.sha512.10000.874A958E526409\n";
    for n in [1_000, 10_000] {
        let mut flatcar = 0.0;
        for (name, header, dirs) in [
            ("flatcar", "variant: flatcar\nversion: 1.0.0\n", false),
            ("fcos boot_device", FCOS, false),
            ("openshift", OPENSHIFT, false),
            (
                "flatcar 1.2-exp",
                "variant: flatcar\nversion: 1.2.0-experimental\n",
                false,
            ),
            ("fcos 1.8-exp", FCOS18, false),
            ("openshift 4.23", OPENSHIFT23, false),
        ] {
            let input = dir.join(format!("variant-{n}.bu"));
            std::fs::write(&input, variant_config(header, n, dirs)).unwrap();
            let (w, m) = measure(&butane, &dir, &input);
            if name == "flatcar" {
                flatcar = w;
            }
            println!(
                "{name:<16} N={n:>6}: {w:.3} s wall, {m:.1} MiB peak, {:.2}x Flatcar's time",
                w / flatcar
            );
        }
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
