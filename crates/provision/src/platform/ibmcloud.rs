//! IBM Cloud: the NoCloud drive labelled `cidata`, `/user-data`; a drive that does not
//! appear within 30 s is no config.

use super::{Context, Platform, UserData, drive};
use std::time::Duration;

pub(super) struct IbmCloud;

impl Platform for IbmCloud {
    fn name(&self) -> &'static str {
        "ibmcloud"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = Duration::from_secs(30).min(cx.device_timeout);
        let a = drive::drive_attempt(cx, "cidata", "/user-data", wait);
        let stop = std::sync::atomic::AtomicBool::new(false);
        match a(&stop) {
            Ok(bytes) => Ok(UserData::new(bytes, "config drive cidata")),
            Err(e) => {
                cx.note(format!("{e}; continuing without a config"));
                Ok(UserData::none("no cidata drive"))
            }
        }
    }
}
