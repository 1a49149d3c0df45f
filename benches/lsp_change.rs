//! Budget (issue 47): a Butane document with 5,000 files gets its diagnostics from `flint lsp`
//! in under 100 ms after a change. Drives the real server over stdio: opens the document,
//! then changes one line at a time and times each change until its diagnostics arrive (the
//! server's 10 ms quiet period included). Side by side, in alternation: the upstream
//! `butane --strict` (from `$FLINT_REFERENCES`, else ../shared/oracles, when present) and
//! flint's own `butane` translating the same document as a whole process, what an editor
//! without a language server would run on save. Prints min / median / max of 15 rounds.

#[path = "support/inputs.rs"]
mod inputs;

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::json;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 5000;
const ROUNDS: usize = 15;

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Server {
    fn start(flint: &Path) -> Server {
        let mut child = Command::new(flint)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("flint lsp starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            input,
            output,
        }
    }

    fn send(&mut self, m: Message) {
        m.write(&mut self.input).unwrap();
    }

    fn notify(&mut self, method: &str, params: serde_json::Value) {
        self.send(Message::Notification(Notification::new(
            method.into(),
            params,
        )));
    }

    /// Reads until the diagnostics of a document arrive; returns how many there are.
    fn diagnostics(&mut self) -> usize {
        loop {
            match Message::read(&mut self.output).unwrap() {
                Some(Message::Notification(n)) if n.method == "textDocument/publishDiagnostics" => {
                    return n.params["diagnostics"].as_array().map_or(0, Vec::len);
                }
                Some(_) => {}
                None => panic!("flint lsp ended"),
            }
        }
    }

    fn answer(&mut self, id: i32) {
        loop {
            if let Some(Message::Response(r)) = Message::read(&mut self.output).unwrap()
                && r.id == RequestId::from(id)
            {
                return;
            }
        }
    }
}

fn stats(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "min {:6.1} ms   median {:6.1} ms   max {:6.1} ms",
        v[0],
        v[v.len() / 2],
        v[v.len() - 1]
    )
}

fn process_ms(program: &Path, doc: &Path, dir: &Path) -> f64 {
    let t = Instant::now();
    let ok = Command::new(program)
        .args(["--strict", "--files-dir"])
        .arg(dir)
        .arg(doc)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "{} failed", program.display());
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let flint = PathBuf::from(env!("CARGO_BIN_EXE_flint"));
    let butane = PathBuf::from(env!("CARGO_BIN_EXE_butane"));
    let reference = std::env::var_os("FLINT_REFERENCES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/oracles"))
        .join("butane");
    let reference = reference.is_file().then_some(reference);
    let dir = std::env::temp_dir().join(format!("flint-bench-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = dir.join("fleet.bu");
    let text = inputs::inline_config(FILES);
    std::fs::write(&doc, &text).unwrap();
    let uri = format!("file://{}", doc.display());
    // The line of the first file's log level: the edit toggles it between two values.
    let line = text.lines().position(|l| l.contains("log_level")).unwrap();

    let mut s = Server::start(&flint);
    let init = json!({"capabilities": {}, "processId": null});
    s.send(Message::Request(Request::new(
        1.into(),
        "initialize".into(),
        init,
    )));
    s.answer(1);
    s.notify("initialized", json!({}));
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    assert_eq!(s.diagnostics(), 0, "the document is valid");

    let (mut lsp, mut up, mut ours) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let value = if round % 2 == 0 { "warn" } else { "info" };
        let range = json!({"start": {"line": line, "character": 22},
                           "end": {"line": line, "character": 26}});
        let t = Instant::now();
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": round + 2},
                   "contentChanges": [{"range": range, "text": value}]}),
        );
        assert_eq!(s.diagnostics(), 0);
        lsp.push(t.elapsed().as_secs_f64() * 1000.0);
        if let Some(r) = &reference {
            up.push(process_ms(r, &doc, &dir));
        }
        ours.push(process_ms(&butane, &doc, &dir));
        std::thread::sleep(Duration::from_millis(20));
    }
    s.send(Message::Request(Request::new(
        2.into(),
        "shutdown".into(),
        json!(null),
    )));
    s.answer(2);
    s.notify("exit", json!(null));
    let _ = s.child.wait();
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "Butane document with {FILES} files, {} units, {} directories ({} KiB); budget 100 ms",
        FILES / 10,
        FILES / 10,
        text.len() / 1024
    );
    println!("flint lsp, change -> diagnostics:   {}", stats(lsp));
    match reference {
        Some(_) => println!("upstream butane --strict (process): {}", stats(up)),
        None => println!("upstream butane --strict (process): no reference (../shared absent)"),
    }
    println!("flint butane --strict (process):    {}", stats(ours));
}
