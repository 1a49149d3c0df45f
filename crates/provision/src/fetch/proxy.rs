//! Which proxy, if any, a URL goes through: `httpProxy` for http, `httpsProxy` for https,
//! none when the host matches `noProxy`.
//!
//! `noProxy` entries follow the common convention (as Go's `httpproxy` package reads it):
//! `*` matches everything; an IP address or CIDR block matches addresses in it; a domain
//! matches itself and its subdomains (a leading dot matches subdomains only); an entry may
//! carry a `:port`, and then matches only that port.

use std::net::IpAddr;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProxyConfig {
    pub http: Option<String>,
    pub https: Option<String>,
    pub no_proxy: Vec<String>,
}

impl ProxyConfig {
    /// The proxy for a request to `scheme://host:port`.
    pub fn for_target(&self, scheme: &str, host: &str, port: u16) -> Option<&str> {
        let proxy = match scheme {
            "https" => self.https.as_deref(),
            "http" => self.http.as_deref(),
            _ => None,
        }
        .filter(|p| !p.is_empty())?;
        // Requests to this machine never go through a proxy.
        let h = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = h.eq_ignore_ascii_case("localhost")
            || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if loopback || self.no_proxy.iter().any(|e| bypasses(e, host, port)) {
            None
        } else {
            Some(proxy)
        }
    }
}

fn split_port(entry: &str) -> (&str, Option<u16>) {
    // "[::1]:80", "host:80", but "::1" has no port.
    if let Some(rest) = entry.strip_prefix('[')
        && let Some((h, p)) = rest.split_once(']')
    {
        return (h, p.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match entry.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (h, p.parse().ok()),
        _ => (entry, None),
    }
}

fn in_cidr(ip: IpAddr, cidr: &str) -> bool {
    let Some((net, bits)) = cidr.split_once('/') else {
        return false;
    };
    let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
        return false;
    };
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits)
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Whether `noProxy` entry `entry` exempts `host:port` from the proxy.
pub(crate) fn bypasses(entry: &str, host: &str, port: u16) -> bool {
    let entry = entry.trim();
    if entry == "*" {
        return true;
    }
    if entry.is_empty() {
        return false;
    }
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if let Ok(ip) = host.parse::<IpAddr>() {
        if entry.contains('/') {
            return in_cidr(ip, entry);
        }
        let (e, p) = split_port(entry);
        return e.parse::<IpAddr>().is_ok_and(|e| e == ip) && p.is_none_or(|p| p == port);
    }
    let (e, p) = split_port(entry);
    if p.is_some_and(|p| p != port) {
        return false;
    }
    let e = e.to_ascii_lowercase();
    if let Some(suffix) = e.strip_prefix('.') {
        host.ends_with(&format!(".{suffix}"))
    } else {
        host == e || host.ends_with(&format!(".{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_matching() {
        assert!(bypasses("*", "anything", 80));
        assert!(bypasses("example.com", "example.com", 80));
        assert!(bypasses("example.com", "a.example.com", 80));
        assert!(!bypasses("example.com", "badexample.com", 80));
        assert!(bypasses(".example.com", "a.example.com", 80));
        assert!(!bypasses(".example.com", "example.com", 80));
        assert!(bypasses("10.0.0.0/8", "10.1.2.3", 80));
        assert!(!bypasses("10.0.0.0/8", "11.1.2.3", 80));
        assert!(bypasses("127.0.0.1", "127.0.0.1", 8080));
        assert!(bypasses("host:8080", "host", 8080));
        assert!(!bypasses("host:8080", "host", 80));
        assert!(bypasses("::1", "[::1]", 80));
        assert!(bypasses("fd00::/8", "fd12::1", 443));
    }

    #[test]
    fn picks_the_proxy_by_scheme() {
        let p = ProxyConfig {
            http: Some("http://p:3128".into()),
            https: None,
            no_proxy: vec!["internal".into()],
        };
        assert_eq!(
            p.for_target("http", "example.com", 80),
            Some("http://p:3128")
        );
        assert_eq!(p.for_target("https", "example.com", 443), None);
        assert_eq!(p.for_target("http", "a.internal", 80), None);
        assert_eq!(p.for_target("http", "127.0.0.1", 80), None);
        assert_eq!(p.for_target("http", "localhost", 80), None);
    }
}
