//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A conformance corpus kept in the repository (`conformance/NAME`: butane, ignition, files).
pub fn corpus(name: &str) -> PathBuf {
    let p = repo().join("conformance").join(name);
    assert!(p.is_dir(), "missing corpus {}", p.display());
    p
}

pub fn flint() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flint"))
}

/// A fresh directory under the system's temporary directory, removed with everything in it
/// when dropped: also when the test fails.
pub struct TempDir(PathBuf);

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let d = std::env::temp_dir().join(format!("flint-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Nothing may still be mounted below it (a failed test's mounts): never remove
        // through a mount.
        let mounted = std::fs::read_to_string("/proc/self/mounts")
            .unwrap_or_default()
            .lines()
            .any(|l| {
                l.split(' ')
                    .nth(1)
                    .is_some_and(|m| Path::new(m).starts_with(&self.0))
            });
        if !mounted {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Runs `bin args` in `dir`, returning the output.
pub fn run_in(dir: &Path, bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()))
}

/// Sorted subdirectories of `dir`.
pub fn case_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// The cases of a corpus folder, by name: its subdirectories, but those whose name starts
/// with `_` or `.` (files a case's server serves, not cases).
pub fn corpus_cases(dir: &Path) -> Vec<String> {
    (case_dirs(dir).iter())
        .filter_map(|d| d.file_name()?.to_str().map(str::to_string))
        .filter(|n| !n.starts_with('_') && !n.starts_with('.'))
        .collect()
}

/// Runs a conformance runner script on its own folder's corpus: every case there must pass
/// (the runner names each one that fails).
pub fn run_check_script(script: &Path, command: &str) {
    run_check_script_with(script, command, None, &[])
}

/// Runs a conformance runner script on the corpus in `dir`: every case there must pass.
pub fn run_check_script_on(script: &Path, command: &str, dir: &Path) {
    run_check_script_with(script, command, Some(dir), &[])
}

/// `run_check_script` with extra environment variables for the runner (e.g. `STRICT=1`).
pub fn run_check_script_env(script: &Path, command: &str, env: &[(&str, &str)]) {
    run_check_script_with(script, command, None, env)
}

/// Runs the runner, and checks that it passed exactly as many cases as the folder holds
/// and failed none.
pub fn run_check_script_with(
    script: &Path,
    command: &str,
    dir: Option<&Path>,
    env: &[(&str, &str)],
) {
    let corpus = dir.unwrap_or_else(|| script.parent().expect("the runner's folder"));
    let cases = corpus_cases(corpus);
    assert!(!cases.is_empty(), "no cases in {}", corpus.display());
    let out = Command::new("bash")
        .arg(script)
        .arg(command)
        .args(dir)
        .envs(env.iter().copied())
        .output()
        .expect("running the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").to_string();
    let (passed, failed) = parse_summary(&last)
        .unwrap_or_else(|| panic!("no summary line from {}:\n{stdout}", script.display()));
    let failing: Vec<&str> = (stdout.lines())
        .filter_map(|l| l.strip_prefix("FAIL "))
        .collect();
    assert_eq!(failed, 0, "conformance failures: {failing:#?}\n{stdout}");
    assert_eq!(
        passed,
        cases.len(),
        "{} of the {} cases of {} passed:\n{stdout}",
        passed,
        cases.len(),
        corpus.display()
    );
    assert!(
        out.status.success(),
        "runner exited {:?}:\n{stdout}",
        out.status
    );
}

fn parse_summary(line: &str) -> Option<(usize, usize)> {
    let (p, rest) = line.split_once(" passed, ")?;
    let f = rest.strip_suffix(" failed")?;
    Some((p.trim().parse().ok()?, f.trim().parse().ok()?))
}
