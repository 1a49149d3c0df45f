//! The Go-compatible writer reproduces upstream output byte for byte: every `expected.ign`
//! of the butane corpus, read into the model and written back pretty, is unchanged.
use crate::common;

#[test]
fn upstream_outputs_round_trip_byte_exact() {
    let mut checked = 0;
    for dir in common::case_dirs(&common::corpus("butane")) {
        let path = dir.join("expected.ign");
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let parsed =
            flint_ignition::parse(&bytes).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
        assert!(
            parsed.warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            parsed.warnings
        );
        let out = flint_go::json::to_vec(&parsed.config, true);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&bytes),
            "{} does not round-trip",
            path.display()
        );
        let compact = flint_go::json::to_vec(&parsed.config, false);
        let reparsed = flint_ignition::parse(&compact).unwrap();
        assert_eq!(reparsed.config, parsed.config);
        checked += 1;
    }
    assert_ne!(checked, 0, "no expected.ign in the butane corpus");
}
