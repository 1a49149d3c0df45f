//! OpenShift 4.23.0-experimental: the fcos 1.8-experimental spec with MachineConfig output (GRUB
//! users as file contents), Ignition 3.7.0-experimental.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "openshift",
    version: "4.23.0-experimental",
    family: Family::OpenShift,
    minor: 23,
    base: BaseVersion::V0_8Exp,
    ignition: Version::V3_7Exp,
};
