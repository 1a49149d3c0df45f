//! Bare metal: no platform config (the kernel command line and the system config
//! directories are where a config comes from).

use super::{Context, Platform, UserData};

pub(super) struct Metal;

impl Platform for Metal {
    fn name(&self) -> &'static str {
        "metal"
    }

    fn fetch(&self, _cx: &Context) -> Result<UserData, String> {
        Ok(UserData::none("metal (no platform config)"))
    }
}
