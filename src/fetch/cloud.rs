//! S3 and Google Cloud Storage objects as anonymous HTTPS fetches.
//!
//! `s3://BUCKET/KEY[?versionId=V]` and `arn:aws:s3:::BUCKET/KEY` go to the bucket's virtual
//! host, `arn:…:accesspoint/NAME/object/KEY` to the access point's host, `gs://BUCKET/OBJECT`
//! to storage.googleapis.com. `FLINT_S3_ENDPOINT` / `FLINT_GS_ENDPOINT` (e.g.
//! `http://127.0.0.1:9000`) send them, path-style, to another server instead (tests, or a
//! local mirror). Objects that need credentials are refused with a clear error: flint does
//! not sign requests.

use super::url::redact;

#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    pub s3: Option<String>,
    pub gs: Option<String>,
}

impl Endpoints {
    pub fn from_env() -> Endpoints {
        Endpoints {
            s3: std::env::var("FLINT_S3_ENDPOINT")
                .ok()
                .filter(|s| !s.is_empty()),
            gs: std::env::var("FLINT_GS_ENDPOINT")
                .ok()
                .filter(|s| !s.is_empty()),
        }
    }

    /// The HTTPS URL serving the object `url` names.
    pub fn https_url(&self, url: &str) -> Result<String, String> {
        let (without_query, query) = match url.split_once('?') {
            Some((u, q)) => (u, Some(q)),
            None => (url, None),
        };
        let version = query.and_then(|q| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix("versionId="))
                .map(|v| format!("?versionId={v}"))
        });
        let version = version.unwrap_or_default();
        let path_style = |base: &str, bucket: &str, key: &str| {
            format!("{}/{bucket}/{key}{version}", base.trim_end_matches('/'))
        };
        if let Some(rest) = without_query.strip_prefix("s3://") {
            let (bucket, key) = rest.split_once('/').ok_or_else(|| bad(url))?;
            return Ok(match &self.s3 {
                Some(e) => path_style(e, bucket, key),
                None => format!("https://{bucket}.s3.amazonaws.com/{key}{version}"),
            });
        }
        if let Some(rest) = without_query.strip_prefix("gs://") {
            let (bucket, object) = rest.split_once('/').ok_or_else(|| bad(url))?;
            let base = self
                .gs
                .as_deref()
                .unwrap_or("https://storage.googleapis.com");
            return Ok(format!("{}/{bucket}/{object}", base.trim_end_matches('/')));
        }
        if without_query.starts_with("arn:") {
            let parts: Vec<&str> = without_query.splitn(6, ':').collect();
            if parts.len() < 6 || parts[2] != "s3" {
                return Err(bad(url));
            }
            let (region, account, resource) = (parts[3], parts[4], parts[5]);
            if let Some(ap) = resource.strip_prefix("accesspoint/") {
                let (name, rest) = ap.split_once('/').ok_or_else(|| bad(url))?;
                let key = rest.strip_prefix("object/").ok_or_else(|| bad(url))?;
                let host = format!("{name}-{account}");
                return Ok(match &self.s3 {
                    Some(e) => path_style(e, &host, key),
                    None => format!(
                        "https://{host}.s3-accesspoint.{region}.amazonaws.com/{key}{version}"
                    ),
                });
            }
            let (bucket, key) = resource.split_once('/').ok_or_else(|| bad(url))?;
            return Ok(match &self.s3 {
                Some(e) => path_style(e, bucket, key),
                None => format!("https://{bucket}.s3.amazonaws.com/{key}{version}"),
            });
        }
        Err(bad(url))
    }
}

fn bad(url: &str) -> String {
    format!("cannot map {} to an object", redact(url))
}

/// A refusal that means credentials would be needed says so.
pub fn explain(url: &str, error: String) -> String {
    if error.contains(" 401 ") || error.contains(" 403 ") {
        format!(
            "{}: access denied ({error}); flint fetches s3:// and gs:// objects anonymously and does not support credentials: make the object public or serve it over https",
            redact(url)
        )
    } else {
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_objects_to_https() {
        let none = Endpoints::default();
        assert_eq!(
            none.https_url("s3://b/k/x?versionId=3").unwrap(),
            "https://b.s3.amazonaws.com/k/x?versionId=3"
        );
        assert_eq!(
            none.https_url("gs://b/o").unwrap(),
            "https://storage.googleapis.com/b/o"
        );
        assert_eq!(
            none.https_url("arn:aws:s3:us-west-1:123:accesspoint/ap/object/some/path")
                .unwrap(),
            "https://ap-123.s3-accesspoint.us-west-1.amazonaws.com/some/path"
        );
        assert_eq!(
            none.https_url("arn:aws:s3:::b/k").unwrap(),
            "https://b.s3.amazonaws.com/k"
        );
        let local = Endpoints {
            s3: Some("http://127.0.0.1:9/".into()),
            gs: Some("http://127.0.0.1:8".into()),
        };
        assert_eq!(
            local.https_url("s3://b/k").unwrap(),
            "http://127.0.0.1:9/b/k"
        );
        assert_eq!(
            local.https_url("gs://b/o").unwrap(),
            "http://127.0.0.1:8/b/o"
        );
    }
}
