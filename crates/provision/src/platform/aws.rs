//! Amazon Web Services: the instance user data from IMDS, with an IMDSv2 session token
//! when the service gives one (a 404 on the token falls back to IMDSv1, as upstream). No
//! user data (404) is no config. S3 fetches use the instance's IAM role (see fetch::aws).

use super::{Context, Credentials, Platform, UserData};
use crate::fetch::aws::{self as imds, IMDS};

pub(super) struct Aws;

impl Platform for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn credentials(&self) -> Credentials {
        Credentials::Aws
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let url = format!("{IMDS}/2019-10-01/user-data");
        let token = imds::session_token(&cx.fetcher.http, &cx.endpoint)?;
        if token.is_none() {
            cx.note("IMDSv2 is unavailable; falling back to IMDSv1");
        }
        let headers: Vec<(&str, &str)> = token
            .as_deref()
            .map(|t| vec![(imds::TOKEN_HEADER, t)])
            .unwrap_or_default();
        let data = cx.get_optional(&url, &headers, &[])?.unwrap_or_default();
        Ok(UserData::new(data, cx.url(&url)))
    }
}
