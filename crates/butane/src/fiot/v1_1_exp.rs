//! Fedora IoT 1.1.0-experimental: base 0.8-experimental without storage devices or kernel
//! arguments, Ignition 3.7.0-experimental.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fiot",
    version: "1.1.0-experimental",
    family: Family::Fiot,
    minor: 1,
    base: BaseVersion::V0_8Exp,
    ignition: Version::V3_7Exp,
};
