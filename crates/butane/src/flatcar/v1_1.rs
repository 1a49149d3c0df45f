//! Flatcar 1.1.0: base 0.5 (LUKS discard and open options, `arn:` sources, `contents_local`,
//! `ssh_authorized_keys_local`), Ignition 3.4.0.

use crate::base::BaseVersion;
use crate::{Family, Variant};
use flint_ignition::Version;

pub const SPEC: Variant = Variant {
    name: "flatcar",
    version: "1.1.0",
    family: Family::Flatcar,
    minor: 1,
    base: BaseVersion::V0_5,
    ignition: Version::V3_4,
};
