//! Oracle Cloud Infrastructure: the base64 user data from IMDSv2 (Authorization: Bearer Oracle, 429 retried); none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/opc/v2/instance/metadata/user_data";

pub(super) struct OracleCloud;

impl Platform for OracleCloud {
    fn name(&self) -> &'static str {
        "oraclecloud"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        // IMDSv2 wants the fixed bearer token; 429 (rate limited) is retried. The value is
        // base64; none (404) is no config.
        let data = cx
            .get_optional(USER_DATA, &[("Authorization", "Bearer Oracle")], &[429])?
            .unwrap_or_default();
        let data = super::userdata::base64_decode(&data)?;
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
