//! Scaleway: the user data from `169.254.42.42/user_data/cloud-init`, asked from a
//! privileged source port (the service serves user data only to root). None (404) is no
//! config.

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.42.42/user_data/cloud-init";

pub(super) struct Scaleway;

impl Platform for Scaleway {
    fn name(&self) -> &'static str {
        "scaleway"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let url = cx.url(USER_DATA);
        match crate::fetch::lowport::get_metadata(&cx.fetcher.http, &url, true)? {
            Some(body) => Ok(UserData::new(body, url)),
            None => Ok(UserData::none(url)),
        }
    }
}
