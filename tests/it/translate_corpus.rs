//! The translation corpus made with the reference butane (`translate-corpus/GROUP/CASE/`,
//! see its README): every case must give the reference's exit status, stderr byte for
//! byte, and stdout byte for byte except for gzip streams inside data URLs, which are
//! compared by what they decompress to (deflate implementations differ).
use crate::common;

use base64::Engine;
use std::io::Read;
use std::path::Path;

/// `data:;base64,...` URLs holding gzip are replaced by a digest of their contents.
fn normalize(bytes: &[u8]) -> Vec<u8> {
    const PREFIX: &[u8] = b"data:;base64,";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(PREFIX) {
            let start = i + PREFIX.len();
            let end = start
                + bytes[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                    .count();
            let payload = &bytes[start..end];
            let decoded = base64::engine::general_purpose::STANDARD.decode(payload);
            if let Ok(raw) = decoded
                && raw.starts_with(&[0x1f, 0x8b])
            {
                let mut plain = Vec::new();
                if flate2::read::GzDecoder::new(&raw[..])
                    .read_to_end(&mut plain)
                    .is_ok()
                {
                    out.extend_from_slice(PREFIX);
                    out.extend_from_slice(format!("GZIP[{}]", hex(&plain)).as_bytes());
                    i = end;
                    continue;
                }
            }
            out.extend_from_slice(&bytes[i..end]);
            i = end;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn check_case(dir: &Path) -> Result<(), String> {
    // Empty directories of `files/` (trees of nothing), which git does not keep.
    let empty = std::fs::read_to_string(dir.join("empty-dirs")).unwrap_or_default();
    for rel in empty.lines().filter(|l| !l.is_empty()) {
        std::fs::create_dir_all(dir.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
    }
    let args = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
    let mut argv: Vec<&str> = args.split_whitespace().collect();
    argv.push("in.bu");
    let out = common::run_in(dir, Path::new(env!("CARGO_BIN_EXE_butane")), &argv);
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap_or_default();
    let want_status: i32 = String::from_utf8(read("expected.status"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut problems = Vec::new();
    let status = out.status.code().unwrap_or(-1);
    if status != want_status {
        problems.push(format!("exit {status}, want {want_status}"));
    }
    let (got, want) = (normalize(&out.stdout), normalize(&read("expected.stdout")));
    if got != want {
        problems.push(format!(
            "stdout differs:\n{}\n--- want:\n{}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        ));
    }
    let want_err = read("expected.stderr");
    // A YAML syntax error: flint shows the place first (a deliberate difference, see
    // docs/guide/differences.md), then upstream's line, which must be the same.
    let syntax = want_err.starts_with(b"Error translating config: Error unmarshaling yaml:")
        && want_err.iter().filter(|b| **b == b'\n').count() == 1;
    let got_err = if syntax {
        let text = String::from_utf8_lossy(&out.stderr);
        let last = text
            .trim_end_matches('\n')
            .rsplit('\n')
            .next()
            .unwrap_or("");
        format!("{last}\n").into_bytes()
    } else {
        out.stderr.clone()
    };
    if got_err != want_err {
        problems.push(format!(
            "stderr differs:\n{}\n--- want:\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&want_err)
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn every_corpus_case_translates_like_the_reference() {
    let root = common::repo().join("translate-corpus");
    let mut cases = Vec::new();
    for group in common::case_dirs(&root) {
        cases.extend(common::case_dirs(&group));
    }
    assert!(!cases.is_empty(), "no cases in {}", root.display());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|d| check_case(d).err().map(|e| format!("{}: {e}", d.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
