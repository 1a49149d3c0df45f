//! Exoscale: the instance user data from the metadata service; none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/1.0/user-data";

pub(super) struct Exoscale;

impl Platform for Exoscale {
    fn name(&self) -> &'static str {
        "exoscale"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let data = cx.get_optional(USER_DATA, &[], &[])?.unwrap_or_default();
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
