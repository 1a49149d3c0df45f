//! Hostile inputs: every case must end with a clear error and exit code 1 — never a panic
//! (exit 101), never a hang, never a write outside the target root. Small cases live in
//! tests/hostile/ (NAME.bu|NAME.ign with NAME.expect: the command, the exit code, then lines
//! that must appear in the output); big ones are generated here.
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::{Server, ok};

/// Runs `what` (butane | validate | apply) on `input`, with the root and state in `dir`.
fn run(what: &str, input: &Path, dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = match what {
        "butane" => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_butane"));
            c.arg("--strict").arg(input);
            c
        }
        "validate" => {
            let mut c = Command::new(common::flint());
            c.arg("validate").arg(input);
            c
        }
        "apply" => {
            let mut c = Command::new(common::flint());
            c.arg("apply")
                .arg("--root")
                .arg(dir.join("root"))
                .arg("--state-dir")
                .arg(dir.join("state"))
                .arg("--kargs-file")
                .arg(dir.join("grub.cfg"))
                .arg(input);
            c
        }
        other => panic!("unknown command {other}"),
    };
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd.output().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{} took {:?}",
        input.display(),
        start.elapsed()
    );
    out
}

/// Checks one outcome: exit code, the wanted lines, and no sign of a panic.
fn check(name: &str, out: &Output, code: i32, wanted: &[&str]) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "{name}: exit code; output:\n{}",
        clip(&text)
    );
    assert!(
        !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
        "{name}: {}",
        clip(&text)
    );
    for w in wanted {
        assert!(
            text.contains(w),
            "{name}: missing {w:?} in:\n{}",
            clip(&text)
        );
    }
    assert!(
        text.len() < 64 * 1024,
        "{name}: {} bytes of output",
        text.len()
    );
}

fn clip(s: &str) -> String {
    s.chars().take(3000).collect()
}

/// Nothing but the run's own record may appear in the root after a failed run.
fn root_untouched(name: &str, dir: &Path) {
    let root = dir.join("root");
    let mut left: Vec<PathBuf> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&root) {
        left.extend(rd.flatten().map(|e| e.path()));
    }
    assert!(left.is_empty(), "{name}: the root holds {left:?}");
}

#[test]
fn the_hostile_corpus() {
    let corpus = common::repo().join("tests/hostile");
    let mut cases = 0;
    let server = Server::start(None);
    for entry in std::fs::read_dir(&corpus).unwrap() {
        let expect = entry.unwrap().path();
        if expect.extension().is_none_or(|e| e != "expect") {
            continue;
        }
        let name = expect.file_stem().unwrap().to_string_lossy().into_owned();
        let spec = std::fs::read_to_string(&expect).unwrap();
        let mut lines = spec.lines();
        let what = lines.next().unwrap();
        let code: i32 = lines.next().unwrap().parse().unwrap();
        let wanted: Vec<&str> = lines.collect();
        let input = ["bu", "ign"]
            .iter()
            .map(|e| corpus.join(format!("{name}.{e}")))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{name}: no input"));
        let dir = TempDir::new(&format!("hostile-{name}"));
        // A config that merges itself: served over HTTP, naming its own URL.
        let bytes = std::fs::read(&input).unwrap();
        let input = if bytes.windows(4).any(|w| w == b"SELF") {
            let url = server.url(&format!("/{name}.ign"));
            let body = String::from_utf8(bytes).unwrap().replace("SELF", &url);
            server.route(&format!("/{name}.ign"), ok(body.clone()));
            let p = dir.join(format!("{name}.ign"));
            std::fs::write(&p, body).unwrap();
            p
        } else {
            input
        };
        let out = run(what, &input, &dir, &[]);
        check(&name, &out, code, &wanted);
        if what == "apply" {
            root_untouched(&name, &dir);
        }
        cases += 1;
    }
    assert_ne!(cases, 0, "no cases in tests/hostile");
}

fn bu(body: &str) -> Vec<u8> {
    format!("variant: flatcar\nversion: 1.0.0\n{body}").into_bytes()
}

#[test]
fn generated_monsters() {
    let dir = TempDir::new("hostile-big");
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let cases: Vec<(&str, &str, Vec<u8>, Vec<&str>)> = vec![
        ("yaml-bomb", "butane", bu(&bomb), vec!["more than 1000000 nodes after expanding"]),
        ("deep-yaml", "butane", bu(&format!("x: {}{}", "[".repeat(100_000), "]".repeat(100_000))), vec!["yaml: line 3: exceeded max depth of 10000"]),
        ("deep-json", "validate", format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000)).into_bytes(), vec!["error at line 1 col 50002: exceeded max depth"]),
        ("huge-number", "butane", bu(&format!("passwd:\n  users:\n  - name: a\n    uid: {}\n", "9".repeat(100_000))), vec!["error[$.passwd.users.0.uid]"]),
        ("huge-number-json", "validate", format!("{{\"ignition\":{{\"version\":\"3.4.0\"}},\"passwd\":{{\"users\":[{{\"name\":\"a\",\"uid\":{}}}]}}}}", "9".repeat(100_000)).into_bytes(), vec!["cannot unmarshal number"]),
        ("long-line-snippet", "butane", bu(&format!("storage:\n  files:\n  - path: /a\n    mode: {}x\n", "7".repeat(1_000_000))), vec!["error[$.storage.files.0.mode]", "…"]),
    ];
    for (name, what, bytes, wanted) in cases {
        let input = dir.join(format!(
            "{name}.{}",
            if what == "butane" { "bu" } else { "ign" }
        ));
        std::fs::write(&input, &bytes).unwrap();
        let out = run(what, &input, &dir, &[]);
        check(name, &out, 1, &wanted);
    }
    // A symlink loop in the target root: an error naming the entry, not a hang.
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink("/b", root.join("a")).unwrap();
    std::os::unix::fs::symlink("/a", root.join("b")).unwrap();
    let input = dir.join("loop.ign");
    std::fs::write(&input, r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a/x","contents":{"source":"data:,hi"}}]}}"#).unwrap();
    let out = run("apply", &input, &dir, &[]);
    check(
        "symlink-loop",
        &out,
        1,
        &[
            "files stage failed at $.storage.files.0: too many levels of symbolic links resolving /a/x",
        ],
    );
    std::fs::remove_dir_all(&root).unwrap();
    // A data URL that decompresses to gigabytes stops at the limit, and nothing is written.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..2048 {
        std::io::Write::write_all(&mut gz, &zeros).unwrap();
    }
    let gz = gz.finish().unwrap();
    let config = format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{{"path":"/big","contents":{{"compression":"gzip","source":"data:;base64,{}"}}}}]}}}}"#,
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &gz)
    );
    let input = dir.join("gzip-bomb.ign");
    std::fs::write(&input, config).unwrap();
    let out = run(
        "apply",
        &input,
        &dir,
        &[("FLINT_MAX_RESOURCE_BYTES", "67108864")],
    );
    check(
        "gzip-bomb",
        &out,
        1,
        &[
            "fetch stage failed at $.storage.files.0.contents",
            "decompresses to more than the 67108864-byte limit",
        ],
    );
    root_untouched("gzip-bomb", &dir);
}
