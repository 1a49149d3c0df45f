//! Proxmox VE: the cloud-init drive labelled `cidata`: `/user-data`, else
//! `/vendor-data`, each skipped when empty or a `#cloud-config`. A drive that does not
//! appear within 30 s is no config.

use super::{Context, Platform, UserData, drive};
use std::time::Duration;

pub(super) struct ProxmoxVE;

impl Platform for ProxmoxVE {
    fn name(&self) -> &'static str {
        "proxmoxve"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = Duration::from_secs(30).min(cx.device_timeout);
        let Some(dev) = drive::poll(wait, || drive::find_label("cidata")) else {
            cx.note("cidata drive was not available in time; continuing without a config");
            return Ok(UserData::none("no cidata drive"));
        };
        let files = drive::read_files(cx, &dev, &["/user-data", "/vendor-data"])?;
        for (name, data) in ["/user-data", "/vendor-data"].iter().zip(files) {
            let Some(data) = data else { continue };
            if data.starts_with(b"#cloud-config\n") {
                cx.note(format!("cidata {name} is a #cloud-config; ignoring it"));
                continue;
            }
            if !data.is_empty() {
                return Ok(UserData::new(data, format!("config drive cidata {name}")));
            }
        }
        Ok(UserData::none("config drive cidata (no config)"))
    }
}
