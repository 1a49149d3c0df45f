//! Equinix Metal (formerly Packet): the user data from metadata.packet.net (a 404 is an
//! error, as upstream); after each stage, a message to the machine's timeline at the
//! phone-home URL the metadata names (its `/phone-home` replaced by `/events`).

use super::{Context, Platform, UserData};
use crate::fetch::http::Request;

const USER_DATA: &str = "https://metadata.packet.net/userdata";
const METADATA: &str = "https://metadata.packet.net/metadata";

/// Registered as `packet` (upstream's name) and `equinix`.
pub(super) struct Packet(pub &'static str);

impl Platform for Packet {
    fn name(&self) -> &'static str {
        self.0
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let data = cx.get(USER_DATA, &[("Accept", "*/*")], &[])?;
        Ok(UserData::new(data, cx.url(USER_DATA)))
    }

    fn report(&self, cx: &Context, stage: &str, error: Option<&str>) -> Result<(), String> {
        let meta = cx.get(METADATA, &[("Accept", "*/*")], &[])?;
        if meta.is_empty() {
            return Err("fetch successful but fetched data empty".into());
        }
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(default)]
            phone_home_url: String,
        }
        let m: Meta = serde_json::from_slice(&meta).map_err(|e| format!("metadata: {e}"))?;
        let url = format!(
            "{}/events",
            m.phone_home_url.trim_end_matches("/phone-home")
        );
        let body = match error {
            Some(e) => serde_json::json!({
                "state": "failed",
                "message": format!("[{stage}] Ignition error: {e}"),
            }),
            None => serde_json::json!({
                "state": "running",
                "message": format!("[{stage}] Ignition status: finished successfully"),
            }),
        };
        let body = body.to_string();
        let headers = [("Content-Type".to_string(), "application/json".to_string())];
        let mut http = cx.fetcher.http.clone();
        http.total_timeout = Some(std::time::Duration::from_secs(30));
        http.send(&Request {
            method: "POST",
            url: &url,
            headers: &headers,
            body: Some(body.as_bytes()),
            retry_codes: &[],
        })
        .map(|_| ())
    }
}
