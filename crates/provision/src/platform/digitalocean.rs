//! DigitalOcean: the droplet user data from the metadata service (a 404 is an error, as upstream).

use super::{Context, Platform, UserData};

const USER_DATA: &str = "http://169.254.169.254/metadata/v1/user-data";

pub(super) struct DigitalOcean;

impl Platform for DigitalOcean {
    fn name(&self) -> &'static str {
        "digitalocean"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        // DigitalOcean always serves user-data (empty when none): a 404 is an error.
        let data = cx.get(USER_DATA, &[], &[])?;
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
