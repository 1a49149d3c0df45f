//! Fedora CoreOS 1.7.0: base 0.7 (tree `file_mode`/`dir_mode`/`user`/`group`), Ignition 3.6.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.7.0",
    family: Family::Fcos,
    minor: 7,
    base: BaseVersion::V0_7,
    ignition: Version::V3_6,
};
