//! Rules for the `ignition` section: config merge/replace, TLS, proxy.

use super::{Checker, resource};
use crate::ignition::types::{Ignition, Resource};
use crate::ignition::version::Version;
use crate::tree::JsonPath;

/// 3.0.0's config and CA references: only the URL (when given; always for a CA) and the
/// hash are checked, at the reference's own keys.
fn check_references_3_0(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    let hash = |c: &mut Checker, r: &Resource, at: &JsonPath| {
        if let Some(h) = &r.verification.hash
            && let Some(e) = resource::check_hash(h, c.version)
        {
            c.error(at.key("verification").key("hash"), e);
        }
    };
    let merge = path.key("config").key("merge");
    for (i, r) in ig.config.merge.iter().enumerate() {
        let at = merge.index(i);
        if let Some(src) = r.source.as_deref().filter(|s| !s.is_empty())
            && let Err(e) = c.check_url(src)
        {
            c.error(at.key("source"), e);
        }
        hash(c, r, &at);
    }
    resource::unique_sources(c, &ig.config.merge, &merge);
    let replace = path.key("config").key("replace");
    if let Some(src) = ig
        .config
        .replace
        .source
        .as_deref()
        .filter(|s| !s.is_empty())
        && let Err(e) = c.check_url(src)
    {
        c.error(replace.key("source"), e);
    }
    hash(c, &ig.config.replace, &replace);
    let cas = path
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    for (i, r) in ig.security.tls.certificate_authorities.iter().enumerate() {
        let at = cas.index(i);
        if let Err(e) = c.check_url(r.source.as_deref().unwrap_or("")) {
            c.error(at.key("source"), e);
        }
        hash(c, r, &at);
    }
    resource::unique_sources(c, &ig.security.tls.certificate_authorities, &cas);
}

pub fn check(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    if c.version == Version::V3_0 {
        check_references_3_0(c, ig, path);
    } else {
        check_references(c, ig, path);
    }
    check_proxy(c, ig, path);
}

fn check_references(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    let merge = path.key("config").key("merge");
    for (i, r) in ig.config.merge.iter().enumerate() {
        resource::check_required(c, r, &merge.index(i));
    }
    resource::unique_sources(c, &ig.config.merge, &merge);
    resource::check(c, &ig.config.replace, &path.key("config").key("replace"));

    let cas = path
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    for (i, r) in ig.security.tls.certificate_authorities.iter().enumerate() {
        resource::check_required(c, r, &cas.index(i));
    }
    resource::unique_sources(c, &ig.security.tls.certificate_authorities, &cas);
}

fn check_proxy(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    let proxy = path.key("proxy");
    for (key, value, https) in [
        ("httpProxy", &ig.proxy.http_proxy, false),
        ("httpsProxy", &ig.proxy.https_proxy, true),
    ] {
        let Some(v) = value else { continue };
        match resource::parse_url(v) {
            Err(e) => c.error(proxy.key(key), e),
            Ok(u) if !matches!(u.scheme.as_str(), "http" | "https") => {
                c.error(proxy.key(key), "proxies must be http(s)")
            }
            Ok(u) if https && u.scheme == "http" => c.warning(
                proxy.key(key),
                "insecure plaintext HTTP proxy specified for HTTPS resources",
            ),
            Ok(_) => {}
        }
    }
    let no_proxy = proxy.key("noProxy");
    c.unique(&no_proxy, &ig.proxy.no_proxy, |s| s.as_str());
}
