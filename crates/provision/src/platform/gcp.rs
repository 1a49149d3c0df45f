//! Google Cloud: the instance metadata attribute `user-data` (Metadata-Flavor: Google); none (404) is no config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/computeMetadata/v1/instance/attributes/user-data";

pub(super) struct Gcp;

impl Platform for Gcp {
    fn name(&self) -> &'static str {
        "gcp"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        // Without the header the server refuses (403).
        let data = cx
            .get_optional(USER_DATA, &[("Metadata-Flavor", "Google")], &[])?
            .unwrap_or_default();
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
