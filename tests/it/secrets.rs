//! Secrets stay out of every line flint prints and out of the result record: password
//! hashes, LUKS key files, inline contents, URL credentials and query tokens. The test plants
//! them in a config, runs plan, apply, a second apply, JSON output and failing runs, and
//! greps everything printed for them.
use crate::common;
use crate::support;

use crate::common::TempDir;
use std::path::Path;
use std::process::Command;
use support::{Reply, Server, ok, sha512};

const HASH: &str = "$6$SaltSecretXyz$HashSecretAbcdefghijklmnopqrstuvwxyz0123456789";
const INLINE: &str = "INLINE-SECRET-8f3a";
const LUKS_KEY: &str = "LUKS-KEY-SECRET-77c1";
const PASSWORD: &str = "URLPASS-SECRET-5d2e";
const TOKEN: &str = "QUERY-TOKEN-SECRET-91b0";

fn run(dir: &Path, args: &[&str], config: &str) -> String {
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    let out = Command::new(common::flint())
        .args(args)
        .arg("--root")
        .arg(&root)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--kargs-file")
        .arg(dir.join("grub.cfg"))
        .arg(&file)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    text
}

fn no_secrets(what: &str, text: &str) {
    for s in [
        HASH,
        "HashSecret",
        "SaltSecret",
        INLINE,
        LUKS_KEY,
        PASSWORD,
        TOKEN,
    ] {
        assert!(!text.contains(s), "{what} shows the secret {s:?}:\n{text}");
    }
}

#[test]
fn no_secret_in_any_output_or_record() {
    let dir = TempDir::new("secrets");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    for (f, body) in [
        ("passwd", "root:x:0:0:root:/root:/bin/sh\n"),
        ("group", "root:x:0:\n"),
        ("shadow", "root:*:19000:0:99999:7:::\n"),
        ("gshadow", "root:*::\n"),
    ] {
        std::fs::write(root.join("etc").join(f), body).unwrap();
    }
    let server = Server::start(None);
    let body = b"fetched with credentials".to_vec();
    server.route("/private", ok(body.clone()));
    server.route("/missing", Reply::Fixed(404, vec![], vec![]));
    let port_url = server.url("/private");
    let authed = port_url.replacen("http://", &format!("http://alice:{PASSWORD}@"), 1)
        + &format!("?token={TOKEN}");
    let config = |extra: &str, hash: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.4.0"}},
            "passwd":{{"users":[{{"name":"svc","passwordHash":"{HASH}"}}]}},
            "storage":{{
              "luks":[{{"name":"var","device":"/dev/disk/by-partlabel/flint-absent","keyFile":{{"source":"data:,{LUKS_KEY}"}}}}],
              "files":[
                {{"path":"/etc/inline","contents":{{"source":"data:,{INLINE}"}},"mode":384}},
                {{"path":"/etc/fetched","contents":{{"source":"{authed}","verification":{{"hash":"{hash}"}}}}}}{extra}]}}}}"#
        )
    };
    let good = config("", &sha512(&body));
    let mut all = String::new();
    all += &run(&dir, &["plan"], &good);
    all += &run(&dir, &["plan", "--format", "json"], &good);
    all += &run(&dir, &["apply", "--stage", "files"], &good);
    all += &run(&dir, &["apply", "--stage", "files"], &good);
    assert!(all.contains("apply: nothing to change"), "{all}");
    // Failures: a hash mismatch on the credentialed URL, a 404, bad contents in place.
    let bad = config("", &sha512(b"other"));
    let out = run(&dir, &["apply", "--stage", "files"], &bad);
    assert!(
        out.contains("fetch stage failed at $.storage.files.1.contents"),
        "{out}"
    );
    all += &out;
    let missing = config(
        &format!(
            r#",{{"path":"/etc/m","contents":{{"source":"{}?token={TOKEN}"}}}}"#,
            server
                .url("/missing")
                .replacen("http://", &format!("http://bob:{PASSWORD}@"), 1)
        ),
        &sha512(&body),
    );
    let out = run(&dir, &["apply", "--format", "json"], &missing);
    assert!(out.contains("\"action\":\"fail\""), "{out}");
    all += &out;
    no_secrets("flint's output", &all);
    // The record left in the root.
    let record = std::fs::read_to_string(root.join("etc/.ignition-result.json")).unwrap();
    no_secrets("the result record", &record);
    // The secrets did land where they belong.
    assert_eq!(
        std::fs::read_to_string(root.join("etc/inline")).unwrap(),
        INLINE
    );
    assert_eq!(
        std::fs::read_to_string(root.join("etc/luks/var")).unwrap(),
        LUKS_KEY
    );
    let shadow = std::fs::read_to_string(root.join("etc/shadow")).unwrap();
    assert!(shadow.contains(HASH), "{shadow}");
}
