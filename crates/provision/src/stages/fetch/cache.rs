//! The config cache: the rendered config kept for the stages of one boot that run as
//! separate processes, with a record of what they need to know beside it.

use super::fail;
use crate::acquire;
use crate::fetch::Fetcher;
use crate::stage::StageError;
use crate::write::write_atomic;
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::path::{Path, PathBuf};

/// A config read back from the cache, with its references rendered again.
pub(super) struct Cached {
    pub config: Config,
    pub fetcher: Fetcher,
    pub meta: CacheMeta,
    pub platform: Option<&'static dyn crate::platform::Platform>,
}

/// Reads the config an earlier stage cached at `cache`.
pub(super) fn read(
    cache: &Path,
    fetcher: Fetcher,
    budget: &acquire::Budget,
) -> Result<Cached, StageError> {
    let bytes = std::fs::read(cache).map_err(|e| {
        let message = format!("reading the config cache {}: {e}", cache.display());
        fail(None, message)
    })?;
    let config = flint_ignition::parse(&bytes)
        .map_err(|d| fail(None, format!("config cache {}: {d}", cache.display())))?
        .config;
    let meta = CacheMeta::read(cache);
    let platform = meta.platform.as_deref().and_then(crate::platform::get);
    let mut fetcher = fetcher;
    if let Some(p) = platform {
        fetcher.credentials = p.credentials();
    }
    let root = JsonPath::root();
    let (config, fetcher) = acquire::render(config, &fetcher, &root, &mut Vec::new(), budget)
        .map_err(|e| fail(e.path, e.message))?;
    Ok(Cached {
        config,
        fetcher,
        meta,
        platform,
    })
}

/// Writes the rendered config to `cache` (CA sources inlined) and the record beside it.
pub(super) fn write(
    cache: &Path,
    config: &Config,
    fetcher: &Fetcher,
    meta: &CacheMeta,
) -> Result<(), StageError> {
    let json = flint_go::json::to_vec(&cache_form(config, fetcher), false);
    if let Some(dir) = cache.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    write_atomic(cache, &json, 0o640).map_err(|e| {
        let message = format!("writing the config cache {}: {e}", cache.display());
        fail(None, message)
    })?;
    meta.write(cache)
        .map_err(|e| fail(None, format!("writing the config cache's record: {e}")))
}

/// What later stages need to know about the cached config beside the config itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheMeta {
    #[serde(rename = "userConfigProvided")]
    pub user_provided: bool,
    pub platform: Option<String>,
}

impl CacheMeta {
    fn path(cache: &Path) -> PathBuf {
        let mut p = cache.as_os_str().to_owned();
        p.push(".meta");
        PathBuf::from(p)
    }

    /// The record beside `cache`; a cache without one had a user config.
    pub fn read(cache: &Path) -> CacheMeta {
        std::fs::read(Self::path(cache))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(CacheMeta {
                user_provided: true,
                platform: None,
            })
    }

    pub(super) fn write(&self, cache: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        write_atomic(&Self::path(cache), &json, 0o640)
    }
}

/// The config as cached for later stages: CA sources inlined as data URLs so that a later
/// stage needs no network to trust them.
pub(super) fn cache_form(config: &Config, fetcher: &Fetcher) -> Config {
    let mut c = config.clone();
    for ca in &mut c.ignition.security.tls.certificate_authorities {
        if let Ok(pem) = fetcher.fetch(ca) {
            ca.source = Some(format!(
                "data:;base64,{}",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pem)
            ));
            ca.compression = None;
            ca.http_headers.clear();
            ca.verification = Default::default();
        }
    }
    c
}
