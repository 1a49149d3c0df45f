//! URLs as Go's `net/url` reads them: one splitting of a URL into its parts, in Go's order
//! (fragment, scheme, query, then authority and path), for the validator, which wants
//! `url.Parse`'s verdict, and for the fetchers, which want the parts Go's client would use.
//! Also Go's unescaping and its reading of a query.

/// A URL cut into its parts, each a slice of the URL as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts<'a> {
    /// Lowercased, as `url.Parse` gives it (`HTTPS://` is `https`); empty without one.
    pub scheme: String,
    /// What follows `scheme:` up to the query: an opaque part (`data:,x`, `arn:aws:...`),
    /// `//authority/path`, or a path.
    pub opaque_or_path: &'a str,
    /// What stands between `//` and the path (user information, host and port).
    pub authority: Option<&'a str>,
    /// The path (after the authority, when there is one), escapes not decoded.
    pub path: &'a str,
    /// After the first `?`; `Some("")` for a URL that ends in a bare `?`.
    pub query: Option<&'a str>,
    /// After the first `#`.
    pub fragment: Option<&'a str>,
}

impl<'a> Parts<'a> {
    /// Go's `Opaque`: what follows a scheme's colon when it does not start with `/`.
    pub fn opaque(&self) -> Option<&'a str> {
        (!self.scheme.is_empty() && !self.opaque_or_path.starts_with('/'))
            .then_some(self.opaque_or_path)
    }

    /// The user information before the authority's last `@`, escapes not decoded.
    pub fn userinfo(&self) -> Option<&'a str> {
        self.authority?.rsplit_once('@').map(|(u, _)| u)
    }

    /// The authority without its user information: `host[:port]`.
    pub fn host_port(&self) -> &'a str {
        let auth = self.authority.unwrap_or("");
        auth.rsplit_once('@').map_or(auth, |(_, h)| h)
    }
}

/// `url` cut into its parts the way `url.Parse` cuts it, nothing checked: what it would
/// refuse is cut the same way (see [`parse`] for the verdict).
pub fn split(url: &str) -> Parts<'_> {
    // The fragment goes first: what follows the first `#` plays no part in the rest (a
    // `?` or `:` there included). (memchr's searches: a data URL may be a whole file.)
    let (s, fragment) = cut(url, b'#');
    let (scheme, rest) = split_scheme(s);
    let (rest, query) = cut(rest, b'?');
    // Without a scheme, `///x` is a path, not an empty authority.
    let authority = (!scheme.is_empty() || !rest.starts_with("///"))
        .then(|| rest.strip_prefix("//"))
        .flatten();
    let (authority, path) = match authority {
        Some(auth) => {
            let end = auth.find('/').unwrap_or(auth.len());
            (Some(&auth[..end]), &auth[end..])
        }
        None => (None, rest),
    };
    Parts {
        scheme: scheme.to_ascii_lowercase(),
        opaque_or_path: rest,
        authority,
        path,
        query,
        fragment,
    }
}

/// `url.Parse` refused the URL (Go's reasons are not kept: Ignition reports them all
/// alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// `url` cut into its parts, or [`Invalid`] where `url.Parse` refuses it.
pub fn parse(url: &str) -> Result<Parts<'_>, Invalid> {
    let p = split(url);
    let before_fragment = &url[..url.len() - p.fragment.map_or(0, |f| f.len() + 1)];
    // The fragment is only unescaped: it may even hold control characters.
    check_escapes(p.fragment.unwrap_or(""))?;
    if crate::bytes::any_byte(before_fragment.as_bytes(), |b| (b < 0x20) | (b == 0x7f)) {
        return Err(Invalid);
    }
    if p.opaque().is_some() {
        // Go leaves an opaque part unescaped, and so unchecked.
        return Ok(p);
    }
    // "first path segment in URL cannot contain colon": a scheme gone wrong. (A URL that
    // starts with a colon, "missing protocol scheme" in Go, is one too: the colon is in
    // its first segment.)
    if p.scheme.is_empty()
        && !p.path.starts_with('/')
        && p.path
            .split('/')
            .next()
            .is_some_and(|seg| seg.contains(':'))
    {
        return Err(Invalid);
    }
    if p.authority.is_some() {
        if let Some(userinfo) = p.userinfo() {
            check_userinfo(userinfo)?;
        }
        check_host(p.host_port())?;
    }
    check_escapes(p.path)?;
    Ok(p)
}

/// `s` before and after the first `b` (an ASCII byte), or all of `s` and nothing.
fn cut(s: &str, b: u8) -> (&str, Option<&str>) {
    match memchr::memchr(b, s.as_bytes()) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

/// Go's `getScheme`: letters, then letters, digits, `+`, `-` or `.` up to a colon make a
/// scheme; any other byte first (a digit or sign at the start included) means there is none.
fn split_scheme(s: &str) -> (&str, &str) {
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i > 0 => return (&s[..i], &s[i + 1..]),
            _ => break,
        }
    }
    ("", s)
}

/// Whether `s` is a scheme as Go reads one (what [`split`] finds before a colon).
pub fn is_scheme(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// The host and the port of `host[:port]` (`[v6]:port` included), as Go's `parseHost`
/// splits them: a bracketed host ends at the last `]`, else the port follows the last `:`.
pub fn split_host_port(host_port: &str) -> (&str, Option<&str>) {
    if host_port.starts_with('[')
        && let Some(end) = host_port.rfind(']')
    {
        return (&host_port[..=end], host_port[end + 1..].strip_prefix(':'));
    }
    match host_port.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host_port, None),
    }
}

/// Every `%` starts an escape of two hex digits.
fn check_escapes(s: &str) -> Result<(), Invalid> {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'%', &b[i..]) {
        i += at;
        let ok = b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
        if !ok {
            return Err(Invalid);
        }
        i += 3;
    }
    Ok(())
}

/// Go's rule for the user and password before the `@`: unreserved and sub-delimiter
/// characters, `:`, `@`, and `%` escapes that decode.
fn check_userinfo(userinfo: &str) -> Result<(), Invalid> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b);
    if !userinfo.bytes().all(allowed) {
        return Err(Invalid);
    }
    check_escapes(userinfo)
}

/// What stands in brackets must be an IPv6 address, with a zone after `%25` that is not
/// empty (Go checks the address since its fix for bracketed hosts).
fn check_bracketed(inside: &str) -> Result<(), Invalid> {
    let (addr, zone) = match inside.find("%25") {
        Some(z) => (&inside[..z], Some(&inside[z + 3..])),
        None => (inside, None),
    };
    if zone == Some("") || addr.parse::<std::net::Ipv6Addr>().is_err() {
        return Err(Invalid);
    }
    // The zone may hold, raw or escaped, what a host may hold unescaped (and an escaped
    // space; raw bytes beyond ASCII too).
    let host_char = |c: u8| c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c);
    let z = zone.unwrap_or_default().as_bytes();
    let mut i = 0;
    while i < z.len() {
        let ok = match z[i] {
            b'%' => {
                let v = (z.get(i + 1..i + 3))
                    .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
                i += 2;
                v.is_some_and(|v| v == b' ' || v == b'%' || host_char(v))
            }
            c => c >= 0x80 || host_char(c),
        };
        if !ok {
            return Err(Invalid);
        }
        i += 1;
    }
    Ok(())
}

fn check_host(host: &str) -> Result<(), Invalid> {
    let port = if let Some(rest) = host.strip_prefix('[') {
        let Some(end) = rest.rfind(']') else {
            return Err(Invalid);
        };
        check_bracketed(&rest[..end])?;
        let after = &rest[end + 1..];
        if !after.is_empty() && !after.starts_with(':') {
            return Err(Invalid);
        }
        after.strip_prefix(':')
    } else {
        // Go lets sub-delimiters, `]`, `<`, `>` and `"` stand in a host name, and escapes
        // only for bytes beyond ASCII.
        if host
            .bytes()
            .any(|b| matches!(b, b' ' | b'{' | b'}' | b'|' | b'\\' | b'^' | b'`' | b'['))
        {
            return Err(Invalid);
        }
        let ascii_escape = host
            .as_bytes()
            .windows(3)
            .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[1] < b'8' && w != b"%25");
        if ascii_escape {
            return Err(Invalid);
        }
        split_host_port(host).1
    };
    if let Some(p) = port
        && !p.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(Invalid);
    }
    check_escapes(host)
}

/// The first value of query parameter `key`, as Go's `URL.Query().Get` finds it: pairs
/// split at `&`, a pair holding `;` left out, names and values unescaped (`+` a space; a
/// pair that does not unescape left out), and no parameters at all beyond 10,000 of them.
pub fn query_param(query: &str, key: &str) -> Option<Vec<u8>> {
    if query.bytes().filter(|&b| b == b'&').count() >= 10_000 {
        return None;
    }
    query
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.contains(';'))
        .find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (k, v) = (unescape(k, true).ok()?, unescape(v, true).ok()?);
            (k == key.as_bytes()).then_some(v)
        })
}

/// Go's URL unescaping: `%XX` escapes decoded, and in a query (`plus_is_space`) `+` a
/// space. An escape without two hex digits fails the whole; the error is its offset.
pub fn unescape(s: &str, plus_is_space: bool) -> Result<Vec<u8>, usize> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |j: usize| b.get(j).and_then(|&c| (c as char).to_digit(16));
                let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2)) else {
                    return Err(i);
                };
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's order: the fragment is cut off first, then the scheme is looked for, then the
    /// query is cut off, and only then is a colon in the first path segment refused.
    #[test]
    fn verdicts_in_gos_order() {
        for ok in [
            "a#b:c",
            "x?a:b",
            "a#b?c:d",
            "x#a\u{1}b",
            "///a:b",
            "#a:b",
            "x/y:z",
            "https://h/p?%zz",
            "https:%zz",
            "http:",
            "HTTP://x/",
            "http://u:p%40@[fe80::1%25en0]:80/a",
        ] {
            assert!(parse(ok).is_ok(), "{ok:?}");
        }
        for bad in [
            "x?a\u{1}b",
            "1a:b",
            "+a:b",
            ":x",
            ":/x",
            "///a%zz",
            "//h:x/p",
            "https://h/p#%zz",
            "https:/a%zz",
            "http://[::1/x",
            "http://u{@h/",
            "http://[fe80::1%25]/",
        ] {
            assert_eq!(parse(bad), Err(Invalid), "{bad:?}");
        }
    }

    #[test]
    fn parts() {
        let p = split("HTTP://u:p@h:8/a/b?q=1#f");
        assert_eq!(p.scheme, "http");
        assert_eq!(p.authority, Some("u:p@h:8"));
        assert_eq!((p.userinfo(), p.host_port()), (Some("u:p"), "h:8"));
        assert_eq!(
            (p.path, p.query, p.fragment),
            ("/a/b", Some("q=1"), Some("f"))
        );
        assert_eq!(p.opaque(), None);
        let p = split("arn:aws:s3:::b/k?versionId=1");
        assert_eq!(p.opaque(), Some("aws:s3:::b/k"));
        assert_eq!(p.authority, None);
        assert_eq!(split("//h/p").authority, Some("h"));
        assert_eq!(split("///p").authority, None);
        assert_eq!(split("http://h?").query, Some(""));
        assert_eq!(split_host_port("[::1]:80"), ("[::1]", Some("80")));
        assert_eq!(split_host_port("[::1%25a]b]"), ("[::1%25a]b]", None));
        assert_eq!(split_host_port("h:"), ("h", Some("")));
    }

    #[test]
    fn queries_and_escapes() {
        assert_eq!(
            query_param("a=1&versionId=x%20y", "versionId"),
            Some(b"x y".to_vec())
        );
        assert_eq!(query_param("versionId=1;x", "versionId"), None);
        assert_eq!(unescape("a+%41", true), Ok(b"a A".to_vec()));
        assert_eq!(unescape("a+%4", false), Err(2));
    }
}
