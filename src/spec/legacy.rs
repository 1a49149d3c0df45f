//! What Ignition 3.0–3.2 configs look like on the wire: a few fields later versions made
//! optional were plain strings then, always written (`"target": ""` on a link without one,
//! `"level": ""`, and in 3.0 a certificate authority's `"source": ""`). The model keeps them
//! optional; this shapes a config the way those versions print, and check, it.

use crate::ignition::Version;
use crate::ignition::types as ig;
use std::borrow::Cow;

fn needs_shaping(cfg: &ig::Config, version: Version) -> bool {
    if version > Version::V3_2 {
        return false;
    }
    cfg.storage.links.iter().any(|l| l.target.is_none())
        || cfg.storage.raid.iter().any(|r| r.level.is_none())
        || (version == Version::V3_0
            && cfg
                .ignition
                .security
                .tls
                .certificate_authorities
                .iter()
                .any(|r| r.source.is_none()))
}

/// `cfg` with the fields that were required strings in `version` set ("" when absent).
pub fn shaped(cfg: &ig::Config, version: Version) -> Cow<'_, ig::Config> {
    if !needs_shaping(cfg, version) {
        return Cow::Borrowed(cfg);
    }
    let mut out = cfg.clone();
    for l in &mut out.storage.links {
        l.target.get_or_insert_with(String::new);
    }
    for r in &mut out.storage.raid {
        r.level.get_or_insert_with(String::new);
    }
    if version == Version::V3_0 {
        for r in &mut out.ignition.security.tls.certificate_authorities {
            r.source.get_or_insert_with(String::new);
        }
    }
    Cow::Owned(out)
}

/// The config as the validator of `version` sees it: a 3.0 certificate authority without a
/// source has the empty one.
pub fn as_validated(cfg: &ig::Config, version: Version) -> Cow<'_, ig::Config> {
    if version != Version::V3_0
        || cfg
            .ignition
            .security
            .tls
            .certificate_authorities
            .iter()
            .all(|r| r.source.is_some())
    {
        return Cow::Borrowed(cfg);
    }
    let mut out = cfg.clone();
    for r in &mut out.ignition.security.tls.certificate_authorities {
        r.source.get_or_insert_with(String::new);
    }
    Cow::Owned(out)
}

/// The JSON upstream prints for `cfg` as a config of `version`.
pub fn to_json(cfg: &ig::Config, version: Version, pretty: bool) -> Vec<u8> {
    crate::json::to_vec(shaped(cfg, version).as_ref(), pretty)
}
