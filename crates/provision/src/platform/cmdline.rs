//! The kernel command line as a config source: `ignition.config.url=` (Flatcar also reads
//! `flatcar.config.url=` and `coreos.config.url=`; the last one given wins), or, as
//! upstream after v2.26, `ignition.config.device=LABEL` with `ignition.config.path=PATH`:
//! the file PATH on the filesystem labelled LABEL (an ISO or USB stick), waited for 30 s.

use super::{Context, UserData, drive};
use std::time::Duration;

/// What the command line asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    pub url: Option<String>,
    pub device: Option<String>,
    pub path: Option<String>,
}

/// How long the labelled device may take to appear.
pub(crate) const DEVICE_WAIT: Duration = Duration::from_secs(30);

pub(crate) fn parse(cmdline: &str) -> Request {
    let mut r = Request::default();
    for arg in cmdline.split_whitespace() {
        let Some((k, v)) = arg.split_once('=') else {
            continue;
        };
        if v.is_empty() {
            continue;
        }
        match k {
            "ignition.config.url" | "flatcar.config.url" | "coreos.config.url" => {
                r.url = Some(v.to_string())
            }
            "ignition.config.device" => r.device = Some(v.to_string()),
            "ignition.config.path" => r.path = Some(v.to_string()),
            _ => {}
        }
    }
    r
}

/// The config the command line names, `None` when it names none.
pub(crate) fn fetch(cx: &Context) -> Result<Option<UserData>, String> {
    let text = match std::fs::read_to_string(&cx.places.cmdline) {
        Ok(t) => t,
        // Only where there is no /proc (tests, chroots): nothing on the command line.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("reading {}: {e}", cx.places.cmdline.display())),
    };
    let r = parse(&text);
    if let Some(url) = &r.url {
        if r.device.is_some() || r.path.is_some() {
            cx.note("ignition.config.url takes precedence; ignoring ignition.config.device and ignition.config.path");
        }
        let bytes = cx
            .fetcher
            .fetch_url(url, &[], None)
            .map_err(|e| format!("fetching the config from the kernel command line: {e}"))?;
        return Ok(Some(UserData::new(bytes, crate::fetch::url::redact(url))));
    }
    match (&r.device, &r.path) {
        (Some(label), Some(path)) => {
            if label.contains('/') || label == "." || label == ".." {
                return Err(format!("invalid device label {label:?}"));
            }
            let wait = cx.device_timeout.min(DEVICE_WAIT).max(Duration::from_secs(1));
            let dev = drive::wait_for_label(label, wait)
                .map_err(|_| format!("device {label:?} did not appear within timeout"))?;
            let got = drive::read_files(cx, &dev, &[path.as_str()])?;
            match got.into_iter().next().flatten() {
                Some(bytes) => Ok(Some(UserData::new(
                    bytes,
                    format!("{path} on the device labelled {label}"),
                ))),
                None => Err(format!("config file {path:?} not found on device {label:?}")),
            }
        }
        (None, None) => Ok(None),
        _ => Err(
            "both \"ignition.config.device\" and \"ignition.config.path\" must be provided together"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(
            parse("quiet ignition.config.url=http://a/b flatcar.config.url=http://c"),
            Request {
                url: Some("http://c".into()),
                ..Default::default()
            }
        );
        assert_eq!(
            parse("ignition.config.device=CFG ignition.config.path=/x.ign ignition.config.url="),
            Request {
                url: None,
                device: Some("CFG".into()),
                path: Some("/x.ign".into())
            }
        );
        assert_eq!(parse("root=/dev/sda"), Request::default());
    }
}
