//! Every example in the user guide (docs/guide/*.md) runs as shown. In each page, in order:
//! a fenced block opened with "```LANG file=NAME" is written to NAME; in a "```console"
//! block each "$ COMMAND" line runs in the page's own scratch directory (with `butane` and
//! `flint` on PATH) and the lines below it, up to the next "$", must be its exact stdout; a
//! trailing "# exit N" gives the expected exit code (0 otherwise). A "```sh" block must pass
//! `bash -n`, and the repository paths it names (./initramfs/…, ./scripts/…) must exist.
use crate::common;

use std::path::Path;
use std::process::Command;

enum Block {
    File(String, String),
    Console(String),
    Sh(String),
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        for l in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        if let Some(name) = words.find_map(|w| w.strip_prefix("file=")) {
            out.push(Block::File(name.to_string(), body));
        } else if lang == "console" {
            out.push(Block::Console(body));
        } else if lang == "sh" {
            out.push(Block::Sh(body));
        }
    }
    out
}

fn run_console(page: &str, dir: &Path, body: &str, bin_path: &str) -> usize {
    let mut steps: Vec<(String, Vec<&str>)> = Vec::new();
    for line in body.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            steps.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = steps.last_mut() {
            last.1.push(line);
        } else {
            panic!("{page}: console block does not start with a command: {line:?}");
        }
    }
    for (cmd, want) in &steps {
        let (cmd, code) = match cmd.rsplit_once(" # exit ") {
            Some((c, n)) => (c.to_string(), n.trim().parse::<i32>().unwrap()),
            None => (cmd.clone(), 0),
        };
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &cmd])
            .current_dir(dir)
            .env("PATH", bin_path)
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        let want: String = want.iter().map(|l| format!("{l}\n")).collect();
        assert_eq!(
            got,
            want,
            "{page}: `{cmd}` printed something else; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            Some(code),
            "{page}: `{cmd}` exit code; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    steps.len()
}

#[test]
fn every_guide_example_runs_as_shown() {
    let guide = common::repo().join("docs/guide");
    let bins = Path::new(env!("CARGO_BIN_EXE_flint"))
        .parent()
        .unwrap()
        .to_path_buf();
    let bin_path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut pages: Vec<_> = std::fs::read_dir(&guide)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut commands = 0;
    for page in &pages {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let dir = common::TempDir::new(&format!("guide-{name}"));
        for b in blocks(&std::fs::read_to_string(page).unwrap()) {
            match b {
                Block::File(f, body) => std::fs::write(dir.join(f), body).unwrap(),
                Block::Console(body) => commands += run_console(&name, &dir, &body, &bin_path),
                Block::Sh(body) => {
                    let ok = Command::new("bash")
                        .args(["-n", "-c", &body])
                        .status()
                        .unwrap();
                    assert!(ok.success(), "{name}: sh block does not parse:\n{body}");
                    for word in body.split_whitespace().filter(|w| w.starts_with("./")) {
                        assert!(
                            common::repo().join(word).exists(),
                            "{name}: {word} does not exist"
                        );
                    }
                    commands += 1;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(pages.len() >= 4, "{pages:?}");
    assert!(commands >= 20, "only {commands} examples");
}
