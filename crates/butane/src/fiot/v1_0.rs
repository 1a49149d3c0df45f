//! Fedora IoT 1.0.0: base 0.5 without storage devices or kernel arguments, Ignition 3.4.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fiot",
    version: "1.0.0",
    family: Family::Fiot,
    minor: 0,
    base: BaseVersion::V0_5,
    ignition: Version::V3_4,
};
