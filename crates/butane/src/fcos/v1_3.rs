//! Fedora CoreOS 1.3.0: base 0.3 with `boot_device` (LUKS and mirrored boot disks), Ignition 3.2.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.3.0",
    family: Family::Fcos,
    minor: 3,
    base: BaseVersion::V0_3,
    ignition: Version::V3_2,
};
