//! Rules for the `ignition` section: config merge/replace, TLS, proxy.

use super::{Checker, resource};
use crate::ignition::types::Ignition;
use crate::tree::JsonPath;

pub fn check(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    // 3.0.0's config and CA references are checked at their source only: an empty one is
    // fine for a config, an invalid URL for a CA; nothing is reported at the entry.
    let v3_0 = c.version == crate::ignition::Version::V3_0;
    let merge = path.key("config").key("merge");
    for (i, r) in ig.config.merge.iter().enumerate() {
        if v3_0 {
            resource::check_reference_3_0(c, r, &merge.index(i));
        } else {
            resource::check_required(c, r, &merge.index(i));
        }
    }
    resource::unique_sources(c, &ig.config.merge, &merge);
    let replace = path.key("config").key("replace");
    if v3_0 {
        resource::check_reference_3_0(c, &ig.config.replace, &replace);
    } else {
        resource::check(c, &ig.config.replace, &replace);
    }

    let cas = path
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    for (i, r) in ig.security.tls.certificate_authorities.iter().enumerate() {
        if !v3_0 {
            resource::check_required(c, r, &cas.index(i));
            continue;
        }
        if r.source.as_deref().is_none_or(str::is_empty) {
            c.error(cas.index(i).key("source"), "invalid url scheme");
        }
        resource::check_reference_3_0(c, r, &cas.index(i));
    }
    resource::unique_sources(c, &ig.security.tls.certificate_authorities, &cas);

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
