//! Fedora CoreOS 1.8.0-experimental: base 0.8-experimental (quadlets), Ignition
//! 3.7.0-experimental.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.8.0-experimental",
    family: Family::Fcos,
    minor: 8,
    base: BaseVersion::V0_8Exp,
    ignition: Version::V3_7Exp,
};
