//! Clevis-bound LUKS volumes, what can be seen without a TPM or device-mapper: a binding
//! that needs a Tang server asks for the network in fetch-offline (as the reference's does),
//! one given by advertisement does not (from spec 3.5.0: upstream drops a 3.4.0 config's); the plan says how each volume will be bound. Formatting, binding and unlocking at the next
//! boot are the VM tier's (initramfs/scenarios/08-clevis.sh).
use crate::cli_ignition::{reference, setup, stage, text};
use crate::common::TempDir;
use crate::stage_processes::flint_with;

fn config(clevis: &str) -> String {
    config_of("3.4.0", clevis)
}

fn config_of(version: &str, clevis: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"{version}"}},"storage":{{"luks":[{{"name":"data","device":"/dev/disk/by-partlabel/flint-absent","clevis":{clevis}}}]}}}}"#
    )
}

const TANG: &str = r#"{"tang":[{"url":"http://tang.invalid","thumbprint":"abc"}]}"#;
const TANG_ADV: &str = r#"{"tang":[{"url":"http://tang.invalid","thumbprint":"abc","advertisement":"{\"payload\":\"e30\",\"signatures\":[]}"}]}"#;
const CUSTOM_NET: &str = r#"{"custom":{"pin":"tang","config":"{}","needsNetwork":true}}"#;
const TPM2: &str = r#"{"tpm2":true}"#;

#[test]
fn fetch_offline_asks_for_the_network_for_tang_as_the_reference_does() {
    let dir = TempDir::new("clevis-neednet");
    let ign = setup(&dir).join("ignition");
    let mut progs = vec![ign];
    progs.extend(reference(&dir, "ignition"));
    // A 3.4.0 config's advertisement is dropped on the way to the newest spec, as
    // upstream's translation drops it: the server is asked while provisioning.
    for (version, clevis, needs) in [
        ("3.4.0", TANG, true),
        ("3.4.0", CUSTOM_NET, true),
        ("3.4.0", TANG_ADV, true),
        ("3.5.0", TANG_ADV, false),
        ("3.6.0", TPM2, false),
    ] {
        std::fs::write(dir.join("config.ign"), config_of(version, clevis)).unwrap();
        for prog in &progs {
            let _ = std::fs::remove_dir_all(dir.join("run"));
            // Upstream's makes no directory for its cache.
            std::fs::create_dir_all(dir.join("run/ignition")).unwrap();
            let o = stage(&dir, prog, "fetch-offline", &[], &[]);
            assert_eq!(o.status.code(), Some(0), "{clevis}: {}", text(&o));
            assert_eq!(
                dir.join("run/ignition/neednet").exists(),
                needs,
                "{} with {clevis}: {}",
                prog.display(),
                text(&o)
            );
        }
    }
}

fn plan(dir: &std::path::Path, clevis: &str) -> std::process::Output {
    std::fs::write(dir.join("config.ign"), config(clevis)).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let args = ["plan", "--root", "root", "--state-dir", "run", "config.ign"];
    flint_with(dir, &args, &[])
}

#[test]
fn the_plan_says_how_each_volume_is_bound() {
    let dir = TempDir::new("clevis-plan");
    std::fs::write(dir.join("cmdline"), "").unwrap();
    let both = r#"{"tpm2":true,"tang":[{"url":"http://t:7500","thumbprint":"abc"}],"threshold":2}"#;
    for (clevis, said) in [
        (TPM2, "bound with Clevis (TPM2)"),
        (TANG, "bound with Clevis (Tang http://tang.invalid)"),
        (both, "bound with Clevis (2 of TPM2, Tang http://t:7500)"),
        (CUSTOM_NET, "bound with Clevis (pin tang)"),
    ] {
        let o = plan(&dir, clevis);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let want = format!(
            "format LUKS2 volume data on /dev/disk/by-partlabel/flint-absent {said} (device not present yet)"
        );
        assert!(out.contains(&want), "{clevis}: {want}\n{out}");
    }
    // An advertisement that is not JSON: refused by the config's validation, naming it.
    let bad = r#"{"tang":[{"url":"http://t","thumbprint":"abc","advertisement":"{nope"}]}"#;
    let o = plan(&dir, bad);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        err.contains("at $.storage.luks.0.clevis.tang.0.advertisement: config.ign: invalid config: advertisement is not valid JSON"),
        "{err}"
    );
}

#[test]
fn a_binding_that_cannot_be_made_fails_before_any_disk_is_touched() {
    // No TPM on this machine (the VM tier has one): `clevis encrypt` fails in the disks
    // stage's check, before the absent device is even waited for, and nothing is written.
    if std::path::Path::new("/dev/tpmrm0").exists() {
        eprintln!("skipping: this machine has a TPM");
        return;
    }
    let dir = TempDir::new("clevis-no-tpm");
    std::fs::write(dir.join("cmdline"), "").unwrap();
    std::fs::write(dir.join("config.ign"), config(TPM2)).unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let args = [
        "apply",
        "--root",
        "root",
        "--state-dir",
        "run",
        "config.ign",
    ];
    let o = flint_with(&dir, &args, &[("FLINT_DEVICE_TIMEOUT", "1")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        err.contains("disks stage failed at $.storage.luks.0.clevis: LUKS volume \"data\""),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.join("root")).unwrap().count(), 0);
}
