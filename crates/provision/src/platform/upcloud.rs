//! UpCloud: the server user data from the metadata service (which must be enabled); none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/metadata/v1/user_data";

pub(super) struct UpCloud;

impl Platform for UpCloud {
    fn name(&self) -> &'static str {
        "upcloud"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let data = cx.get_optional(USER_DATA, &[], &[])?.unwrap_or_default();
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
