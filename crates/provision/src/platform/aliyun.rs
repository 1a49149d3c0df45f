//! Alibaba Cloud: the instance user data from the metadata service; none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://100.100.100.200/latest/user-data";

pub(super) struct Aliyun;

impl Platform for Aliyun {
    fn name(&self) -> &'static str {
        "aliyun"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        // No user data (404) is no config.
        let data = cx.get_optional(USER_DATA, &[], &[])?.unwrap_or_default();
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
