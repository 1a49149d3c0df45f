//! Shell completions, manual pages and the pre-commit hooks: the copies committed under
//! completions/ and man/ are what the binary generates now (run with
//! `FLINT_UPDATE_GENERATED=1` to rewrite them after changing the command line), they cover
//! every command, and .pre-commit-hooks.yaml runs.
use crate::common;

use clap::CommandFactory;
use std::fs;

fn flint_ok(args: &[&str]) -> Vec<u8> {
    let out = common::run_in(&common::repo(), &common::flint(), args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "flint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn updating() -> bool {
    std::env::var_os("FLINT_UPDATE_GENERATED").is_some()
}

/// Asserts the committed `path` (relative to the repository) holds `generated`, or writes
/// it when updating.
fn check_committed(path: &str, generated: &[u8]) {
    let file = common::repo().join(path);
    if updating() {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, generated).unwrap();
        return;
    }
    let committed = fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(
        committed == generated,
        "{path} is out of date with the command line: regenerate it with \
         `FLINT_UPDATE_GENERATED=1 cargo test --release --test cli_completions`"
    );
}

/// Subcommand names, as the binary defines them (without clap's `help`).
fn subcommands() -> Vec<String> {
    flint::cli::Cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn committed_completions_are_current() {
    for (shell, path) in [
        ("bash", "completions/flint.bash"),
        ("zsh", "completions/_flint"),
        ("fish", "completions/flint.fish"),
    ] {
        check_committed(path, &flint_ok(&["completions", shell]));
    }
    // The other shells clap_complete knows work too.
    for shell in ["elvish", "powershell"] {
        assert!(!flint_ok(&["completions", shell]).is_empty());
    }
    let out = common::run_in(&common::repo(), &common::flint(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bash_completion_offers_every_subcommand_and_validate_option() {
    let script = String::from_utf8(flint_ok(&["completions", "bash"])).unwrap();
    let subs = subcommands();
    assert!(subs.len() >= 7, "{subs:?}");
    for sub in &subs {
        assert!(
            script.contains(&format!("flint,{sub})")),
            "bash completion lacks {sub}"
        );
    }
    for word in [
        "--strict",
        "--format",
        "--color",
        "--files-dir",
        "sarif github",
    ] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
}

#[test]
fn committed_man_pages_are_current_and_complete() {
    let dir = common::TempDir::new("man");
    fs::remove_dir(&dir).unwrap();
    flint_ok(&["man", "--dir", dir.to_str().unwrap()]);
    let mut generated: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    generated.sort();
    let mut expected: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("flint-{s}.1"))
        .chain(["flint.1".to_string()])
        .collect();
    expected.sort();
    assert_eq!(generated, expected);
    for name in &generated {
        check_committed(&format!("man/{name}"), &fs::read(dir.join(name)).unwrap());
    }
    if !updating() {
        // Nothing stale is left behind in man/ either.
        let mut committed: Vec<String> = fs::read_dir(common::repo().join("man"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        committed.sort();
        assert_eq!(committed, generated);
    }
    // `flint man` prints flint.1.
    assert_eq!(flint_ok(&["man"]), fs::read(dir.join("flint.1")).unwrap());

    // flint.1 names every subcommand (roff escapes `-` as `\-`) ...
    let top = fs::read_to_string(dir.join("flint.1")).unwrap();
    for sub in subcommands() {
        assert!(
            top.contains(&format!("flint\\-{sub}(1)")),
            "flint.1 lacks {sub}"
        );
    }
    // ... and flint-validate.1 every option and value of validate.
    let validate = fs::read_to_string(dir.join("flint-validate.1")).unwrap();
    let cmd = flint::cli::Cli::command();
    let sub = cmd.find_subcommand("validate").unwrap();
    let mut seen = 0;
    for arg in sub.get_arguments() {
        if let Some(long) = arg.get_long() {
            let long = format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-"));
            assert!(validate.contains(&long), "flint-validate.1 lacks {long}");
            seen += 1;
        }
        if let Some(short) = arg.get_short() {
            let short = format!("\\fB\\-{short}\\fR");
            assert!(validate.contains(&short), "flint-validate.1 lacks {short}");
        }
        let values = if arg.get_action().takes_values() {
            arg.get_possible_values()
        } else {
            Vec::new()
        };
        for value in values.iter().filter(|v| !v.is_hide_set()) {
            assert!(
                validate.contains(&format!("{}: ", value.get_name())),
                "flint-validate.1 lacks the value {}",
                value.get_name()
            );
        }
    }
    assert!(
        seen >= 4,
        "validate has --strict, --format, --color, --files-dir"
    );
    assert!(validate.contains("<\\fIPATHS\\fR>"));
    fs::remove_dir_all(&dir).unwrap();
}

/// The hooks in .pre-commit-hooks.yaml, read with flint's own YAML reader.
fn hooks() -> Vec<serde_json::Value> {
    let text = fs::read_to_string(common::repo().join(".pre-commit-hooks.yaml")).unwrap();
    let doc = flint_go::yaml::parse(&text).expect("well-formed YAML");
    match flint_go::yaml::to_json(&doc.root) {
        serde_json::Value::Array(hooks) => hooks,
        other => panic!("a list of hooks, not {other}"),
    }
}

#[test]
fn pre_commit_hooks_are_declared() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["flint-validate", "flint-validate-system"]);
    for (hook, language) in hooks.iter().zip(["rust", "system"]) {
        assert_eq!(hook["name"], "flint validate");
        assert_eq!(hook["entry"], "flint validate --strict");
        assert_eq!(hook["language"], language);
        assert_eq!(hook["files"], r"\.(bu|ign|ya?ml)$");
        assert_eq!(hook["pass_filenames"], true);
        assert!(hook["description"].is_string());
    }
}

#[test]
fn pre_commit_entry_runs_on_filenames() {
    let dir = common::TempDir::new("hook");
    fs::create_dir_all(dir.join("ignition")).unwrap();
    fs::write(
        dir.join("node.bu"),
        "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n    - path: /etc/hostname\n      mode: 0644\n      contents:\n        inline: node\n",
    )
    .unwrap();
    fs::write(
        dir.join("ignition/node.ign"),
        r#"{"ignition":{"version":"3.4.0"}}"#,
    )
    .unwrap();
    fs::write(
        dir.join("warn.yaml"),
        "variant: flatcar\nversion: 1.1.0\nbogus: 1\n",
    )
    .unwrap();
    // As pre-commit runs it: the entry's words, then the staged file names.
    let run = |files: &[&str]| {
        let hooks = hooks();
        let entry = hooks[1]["entry"].as_str().unwrap();
        let mut words = entry.split_whitespace();
        assert_eq!(words.next(), Some("flint"));
        let args: Vec<&str> = words.chain(files.iter().copied()).collect();
        common::run_in(&dir, &common::flint(), &args)
    };
    let ok = run(&["node.bu", "ignition/node.ign"]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    // --strict: a warning fails the commit, and says where.
    let warned = run(&["node.bu", "warn.yaml"]);
    assert_eq!(warned.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&warned.stdout).contains("warn.yaml: warning at $.bogus"),
        "{}",
        String::from_utf8_lossy(&warned.stdout)
    );
    assert!(dir.is_dir());
    fs::remove_dir_all(&dir).unwrap();
}
