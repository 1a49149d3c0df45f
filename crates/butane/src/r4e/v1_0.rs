//! RHEL for Edge 1.0.0: base 0.4 without storage devices or kernel arguments, Ignition 3.3.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "r4e",
    version: "1.0.0",
    family: Family::R4e,
    minor: 0,
    base: BaseVersion::V0_4,
    ignition: Version::V3_3,
};
