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
        let http = &cx.fetcher.http;
        let headers = [
            ("User-Agent".to_string(), http.user_agent.clone()),
            ("Accept".to_string(), crate::fetch::http::ACCEPT.to_string()),
            ("Accept-Encoding".to_string(), "identity".to_string()),
        ];
        let total = http
            .total_timeout
            .unwrap_or(std::time::Duration::from_secs(120));
        let r = crate::fetch::lowport::get(&url, &headers, total, http.limit)?;
        match r.status {
            200 | 204 => Ok(UserData::new(r.body, url)),
            404 => Ok(UserData::none(url)),
            s => Err(format!("GET {url}: status {s}")),
        }
    }
}
