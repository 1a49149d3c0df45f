//! Fedora CoreOS 1.4.0: base 0.4 (kernel arguments, swap units), Ignition 3.3.0.

use crate::ignition::Version;
use crate::spec::base::BaseVersion;
use crate::spec::{Family, Variant};

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.4.0",
    family: Family::Fcos,
    minor: 4,
    base: BaseVersion::V0_4,
    ignition: Version::V3_3,
};
