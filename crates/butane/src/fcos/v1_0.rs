//! Fedora CoreOS 1.0.0: base 0.1, Ignition 3.0.0.

use flint_ignition::Version;
use crate::base::BaseVersion;
use crate::{Family, Variant};

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.0.0",
    family: Family::Fcos,
    minor: 0,
    base: BaseVersion::V0_1,
    ignition: Version::V3_0,
};
