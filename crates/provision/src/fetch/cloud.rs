//! Object storage with the credentials the platform lends, falling back to anonymous
//! access exactly where upstream does:
//!
//! - `s3://`, `arn:` (fetch::aws): signed with the instance's IAM role on AWS; anonymous
//!   when IMDS gives no role, and on every other platform.
//! - `gs://`: the GCS JSON API; with the VM's service-account token when a GCE metadata
//!   server answers (on any platform, as upstream) and the default account has scopes,
//!   else anonymous.
//! - `https://ACCOUNT.blob.core.windows.net/CONTAINER/BLOB` on Azure: with the VM's
//!   managed identity; any failure of that falls back to a plain HTTPS GET.
//!
//! Test hooks, beside `FLINT_METADATA_ENDPOINT`: `FLINT_S3_ENDPOINT` (S3 path-style on
//! that server), `FLINT_GS_ENDPOINT` (replaces scheme, host and port of
//! storage.googleapis.com), `FLINT_AZURE_BLOB_ENDPOINT` (path-style
//! `ENDPOINT/ACCOUNT/CONTAINER/BLOB`, as Azurite serves).

use super::Fetcher;
use super::aws;
use super::http::Request;
use super::metadata;
use super::url::redact;
use std::sync::{Arc, OnceLock};

/// Which credentials a platform lends to object-storage fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Credentials {
    #[default]
    Anonymous,
    /// The instance's IAM role from IMDSv2, and the region from IMDS.
    Aws,
    /// The VM's managed identity.
    Azure,
}

#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    pub s3: Option<String>,
    pub gs: Option<String>,
    pub azure_blob: Option<String>,
}

impl Endpoints {
    pub fn from_env() -> Endpoints {
        let var = |n: &str| std::env::var(n).ok().filter(|s| !s.is_empty());
        Endpoints {
            s3: var("FLINT_S3_ENDPOINT"),
            gs: var("FLINT_GS_ENDPOINT"),
            azure_blob: var("FLINT_AZURE_BLOB_ENDPOINT"),
        }
    }
}

/// Credentials and hints found once per run and shared by every clone of a fetcher.
#[derive(Debug, Default)]
pub struct Cache {
    aws_role: OnceLock<Result<aws::RoleCredentials, String>>,
    aws_region: OnceLock<String>,
    gcs_token: OnceLock<Result<Option<String>, String>>,
}

pub type SharedCache = Arc<Cache>;

/// An S3 object's bytes.
pub fn s3_get(f: &Fetcher, url: &str, compression: Option<&str>) -> Result<Vec<u8>, String> {
    if compression.is_some_and(|c| !c.is_empty()) {
        return Err("compression is not supported with that scheme".into());
    }
    let o = aws::parse(url)?;
    let creds = (f.credentials == Credentials::Aws).then(|| {
        f.cloud
            .aws_role
            .get_or_init(|| aws::role_credentials(&f.http, &f.endpoint))
            .clone()
    });
    let endpoint = f.endpoints.s3.as_deref();
    let region = match &o.region {
        Some(r) => r.clone(),
        None => {
            let hint = o.region_hint.clone().unwrap_or_else(|| {
                if f.credentials == Credentials::Aws {
                    f.cloud
                        .aws_region
                        .get_or_init(|| {
                            aws::instance_region(&f.http, &f.endpoint)
                                .unwrap_or_else(|| "us-east-1".into())
                        })
                        .clone()
                } else {
                    "us-east-1".into()
                }
            });
            // A local S3 server answering anonymously has no regions to tell apart.
            if endpoint.is_some() && !matches!(creds, Some(Ok(_))) {
                hint
            } else {
                let signer = match &creds {
                    Some(Ok(c)) => Some(c),
                    _ => None,
                };
                match aws::bucket_region(&f.http, &o, &hint, endpoint, signer) {
                    Ok(r) => r,
                    Err(e) if e.starts_with("could not find") => return Err(e),
                    // Some servers (and S3 for some errors) give no region: use the hint.
                    Err(_) => hint,
                }
            }
        }
    };
    let object_url = aws::object_url(&o, &region, endpoint);
    let what = format!("object {:?} from bucket {:?}", o.key, o.bucket);
    match creds {
        Some(Ok(c)) => signed_get(f, &object_url, &region, &c)
            .map_err(|e| format!("error fetching {what}: {e}")),
        Some(Err(role)) => f.http.get(&object_url, &[]).map_err(|e| {
            format!(
                "error fetching {what} anonymously: {e} (authenticated fetch also failed: {role})"
            )
        }),
        None => f
            .http
            .get(&object_url, &[])
            .map_err(|e| explain(url, format!("error fetching {what} anonymously: {e}"))),
    }
}

fn signed_get(
    f: &Fetcher,
    url: &str,
    region: &str,
    c: &aws::RoleCredentials,
) -> Result<Vec<u8>, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let headers = aws::sign("GET", url, region, c, now, &[])?;
    f.http.get(url, &headers)
}

/// A refusal that means credentials would be needed says so.
pub fn explain(url: &str, error: String) -> String {
    if error.contains(" 401 ") || error.contains(" 403 ") {
        format!(
            "{}: access denied ({error}); without credentials from the platform the object is fetched anonymously: make it public, or fetch it on a platform whose credentials may read it",
            redact(url)
        )
    } else {
        error
    }
}

/// Percent-escaping of a GCS object name as one path segment.
fn escape_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The JSON API URL of a `gs://BUCKET/OBJECT` source.
pub fn gcs_url(url: &str, endpoint: Option<&str>) -> Result<String, String> {
    let rest = url
        .strip_prefix("gs://")
        .ok_or_else(|| format!("cannot map {} to a GCS object", redact(url)))?;
    let (bucket, object) = rest
        .split_once('/')
        .ok_or_else(|| format!("cannot map {} to a GCS object", redact(url)))?;
    let object = object.trim_start_matches('/');
    let base = endpoint
        .unwrap_or("https://storage.googleapis.com")
        .trim_end_matches('/');
    Ok(format!(
        "{base}/storage/v1/b/{bucket}/o/{}?alt=media",
        escape_segment(object)
    ))
}

const GCE_META: &str = "http://169.254.169.254/computeMetadata/v1";

/// The GCE service account's token for reading storage, when this runs on GCE.
fn gcs_token(f: &Fetcher) -> Result<Option<String>, String> {
    f.cloud
        .gcs_token
        .get_or_init(|| {
            // GCE_METADATA_HOST says where the server is (and that we are on GCE), as the
            // Google client libraries read it.
            let env_host = std::env::var("GCE_METADATA_HOST").ok().filter(|h| !h.is_empty());
            let endpoint = match &env_host {
                Some(h) if f.endpoint.replace.is_none() => metadata::Endpoint {
                    replace: Some(format!("http://{h}")),
                },
                _ => f.endpoint.clone(),
            };
            let on_gce = env_host.is_some() || {
                let probe = metadata::probe_client(&f.http, std::time::Duration::from_secs(2));
                metadata::exchange(&probe, &endpoint, "GET", "http://169.254.169.254", &[], &[])
                    .is_ok_and(|r| r.header("Metadata-Flavor") == Some("Google"))
            };
            if !on_gce {
                return Ok(None);
            }
            let flavor = [("Metadata-Flavor", "Google")];
            let scopes = metadata::get(
                &f.http,
                &endpoint,
                &format!("{GCE_META}/instance/service-accounts/default/scopes"),
                &flavor,
                &[],
            );
            if scopes.is_err() {
                // No service account: anonymous, as upstream.
                return Ok(None);
            }
            let body = metadata::get(
                &f.http,
                &endpoint,
                &format!("{GCE_META}/instance/service-accounts/default/token?scopes=https://www.googleapis.com/auth/devstorage.read_only"),
                &flavor,
                &[],
            )
            .map_err(|e| format!("fetching GCS auth token: {e}"))?;
            #[derive(serde::Deserialize)]
            struct Token {
                access_token: String,
            }
            let t: Token = serde_json::from_slice(&body)
                .map_err(|e| format!("fetching GCS auth token: {e}"))?;
            Ok(Some(t.access_token))
        })
        .clone()
}

/// A GCS object's bytes.
pub fn gcs_get(f: &Fetcher, url: &str) -> Result<Vec<u8>, String> {
    let target = gcs_url(url, f.endpoints.gs.as_deref())?;
    let mut headers = Vec::new();
    if let Some(t) = gcs_token(f)? {
        headers.push(("Authorization".to_string(), format!("Bearer {t}")));
    }
    f.http.get(&target, &headers).map_err(|e| {
        explain(
            url,
            format!("error while reading content from {}: {e}", redact(url)),
        )
    })
}

/// Whether `url` names an Azure Blob (`https://ACCOUNT.blob.core.windows.net/...`).
pub fn is_azure_blob(url: &str) -> bool {
    super::url::Url::parse(url).is_ok_and(|u| u.bare_host().ends_with(".blob.core.windows.net"))
}

/// Where an Azure Blob URL is fetched from: itself, or path-style on the test endpoint.
pub fn azure_blob_target(url: &str, endpoint: Option<&str>) -> String {
    let (Some(e), Ok(u)) = (endpoint, super::url::Url::parse(url)) else {
        return url.to_string();
    };
    let account = u.bare_host().split('.').next().unwrap_or("");
    format!("{}/{account}{}", e.trim_end_matches('/'), u.path)
}

const AZURE_TOKEN: &str = "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F";
/// The storage service version flint speaks.
pub const AZURE_STORAGE_VERSION: &str = "2021-08-06";

/// An Azure Blob with the managed identity; a plain GET when that fails.
pub fn azure_blob_get(
    f: &Fetcher,
    url: &str,
    headers: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let target = azure_blob_target(url, f.endpoints.azure_blob.as_deref());
    if f.credentials == Credentials::Azure {
        match azure_with_identity(f, url, &target) {
            Ok(b) => return Ok(b),
            Err(e) => f.note(format!(
                "could not fetch {} via Azure credentials: {e}; falling back to an anonymous fetch",
                redact(url)
            )),
        }
    }
    f.http.get(&target, headers)
}

fn azure_with_identity(f: &Fetcher, url: &str, target: &str) -> Result<Vec<u8>, String> {
    let u = super::url::Url::parse(url)?;
    let path = u.path.split('?').next().unwrap_or("");
    if path.trim_matches('/').split('/').count() != 2 {
        return Err(format!(
            "invalid URL path, ensure url has a structure of /container/filename.ign: {path}"
        ));
    }
    let body = metadata::get(
        &f.http,
        &f.endpoint,
        AZURE_TOKEN,
        &[("Metadata", "true")],
        &[404, 410, 429],
    )
    .map_err(|e| format!("managed identity token: {e}"))?;
    #[derive(serde::Deserialize)]
    struct Token {
        access_token: String,
    }
    let t: Token =
        serde_json::from_slice(&body).map_err(|e| format!("managed identity token: {e}"))?;
    let headers = [
        (
            "Authorization".to_string(),
            format!("Bearer {}", t.access_token),
        ),
        (
            "x-ms-version".to_string(),
            AZURE_STORAGE_VERSION.to_string(),
        ),
    ];
    let mut http = f.http.clone();
    http.total_timeout = http
        .total_timeout
        .or(Some(std::time::Duration::from_secs(60)));
    let resp = http.send(&Request::get(target, &headers))?;
    resp.into_body(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_urls() {
        assert_eq!(
            gcs_url("gs://b/dir/o b", None).unwrap(),
            "https://storage.googleapis.com/storage/v1/b/b/o/dir%2Fo%20b?alt=media"
        );
        assert_eq!(
            gcs_url("gs://b/o", Some("http://127.0.0.1:9/")).unwrap(),
            "http://127.0.0.1:9/storage/v1/b/b/o/o?alt=media"
        );
        assert!(is_azure_blob("https://acct.blob.core.windows.net/c/b.ign"));
        assert!(!is_azure_blob("https://example.com/c/b.ign"));
        assert_eq!(
            azure_blob_target(
                "https://acct.blob.core.windows.net/c/b.ign",
                Some("http://127.0.0.1:10000")
            ),
            "http://127.0.0.1:10000/acct/c/b.ign"
        );
    }
}
