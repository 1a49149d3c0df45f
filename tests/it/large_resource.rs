//! A resource far larger than the provisioner's memory budget: 2 GiB fetched over HTTP from a
//! server on 127.0.0.1, verified with sha512 and written to its file, while `flint apply`'s
//! peak RSS (as GNU time reports it) stays within 48 MiB. The body is generated while it is sent, so
//! the test holds none of it either. Configs merged into a config: their total is bounded,
//! and so is the memory each byte of them costs.
use crate::common;
use crate::support;

use common::{TempDir, flint};
use sha2::Digest;
use std::path::Path;
use std::process::{Command, Stdio};
use support::*;

/// Peak RSS allowed to `flint apply`, in KiB.
const RSS_BUDGET_KIB: i64 = 48 * 1024;

fn sha512_of_generated(len: u64) -> String {
    let mut h = sha2::Sha512::new();
    each_generated(len, |b| h.update(b));
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `flint apply` on `config` into `dir/root`, spooling into `dir/spool`: exit success,
/// stderr, peak RSS in KiB.
fn apply(dir: &Path, config: &str) -> (bool, String, i64) {
    apply_with(dir, config, &[])
}

/// [`apply`] with more environment.
fn apply_with(dir: &Path, config: &str, env: &[(&str, &str)]) -> (bool, String, i64) {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    std::fs::create_dir_all(dir.join("spool")).unwrap();
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    // Measured by GNU time, which forks flint from its own small process: a child spawned
    // straight from this test process would count the test process's own peak (its memory
    // is the child's until exec), and other tests here hold configs of 100 MiB.
    let out = Command::new("/usr/bin/time")
        .args(["-f", "flint-peak-rss-kib=%M"])
        .arg(flint())
        .args(["apply", "--root"])
        .arg(&root)
        .arg(&file)
        .env("FLINT_SPOOL_DIR", dir.join("spool"))
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("/usr/bin/time (Debian's time package) runs flint");
    let mut err = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = err.rfind("flint-peak-rss-kib=").expect("time's report");
    let rss: i64 = err[line + 19..].trim().parse().unwrap();
    err.truncate(line);
    (out.status.success(), err, rss)
}

fn config(url: &str, hash: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{{"path":"/var/big.img","contents":{{"source":"{url}","verification":{{"hash":"sha512-{hash}"}}}}}}]}}}}"#
    )
}

/// Whether block `i` of the file at `path` is block `i` of the generated body.
fn block_matches(path: &Path, i: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut got = vec![0u8; BLOCK];
    let mut want = vec![0u8; BLOCK];
    f.read_exact_at(&mut got, i * BLOCK as u64).unwrap();
    generated_block(i, &mut want);
    got == want
}

#[test]
fn two_gib_over_http_with_sha512_in_bounded_memory() {
    const SIZE: u64 = 2 << 30;
    let s = Server::start(None);
    s.route("/big.img", Reply::Generated(SIZE));
    let hash = sha512_of_generated(SIZE);
    // Under the temporary directory: on disk on Debian (a tmpfs /tmp would count the spool
    // and the file against memory, though not against RSS).
    let dir = TempDir::new("large-resource");
    let (ok, err, rss) = apply(&dir, &config(&s.url("/big.img"), &hash));
    assert!(ok, "apply failed: {err}");
    let target = dir.join("root/var/big.img");
    assert_eq!(std::fs::metadata(&target).unwrap().len(), SIZE);
    let blocks = SIZE / BLOCK as u64;
    for i in [0, 1, blocks / 2, blocks - 1] {
        assert!(block_matches(&target, i), "block {i} differs");
    }
    assert!(
        rss <= RSS_BUDGET_KIB,
        "peak RSS {rss} KiB over the {RSS_BUDGET_KIB} KiB budget"
    );
    eprintln!("2 GiB fetched with sha512: peak RSS {} MiB", rss / 1024);
    // The spooled copy is unnamed: nothing is left in the spool directory.
    assert_eq!(std::fs::read_dir(dir.join("spool")).unwrap().count(), 0);
    assert_eq!(s.hits("/big.img"), 1);
}

#[test]
fn a_large_resource_that_fails_its_hash_writes_nothing() {
    const SIZE: u64 = 48 << 20;
    let s = Server::start(None);
    s.route("/big.img", Reply::Generated(SIZE));
    let dir = TempDir::new("large-resource-bad");
    let (ok, err, rss) = apply(&dir, &config(&s.url("/big.img"), &"0".repeat(128)));
    assert!(!ok, "a wrong hash must fail the run");
    assert!(err.contains("sha512 mismatch"), "{err}");
    assert!(err.contains("$.storage.files.0.contents"), "{err}");
    assert!(!dir.join("root/var/big.img").exists());
    assert!(
        !dir.join("root/var").exists(),
        "nothing written before the fetch succeeded"
    );
    assert_eq!(std::fs::read_dir(dir.join("spool")).unwrap().count(), 0);
    assert!(rss <= RSS_BUDGET_KIB, "peak RSS {rss} KiB");
}

/// A config that merges configs given as gzip'd `data:` URLs, each holding one file of
/// `size` bytes: a few hundred KiB of config that decompresses to their sum.
fn merging(sizes: &[usize]) -> String {
    use base64::Engine;
    use std::io::Write;
    let merges: Vec<String> = (sizes.iter().enumerate())
        .map(|(i, &n)| {
            let child = format!(
                r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{{"path":"/srv/m{i}","contents":{{"source":"data:,{}"}}}}]}}}}"#,
                "A".repeat(n)
            );
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(child.as_bytes()).unwrap();
            let b64 = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
            format!(r#"{{"source":"data:;base64,{b64}","compression":"gzip"}}"#)
        })
        .collect();
    format!(
        r#"{{"ignition":{{"version":"3.4.0","config":{{"merge":[{}]}}}}}}"#,
        merges.join(",")
    )
}

/// A config and what it merges may take 256 MiB together (FLINT_MAX_CONFIG_BYTES, here
/// lowered): the merge that crosses it is refused by its path, nothing is written, and the
/// memory stays bounded (the download stops where the budget ends).
#[test]
fn merged_configs_past_the_total_limit_are_refused() {
    let dir = TempDir::new("merge-limit");
    const MIB: usize = 1 << 20;
    let config = merging(&[40 * MIB, 40 * MIB, 40 * MIB]);
    let limit = (64 * MIB).to_string();
    let (ok, err, rss) = apply_with(&dir, &config, &[("FLINT_MAX_CONFIG_BYTES", &limit)]);
    assert!(!ok, "configs past the limit were taken");
    assert!(
        err.contains("fetch stage failed at $.ignition.config.merge.1:"),
        "{err}"
    );
    assert!(err.contains("67108864-byte limit"), "{err}");
    assert!(err.contains("FLINT_MAX_CONFIG_BYTES"), "{err}");
    assert!(!dir.join("root/srv").exists(), "nothing is written");
    assert!(rss < 200 * 1024, "peak RSS {rss} KiB");
    // Within the limit, the same configs are taken.
    let (ok, err, _) = apply_with(
        &dir,
        &merging(&[20 * MIB, 20 * MIB]),
        &[("FLINT_MAX_CONFIG_BYTES", &limit)],
    );
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::metadata(dir.join("root/srv/m1")).unwrap().len(),
        20 * MIB as u64
    );
}

/// Each byte of a merged config costs at most about twice its size at the peak (the
/// config itself and its decoded contents), not three or four times: 100 MiB merged from
/// two configs peaks near 210 MiB (it was 300).
#[test]
fn merged_configs_cost_about_twice_their_size() {
    let dir = TempDir::new("merge-memory");
    const MIB: usize = 1 << 20;
    let (ok, err, rss) = apply(&dir, &merging(&[50 * MIB, 50 * MIB]));
    assert!(ok, "{err}");
    for i in 0..2 {
        let f = dir.join(format!("root/srv/m{i}"));
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 50 * MIB as u64);
    }
    let budget = (100 * 23 / 10 + 16) * 1024;
    eprintln!("100 MiB of merged configs: peak RSS {} MiB", rss / 1024);
    assert!(rss < budget, "peak RSS {rss} KiB, over {budget} KiB");
}
