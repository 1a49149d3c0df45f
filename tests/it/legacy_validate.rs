//! `flint validate` on spec 1 and 2.x configs (`conformance/legacy-validate/`): the exit code
//! of Flatcar's ignition-validate (a crash of the reference counts as a refusal), and flint's
//! own 2.x report (messages, JSON paths, positions) exactly as reviewed in `expected.flint`.
use crate::common;

#[test]
fn legacy_validation_matches_flatcar_verdicts() {
    let corpus = common::corpus("legacy-validate");
    let mut failures = Vec::new();
    let mut n = 0;
    for case in common::case_dirs(&corpus) {
        n += 1;
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let reference = std::fs::read_to_string(case.join("expected")).unwrap();
        let want = std::fs::read_to_string(case.join("expected.flint")).unwrap();
        let ref_code: i32 = reference.lines().next().unwrap().parse().unwrap();
        let ref_code = if reference.contains("\npanic: ") {
            1
        } else {
            ref_code
        };
        let out = common::run_in(&case, &common::flint(), &["validate", "in.ign"]);
        let code = out.status.code().unwrap_or(-1);
        let got = format!(
            "{code}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if code != ref_code {
            failures.push(format!(
                "{name}: exit {code}, Flatcar's validator exits {ref_code}"
            ));
        } else if got != want {
            failures.push(format!("{name}: report differs:\n{got}\nwant:\n{want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(n, common::corpus_cases(&corpus).len(), "cases checked");
}
