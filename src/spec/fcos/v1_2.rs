//! Fedora CoreOS 1.2.0: base 0.3 (LUKS, Clevis), Ignition 3.2.0.

use crate::ignition::Version;
use crate::spec::base::BaseVersion;
use crate::spec::{Family, Variant};

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.2.0",
    family: Family::Fcos,
    minor: 2,
    base: BaseVersion::V0_3,
    ignition: Version::V3_2,
};
