//! OpenShift 4.21.0: the fcos 1.6 spec with MachineConfig output, Ignition 3.5.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "openshift",
    version: "4.21.0",
    family: Family::OpenShift,
    minor: 21,
    base: BaseVersion::V0_6,
    ignition: Version::V3_5,
};
