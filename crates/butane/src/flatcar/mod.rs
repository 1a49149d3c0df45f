//! The Flatcar variant: the base spec without Clevis in 1.0/1.1 (Flatcar's initramfs had no
//! clevis) and without CEX in 1.2 (no s390x); `oem://` sources are accepted, since
//! Flatcar's Ignition fetches them from the OEM partition.

use super::Variant;
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use flint_ignition::validate::Issue;

fn refused(path: JsonPath, message: &str) -> Issue {
    Issue {
        severity: flint_go::diag::Severity::Error,
        path,
        message: message.into(),
    }
}

/// Flatcar refuses LUKS volumes bound with Clevis (before 1.2) and CEX volumes (1.2 on).
pub(crate) fn filter(spec: &Variant, cfg: &ig::Config, issues: &mut Vec<Issue>) {
    for (i, l) in cfg.storage.luks.iter().enumerate() {
        let at = super::jpath(&["storage", "luks"]).index(i);
        if spec.refuses_clevis() && !ig::is_zero(&l.clevis) {
            issues.push(refused(
                at.key("clevis"),
                "clevis is not supported in this spec version",
            ));
        } else if spec.refuses_cex() && !ig::is_zero(&l.cex) {
            issues.push(refused(
                at.key("cex"),
                "cex is not currently supported on the target platform",
            ));
        }
    }
}

/// Whether `url` is an `oem://` URL (any letter case of the scheme, as URL parsing has it).
pub(crate) fn is_oem(url: &str) -> bool {
    url.get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("oem://"))
}

/// The Flatcar variant accepts `oem://` sources where upstream's validator refuses the
/// scheme (Flatcar's Ignition fetches them from the OEM partition, and Flatcar's validator
/// accepts them everywhere): the findings about such sources are dropped.
pub(crate) fn allow_oem(spec: &Variant, issues: Vec<Issue>, cfg: &ig::Config) -> Vec<Issue> {
    const SCHEME: &str = "invalid url scheme";
    const KEY_FILE: &str = "invalid key-file source";
    if spec.family != super::Family::Flatcar
        || !issues
            .iter()
            .any(|i| i.message == SCHEME || i.message == KEY_FILE)
    {
        return issues;
    }
    let oem: Vec<JsonPath> = cfg
        .resources()
        .filter(|(_, r)| r.source.as_deref().is_some_and(is_oem))
        .map(|(p, _)| p.path())
        .collect();
    let key_files: Vec<JsonPath> = cfg
        .storage
        .luks
        .iter()
        .enumerate()
        .filter(|(_, l)| l.key_file.source.as_deref().is_some_and(is_oem))
        .map(|(i, _)| super::jpath(&["storage", "luks"]).index(i).key("keys"))
        .collect();
    issues
        .into_iter()
        .filter(|i| {
            let oem_source = oem
                .iter()
                .any(|p| i.path == *p || i.path == p.key("source"));
            !(i.message == SCHEME && oem_source
                || i.message == KEY_FILE && key_files.contains(&i.path))
        })
        .collect()
}
