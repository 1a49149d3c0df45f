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

pub mod backdoor;
pub mod ovf;

use super::{Context, Platform, UserData, userdata};
use backdoor::Port;

/// guestinfo variables (without the `guestinfo.` prefix).
pub trait GuestInfo {
    /// The variable's value; `None` when it is not set.
    fn get(&mut self, key: &str) -> Result<Option<String>, String>;
    fn set(&mut self, key: &str, value: &str) -> Result<(), String>;
}

/// guestinfo over the backdoor's RPCI channel.
pub struct Rpci<P: Port>(pub P);

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
pub const DELETED_DATA: &str = "e30K";
pub const DELETED_ENCODING: &str = "base64";

pub struct VMware;

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
pub fn decode(data: &str, encoding: &str) -> Result<Vec<u8>, String> {
    let gunzip = |b: &[u8]| crate::fetch::gunzip(b, crate::fetch::DEFAULT_LIMIT);
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
pub fn fetch_with(cx: &Context, gi: &mut dyn GuestInfo) -> Result<UserData, String> {
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
pub fn delete_with(cx: &Context, gi: &mut dyn GuestInfo) -> Result<(), String> {
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
