//! Binding LUKS volumes with Clevis, as upstream Ignition does it: the volume is formatted
//! with a key (the config's, or a generated one), bound with the real `clevis luks bind` (one
//! `sss` binding for TPM2 and Tang servers together, or the config's custom pin), checked by
//! closing it and unlocking it through Clevis, and a generated key is then removed from the
//! volume so that only the binding opens it. What the bind needs (the TPM, the Tang servers
//! and their thumbprints) is tried first with `clevis encrypt`, before any disk is touched.

use super::fail;
use crate::stage::StageError;
use crate::system::tool;
use flint_go::tree::JsonPath;
use flint_ignition::types::{Clevis, Luks};
use std::path::Path;

/// The pin and its config for `clevis luks bind` / `clevis encrypt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub pin: String,
    pub config: String,
}

/// The binding a volume asks for; `None` when it asks for no Clevis.
pub(crate) fn binding(c: &Clevis) -> Result<Option<Binding>, String> {
    if !c.is_present() {
        return Ok(None);
    }
    if let Some(pin) = c.custom.pin.as_deref().filter(|p| !p.is_empty()) {
        return Ok(Some(Binding {
            pin: pin.to_string(),
            config: c.custom.config.clone().unwrap_or_default(),
        }));
    }
    use serde_json::{Map, Value, json};
    let mut tang = Vec::new();
    for t in &c.tang {
        let mut server = Map::new();
        server.insert("url".into(), json!(t.url));
        server.insert(
            "thp".into(),
            json!(t.thumbprint.clone().unwrap_or_default()),
        );
        if let Some(adv) = t.advertisement.as_deref().filter(|a| !a.is_empty()) {
            let adv: Value = serde_json::from_str(adv)
                .map_err(|e| format!("the advertisement of Tang server {:?}: {e}", t.url))?;
            server.insert("adv".into(), adv);
        }
        tang.push(Value::Object(server));
    }
    let mut pins = Map::new();
    // As upstream: the tang list is there even when empty (null), which clevis refuses for
    // a threshold alone; the check says so before any disk is touched.
    if !tang.is_empty() || c.tpm2 != Some(true) {
        let list = if tang.is_empty() {
            Value::Null
        } else {
            Value::Array(tang)
        };
        pins.insert("tang".into(), list);
    }
    if c.tpm2 == Some(true) {
        pins.insert("tpm2".into(), json!({}));
    }
    let t = c.threshold.filter(|t| *t != 0).unwrap_or(1);
    let config = json!({ "pins": pins, "t": t });
    Ok(Some(Binding {
        pin: "sss".into(),
        config: config.to_string(),
    }))
}

/// How long a binding that needs a Tang server is tried again while the server does not
/// answer (the network may come up late; upstream retries its advertisement fetch too).
const TANG_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Encrypts a few bytes with the volume's binding and throws them away: the TPM answers,
/// each Tang server answers with an advertisement its thumbprint signed, the threshold is
/// one clevis takes. Run before any disk is touched; a Tang server that does not answer is
/// asked again for a while, a wrong thumbprint fails at once.
pub(crate) fn try_binding(l: &Luks, b: &Binding, entry: &JsonPath) -> Result<(), StageError> {
    let at = entry.key("clevis");
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_secs(1);
    loop {
        let said = match encrypt(b) {
            Ok(()) => return Ok(()),
            Err(Tried::NotRun(why)) => {
                return Err(fail(at, format!("LUKS volume {:?}: {why}", l.name)));
            }
            Err(Tried::Failed(said)) => said,
        };
        // clevis says the same of a server that is down and of one that does not know the
        // thumbprint (it asks for the advertisement that key signed): asked without one,
        // a server that answers is up, and its thumbprint wrong.
        let no_adv = said.contains("Unable to fetch advertisement");
        let up = no_adv
            && (l.clevis.tang.iter())
                .filter(|t| t.advertisement.as_deref().is_none_or(str::is_empty))
                .all(|t| answers(&t.url));
        if !no_adv || up || start.elapsed() + pause > TANG_PATIENCE {
            let hint = match (no_adv, up) {
                (true, true) => {
                    " (the Tang servers answer: a thumbprint is not one of their signing keys)"
                }
                (true, false) => " (a Tang server did not answer)",
                _ => "",
            };
            return Err(fail(
                at,
                format!(
                    "LUKS volume {:?} cannot be bound with Clevis (pin {}, config {}): clevis encrypt {said}{hint}",
                    l.name, b.pin, b.config,
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_secs(8));
    }
}

/// Whether the Tang server at `url` answers a request for its advertisement.
fn answers(url: &str) -> bool {
    let adv = format!("{}/adv", url.trim_end_matches('/'));
    let mut f = crate::fetch::Fetcher::new();
    f.http.response_header_timeout = std::time::Duration::from_secs(5);
    f.http.total_timeout = Some(std::time::Duration::from_secs(10));
    f.fetch_url(&adv, &[], None).is_ok()
}

enum Tried {
    /// clevis could not be run at all.
    NotRun(String),
    /// It ran and failed: its exit status and what it said.
    Failed(String),
}

/// `clevis encrypt PIN CONFIG` of a few bytes, the ciphertext thrown away.
fn encrypt(b: &Binding) -> Result<(), Tried> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("clevis")
        .args(["encrypt", &b.pin, &b.config])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C")
        .spawn()
        .map_err(|e| {
            Tried::NotRun(match e.kind() {
                std::io::ErrorKind::NotFound => "clevis is missing from this system (PATH)".into(),
                _ => format!("clevis could not be started: {e}"),
            })
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pin that fails early closes its input: what it says is the error, not the pipe.
        let _ = stdin.write_all(b"flint checks the binding\n");
    }
    let out = (child.wait_with_output()).map_err(|e| Tried::NotRun(format!("clevis: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    Err(Tried::Failed(format!(
        "exited with status {}{}{}",
        out.status.code().unwrap_or(-1),
        if said.is_empty() { "" } else { ": " },
        said.join(" / ")
    )))
}

/// Binds the open volume on `dev` (keyed by `keyfile`), checks the binding opens it, and
/// removes the key when `generated`.
pub(crate) fn bind(
    l: &Luks,
    b: &Binding,
    dev: &Path,
    keyfile: &Path,
    generated: bool,
    entry: &JsonPath,
) -> Result<(), StageError> {
    let dev_s = dev.display().to_string();
    let key_s = keyfile.display().to_string();
    let err = |what: &str, e: tool::ToolError| {
        fail(
            entry.clone(),
            format!("LUKS volume {:?}: {what}: {e}", l.name),
        )
    };
    tool::run(
        "clevis",
        [
            "luks", "bind", "-f", "-k", &key_s, "-d", &dev_s, &b.pin, &b.config,
        ],
    )
    .map_err(|e| err("binding it with Clevis", e))?;
    // Unlocked through the binding, as every later boot will: a binding that cannot open
    // the volume fails here, while the key still does.
    if unlockable_offline(&l.clevis) {
        tool::run("cryptsetup", ["luksClose", &l.name]).map_err(|e| err("closing it", e))?;
        unlock(l, dev).map_err(|e| err("opening it through Clevis", e))?;
    }
    if generated {
        tool::run("cryptsetup", ["luksRemoveKey", &dev_s, &key_s])
            .map_err(|e| err("removing the generated key", e))?;
    }
    Ok(())
}

/// Whether enough of the pins can answer now to open the volume (upstream's test): servers
/// given by advertisement are not asked, they may not be reachable while provisioning; a
/// custom pin is not tried.
fn unlockable_offline(c: &Clevis) -> bool {
    let live = c
        .tang
        .iter()
        .filter(|t| t.advertisement.as_deref().is_none_or(str::is_empty))
        .count()
        + usize::from(c.tpm2 == Some(true));
    let t = c.threshold.filter(|t| *t != 0).unwrap_or(1);
    c.custom.pin.as_deref().is_none_or(str::is_empty) && live as i64 >= t
}

/// Opens the volume on `dev` as `l.name` through its Clevis binding.
pub(crate) fn unlock(l: &Luks, dev: &Path) -> Result<(), tool::ToolError> {
    let dev_s = dev.display().to_string();
    tool::run_with(
        "clevis",
        ["luks", "unlock", "-d", &dev_s, "-n", &l.name],
        &[],
        tool::dm_env(),
    )
    .map(|_| ())
}

/// Whether the LUKS2 header of `dev` holds a Clevis token.
pub(crate) fn is_bound(dev: &Path) -> bool {
    let dump = tool::run(
        "cryptsetup",
        [
            "luksDump".as_ref(),
            "--dump-json-metadata".as_ref(),
            dev.as_os_str(),
        ],
    );
    let Ok(dump) = dump else { return false };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&dump) else {
        return false;
    };
    (v.get("tokens").and_then(|t| t.as_object())).is_some_and(|t| {
        t.values()
            .any(|t| t.get("type").and_then(|s| s.as_str()) == Some("clevis"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flint_ignition::types::{ClevisCustom, Tang};

    fn tang(url: &str, thp: &str, adv: Option<&str>) -> Tang {
        Tang {
            url: url.into(),
            thumbprint: Some(thp.into()),
            advertisement: adv.map(Into::into),
        }
    }

    #[test]
    fn bindings_as_upstream_makes_them() {
        let b = |c: Clevis| binding(&c).unwrap().map(|b| (b.pin, b.config));
        assert_eq!(b(Clevis::default()), None);
        let tpm = Clevis {
            tpm2: Some(true),
            ..Default::default()
        };
        assert_eq!(
            b(tpm.clone()),
            Some(("sss".into(), r#"{"pins":{"tpm2":{}},"t":1}"#.into()))
        );
        let both = Clevis {
            tang: vec![tang("http://t:80", "abc", None)],
            threshold: Some(2),
            ..tpm
        };
        assert_eq!(
            b(both).unwrap().1,
            r#"{"pins":{"tang":[{"thp":"abc","url":"http://t:80"}],"tpm2":{}},"t":2}"#
        );
        let adv = Clevis {
            tang: vec![tang("http://t", "abc", Some(r#"{"payload":"x"}"#))],
            ..Default::default()
        };
        assert_eq!(
            b(adv).unwrap().1,
            r#"{"pins":{"tang":[{"adv":{"payload":"x"},"thp":"abc","url":"http://t"}]},"t":1}"#
        );
        let bad = Clevis {
            tang: vec![tang("http://t", "abc", Some("{"))],
            ..Default::default()
        };
        assert!(binding(&bad).unwrap_err().contains("advertisement"));
        let alone = Clevis {
            threshold: Some(1),
            ..Default::default()
        };
        assert_eq!(b(alone).unwrap().1, r#"{"pins":{"tang":null},"t":1}"#);
        let custom = Clevis {
            custom: ClevisCustom {
                pin: Some("tpm2".into()),
                config: Some(r#"{"pcr_ids":"7"}"#.into()),
                needs_network: None,
            },
            ..Default::default()
        };
        assert_eq!(
            b(custom),
            Some(("tpm2".into(), r#"{"pcr_ids":"7"}"#.into()))
        );
    }

    #[test]
    fn network_at_boot_and_to_bind() {
        let with = |t: Vec<Tang>, pin: Option<&str>, net: Option<bool>| Clevis {
            tang: t,
            custom: ClevisCustom {
                pin: pin.map(Into::into),
                needs_network: net,
                config: None,
            },
            ..Default::default()
        };
        let pre = with(vec![tang("http://t", "a", Some("{}"))], None, None);
        assert!(pre.needs_network_at_boot() && !pre.needs_network_to_bind());
        let live = with(vec![tang("http://t", "a", None)], None, None);
        assert!(live.needs_network_at_boot() && live.needs_network_to_bind());
        let custom = with(vec![], Some("tang"), Some(true));
        assert!(custom.needs_network_at_boot() && custom.needs_network_to_bind());
        let offline = with(vec![], Some("tpm2"), Some(false));
        assert!(!offline.needs_network_at_boot() && !offline.needs_network_to_bind());
    }

    #[test]
    fn unlocked_offline_only_when_enough_pins_answer() {
        let c = |tang: Vec<Tang>, tpm2: bool, t: Option<i64>| Clevis {
            tang,
            tpm2: Some(tpm2),
            threshold: t,
            ..Default::default()
        };
        assert!(unlockable_offline(&c(vec![], true, None)));
        let pre = tang("http://t", "a", Some("{}"));
        let live = tang("http://t", "a", None);
        assert!(!unlockable_offline(&c(vec![pre.clone()], false, None)));
        assert!(!unlockable_offline(&c(vec![pre], true, Some(2))));
        assert!(unlockable_offline(&c(vec![live], true, Some(2))));
    }
}
