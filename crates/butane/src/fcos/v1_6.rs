//! Fedora CoreOS 1.6.0: base 0.6 (LUKS `cex`, also for `boot_device`), the config-wide checks
//! (partitions reused by label, mount units outside /etc and /var), Ignition 3.5.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.6.0",
    family: Family::Fcos,
    minor: 6,
    base: BaseVersion::V0_6,
    ignition: Version::V3_5,
};
