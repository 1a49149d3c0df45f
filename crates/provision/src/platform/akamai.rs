//! Akamai (Linode): a metadata token from `PUT /v1/token` (300 s), then `/v1/user-data`
//! with it; the user data is base64, gzip'd or not.

use super::{Context, Platform, UserData, userdata};

const TOKEN: &str = "http://169.254.169.254/v1/token";
const USER_DATA: &str = "http://169.254.169.254/v1/user-data";

pub(super) struct Akamai;

impl Platform for Akamai {
    fn name(&self) -> &'static str {
        "akamai"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let resp = crate::fetch::metadata::exchange(
            &cx.fetcher.http,
            &cx.endpoint,
            "PUT",
            TOKEN,
            &[
                ("Accept", "text/plain"),
                ("Metadata-Token-Expiry-Seconds", "300"),
            ],
            &[],
        )?;
        let token = resp
            .into_body(&cx.url(TOKEN))
            .map_err(|e| format!("getting the metadata token: {e}"))?;
        let token = String::from_utf8_lossy(&token).trim().to_string();
        if token.is_empty() {
            return Err("getting the metadata token: received an empty token".into());
        }
        let encoded = cx
            .get(
                USER_DATA,
                &[("Accept", "*/*"), ("Metadata-Token", &token)],
                &[],
            )
            .map_err(|e| format!("fetching the user data: {e}"))?;
        let data = userdata::try_gunzip(userdata::base64_decode(&encoded)?)?;
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }
}
