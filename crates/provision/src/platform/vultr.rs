//! Vultr: the instance user data from the metadata service; none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/user-data/user-data";

pub(super) struct Vultr;

impl Platform for Vultr {
    fn name(&self) -> &'static str {
        "vultr"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let data = cx.get_optional(USER_DATA, &[], &[])?.unwrap_or_default();
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
