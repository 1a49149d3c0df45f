//! CloudStack: the config drive labelled `config-2` or `CONFIG-2`
//! (`/cloudstack/userdata/user_data.txt`) and the metadata service on the DHCP server
//! (`SERVER_ADDRESS` of systemd-networkd's lease, `/latest/user-data`), side by side.
//! No user data (404) is no config, and so is nothing answering.

use super::{Context, Platform, UserData, drive};
use std::path::Path;
use std::time::{Duration, Instant};

const PATH: &str = "/cloudstack/userdata/user_data.txt";

pub(super) struct CloudStack;

impl Platform for CloudStack {
    fn name(&self) -> &'static str {
        "cloudstack"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = cx.fetch_timeout();
        let (http, endpoint, leases) = (
            cx.fetcher.http.clone(),
            cx.endpoint.clone(),
            cx.places.leases.clone(),
        );
        let metadata: drive::Attempt = Box::new(move |stop| {
            let start = Instant::now();
            let addr = loop {
                if let Some(a) = dhcp_server(&leases) {
                    break a;
                }
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err("stopped".into());
                }
                if start.elapsed() >= wait {
                    return Err("no DHCP lease with a SERVER_ADDRESS".into());
                }
                std::thread::sleep(Duration::from_millis(500));
            };
            let url = format!("http://{addr}/latest/user-data");
            crate::fetch::metadata::get_optional(&http, &endpoint, &url, &[], &[])
                .map(Option::unwrap_or_default)
        });
        let attempts: Vec<(String, drive::Attempt)> = vec![
            (
                "config drive (config-2)".into(),
                drive::drive_attempt(cx, "config-2", PATH, wait),
            ),
            (
                "config drive (CONFIG-2)".into(),
                drive::drive_attempt(cx, "CONFIG-2", PATH, wait),
            ),
            ("metadata service".into(), metadata),
        ];
        Ok(match drive::first_of(cx, attempts) {
            Some((from, bytes)) => UserData::new(bytes, from),
            None => UserData::none("no config drive and no metadata service"),
        })
    }
}

/// `SERVER_ADDRESS` from the first lease file in `dir`.
pub(super) fn dhcp_server(dir: &Path) -> Option<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files.iter().find_map(|f| {
        std::fs::read_to_string(f).ok()?.lines().find_map(|l| {
            l.strip_prefix("SERVER_ADDRESS=")
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        })
    })
}
