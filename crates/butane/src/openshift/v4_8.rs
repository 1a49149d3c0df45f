//! OpenShift 4.8.0: the fcos 1.3 spec with MachineConfig output, Ignition 3.2.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "openshift",
    version: "4.8.0",
    family: Family::OpenShift,
    minor: 8,
    base: BaseVersion::V0_3,
    ignition: Version::V3_2,
};
