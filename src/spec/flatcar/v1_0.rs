//! Flatcar 1.0.0: base 0.4, Ignition 3.3.0.

use crate::ignition::Version;
use crate::spec::Variant;
use crate::spec::base::BaseVersion;

pub const SPEC: Variant = Variant {
    name: "flatcar",
    version: "1.0.0",
    base: BaseVersion::V0_4,
    ignition: Version::V3_3,
    filter: super::reject_clevis,
};
