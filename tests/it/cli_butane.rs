//! `butane` as a drop-in: stdin, output file, check, version, usage errors (upstream's words
//! for 48 recorded command lines), colour, and `flint translate` behaving the same.
use crate::common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn butane() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_butane"))
}

const GOOD: &str = "variant: flatcar\nversion: 1.0.0\npasswd:\n  users:\n    - name: core\n";
const COMPACT: &str =
    "{\"ignition\":{\"version\":\"3.3.0\"},\"passwd\":{\"users\":[{\"name\":\"core\"}]}}\n";

fn run_stdin(bin: &std::path::Path, args: &[&str], input: &str) -> std::process::Output {
    run_command(Command::new(bin).args(args), input)
}

/// Runs `cmd` with `input` on its standard input.
fn run_command(cmd: &mut Command, input: &str) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A run that fails before reading its input closes the pipe: not an error here.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn reads_stdin_and_writes_compact_json() {
    let out = run_stdin(&butane(), &["--strict"], GOOD);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), COMPACT);
    let out = run_stdin(&common::flint(), &["translate", "--strict"], GOOD);
    assert_eq!(String::from_utf8_lossy(&out.stdout), COMPACT);
}

#[test]
fn diagnostics_name_stdin() {
    let out = run_stdin(
        &butane(),
        &["--strict"],
        "variant: flatcar\nversion: 1.0.0\nbogus: 1\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("  --> <stdin>:3:1\n"), "{err}");
    assert!(
        err.ends_with("Config produced warnings and --strict was specified\n"),
        "{err}"
    );
}

#[test]
fn output_file_check_and_version() {
    let dir = common::TempDir::new("cli-butane");
    std::fs::write(dir.join("in.bu"), GOOD).unwrap();
    let out = common::run_in(&dir, &butane(), &["-o", "out.ign", "in.bu"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.join("out.ign")).unwrap(),
        COMPACT
    );

    let out = common::run_in(&dir, &butane(), &["--check", "in.bu"]);
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));

    let out = common::run_in(&dir, &butane(), &["-V"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Butane v"));

    // Nothing is written when translation fails.
    std::fs::write(dir.join("bad.bu"), "variant: flatcar\nversion: 9.0.0\n").unwrap();
    let out = common::run_in(&dir, &butane(), &["-o", "bad.ign", "bad.bu"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.join("bad.ign").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let dir = std::env::temp_dir();
    for args in [
        &["--no-such-flag"][..],
        &["a.bu", "b.bu"],
        &["--color", "purple", "a.bu"],
    ] {
        let out = common::run_in(&dir, &butane(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let out = common::run_in(&dir, &butane(), &["/nonexistent/in.bu"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "failed to open /nonexistent/in.bu: open /nonexistent/in.bu: no such file or directory\n"
    );
}

#[test]
fn color_always_paints_the_report() {
    let out = run_stdin(
        &butane(),
        &["--color=always"],
        "variant: flatcar\nversion: 1.0.0\nbogus: 1\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("\x1b[1;33mwarning\x1b[0m[$.bogus]:"),
        "{err:?}"
    );
    // (`--color never` would name an input file, as upstream's flags read it.)
    let out = run_stdin(
        &butane(),
        &["--color=never"],
        "variant: flatcar\nversion: 1.0.0\nbogus: 1\n",
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\x1b'));
}

#[test]
fn deprecated_input_flag_reads_the_file_and_says_so() {
    let dir = std::env::temp_dir().join(format!("flint-cli-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("in.bu"), GOOD).unwrap();
    let out = common::run_in(&dir, &butane(), &["--input", "in.bu"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), COMPACT);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Flag --input has been deprecated, specify filename directly on command line\n"
    );
    // Given twice (flag and argument), it is a usage error, as upstream.
    let out = common::run_in(&dir, &butane(), &["--input", "in.bu", "in.bu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn debug_lists_where_each_output_path_came_from() {
    let input = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /a\n      contents:\n        inline: x\n  filesystems:\n    - device: /dev/sda\n      format: ext4\n      path: /var/x\n      with_mount_unit: true\n";
    let out = run_stdin(&butane(), &["-D"], input);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "TranslationSet: yaml → json");
    for want in [
        "$.version → $.ignition.version",
        "$.storage.files.0.contents.inline → $.storage.files.0.contents.source",
        "$.storage.files.0.path → $.storage.files.0.path",
        "$.storage.filesystems.0.with_mount_unit → $.systemd.units.0.name",
    ] {
        assert!(lines.contains(&want), "{want} missing from:\n{err}");
    }
    // Sorted by output path, as upstream prints it.
    let outputs: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(" → ").nth(1).unwrap())
        .collect();
    let mut sorted = outputs.clone();
    sorted.sort();
    assert_eq!(outputs, sorted);
    // The output itself is unchanged.
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("{\"ignition\""));
}

#[test]
fn openshift_writes_a_machine_config_unless_raw() {
    let input = "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\nopenshift:\n  fips: true\n";
    let out = run_stdin(&butane(), &["--strict"], input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "# Generated by Butane; do not edit\napiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  labels:\n    machineconfiguration.openshift.io/role: worker\n  name: x\nspec:\n  config:\n    ignition:\n      version: 3.4.0\n  fips: true\n"
    );
    // Raw: the Ignition config, and a warning that `fips` is not in it.
    let out = run_stdin(&butane(), &["--raw"], input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"ignition\":{\"version\":\"3.4.0\"}}\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("field ignored in raw mode"));
    let out = run_stdin(&butane(), &["--raw", "--strict"], input);
    assert_eq!(out.status.code(), Some(1));
}

/// Upstream's flag library: `--flag=false` and Go's other spellings of a boolean, a flag
/// given twice (the last one counts), empty names (standard input and output), and
/// `--color` without a value before the input.
#[test]
fn flags_as_upstreams_flag_library_takes_them() {
    let pretty = "{\n  \"ignition\": {\n    \"version\": \"3.3.0\"\n  },";
    for (args, want_pretty) in [
        (&["--pretty=true"][..], true),
        (&["--pretty=false"], false),
        (&["--pretty=1", "--strict=F"], true),
        (&["-p", "-p"], true),
        (&["-o", "", ""], false),
        (&["--output=", "--color"], false),
    ] {
        let out = run_stdin(&butane(), args, GOOD);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.starts_with(pretty), want_pretty, "{args:?}: {text}");
    }
    let dir = std::env::temp_dir().join(format!("flint-cli-butane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.ign"), dir.join("b.ign"));
    let out = run_stdin(
        &butane(),
        &["-o", a.to_str().unwrap(), "-o", b.to_str().unwrap()],
        GOOD,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!a.exists() && std::fs::read_to_string(&b).unwrap() == COMPACT);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The wording of upstream's failures to read the input and to write the output.
#[test]
fn file_errors_worded_as_upstream() {
    let dir = std::env::temp_dir().join(format!("flint-cli-butane-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let cases = [
        (
            vec![format!("{d}/nope.bu")],
            format!("failed to open {d}/nope.bu: open {d}/nope.bu: no such file or directory\n"),
        ),
        (
            vec![d.to_string()],
            format!("failed to read {d}: read {d}: is a directory\n"),
        ),
        (
            vec!["-o".into(), d.to_string()],
            format!("failed to open {d}: open {d}: is a directory\n"),
        ),
        (
            vec!["-o".into(), "/dev/full".into()],
            "Failed to write config to /dev/full: write /dev/full: no space left on device\n"
                .into(),
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_stdin(&butane(), &args, GOOD);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A config larger than a pipe's default 64 KiB, written into a pipe (which `butane` widens
/// first) and into a file: the same bytes, whole.
#[test]
fn a_large_config_reads_the_same_from_a_pipe_and_from_a_file() {
    use std::fmt::Write as _;
    let dir = common::TempDir::new("cli-butane-pipe");
    let mut doc = String::from("variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n");
    for i in 0..1000 {
        let _ = write!(
            doc,
            "    - path: /etc/f{i}\n      contents:\n        inline: \"{}\"\n",
            format!(
                "line {i} of a file that does not compress well {} ",
                i * 7919
            )
            .repeat(5)
        );
    }
    std::fs::write(dir.join("in.bu"), &doc).unwrap();
    let piped = common::run_in(&dir, &butane(), &["--strict", "in.bu"]);
    assert_eq!(piped.status.code(), Some(0));
    assert!(piped.stdout.len() > 128 << 10, "{}", piped.stdout.len());
    let out = common::run_in(&dir, &butane(), &["--strict", "-o", "out.ign", "in.bu"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(dir.join("out.ign")).unwrap(), piped.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

// The command lines of `butane-cli/cases.jsonl`: each with the reference's exit code, standard
// output and standard error, recorded with the program called `butane`, in a directory holding
// `in.bu` (also on standard input) and `bad.bu` (a relative file path: one error).
const IN: &str = "variant: fcos\nversion: 1.5.0\n";
const BAD: &str = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n  - path: rel\n";

#[test]
fn command_lines_answer_as_upstreams() {
    let cases = std::fs::read_to_string(common::repo().join("tests/butane-cli/cases.jsonl"))
        .expect("cases.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let dir = common::TempDir::new("butane-cli");
        std::fs::write(dir.path().join("in.bu"), IN).unwrap();
        std::fs::write(dir.path().join("bad.bu"), BAD).unwrap();
        let out = run_command(
            Command::new(butane())
                .arg0("butane")
                .args(&args)
                .current_dir(dir.path())
                .env_remove("NO_COLOR"),
            IN,
        );
        let got = (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        let want = (
            case["rc"].as_i64().map(|c| c as i32),
            case["stdout"].as_str().unwrap().to_string(),
            case["stderr"].as_str().unwrap().to_string(),
        );
        if got != want {
            failures.push(format!("{args:?}:\n got {got:?}\nwant {want:?}"));
        }
        count += 1;
    }
    assert_eq!(count, cases.lines().count(), "cases run");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
