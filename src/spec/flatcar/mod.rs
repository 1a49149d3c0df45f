//! The Flatcar variant: the base spec without Clevis (Flatcar's initramfs has no clevis).

pub mod v1_0;
pub mod v1_1;

use crate::ignition::types as ig;
use crate::ignition::validate::Issue;
use crate::tree::JsonPath;

/// Flatcar refuses LUKS volumes bound with Clevis.
pub fn reject_clevis(cfg: &ig::Config, issues: &mut Vec<Issue>) {
    for (i, l) in cfg.storage.luks.iter().enumerate() {
        if !ig::is_zero(&l.clevis) {
            issues.push(Issue {
                severity: crate::diag::Severity::Error,
                path: JsonPath::root()
                    .key("storage")
                    .key("luks")
                    .index(i)
                    .key("clevis"),
                message: "clevis is not supported in this spec version".into(),
            });
        }
    }
}
