//! Cloud metadata services: the one test hook that points them elsewhere, and the small
//! HTTP exchanges the platforms and the object-storage fetchers make with them.
//!
//! `FLINT_METADATA_ENDPOINT=http://127.0.0.1:PORT` replaces the scheme, host and port of
//! whichever metadata service is asked (169.254.169.254, metadata.google.internal,
//! metadata.packet.net, 169.254.42.42, OpenStack's IPv6 link-local address, CloudStack's
//! DHCP server, …) and nothing else: paths, queries, headers and token flows stay as on the
//! real service. It exists so that tests can run real servers on 127.0.0.1.

use super::http::{HttpClient, Request, Response};
use std::time::Duration;

/// The environment variable of the test hook.
pub const ENDPOINT_VAR: &str = "FLINT_METADATA_ENDPOINT";

/// Where metadata requests go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// `scheme://host[:port]` replacing the service's own, when set.
    pub replace: Option<String>,
}

impl Endpoint {
    pub fn from_env() -> Endpoint {
        Endpoint {
            replace: std::env::var(ENDPOINT_VAR)
                .ok()
                .map(|s| s.trim_end_matches('/').to_string())
                .filter(|s| !s.is_empty()),
        }
    }

    /// `url` with its scheme, host and port replaced when the hook is set.
    pub fn url(&self, url: &str) -> String {
        let Some(base) = &self.replace else {
            return url.to_string();
        };
        let Some((_, rest)) = url.split_once("://") else {
            return url.to_string();
        };
        // The authority ends at the first '/', '?' or '#' (an IPv6 zone like %eth0 stays
        // inside the brackets).
        let tail = rest.find(['/', '?', '#']).map_or("", |i| &rest[i..]);
        format!("{base}{tail}")
    }
}

/// One exchange with a metadata service: `method` on `url` (rewritten by the hook) with
/// `headers`; statuses in `retry` are retried like server errors. Returns the final
/// response whatever its status.
pub fn exchange(
    http: &HttpClient,
    endpoint: &Endpoint,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    retry: &[u16],
) -> Result<Response, String> {
    let url = endpoint.url(url);
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let body: Option<&[u8]> = match method {
        "PUT" | "POST" => Some(&[]),
        _ => None,
    };
    http.send(&Request {
        method,
        url: &url,
        headers: &headers,
        body,
        retry_codes: retry,
    })
}

/// GET `url`: the body on 2xx, `None` on 404 (what providers call "no user data"), an error
/// naming the status otherwise.
pub fn get_optional(
    http: &HttpClient,
    endpoint: &Endpoint,
    url: &str,
    headers: &[(&str, &str)],
    retry: &[u16],
) -> Result<Option<Vec<u8>>, String> {
    let resp = exchange(http, endpoint, "GET", url, headers, retry)?;
    if resp.status == 404 {
        return Ok(None);
    }
    resp.into_body(&endpoint.url(url)).map(Some)
}

/// GET `url`: the body on 2xx, an error otherwise (404 included).
pub fn get(
    http: &HttpClient,
    endpoint: &Endpoint,
    url: &str,
    headers: &[(&str, &str)],
    retry: &[u16],
) -> Result<Vec<u8>, String> {
    let resp = exchange(http, endpoint, "GET", url, headers, retry)?;
    resp.into_body(&endpoint.url(url))
}

/// A client for quick probes (is there a metadata server at all?): no retries beyond
/// `total`, short connect and header timeouts.
pub fn probe_client(http: &HttpClient, total: Duration) -> HttpClient {
    let mut c = http.clone();
    c.total_timeout = Some(total);
    c.response_header_timeout = total;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_scheme_host_and_port_only() {
        let e = Endpoint {
            replace: Some("http://127.0.0.1:8080".into()),
        };
        assert_eq!(
            e.url("http://169.254.169.254/latest/api/token"),
            "http://127.0.0.1:8080/latest/api/token"
        );
        assert_eq!(
            e.url("https://metadata.packet.net/userdata"),
            "http://127.0.0.1:8080/userdata"
        );
        assert_eq!(
            e.url("http://[fe80::a9fe:a9fe%eth0]/openstack/latest/user_data"),
            "http://127.0.0.1:8080/openstack/latest/user_data"
        );
        assert_eq!(
            e.url("http://169.254.169.254/metadata/instance/compute/userData?api-version=2021-01-01&format=text"),
            "http://127.0.0.1:8080/metadata/instance/compute/userData?api-version=2021-01-01&format=text"
        );
        assert_eq!(e.url("http://169.254.169.254"), "http://127.0.0.1:8080");
        let none = Endpoint::default();
        assert_eq!(none.url("http://a/b"), "http://a/b");
    }
}
