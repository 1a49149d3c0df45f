//! Fedora CoreOS 1.0.0: base 0.1, Ignition 3.0.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.0.0",
    family: Family::Fcos,
    minor: 0,
    base: BaseVersion::V0_1,
    ignition: Version::V3_0,
};
