//! QEMU: the config in the firmware configuration device, `opt/org.flatcar-linux/config`
//! (Flatcar's name) or `opt/com.coreos/config`. No entry is no config.

use super::{Context, Platform, UserData};

/// fw_cfg entries Flatcar reads, in order.
pub const FW_CFG_NAMES: &[&str] = &["opt/org.flatcar-linux/config", "opt/com.coreos/config"];

pub(crate) struct Qemu;

impl Platform for Qemu {
    fn name(&self) -> &'static str {
        "qemu"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        for name in FW_CFG_NAMES {
            let entry = cx.places.fw_cfg.join(name);
            let raw = entry.join("raw");
            match std::fs::read(&raw) {
                Ok(mut bytes) => {
                    // The size file tells how much of raw is the blob.
                    if let Ok(size) = std::fs::read_to_string(entry.join("size"))
                        && let Ok(n) = size.trim().parse::<usize>()
                    {
                        bytes.truncate(n);
                    }
                    return Ok(UserData::new(bytes, format!("fw_cfg {name}")));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("reading {}: {e}", raw.display())),
            }
        }
        cx.note(format!(
            "no QEMU fw_cfg entry {} under {}: no config",
            FW_CFG_NAMES.join(" or "),
            cx.places.fw_cfg.display()
        ));
        Ok(UserData::none("QEMU fw_cfg (no entry)"))
    }
}
