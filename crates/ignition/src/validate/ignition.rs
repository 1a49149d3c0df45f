//! Rules for the `ignition` section: config merge/replace, TLS, proxy.

use super::{Checker, resource};
use crate::types::Ignition;
use crate::version::Version;
use flint_go::tree::JsonPath;

pub(super) fn check(c: &mut Checker, ig: &Ignition, path: &JsonPath) {
    let merge = path.key("config").key("merge");
    // Spec 3.0 checked a merged config's URL only when given, and a certificate
    // authority's (a plain string then) always, at the source.
    let v3_0 = c.version == Version::V3_0;
    if v3_0 {
        for (i, r) in ig.config.merge.iter().enumerate() {
            resource::check_resource(c, r, &merge.index(i), false);
        }
    } else {
        resource::check_required(c, &ig.config.merge, &merge);
    }
    resource::unique_sources(c, &ig.config.merge, &merge);
    resource::check_resource(
        c,
        &ig.config.replace,
        &path.key("config").key("replace"),
        !v3_0,
    );

    // Upstream's order: the fields as they come, config, proxy, security.
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

    let cas = path
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    let list = &ig.security.tls.certificate_authorities;
    if v3_0 {
        for (i, r) in list.iter().enumerate() {
            let source = r.source.as_deref().unwrap_or("");
            if source.is_empty()
                && let Err(e) = resource::check_url(source, c.version)
            {
                c.error(cas.index(i).key("source"), e);
            }
            resource::check_resource(c, r, &cas.index(i), false);
        }
    } else {
        resource::check_required(c, list, &cas);
    }
    resource::unique_sources(c, list, &cas);
}
