//! Flatcar 1.2.0-experimental: base 0.8-experimental (quadlets, tree modes and ownership) with
//! Clevis allowed and CEX refused, Ignition 3.7.0-experimental.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "flatcar",
    version: "1.2.0-experimental",
    family: Family::Flatcar,
    minor: 2,
    base: BaseVersion::V0_8Exp,
    ignition: Version::V3_7Exp,
};
