//! Fedora CoreOS 1.5.0: base 0.5 with `grub` users and `boot_device.luks.discard`, Ignition 3.4.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "fcos",
    version: "1.5.0",
    family: Family::Fcos,
    minor: 5,
    base: BaseVersion::V0_5,
    ignition: Version::V3_4,
};
