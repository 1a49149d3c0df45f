//! OpenShift 4.16.0: the fcos 1.5 spec with MachineConfig output, Ignition 3.4.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "openshift",
    version: "4.16.0",
    family: Family::OpenShift,
    minor: 16,
    base: BaseVersion::V0_5,
    ignition: Version::V3_4,
};
