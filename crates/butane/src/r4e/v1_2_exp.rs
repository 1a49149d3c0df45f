//! RHEL for Edge 1.2.0-experimental: base 0.8-experimental without storage devices or kernel
//! arguments, Ignition 3.7.0-experimental.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "r4e",
    version: "1.2.0-experimental",
    family: Family::R4e,
    minor: 2,
    base: BaseVersion::V0_8Exp,
    ignition: Version::V3_7Exp,
};
