//! VMware: the config in guestinfo variables, read over the hypervisor's backdoor with
//! Flatcar's fallbacks: `ignition.config.data` (+ `.encoding`), else `coreos.config.data`
//! (+ `.encoding`), else the URL in `ignition.config.url` or `coreos.config.url`; each
//! variable set directly wins over the same `guestinfo.` property in the OVF environment
//! (`guestinfo.ovfenv`). Encodings: none, `base64`/`b64`, `gzip`/`gz`, and
//! `gzip+base64` (with the same short forms). `flint rmcfg` replaces the data with `e30K`
//! (base64 `{}`) and drops the properties from the OVF environment (CVE-2022-1706).
//!
//! The backdoor cannot be reached outside VMware: the logic is tested against a simulated
//! host (backdoor::tests::FakeHost) and recorded guestinfo exchanges.

pub(crate) mod backdoor;
pub(crate) mod ovf;

use super::{Context, Platform, UserData, userdata};
use backdoor::Port;

/// guestinfo variables (without the `guestinfo.` prefix).
pub(crate) trait GuestInfo {
    /// The variable's value; `None` when it is not set.
    fn get(&mut self, key: &str) -> Result<Option<String>, String>;
    fn set(&mut self, key: &str, value: &str) -> Result<(), String>;
}

/// guestinfo over the backdoor's RPCI channel.
pub(crate) struct Rpci<P: Port>(pub P);

impl<P: Port> GuestInfo for Rpci<P> {
    fn get(&mut self, key: &str) -> Result<Option<String>, String> {
        let (ok, value) = backdoor::rpci(&mut self.0, &format!("info-get guestinfo.{key}"))?;
        Ok(ok.then_some(value))
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let (ok, reply) =
            backdoor::rpci(&mut self.0, &format!("info-set guestinfo.{key} {value}"))?;
        if ok {
            Ok(())
        } else {
            Err(format!("setting guestinfo.{key}: {reply}"))
        }
    }
}

/// The data written over the config by rmcfg: base64 of `{}`.
pub(crate) const DELETED_DATA: &str = "e30K";
pub(crate) const DELETED_ENCODING: &str = "base64";

pub(crate) struct VMware;

fn host() -> Result<Rpci<backdoor::HostPort>, String> {
    let mut port = backdoor::HostPort::new().ok_or("not running on VMware")?;
    if !backdoor::present(&mut port) {
        return Err("the VMware backdoor does not answer".into());
    }
    Ok(Rpci(port))
}

impl Platform for VMware {
    fn name(&self) -> &'static str {
        "vmware"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let mut gi = host()?;
        fetch_with(cx, &mut gi)
    }

    fn delete_config(&self, cx: &Context) -> Result<(), String> {
        let mut gi = host()?;
        delete_with(cx, &mut gi)
    }
}

/// A variable, set directly or (as a fallback) as `guestinfo.KEY` in the OVF environment.
fn variable(cx: &Context, gi: &mut dyn GuestInfo, key: &str) -> Result<String, String> {
    let mut from_ovf = String::new();
    match gi.get("ovfenv") {
        Ok(Some(env)) if !env.is_empty() => {
            match ovf::property(&env, &format!("guestinfo.{key}")) {
                Ok(v) => from_ovf = v.unwrap_or_default(),
                Err(e) => cx.note(format!(
                    "failed to parse the OVF environment: {e}; continuing"
                )),
            }
        }
        Ok(_) => {}
        Err(e) => cx.note(format!("failed to fetch ovfenv: {e}; continuing")),
    }
    match gi.get(key) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Ok(from_ovf),
        Err(e) if !from_ovf.is_empty() => {
            cx.note(format!(
                "reading guestinfo.{key}: {e}; using the OVF environment's"
            ));
            Ok(from_ovf)
        }
        Err(e) => Err(e),
    }
}

/// Decodes guestinfo data by its encoding name.
pub(crate) fn decode(data: &str, encoding: &str) -> Result<Vec<u8>, String> {
    let gunzip = |b: &[u8]| crate::fetch::gunzip(b, crate::fetch::IN_MEMORY_LIMIT);
    match encoding {
        "" => Ok(data.as_bytes().to_vec()),
        "b64" | "base64" => userdata::base64_decode(data.as_bytes()),
        "gz" | "gzip" => gunzip(data.as_bytes()),
        "gz+base64" | "gzip+base64" | "gz+b64" | "gzip+b64" => {
            gunzip(&userdata::base64_decode(data.as_bytes())?)
        }
        other => Err(format!("unsupported encoding {other:?}")),
    }
}

/// The config from `gi`, with Flatcar's fallbacks.
pub(crate) fn fetch_with(cx: &Context, gi: &mut dyn GuestInfo) -> Result<UserData, String> {
    let mut origin = "guestinfo.ignition.config.data";
    let mut data = variable(cx, gi, "ignition.config.data").unwrap_or_default();
    let mut encoding = String::new();
    if !data.is_empty() {
        encoding = variable(cx, gi, "ignition.config.data.encoding").unwrap_or_default();
    } else {
        origin = "guestinfo.coreos.config.data";
        data = variable(cx, gi, "coreos.config.data").unwrap_or_default();
        if !data.is_empty() {
            encoding = variable(cx, gi, "coreos.config.data.encoding").unwrap_or_default();
        }
    }
    if !data.is_empty() {
        let bytes = decode(&data, &encoding)?;
        return Ok(UserData::new(bytes, origin));
    }
    let mut url = variable(cx, gi, "ignition.config.url").unwrap_or_default();
    if url.is_empty() {
        url = variable(cx, gi, "coreos.config.url").unwrap_or_default();
    }
    if url.is_empty() {
        cx.note("no config data or URL in guestinfo");
        return Ok(UserData::none("guestinfo (no config)"));
    }
    let bytes = cx.fetcher.fetch_url(&url, &[], None)?;
    Ok(UserData::new(bytes, crate::fetch::url::redact(&url)))
}

/// Removes the config from `gi` (rmcfg).
pub(crate) fn delete_with(cx: &Context, gi: &mut dyn GuestInfo) -> Result<(), String> {
    let data = gi
        .get("ignition.config.data")
        .map_err(|e| format!("getting config property: {e}"))?
        .unwrap_or_else(|| DELETED_DATA.into());
    if data != DELETED_DATA {
        cx.note("deleting config from guestinfo properties");
        gi.set("ignition.config.data", DELETED_DATA)
            .map_err(|e| format!("replacing config: {e}"))?;
        let enc = gi
            .get("ignition.config.data.encoding")
            .map_err(|e| format!("getting config encoding property: {e}"))?
            .unwrap_or_default();
        if enc != DELETED_ENCODING {
            gi.set("ignition.config.data.encoding", DELETED_ENCODING)
                .map_err(|e| format!("replacing config encoding: {e}"))?;
        }
    }
    let env = gi
        .get("ovfenv")
        .map_err(|e| format!("reading OVF environment: {e}"))?
        .unwrap_or_default();
    if !env.is_empty() {
        let (pruned, removed) = ovf::delete(
            &env,
            &[
                "guestinfo.ignition.config.data",
                "guestinfo.ignition.config.data.encoding",
            ],
        )
        .map_err(|e| format!("deleting OVF properties: {e}"))?;
        if removed {
            cx.note("deleting config from OVF environment");
            gi.set("ovfenv", &pruned)
                .map_err(|e| format!("replacing OVF environment: {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use backdoor::tests::FakeHost;

    fn cx() -> Context {
        Context::new(
            crate::fetch::Fetcher::new(),
            crate::platform::Places::default(),
        )
    }

    fn host(vars: &[(&str, &str)]) -> Rpci<FakeHost> {
        let mut h = FakeHost::default();
        for (k, v) in vars {
            h.vars.insert(k.to_string(), v.to_string());
        }
        Rpci(h)
    }

    fn ovfenv(props: &[(&str, &str)]) -> String {
        let mut s = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?><Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"><PropertySection>"#,
        );
        for (k, v) in props {
            s.push_str(&format!(r#"<Property oe:key="{k}" oe:value="{v}"/>"#));
        }
        s.push_str("</PropertySection></Environment>");
        s
    }

    const CFG: &str = r#"{"ignition":{"version":"3.4.0"}}"#;

    fn b64(b: &[u8]) -> String {
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, b)
    }

    #[test]
    fn reads_data_with_each_encoding_over_the_backdoor() {
        let gz = flint_ignition::dataurl::gzip_best(CFG.as_bytes());
        for (data, enc) in [
            (CFG.to_string(), ""),
            (b64(CFG.as_bytes()), "base64"),
            (b64(CFG.as_bytes()), "b64"),
            (b64(&gz), "gzip+base64"),
            (b64(&gz), "gz+b64"),
        ] {
            let mut h = host(&[
                ("ignition.config.data", &data),
                ("ignition.config.data.encoding", enc),
            ]);
            let u = fetch_with(&cx(), &mut h).unwrap();
            assert_eq!(u.bytes, CFG.as_bytes(), "{enc}");
            // What went over the channel: RPCI info-get commands.
            assert!(
                h.0.commands
                    .contains(&"info-get guestinfo.ignition.config.data".to_string())
            );
        }
        let mut h = host(&[
            ("ignition.config.data", "x"),
            ("ignition.config.data.encoding", "rot13"),
        ]);
        assert!(
            fetch_with(&cx(), &mut h)
                .unwrap_err()
                .contains("unsupported encoding")
        );
    }

    #[test]
    fn flatcar_fallbacks_ovf_coreos_and_urls() {
        // The OVF environment when the variable itself is not set.
        let env = ovfenv(&[
            ("guestinfo.ignition.config.data", &b64(CFG.as_bytes())),
            ("guestinfo.ignition.config.data.encoding", "base64"),
        ]);
        let mut h = host(&[("ovfenv", &env)]);
        assert_eq!(fetch_with(&cx(), &mut h).unwrap().bytes, CFG.as_bytes());
        // Each variable set directly wins over the OVF environment's (the encoding too:
        // here set, empty).
        let mut h = host(&[
            ("ovfenv", &env),
            ("ignition.config.data", "{}"),
            ("ignition.config.data.encoding", ""),
        ]);
        assert_eq!(fetch_with(&cx(), &mut h).unwrap().bytes, b"{}");
        // coreos.config.data when ignition.config.data is not there.
        let mut h = host(&[
            ("coreos.config.data", &b64(CFG.as_bytes())),
            ("coreos.config.data.encoding", "base64"),
        ]);
        let u = fetch_with(&cx(), &mut h).unwrap();
        assert_eq!(
            (u.bytes.as_slice(), u.origin.as_str()),
            (CFG.as_bytes(), "guestinfo.coreos.config.data")
        );
        // Then the URLs (Flatcar's patch), ignition's before coreos's.
        let url = format!(
            "data:,{}",
            flint_ignition::dataurl::percent_encode(CFG.as_bytes())
        );
        let mut h = host(&[
            ("coreos.config.url", "data:,%7B%7D"),
            ("ignition.config.url", &url),
        ]);
        assert_eq!(fetch_with(&cx(), &mut h).unwrap().bytes, CFG.as_bytes());
        let mut h = host(&[("coreos.config.url", "data:,%7B%7D")]);
        assert_eq!(fetch_with(&cx(), &mut h).unwrap().bytes, b"{}");
        // Nothing at all: no config.
        let mut h = host(&[]);
        assert!(fetch_with(&cx(), &mut h).unwrap().bytes.is_empty());
    }

    #[test]
    fn rmcfg_replaces_the_data_and_prunes_the_ovf_environment() {
        let env = ovfenv(&[
            ("guestinfo.ignition.config.data", "secret"),
            ("guestinfo.hostname", "h"),
        ]);
        let mut h = host(&[("ignition.config.data", "secret"), ("ovfenv", &env)]);
        delete_with(&cx(), &mut h).unwrap();
        assert_eq!(h.0.vars["ignition.config.data"], DELETED_DATA);
        assert_eq!(h.0.vars["ignition.config.data.encoding"], DELETED_ENCODING);
        let pruned = &h.0.vars["ovfenv"];
        assert!(!pruned.contains("secret") && pruned.contains("guestinfo.hostname"));
        // What the deleted config reads as now: {} (base64 e30K = "{}\n").
        assert_eq!(fetch_with(&cx(), &mut h).unwrap().bytes, b"{}\n");
        // A second rmcfg changes nothing.
        let before = h.0.commands.len();
        delete_with(&cx(), &mut h).unwrap();
        let sets = h.0.commands[before..]
            .iter()
            .filter(|c| c.starts_with("info-set"))
            .count();
        assert_eq!(sets, 0);
    }
}
