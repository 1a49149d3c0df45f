//! RHEL for Edge: the base spec without disks, filesystems, LUKS, RAID or kernel arguments,
//! which its images manage themselves. Fedora IoT has the same rules.

use flint_ignition::types as ig;
use flint_ignition::validate::Issue;

/// The sections RHEL for Edge and Fedora IoT refuse, reported where they are set.
pub(crate) fn filter(cfg: &ig::Config, issues: &mut Vec<Issue>) {
    let mut refuse = |set: bool, path: &[&'static str], message: &str| {
        if set {
            issues.push(Issue {
                severity: flint_go::diag::Severity::Error,
                path: super::jpath(path),
                message: message.into(),
            });
        }
    };
    let st = &cfg.storage;
    refuse(
        !ig::is_zero(&cfg.kernel_arguments),
        &["kernelArguments"],
        "kernel argument customization is not supported in this spec version",
    );
    refuse(
        !st.disks.is_empty(),
        &["storage", "disks"],
        "disk customization is not supported in this spec version",
    );
    refuse(
        !st.filesystems.is_empty(),
        &["storage", "filesystems"],
        "filesystem customization is not supported in this spec version",
    );
    refuse(
        !st.luks.is_empty(),
        &["storage", "luks"],
        "luks is not supported in this spec version",
    );
    refuse(
        !st.raid.is_empty(),
        &["storage", "raid"],
        "raid is not supported in this spec version",
    );
}
