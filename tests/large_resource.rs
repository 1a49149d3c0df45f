//! A resource far larger than the provisioner's memory budget: 2 GiB fetched over HTTP from a
//! server on 127.0.0.1, verified with sha512 and written to its file, while `flint apply`'s
//! peak RSS (from wait4) stays within 48 MiB. The body is generated while it is sent, so
//! the test holds none of it either.
mod common;
mod support;

use common::{TempDir, flint};
use sha2::Digest;
use std::io::Read;
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
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    std::fs::create_dir_all(dir.join("spool")).unwrap();
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    let mut child = Command::new(flint())
        .args(["apply", "--root"])
        .arg(&root)
        .arg(&file)
        .env("FLINT_SPOOL_DIR", dir.join("spool"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // Reaped by wait4 above; this only lets the handle go (and finds the child gone).
    let _ = child.try_wait();
    (ok, err, usage.ru_maxrss)
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
