//! The project's own validation cases: `fixtures/validate/NNN-name/in.ign` and `expected`
//! (exit code on the first line, then the exact output lines); `args`, when there, holds
//! flags given before the file (`--rules upstream`).
use crate::common;

#[test]
fn every_fixture_gives_its_expected_output() {
    let dirs = common::case_dirs(&common::repo().join("fixtures/validate"));
    assert!(!dirs.is_empty(), "no cases in fixtures/validate/");
    let mut failures = Vec::new();
    for dir in &dirs {
        let expected = std::fs::read_to_string(dir.join("expected")).unwrap();
        let mut lines = expected.lines();
        let want_rc: i32 = lines.next().unwrap().parse().unwrap();
        let want: Vec<&str> = lines.collect();
        let extra = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        let mut args = vec!["validate"];
        args.extend(extra.split_whitespace());
        args.push("in.ign");
        let out = common::run_in(dir, &common::flint(), &args);
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        let got: Vec<&str> = text.lines().collect();
        let rc = out.status.code().unwrap_or(-1);
        if rc != want_rc || got != want {
            failures.push(format!(
                "{}: exit {rc} (want {want_rc})\n  got:  {got:?}\n  want: {want:?}",
                dir.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
