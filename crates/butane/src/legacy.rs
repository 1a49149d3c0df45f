//! What Ignition 3.0–3.2 configs look like on the wire: a few fields later versions made
//! optional were plain strings then, always written (`"target": ""` on a link without one,
//! `"level": ""`, and in 3.0 a certificate authority's `"source": ""`). The model keeps them
//! optional; this shapes a config the way those versions print, and check, it.

use flint_ignition::Version;
use flint_ignition::types as ig;
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
pub(crate) fn shaped(cfg: &ig::Config, version: Version) -> Cow<'_, ig::Config> {
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
pub(crate) fn as_validated(cfg: &ig::Config, version: Version) -> Cow<'_, ig::Config> {
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
pub(crate) fn to_json(cfg: &ig::Config, version: Version, pretty: bool) -> Vec<u8> {
    let mut json = flint_go::json::to_vec(shaped(cfg, version).as_ref(), pretty);
    if version == Version::V3_0 && cfg.ignition.config.merge.iter().any(|r| r.source.is_none()) {
        json = null_merge_sources(json, pretty);
    }
    let replace = &cfg.ignition.config.replace;
    if version == Version::V3_0 && replace.source.is_none() && replace.verification.hash.is_some() {
        json = null_replace_source(json, pretty);
    }
    json
}

/// As [`null_merge_sources`], for the config's `replace`, which 3.0 prints when it has a
/// verification (its only other field). The first `"replace"` key of the output is the
/// config's own (the `merge` items before it hold no such key).
fn null_replace_source(json: Vec<u8>, pretty: bool) -> Vec<u8> {
    let key: &[u8] = if pretty {
        b"\"replace\": {"
    } else {
        b"\"replace\":{"
    };
    let Some(at) = json.windows(key.len()).position(|w| w == key) else {
        return json;
    };
    let open = at + key.len();
    // The line break and indentation before the first key, repeated after the new one.
    let ws = json[open..]
        .iter()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(&json[..open + ws]);
    out.extend_from_slice(if pretty {
        b"\"source\": null,"
    } else {
        b"\"source\":null,"
    });
    out.extend_from_slice(&json[open..open + ws]);
    out.extend_from_slice(&json[open + ws..]);
    out
}

/// In 3.0 a config to merge printed its source even when it had none (`"source": null`);
/// later versions, and the model, leave it out. This puts it back into the `merge` items of
/// rendered JSON that lack it. The first `"merge"` key of the output is the config's own:
/// `ignition` is the config's first field, `config` its first, `merge` the first of that,
/// and no string value can hold the key's unescaped quotes.
fn null_merge_sources(json: Vec<u8>, pretty: bool) -> Vec<u8> {
    let key: &[u8] = if pretty {
        b"\"merge\": ["
    } else {
        b"\"merge\":["
    };
    let Some(at) = json.windows(key.len()).position(|w| w == key) else {
        return json;
    };
    let mut out = Vec::with_capacity(json.len() + 64);
    let mut i = at + key.len();
    out.extend_from_slice(&json[..i]);
    // Depth inside the array: 1 within an item.
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    while i < json.len() {
        let c = json[i];
        out.push(c);
        i += 1;
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' if depth == 0 => {
                depth = 1;
                let rest = &json[i..];
                let next = rest.iter().position(|b| !b.is_ascii_whitespace());
                let first_key = next.filter(|&n| rest[n] == b'"').map(|n| &rest[n..]);
                if first_key.is_some_and(|k| k.starts_with(b"\"source\"")) {
                    continue;
                }
                let empty = next.is_some_and(|n| rest[n] == b'}');
                if pretty {
                    // The item's own indentation, from the start of its line.
                    let line = out[..out.len() - 1]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |n| n + 1);
                    let indent = out.len() - 1 - line;
                    out.push(b'\n');
                    out.extend(std::iter::repeat_n(b' ', indent + 2));
                    out.extend_from_slice(b"\"source\": null");
                    if empty {
                        out.push(b'\n');
                        out.extend(std::iter::repeat_n(b' ', indent));
                    } else {
                        out.push(b',');
                    }
                } else {
                    out.extend_from_slice(if empty {
                        b"\"source\":null".as_slice()
                    } else {
                        b"\"source\":null,".as_slice()
                    });
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' => depth -= 1,
            b']' if depth == 0 => break,
            b']' => depth -= 1,
            _ => {}
        }
    }
    out.extend_from_slice(&json[i..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only 3.0 prints the absent source, only in `merge` items, whatever the strings hold.
    #[test]
    fn a_merge_item_without_source_prints_null_in_3_0_only() {
        let mut cfg = ig::Config::default();
        cfg.ignition.config.merge = vec![
            ig::Resource {
                source: Some(r#"http://x/{"merge":[{"a":"}\"]"#.into()),
                ..Default::default()
            },
            ig::Resource {
                verification: ig::Verification {
                    hash: Some("sha512-00".into()),
                },
                ..Default::default()
            },
        ];
        cfg.storage.files = vec![ig::File {
            path: "/merge".into(),
            contents: ig::Resource::default(),
            ..Default::default()
        }];
        let text = |v, pretty| String::from_utf8(to_json(&cfg, v, pretty)).unwrap();
        let compact = text(Version::V3_0, false);
        assert!(
            compact.contains(
                r#"[{"source":"http://x/{\"merge\":[{\"a\":\"}\\\"]"},{"source":null,"verification":{"hash":"sha512-00"}}]"#
            ),
            "{compact}"
        );
        assert_eq!(compact.matches("null").count(), 1, "{compact}");
        let pretty = text(Version::V3_0, true);
        assert!(
            pretty
                .contains("        {\n          \"source\": null,\n          \"verification\": {"),
            "{pretty}"
        );
        assert!(!text(Version::V3_1, false).contains("null"));
    }
}
