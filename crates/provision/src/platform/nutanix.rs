//! Nutanix AHV: the config drive labelled `config-2`, `/openstack/latest/user_data`
//! (a drive without it is no config). Upstream waits for the drive for ever; flint for the
//! provider fetch timeout.

use super::{Context, Platform, UserData, drive};

pub(super) struct Nutanix;

impl Platform for Nutanix {
    fn name(&self) -> &'static str {
        "nutanix"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = cx.fetch_timeout();
        let a = drive::drive_attempt(cx, "config-2", "/openstack/latest/user_data", wait);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let bytes = a(&stop)?;
        Ok(UserData::new(bytes, "config drive config-2"))
    }
}
