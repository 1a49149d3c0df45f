//! URL pieces the fetchers need: scheme, host, port, path; resolving redirects; and a form
//! safe to print (credentials and query values removed).

/// The parts of a `scheme://[user@]host[:port]/path?query` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub scheme: String,
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

fn default_port(scheme: &str) -> u16 {
    match scheme {
        "https" => 443,
        "tftp" => 69,
        _ => 80,
    }
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| format!("not a hierarchical URL: {}", redact(s)))?;
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("unterminated IPv6 host")?;
            (format!("[{h}]"), after.strip_prefix(':'))
        } else {
            match host_port.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (host_port.to_string(), None),
            }
        };
        let port = match port {
            Some(p) if !p.is_empty() => p.parse().map_err(|_| format!("bad port {p:?}"))?,
            _ => default_port(scheme),
        };
        if host.is_empty() {
            return Err(format!("no host in {}", redact(s)));
        }
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        Ok(Url {
            scheme: scheme.to_ascii_lowercase(),
            host,
            port,
            path,
        })
    }

    /// The host without IPv6 brackets.
    pub fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }

    pub fn origin(&self) -> String {
        if self.port == default_port(&self.scheme) {
            format!("{}://{}", self.scheme, self.host)
        } else {
            format!("{}://{}:{}", self.scheme, self.host, self.port)
        }
    }

    /// Resolves a `Location` header against this URL.
    pub fn join(&self, location: &str) -> String {
        if location.contains("://") {
            location.to_string()
        } else if let Some(rest) = location.strip_prefix("//") {
            format!("{}://{rest}", self.scheme)
        } else if location.starts_with('/') {
            format!("{}{location}", self.origin())
        } else {
            let path = self.path.split('?').next().unwrap_or("/");
            let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
            format!("{}{dir}{location}", self.origin())
        }
    }
}

/// `url` with its scheme in lower case, as Go's URL parser gives it to Ignition's fetchers
/// (`HTTP://`, `Data:` and `TFTP://` fetch as their lower-case spellings do).
pub fn lower_scheme(url: &str) -> std::borrow::Cow<'_, str> {
    let scheme = url.split(':').next().unwrap_or("");
    let is_scheme = url.len() > scheme.len()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if is_scheme && scheme.bytes().any(|b| b.is_ascii_uppercase()) {
        format!("{}{}", scheme.to_ascii_lowercase(), &url[scheme.len()..]).into()
    } else {
        url.into()
    }
}

/// `url` with user information and query values removed, for messages and logs.
pub fn redact(url: &str) -> String {
    if url.starts_with("data:") {
        let head = url.split(',').next().unwrap_or("data:");
        return format!("{head},…");
    }
    let mut out = url.to_string();
    if let Some((scheme, rest)) = url.split_once("://") {
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            out = format!("{scheme}://***@{}", &rest[at + 1..]);
        }
    }
    if let Some((base, query)) = out.split_once('?') {
        let redacted: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) => format!("{k}=***"),
                None => kv.to_string(),
            })
            .collect();
        out = format!("{base}?{}", redacted.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_joins() {
        let u = Url::parse("https://user:pw@example.com:8443/a/b.ign?x=1").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.port, u.path.as_str()),
            ("https", "example.com", 8443, "/a/b.ign?x=1")
        );
        assert_eq!(u.join("c.ign"), "https://example.com:8443/a/c.ign");
        assert_eq!(u.join("/z"), "https://example.com:8443/z");
        assert_eq!(u.join("http://other/y"), "http://other/y");
        let v6 = Url::parse("http://[::1]/x").unwrap();
        assert_eq!((v6.bare_host(), v6.port), ("::1", 80));
        assert_eq!(Url::parse("http://h").unwrap().path, "/");
    }

    #[test]
    fn lowers_schemes_only() {
        assert_eq!(lower_scheme("HTTP://H/P"), "http://H/P");
        assert_eq!(lower_scheme("Data:,A"), "data:,A");
        assert_eq!(lower_scheme("s3://B/K"), "s3://B/K");
        assert_eq!(lower_scheme("/Abs/Path:x"), "/Abs/Path:x");
        assert_eq!(lower_scheme("NoColon"), "NoColon");
    }

    #[test]
    fn redacts_secrets() {
        assert_eq!(
            redact("https://user:secret@h/p?token=abc&x"),
            "https://***@h/p?token=***&x"
        );
        assert_eq!(redact("data:;base64,c2VjcmV0"), "data:;base64,…");
        assert_eq!(redact("http://h/p"), "http://h/p");
    }
}
