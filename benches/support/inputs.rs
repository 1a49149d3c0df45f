//! Generated inputs shared by the benches, so that each budget and the side-by-side
//! comparison with the references measure the same work.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

pub fn inline_config(n: usize) -> String {
    variant_config("variant: flatcar\nversion: 1.0.0\n", n, true)
}

/// The files and units of `inline_config` (and its directories, where the variant allows
/// them) under `header`.
pub fn variant_config(header: &str, n: usize, directories: bool) -> String {
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

pub fn trees_config(n: usize, dir: &Path) -> String {
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

/// An Ignition config of 10,000 files of 1 KiB (data URLs) in 1,000 directories, the 1,000
/// directories and 100 enabled units: the files-stage workload of the budgets.
pub fn apply_config() -> String {
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
    config
}

/// A root the files stage can write users' files into: just `/etc/passwd` and `/etc/group`.
pub fn empty_root(root: &Path) {
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
}
