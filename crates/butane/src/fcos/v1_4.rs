//! Fedora CoreOS 1.4.0: base 0.4 (kernel arguments, swap units), Ignition 3.3.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.4.0",
    family: Family::Fcos,
    minor: 4,
    base: BaseVersion::V0_4,
    ignition: Version::V3_3,
};
