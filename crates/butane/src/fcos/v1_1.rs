//! Fedora CoreOS 1.1.0: base 0.2 (`local`, trees, mount units, proxies), Ignition 3.1.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.1.0",
    family: Family::Fcos,
    minor: 1,
    base: BaseVersion::V0_2,
    ignition: Version::V3_1,
};
