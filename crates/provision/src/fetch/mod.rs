//! Getting the bytes a config refers to: `data:`, `http(s)`, `tftp`, `s3`/`arn`, `gs` and
//! Flatcar's `oem` sources, checked against `verification.hash` and decompressed, with limits so that a
//! hostile resource cannot take the machine's memory.

pub(crate) mod aws;
pub(crate) mod blob;
pub mod cloud;
pub(crate) mod connect;
pub mod http;
pub(crate) mod lowport;
pub mod metadata;
pub(crate) mod oem;
pub(crate) mod proxy;
pub(crate) mod tftp;
pub(crate) mod url;

use flint_ignition::types::{Ignition, Resource};
use http::HttpClient;
use sha2::Digest;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use url::redact;

/// Default largest resource, fetched or decompressed. Resources fetched over HTTP(S) or
/// from `data:` URLs are streamed to the spool, so this bounds disk use, not memory.
pub const DEFAULT_LIMIT: u64 = 1 << 36;

/// Largest resource held whole in memory (configs, certificates, and what the schemes that
/// are not streamed bring: TFTP, object storage, `oem://`), whatever the limit.
pub const IN_MEMORY_LIMIT: u64 = 1 << 30;

/// Settings that come from the environment rather than the config.
#[derive(Debug, Clone)]
pub struct Settings {
    pub endpoints: cloud::Endpoints,
    /// Where metadata services are (the `FLINT_METADATA_ENDPOINT` test hook).
    pub metadata: metadata::Endpoint,
    /// Largest resource accepted, fetched or decompressed.
    pub limit: u64,
    /// Where `oem://` files are.
    pub oem: oem::Oem,
    /// Offline (upstream's fetch-offline): a source that needs the network is not fetched;
    /// the flag records that one was asked for.
    pub offline: Option<Arc<AtomicBool>>,
    /// Where resources too large for memory are kept until they are written.
    pub spool: blob::Spool,
}

impl Settings {
    /// From `FLINT_S3_ENDPOINT`, `FLINT_GS_ENDPOINT`, `FLINT_AZURE_BLOB_ENDPOINT`,
    /// `FLINT_METADATA_ENDPOINT`, `FLINT_MAX_RESOURCE_BYTES`, `IGNITION_OEM_LOOKASIDE_DIR`
    /// and `FLINT_OEM_LABEL`.
    pub fn from_env() -> Settings {
        Settings {
            endpoints: cloud::Endpoints::from_env(),
            metadata: metadata::Endpoint::from_env(),
            limit: std::env::var("FLINT_MAX_RESOURCE_BYTES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_LIMIT),
            oem: oem::Oem::from_env(),
            offline: None,
            spool: blob::Spool::from_env(),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            endpoints: cloud::Endpoints::default(),
            metadata: metadata::Endpoint::default(),
            limit: DEFAULT_LIMIT,
            oem: oem::Oem::default(),
            offline: None,
            spool: blob::Spool::from_env(),
        }
    }
}

/// Whether fetching `url` needs the network: everything but `data:` and `oem:` (upstream
/// counts `oem:` too; Flatcar's OEM partition is local). Schemes compare in lower case.
pub fn needs_network(url: &str) -> bool {
    let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
    !matches!(scheme.as_str(), "data" | "oem" | "")
}

/// What an offline fetch of a network source fails with.
pub const NEEDS_NETWORK: &str = "resource requires networking";

/// Fetches resources with the settings of a config's `ignition` section.
#[derive(Clone)]
pub struct Fetcher {
    pub http: HttpClient,
    pub endpoints: cloud::Endpoints,
    pub endpoint: metadata::Endpoint,
    /// What the platform lends to object-storage fetches.
    pub credentials: cloud::Credentials,
    pub cloud: cloud::SharedCache,
    pub tftp_timeout: Duration,
    pub limit: u64,
    pub oem: oem::Oem,
    /// See [`Settings::offline`].
    pub offline: Option<Arc<AtomicBool>>,
    pub spool: blob::Spool,
    notes: Arc<std::sync::Mutex<Vec<String>>>,
    /// The certificate authorities fetched by this fetcher and its clones, by [`resource_key`]:
    /// a config is rendered more than once a run (the user config, then merged with the
    /// base configs), and a later stage is handed those the fetch stage fetched.
    cas: Arc<std::sync::Mutex<std::collections::BTreeMap<String, Vec<u8>>>>,
}

/// What names a download: the same source asked with the same headers gives the same
/// bytes (each entry then decompresses and verifies them its own way).
pub(crate) fn download_key(r: &Resource) -> String {
    let mut k = r.source.clone().unwrap_or_default();
    for h in &r.http_headers {
        k += &format!("\n{}={}", h.name, h.value.as_deref().unwrap_or(""));
    }
    k
}

/// What names a resource's finished bytes: its download, how it is decompressed and the
/// hash they must have (a certificate authority's, a kept resource's).
pub(crate) fn resource_key(r: &Resource) -> String {
    format!(
        "{}\n{}\n{}",
        download_key(r),
        r.compression.as_deref().unwrap_or(""),
        r.verification.hash.as_deref().unwrap_or("")
    )
}

impl Fetcher {
    /// A fetcher with Ignition's defaults (10 s response headers, no total timeout, no
    /// proxy, the system's roots).
    pub fn new() -> Fetcher {
        Fetcher::with(Settings::default())
    }

    pub fn with(settings: Settings) -> Fetcher {
        Fetcher {
            http: HttpClient {
                response_header_timeout: Duration::from_secs(10),
                total_timeout: None,
                proxy: proxy::ProxyConfig::default(),
                roots: Arc::new(http::system_roots()),
                limit: settings.limit,
                user_agent: format!("Ignition/flint-{}", env!("CARGO_PKG_VERSION")),
            },
            endpoints: settings.endpoints,
            endpoint: settings.metadata,
            credentials: cloud::Credentials::Anonymous,
            cloud: Arc::default(),
            tftp_timeout: Duration::from_secs(2),
            limit: settings.limit,
            oem: settings.oem,
            offline: settings.offline,
            spool: settings.spool,
            notes: Arc::default(),
            cas: Arc::default(),
        }
    }

    /// A certificate authority's bytes, fetched once a run (see [`Fetcher::known_cas`]).
    pub fn fetch_ca(&self, r: &Resource) -> Result<Vec<u8>, String> {
        let key = resource_key(r);
        if let Some(pem) = self.cas.lock().expect("no holder panics").get(&key) {
            return Ok(pem.clone());
        }
        let pem = self.fetch(r)?;
        (self.cas.lock().expect("no holder panics")).insert(key, pem.clone());
        Ok(pem)
    }

    /// The certificate authorities fetched so far, by key.
    pub fn known_cas(&self) -> Vec<(String, Vec<u8>)> {
        let cas = self.cas.lock().expect("no holder panics");
        cas.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Takes `cas` (from [`Fetcher::known_cas`] of an earlier run of this boot) as fetched.
    pub fn know_cas(&self, cas: impl IntoIterator<Item = (String, Vec<u8>)>) {
        self.cas.lock().expect("no holder panics").extend(cas);
    }

    /// Records a line for the run's output (a fallback taken, …).
    pub fn note(&self, text: String) {
        self.notes.lock().expect("no holder panics").push(text);
    }

    /// The lines recorded so far, by this fetcher and its clones.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().expect("no holder panics"))
    }

    /// Applies the timeouts and proxy of `ig` (CAs are added with [`Fetcher::add_roots`]).
    pub fn configure(&mut self, ig: &Ignition) {
        if let Some(t) = ig.timeouts.http_response_headers {
            self.http.response_header_timeout = Duration::from_secs(t.max(1) as u64);
        }
        if let Some(t) = ig.timeouts.http_total {
            self.http.total_timeout = (t > 0).then(|| Duration::from_secs(t as u64));
        }
        // A proxy given without a scheme is an http:// one.
        let with_scheme = |p: &Option<String>| {
            p.as_ref().map(|p| {
                if p.contains("://") || p.is_empty() {
                    p.clone()
                } else {
                    format!("http://{p}")
                }
            })
        };
        self.http.proxy = proxy::ProxyConfig {
            http: with_scheme(&ig.proxy.http_proxy),
            https: with_scheme(&ig.proxy.https_proxy),
            no_proxy: ig.proxy.no_proxy.clone(),
        };
    }

    /// Trusts the certificates of PEM bundle `pem` too.
    pub fn add_roots(&mut self, pem: &[u8]) -> Result<usize, String> {
        let certs = http::parse_certs(pem);
        if certs.is_empty() {
            return Err("no PEM certificate found".into());
        }
        let n = certs.len();
        let mut all = (*self.http.roots).clone();
        all.extend(certs);
        self.http.roots = Arc::new(all);
        Ok(n)
    }

    /// The raw bytes at `url`.
    pub fn fetch_url(
        &self,
        url: &str,
        headers: &[(String, String)],
        compression: Option<&str>,
    ) -> Result<Vec<u8>, String> {
        let url = &*url::lower_scheme(url);
        let scheme = url.split(':').next().unwrap_or("");
        self.allowed(url)?;
        match scheme {
            "data" => {
                flint_ignition::dataurl::decode(url).map_err(|e| format!("bad data URL: {e}"))
            }
            "http" | "https" if cloud::is_azure_blob(url) => {
                cloud::azure_blob_get(self, url, headers)
            }
            "http" | "https" => self.http.get(url, headers),
            "tftp" => {
                let u = url::Url::parse(url)?;
                tftp::get(
                    &u.host,
                    u.port,
                    &u.decoded_path(),
                    self.tftp_timeout,
                    self.memory_limit(),
                )
            }
            "s3" | "arn" => cloud::s3_get(self, url, compression),
            "gs" => cloud::gcs_get(self, url),
            s if s.eq_ignore_ascii_case("oem") => self.oem.get(url, self.memory_limit()),
            _ => Err(format!("unsupported URL scheme {scheme:?}")),
        }
    }

    /// This fetcher with its limit lowered to `limit` (when that is lower).
    pub fn limited(&self, limit: u64) -> Fetcher {
        let mut f = self.clone();
        f.limit = f.limit.min(limit);
        f.http.limit = f.http.limit.min(limit);
        f
    }

    /// Largest resource held whole in memory.
    pub fn memory_limit(&self) -> u64 {
        self.limit.min(IN_MEMORY_LIMIT)
    }

    /// Refuses a source that needs the network when offline (and notes it was asked for).
    fn allowed(&self, url: &str) -> Result<(), String> {
        if let Some(flag) = &self.offline
            && needs_network(url)
        {
            flag.store(true, Ordering::Relaxed);
            return Err(format!("{}: {NEEDS_NETWORK}", redact(url)));
        }
        Ok(())
    }

    /// The contents `r` describes, decompressed and verified while they arrive: in memory
    /// when small, in the spool otherwise. HTTP(S) bodies are never held whole.
    pub fn fetch_blob(&self, r: &Resource) -> Result<blob::Blob, String> {
        let finish = blob::Finish {
            gzip: r.compression.as_deref() == Some("gzip"),
            hash: r.verification.hash.as_deref(),
        };
        self.fetch_blobs(r, &[finish])?.remove(0)
    }

    /// `r`'s source downloaded once and finished each of the ways in `finishes` (entries
    /// that share a source may decompress or verify it differently): the download's error,
    /// or each way's result.
    pub fn fetch_blobs(
        &self,
        r: &Resource,
        finishes: &[blob::Finish],
    ) -> Result<Vec<Result<blob::Blob, String>>, String> {
        let Some(source) = r.source.as_deref() else {
            return Err("no source".into());
        };
        let source = &*url::lower_scheme(source);
        let headers: Vec<(String, String)> = r
            .http_headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone().unwrap_or_default()))
            .collect();
        let mut fan = blob::Fan::new(source, &self.spool, self.limit, finishes);
        let scheme = source.split(':').next().unwrap_or("");
        if matches!(scheme, "http" | "https") && !cloud::is_azure_blob(source) {
            self.allowed(source)?;
            self.http.get_into(source, &headers, &mut fan)?;
        } else {
            let raw = self.fetch_url(source, &headers, r.compression.as_deref())?;
            // Plain bytes with nothing to check are the blob already.
            if let [f] = finishes
                && !f.gzip
                && f.hash.is_none()
                && (raw.len() as u64) <= self.limit
            {
                return Ok(vec![Ok(raw.into())]);
            }
            blob::BodySink::put(&mut fan, &raw)?;
        }
        Ok(fan.finish())
    }

    /// The contents `r` describes: fetched, verified, decompressed.
    pub fn fetch(&self, r: &Resource) -> Result<Vec<u8>, String> {
        let raw = self.fetch_raw(r)?;
        self.finish(r, raw)
    }

    /// The bytes at `r`'s source, as served.
    pub fn fetch_raw(&self, r: &Resource) -> Result<Vec<u8>, String> {
        let Some(source) = r.source.as_deref() else {
            return Err("no source".into());
        };
        let headers: Vec<(String, String)> = r
            .http_headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone().unwrap_or_default()))
            .collect();
        self.fetch_url(source, &headers, r.compression.as_deref())
    }

    /// Decompresses (`compression`) and verifies (`verification.hash`, of the decompressed
    /// data) what [`Fetcher::fetch_raw`] got for `r`.
    pub fn finish(&self, r: &Resource, raw: Vec<u8>) -> Result<Vec<u8>, String> {
        let source = r.source.as_deref().unwrap_or("");
        let data = match r.compression.as_deref() {
            Some("gzip") => {
                gunzip(&raw, self.memory_limit()).map_err(|e| format!("{}: {e}", redact(source)))?
            }
            _ => raw,
        };
        if let Some(hash) = &r.verification.hash {
            verify(&data, hash).map_err(|e| format!("{}: {e}", redact(source)))?;
        }
        Ok(data)
    }
}

impl Default for Fetcher {
    fn default() -> Self {
        Fetcher::new()
    }
}

/// Decompresses gzip data, refusing more than `limit` bytes of output.
pub fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(data).take(limit + 1);
    dec.read_to_end(&mut out)
        .map_err(|e| format!("corrupt gzip data: {e}"))?;
    if out.len() as u64 > limit {
        return Err(format!("decompresses to more than the {limit}-byte limit"));
    }
    Ok(out)
}

/// Checks `data` against `sha512-<hex>` or `sha256-<hex>`.
pub fn verify(data: &[u8], hash: &str) -> Result<(), String> {
    let (function, want) = hash.split_once('-').ok_or("malformed hash specifier")?;
    let got = match function {
        "sha512" => hex(&sha2::Sha512::digest(data)),
        "sha256" => hex(&sha2::Sha256::digest(data)),
        _ => return Err(format!("unrecognized hash function {function:?}")),
    };
    if got.eq_ignore_ascii_case(want) {
        Ok(())
    } else {
        Err(format!("{function} mismatch: expected {want}, got {got}"))
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_and_decompresses() {
        let sum = hex(&sha2::Sha256::digest(b"hello"));
        assert!(verify(b"hello", &format!("sha256-{sum}")).is_ok());
        assert!(
            verify(b"hellO", &format!("sha256-{sum}"))
                .unwrap_err()
                .contains("mismatch")
        );
        let gz = flint_ignition::dataurl::gzip_best(&vec![b'a'; 10_000]);
        assert_eq!(gunzip(&gz, 1 << 20).unwrap().len(), 10_000);
        assert!(gunzip(&gz, 100).unwrap_err().contains("limit"));
        assert!(gunzip(b"not gzip", 100).unwrap_err().contains("corrupt"));
    }

    #[test]
    fn data_urls_need_no_network() {
        let f = Fetcher::new();
        let r = Resource {
            source: Some("data:,hello%20world".into()),
            ..Default::default()
        };
        assert_eq!(f.fetch(&r).unwrap(), b"hello world");
    }
}
