//! The OVF environment (`guestinfo.ovfenv`): an XML document whose
//! `PropertySection/Property` elements carry `key`/`value` attributes (in the OVF
//! environment namespace, usually prefixed `oe:`). Read leniently by local names, as Go's
//! encoding/xml does; properties are removed by cutting their elements out of the text.

/// One `Property` element: its key, value, and byte span in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Property {
    pub key: String,
    pub value: String,
    pub span: (usize, usize),
}

/// The local part of a possibly prefixed XML name.
fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(j) = after.find(';') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let ent = &after[..j];
        let c = match ent {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => ent
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| ent.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match c {
            Some(c) => out.push(c),
            None => out.push_str(&rest[i..i + 1 + j + 1]),
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    out
}

/// The attributes of a start tag's inside (`name a="x" b='y'`).
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = tag
        .trim_start()
        .split_once(char::is_whitespace)
        .map_or("", |(_, r)| r);
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let Some(q) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            break;
        };
        let Some(end) = after[1..].find(q) else { break };
        out.push((name, unescape(&after[1..1 + end])));
        rest = &after[1 + end + 1..];
    }
    out
}

/// Every `Property` inside a `PropertySection`; an error when the document is no XML
/// element at all.
pub(crate) fn properties(doc: &str) -> Result<Vec<Property>, String> {
    if !doc.trim_start().starts_with('<') {
        return Err("parsing OVF environment: not an XML document".into());
    }
    let mut out = Vec::new();
    let mut depth_in_section = 0usize;
    let mut i = 0;
    while let Some(lt) = doc[i..].find('<') {
        let start = i + lt;
        let Some(gt) = doc[start..].find('>') else {
            return Err("parsing OVF environment: unterminated tag".into());
        };
        let end = start + gt + 1;
        let inner = &doc[start + 1..end - 1];
        i = end;
        if inner.starts_with('?') || inner.starts_with('!') {
            continue;
        }
        if let Some(name) = inner.strip_prefix('/') {
            if local(name.trim()) == "PropertySection" {
                depth_in_section = depth_in_section.saturating_sub(1);
            }
            continue;
        }
        let self_closing = inner.ends_with('/');
        let body = inner.trim_end_matches('/');
        let name = body.split_whitespace().next().unwrap_or("");
        match local(name) {
            "PropertySection" if !self_closing => depth_in_section += 1,
            "Property" if depth_in_section > 0 => {
                let attrs = attributes(body);
                let get = |want: &str| {
                    attrs
                        .iter()
                        .find(|(k, _)| local(k) == want)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                let mut span_end = end;
                if !self_closing && let Some(close) = doc[end..].find("Property>") {
                    span_end = end + close + "Property>".len();
                }
                out.push(Property {
                    key: get("key"),
                    value: get("value"),
                    span: (start, span_end),
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The value of property `key`, if any.
pub(crate) fn property(doc: &str, key: &str) -> Result<Option<String>, String> {
    Ok(properties(doc)?
        .into_iter()
        .find(|p| p.key == key)
        .map(|p| p.value))
}

/// The document without the properties named in `keys`, and whether any was removed.
pub(crate) fn delete(doc: &str, keys: &[&str]) -> Result<(String, bool), String> {
    let props = properties(doc)?;
    let mut out = doc.to_string();
    let mut removed = false;
    for p in props.iter().rev() {
        if keys.contains(&p.key.as_str()) {
            out.replace_range(p.span.0..p.span.1, "");
            removed = true;
        }
    }
    Ok((out, removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" oe:id="">
  <PlatformSection><Kind>VMware ESXi</Kind></PlatformSection>
  <PropertySection>
    <Property oe:key="guestinfo.ignition.config.data" oe:value="eyJ9&amp;x"/>
    <Property oe:key="guestinfo.ignition.config.data.encoding" oe:value="base64"></Property>
    <Property oe:key="guestinfo.hostname" oe:value="h"/>
  </PropertySection>
</Environment>"#;

    #[test]
    fn reads_and_deletes_properties() {
        assert_eq!(
            property(DOC, "guestinfo.ignition.config.data")
                .unwrap()
                .as_deref(),
            Some("eyJ9&x")
        );
        assert_eq!(
            property(DOC, "guestinfo.ignition.config.data.encoding")
                .unwrap()
                .as_deref(),
            Some("base64")
        );
        let (pruned, removed) = delete(
            DOC,
            &[
                "guestinfo.ignition.config.data",
                "guestinfo.ignition.config.data.encoding",
            ],
        )
        .unwrap();
        assert!(removed);
        assert_eq!(
            property(&pruned, "guestinfo.ignition.config.data").unwrap(),
            None
        );
        assert_eq!(
            property(&pruned, "guestinfo.hostname").unwrap().as_deref(),
            Some("h")
        );
        assert!(
            !delete(&pruned, &["guestinfo.ignition.config.data"])
                .unwrap()
                .1
        );
        assert!(properties("not xml").is_err());
    }
}
