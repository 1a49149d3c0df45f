//! `file`: the config in the file `IGNITION_CONFIG_FILE` names (default `config.ign` in the
//! working directory), as upstream's test platform.

use super::{Context, Platform, UserData};

pub(super) struct FilePlatform;

impl Platform for FilePlatform {
    fn name(&self) -> &'static str {
        "file"
    }

    fn fetch(&self, _cx: &Context) -> Result<UserData, String> {
        let path = std::env::var("IGNITION_CONFIG_FILE")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "config.ign".into());
        let bytes = std::fs::read(&path).map_err(|e| format!("reading {path}: {e}"))?;
        Ok(UserData::new(bytes, path))
    }
}
