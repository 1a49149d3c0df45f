//! URL pieces the fetchers need: scheme, user information, host, port, path; resolving
//! redirects; and a form safe to print (credentials and query values removed). Parsing and
//! resolving follow Go's URL type, which is what Ignition's fetchers send: the path goes
//! out as written when its escapes are well formed and it holds nothing that must be
//! escaped, else escaped whole; user information is percent-decoded into Basic
//! credentials; the fragment is never sent.

/// The parts of a `scheme://[user[:password]@]host[:port]/path?query#fragment` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    pub scheme: String,
    /// User name and password, percent-decoded (a missing password is empty): bytes, as
    /// Go sends them, whatever their encoding.
    pub user: Option<(Vec<u8>, Vec<u8>)>,
    pub host: String,
    pub port: u16,
    /// Host and port as written (what the `Host` header names).
    pub authority: String,
    /// Path and query as the request line sends them, starting with `/`.
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
    /// `s` cut into its parts by Go's rules ([`flint_go::url::split`]). What `url.Parse`
    /// would refuse besides is not refused here (a config's URLs were validated already;
    /// those from providers, proxies and redirects are taken as they come): a URL needs a
    /// scheme, `//` and a host, a port that is a number, and escapes that decode.
    pub(crate) fn parse(s: &str) -> Result<Url, String> {
        let parts = flint_go::url::split(s);
        if parts.scheme.is_empty() || parts.authority.is_none() {
            return Err(format!("not a hierarchical URL: {}", redact(s)));
        }
        let user = parts.userinfo().map(userinfo).transpose()?;
        let host_port = parts.host_port();
        if host_port.starts_with('[') && !host_port.contains(']') {
            return Err("unterminated IPv6 host".into());
        }
        let (host, port) = flint_go::url::split_host_port(host_port);
        let port = match port {
            Some(p) if !p.is_empty() => p.parse().map_err(|_| format!("bad port {p:?}"))?,
            _ => default_port(&parts.scheme),
        };
        if host.is_empty() {
            return Err(format!("no host in {}", redact(s)));
        }
        let mut path = escaped_path(parts.path).map_err(|e| format!("{e} in {}", redact(s)))?;
        if path.is_empty() {
            path.push('/');
        }
        if let Some(q) = parts.query {
            path.push('?');
            path.push_str(q);
        }
        Ok(Url {
            scheme: parts.scheme,
            user,
            host: host.to_string(),
            port,
            authority: host_port.to_string(),
            path,
        })
    }

    /// The host without IPv6 brackets.
    pub(crate) fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The `Authorization` (or `Proxy-Authorization`) value its user information makes, as
    /// Go's client makes it: `Basic` and base64 of the decoded `user:password`.
    pub(crate) fn basic_credentials(&self) -> Option<String> {
        use base64::Engine;
        let (user, password) = self.user.as_ref()?;
        let pair = [&user[..], b":", password].concat();
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        Some(format!("Basic {encoded}"))
    }

    /// The URL the request goes to: without user information or fragment, the path
    /// escaped as it is sent.
    pub(crate) fn request_url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.path)
    }

    /// The path without the query, its escapes decoded (what a TFTP server is asked for).
    pub(crate) fn decoded_path(&self) -> String {
        let path = self.path.split('?').next().unwrap_or("");
        String::from_utf8_lossy(&unescape(path).unwrap_or_else(|_| path.into())).into_owned()
    }

    /// Resolves a `Location` header against this URL, as a browser or Go's client does:
    /// relative paths against this one's directory, and `.` and `..` segments removed.
    pub(crate) fn join(&self, location: &str) -> Result<String, String> {
        let location = location.split('#').next().unwrap_or("");
        let scheme_len = location
            .find(':')
            .filter(|&i| flint_go::url::is_scheme(&location[..i]))
            .map(|i| i + 1);
        // An absolute URL, or one relative to the scheme: its own authority, and its path
        // with the dot segments removed.
        let (prefix, rest) = match (scheme_len, location.strip_prefix("//")) {
            (Some(n), _) => (location[..n].to_ascii_lowercase(), &location[n..]),
            (None, Some(_)) => (format!("{}:", self.scheme), location),
            (None, None) => (String::new(), location),
        };
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find(['/', '?']).unwrap_or(after.len());
            let (authority, tail) = after.split_at(end);
            let (path, query) = split_query(tail);
            let path = escaped_path(path)?;
            let path = if path.is_empty() {
                path
            } else {
                resolve_path(&path, "")
            };
            return Ok(format!("{prefix}//{authority}{path}{query}"));
        }
        if !prefix.is_empty() {
            // `scheme:path` without an authority: nothing a fetch can follow.
            return Err(format!("cannot follow a redirect to {}", redact(location)));
        }
        let (path, query) = split_query(rest);
        let (base_path, base_query) = split_query(&self.path);
        let path = escaped_path(path)?;
        let (path, query) = if path.is_empty() && query.is_empty() {
            (base_path.to_string(), base_query)
        } else {
            (resolve_path(base_path, &path), query)
        };
        Ok(format!("{}://{}{path}{query}", self.scheme, self.authority))
    }
}

/// Splits `path?query` into the path and `?query` (empty when there is no `?`).
fn split_query(s: &str) -> (&str, &str) {
    match s.find('?') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    }
}

/// User name and password of `user[:password]`, decoded.
fn userinfo(info: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (user, password) = info.split_once(':').unwrap_or((info, ""));
    let decoded = |s: &str| unescape(s).map_err(|e| format!("{e} in the user information"));
    Ok((decoded(user)?, decoded(password)?))
}

/// Bytes a path carries unescaped: letters, digits and `-._~$&+,/:;=@`.
fn path_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~$&+,/:;=@".contains(&b)
}

/// The path as the request line sends it: as written when it holds only what a path may
/// carry (escapes, and `!'()*[]` besides what needs none), else decoded and escaped whole.
fn escaped_path(raw: &str) -> Result<String, String> {
    let decoded = unescape(raw)?;
    if raw
        .bytes()
        .all(|b| path_safe(b) || b"%!'()*[]".contains(&b))
    {
        return Ok(raw.to_string());
    }
    let mut out = String::with_capacity(decoded.len() * 3);
    for b in decoded {
        if path_safe(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

/// `s` with its `%XX` escapes decoded; a `%` without two hex digits is an error.
fn unescape(s: &str) -> Result<Vec<u8>, String> {
    flint_go::url::unescape(s, false).map_err(|i| {
        let b = &s.as_bytes()[i..(i + 3).min(s.len())];
        format!("invalid URL escape {:?}", String::from_utf8_lossy(b))
    })
}

/// `reference` resolved against the path `base`, with `.` and `..` segments removed
/// (RFC 3986, 5.2); a final `.` or `..` leaves a trailing slash.
fn resolve_path(base: &str, reference: &str) -> String {
    let full = if reference.is_empty() {
        base.to_string()
    } else if reference.starts_with('/') {
        reference.to_string()
    } else {
        let dir = base.rfind('/').map_or("", |i| &base[..=i]);
        format!("{dir}{reference}")
    };
    let segments: Vec<&str> = full.strip_prefix('/').unwrap_or(&full).split('/').collect();
    let mut kept: Vec<&str> = Vec::with_capacity(segments.len());
    for seg in &segments {
        match *seg {
            "." => {}
            ".." => {
                kept.pop();
            }
            s => kept.push(s),
        }
    }
    if kept.is_empty() {
        return "/".into();
    }
    let mut out = format!("/{}", kept.join("/"));
    if matches!(segments.last(), Some(&".") | Some(&"..")) {
        out.push('/');
    }
    out
}

/// `url` with its scheme in lower case, as Go's URL parser gives it to Ignition's fetchers
/// (`HTTP://`, `Data:` and `TFTP://` fetch as their lower-case spellings do).
pub(crate) fn lower_scheme(url: &str) -> std::borrow::Cow<'_, str> {
    let scheme = url.split(':').next().unwrap_or("");
    if url.len() > scheme.len()
        && flint_go::url::is_scheme(scheme)
        && scheme.bytes().any(|b| b.is_ascii_uppercase())
    {
        format!("{}{}", scheme.to_ascii_lowercase(), &url[scheme.len()..]).into()
    } else {
        url.into()
    }
}

/// `url` with user information and query values removed, for messages and logs.
pub(crate) fn redact(url: &str) -> String {
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
        assert_eq!(u.user, Some(("user".into(), "pw".into())));
        assert_eq!(u.request_url(), "https://example.com:8443/a/b.ign?x=1");
        let join = |l| u.join(l).unwrap();
        assert_eq!(join("c.ign"), "https://example.com:8443/a/c.ign");
        assert_eq!(join("/z"), "https://example.com:8443/z");
        assert_eq!(join("http://other/y"), "http://other/y");
        assert_eq!(join("?k=v"), "https://example.com:8443/a/b.ign?k=v");
        assert_eq!(join("#f"), "https://example.com:8443/a/b.ign?x=1");
        assert_eq!(join("//h2/p#f"), "https://h2/p");
        let v6 = Url::parse("http://[::1]/x").unwrap();
        assert_eq!((v6.bare_host(), v6.port), ("::1", 80));
        assert_eq!(Url::parse("http://h").unwrap().path, "/");
    }

    /// What the reference sent, seen by a server (the Location relative to `/r/302/x`).
    #[test]
    fn paths_userinfo_and_redirects_as_gos_client_sends_them() {
        let sent = |s: &str| Url::parse(s).unwrap().path;
        assert_eq!(sent("http://h/e/[x]{y}|z^"), "/e/%5Bx%5D%7By%7D%7Cz%5E");
        assert_eq!(sent("http://h/e/caf%C3%A9/é"), "/e/caf%C3%A9/%C3%A9");
        for kept in [
            "/e/[x]",
            "/e/a!b'c(d)*e",
            "/e/%41%2f",
            "/e/a/../b",
            "/e?",
            "/e?a=[1]&b={2}",
        ] {
            assert_eq!(sent(&format!("http://h{kept}")), kept);
        }
        assert_eq!(sent("http://h/e#frag"), "/e");
        assert_eq!(sent("http://h?q"), "/?q");
        assert!(Url::parse("http://h/%zz").is_err());
        let user = |s: &str| Url::parse(s).unwrap().user.unwrap();
        assert_eq!(
            user("http://user:p%40ss@h/"),
            ("user".into(), "p@ss".into())
        );
        assert_eq!(user("http://u%3Ap@h/"), ("u:p".into(), "".into()));
        assert_eq!(user("http://u:p:q@h/"), ("u".into(), "p:q".into()));
        assert_eq!(user("http://:pw@h/"), ("".into(), "pw".into()));
        // The header values the reference sent, to a server and to a proxy alike.
        let basic = |s: &str| Url::parse(s).unwrap().basic_credentials();
        assert_eq!(basic("http://user@h/").as_deref(), Some("Basic dXNlcjo="));
        assert_eq!(basic("http://u%3Ap@h/").as_deref(), Some("Basic dTpwOg=="));
        assert_eq!(
            basic("http://u:p%40s@h/").as_deref(),
            Some("Basic dTpwQHM=")
        );
        assert_eq!(basic("http://h/"), None);
        let u = Url::parse("http://u:p@h:8080/e?x#f").unwrap();
        assert_eq!(u.request_url(), "http://h:8080/e?x");
        let base = Url::parse("http://h:1/r/302/x").unwrap();
        let join = |l| base.join(l).unwrap();
        assert_eq!(join("../../e/z"), "http://h:1/e/z");
        assert_eq!(join("/e/a/../b"), "http://h:1/e/b");
        assert_eq!(join("/e/[x]{y}"), "http://h:1/e/%5Bx%5D%7By%7D");
        assert_eq!(join("http://o/a/./b/.."), "http://o/a/");
        assert_eq!(join("%2E%2E/e"), "http://h:1/r/302/%2E%2E/e");
        assert_eq!(join("../../../.."), "http://h:1/");
        assert_eq!(join("a//b/../c"), "http://h:1/r/302/a//c");
        assert_eq!(
            Url::parse("tftp://h/a%20b?q").unwrap().decoded_path(),
            "/a b"
        );
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
