//! OpenStack (also `brightbox`, and `stackit`, whose Flatcar images say openstack): the
//! config drive labelled `config-2` or `CONFIG-2` (`/openstack/latest/user_data`) and the
//! metadata service (`169.254.169.254`, and with an IPv6 address on an interface also
//! `[fe80::a9fe:a9fe%IFACE]`), side by side: the first answer wins. No user data (404) is
//! no config, and so is nothing answering at all.

use super::{Context, Platform, UserData, drive};
use std::path::Path;

const PATH: &str = "/openstack/latest/user_data";
const V4: &str = "http://169.254.169.254/openstack/latest/user_data";

/// Registered under several names.
pub(super) struct OpenStack(pub &'static str);

impl Platform for OpenStack {
    fn name(&self) -> &'static str {
        self.0
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = cx.fetch_timeout();
        let mut urls = vec![V4.to_string()];
        for iface in ipv6_interfaces(&cx.places.net) {
            urls.push(format!(
                "http://[fe80::a9fe:a9fe%25{iface}]/openstack/latest/user_data"
            ));
        }
        let attempts: Vec<(String, drive::Attempt)> = vec![
            (
                "config drive (config-2)".into(),
                drive::drive_attempt(cx, "config-2", PATH, wait),
            ),
            (
                "config drive (CONFIG-2)".into(),
                drive::drive_attempt(cx, "CONFIG-2", PATH, wait),
            ),
            ("metadata service".into(), metadata_attempt(cx, urls)),
        ];
        Ok(match drive::first_of(cx, attempts) {
            Some((from, bytes)) => UserData::new(bytes, from),
            None => {
                cx.note("couldn't fetch config");
                UserData::none("no config drive and no metadata service")
            }
        })
    }
}

/// The metadata service over each URL side by side; the first answer wins, 404 is "no
/// config", and when every URL fails the last error is the answer.
fn metadata_attempt(cx: &Context, urls: Vec<String>) -> drive::Attempt {
    let (http, endpoint) = (cx.fetcher.http.clone(), cx.endpoint.clone());
    Box::new(move |_stop| {
        let (tx, rx) = std::sync::mpsc::channel();
        let n = urls.len();
        for u in urls {
            let (tx, http, endpoint) = (tx.clone(), http.clone(), endpoint.clone());
            std::thread::spawn(move || {
                let target = endpoint.url(&u);
                let r = if target.contains("%25") {
                    // ureq cannot reach a zoned link-local address: the small client can.
                    crate::fetch::lowport::get_metadata(&http, &target, false)
                } else {
                    crate::fetch::metadata::get_optional(&http, &endpoint, &u, &[], &[])
                };
                let _ = tx.send(r);
            });
        }
        drop(tx);
        let mut last = String::from("no metadata URL");
        for _ in 0..n {
            match rx.recv() {
                Ok(Ok(data)) => return Ok(data.unwrap_or_default()),
                Ok(Err(e)) => last = e,
                Err(_) => break,
            }
        }
        Err(last)
    })
}

/// Interfaces that are up, not loopback, and have an IPv6 address.
pub(super) fn ipv6_interfaces(net: &Path) -> Vec<String> {
    let inet6 = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
    let with_v6: Vec<&str> = inet6
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let Ok(rd) = std::fs::read_dir(net) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let flags = std::fs::read_to_string(e.path().join("flags"))
            .ok()
            .and_then(|f| u32::from_str_radix(f.trim().trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        let up = flags & 0x1 != 0;
        let loopback = flags & 0x8 != 0;
        if up && !loopback && with_v6.contains(&name.as_str()) && !out.contains(&name) {
            out.push(name);
        }
    }
    out.sort();
    out
}
