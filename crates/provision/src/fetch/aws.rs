//! AWS: the instance metadata service (IMDSv2 session tokens, the IAM role's credentials,
//! the region) and S3 objects (`s3://BUCKET/KEY[?versionId=V]`, bucket and access-point
//! ARNs), fetched as upstream does: the bucket's region asked with HEAD (hinted by the
//! instance's region or the ARN's partition), the object from the region's dual-stack
//! endpoint, signed with Signature Version 4 when the platform lends the instance's role
//! (AWS only). When no role can be had from IMDS the fetch goes on anonymously, exactly
//! where upstream falls back; an object the role may not read is an error, not a fallback.

use super::http::{HttpClient, Request};
use super::metadata::{self, Endpoint};
use super::url::redact;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The IMDS base URL.
pub(crate) const IMDS: &str = "http://169.254.169.254";
/// The header carrying an IMDSv2 session token.
pub(crate) const TOKEN_HEADER: &str = "X-aws-ec2-metadata-token";
const TTL_HEADER: &str = "X-aws-ec2-metadata-token-ttl-seconds";

/// An IMDSv2 session token (`PUT /latest/api/token`, 6 h); `None` when the service answers
/// 404 (IMDSv1 only). Other failures are errors.
pub(crate) fn session_token(
    http: &HttpClient,
    endpoint: &Endpoint,
) -> Result<Option<String>, String> {
    let url = format!("{IMDS}/latest/api/token");
    let resp = metadata::exchange(http, endpoint, "PUT", &url, &[(TTL_HEADER, "21600")], &[])?;
    if resp.status == 404 {
        return Ok(None);
    }
    let body = resp
        .into_body(&endpoint.url(&url))
        .map_err(|e| format!("IMDSv2 session token: {e}"))?;
    Ok(Some(String::from_utf8_lossy(&body).trim().to_string()))
}

/// GET an IMDS path with a session token when there is one.
fn imds_get(http: &HttpClient, endpoint: &Endpoint, path: &str) -> Result<Option<Vec<u8>>, String> {
    let token = session_token(http, endpoint)?;
    let headers: Vec<(&str, &str)> = token
        .as_deref()
        .map(|t| vec![(TOKEN_HEADER, t)])
        .unwrap_or_default();
    metadata::get_optional(http, endpoint, &format!("{IMDS}{path}"), &headers, &[])
}

/// Credentials of the instance's role.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RoleCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub token: Option<String>,
}

impl std::fmt::Debug for RoleCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RoleCredentials({}, ***)", self.access_key_id)
    }
}

/// The role's credentials from IMDS. An error here means "no EC2 IMDS role": the caller
/// falls back to anonymous access.
pub(crate) fn role_credentials(
    http: &HttpClient,
    endpoint: &Endpoint,
) -> Result<RoleCredentials, String> {
    let base = "/latest/meta-data/iam/security-credentials/";
    let list = imds_get(http, endpoint, base)
        .map_err(|e| format!("no EC2 IMDS role found: {e}"))?
        .ok_or("no EC2 IMDS role found (404)")?;
    let list = String::from_utf8_lossy(&list);
    let role = list
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or("no EC2 IMDS role found (empty list)")?
        .to_string();
    let body = imds_get(http, endpoint, &format!("{base}{role}"))
        .map_err(|e| format!("failed to get {role} EC2 IMDS role credentials: {e}"))?
        .ok_or_else(|| format!("failed to get {role} EC2 IMDS role credentials (404)"))?;
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Creds {
        #[serde(default)]
        code: Option<String>,
        access_key_id: String,
        secret_access_key: String,
        #[serde(default)]
        token: Option<String>,
    }
    let c: Creds = serde_json::from_slice(&body)
        .map_err(|e| format!("failed to get {role} EC2 IMDS role credentials: {e}"))?;
    if let Some(code) = c.code.filter(|c| c != "Success") {
        return Err(format!(
            "failed to get {role} EC2 IMDS role credentials: {code}"
        ));
    }
    Ok(RoleCredentials {
        access_key_id: c.access_key_id,
        secret_access_key: c.secret_access_key,
        token: c.token.filter(|t| !t.is_empty()),
    })
}

/// The instance's region (`placement/region`), or `None`.
pub(crate) fn instance_region(http: &HttpClient, endpoint: &Endpoint) -> Option<String> {
    imds_get(http, endpoint, "/latest/meta-data/placement/region")
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|r| !r.is_empty())
}

/// What an S3 source names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Object {
    /// The bucket, or for an access point its `NAME-ACCOUNT` host label.
    pub bucket: String,
    pub key: String,
    pub version: Option<String>,
    /// Known from an access-point ARN.
    pub region: Option<String>,
    /// A region in the ARN's partition, to ask for the bucket's region.
    pub region_hint: Option<String>,
    pub access_point: bool,
}

/// Parses `s3://…` and `arn:…` sources.
pub(crate) fn parse(url: &str) -> Result<Object, String> {
    let bad = || format!("cannot map {} to an S3 object", redact(url));
    let (without_query, query) = match url.split_once('?') {
        Some((u, q)) => (u, Some(q)),
        None => (url, None),
    };
    let version = query.and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("versionId="))
            .map(str::to_string)
    });
    if let Some(rest) = without_query.strip_prefix("s3://") {
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad());
        }
        return Ok(Object {
            bucket: bucket.into(),
            key: key.trim_start_matches('/').into(),
            version,
            region: None,
            region_hint: None,
            access_point: false,
        });
    }
    let parts: Vec<&str> = without_query.splitn(6, ':').collect();
    if parts.len() < 6 || parts[0] != "arn" || parts[2] != "s3" {
        return Err(bad());
    }
    let (partition, region, account, resource) = (parts[1], parts[3], parts[4], parts[5]);
    let hint = match partition {
        "aws" => Some("us-east-1"),
        "aws-cn" => Some("cn-north-1"),
        "aws-us-gov" => Some("us-gov-west-1"),
        _ => None,
    }
    .map(str::to_string);
    if let Some(ap) = resource.strip_prefix("accesspoint/") {
        let (name, rest) = ap.split_once('/').ok_or_else(bad)?;
        let key = rest.strip_prefix("object/").ok_or_else(bad)?;
        return Ok(Object {
            bucket: format!("{name}-{account}"),
            key: key.into(),
            version,
            region: Some(region.to_string()).filter(|r| !r.is_empty()),
            region_hint: hint,
            access_point: true,
        });
    }
    let (bucket, key) = resource.split_once('/').ok_or_else(bad)?;
    Ok(Object {
        bucket: bucket.into(),
        key: key.into(),
        version,
        region: None,
        region_hint: hint,
        access_point: false,
    })
}

fn domain(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    }
}

/// Whether a bucket name can be a host label (virtual-hosted style over TLS).
fn virtual_hostable(bucket: &str) -> bool {
    (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !bucket.starts_with('-')
        && !bucket.ends_with('-')
}

/// S3 path escaping: every byte but the unreserved ones and `/` as %XX.
pub(crate) fn escape_path(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Query escaping for SigV4 (`/` escaped too).
fn escape_query(s: &str) -> String {
    escape_path(s).replace('/', "%2F")
}

/// The object's URL: with `endpoint` (FLINT_S3_ENDPOINT) path-style on it, else the
/// region's dual-stack endpoint as upstream's SDK builds it.
pub(crate) fn object_url(o: &Object, region: &str, endpoint: Option<&str>) -> String {
    let query = o
        .version
        .as_ref()
        .map(|v| format!("?versionId={}", escape_query(v)))
        .unwrap_or_default();
    let key = escape_path(&o.key);
    if let Some(e) = endpoint {
        return format!("{}/{}/{key}{query}", e.trim_end_matches('/'), o.bucket);
    }
    let d = domain(region);
    if o.access_point {
        format!(
            "https://{}.s3-accesspoint.dualstack.{region}.{d}/{key}{query}",
            o.bucket
        )
    } else if virtual_hostable(&o.bucket) {
        format!(
            "https://{}.s3.dualstack.{region}.{d}/{key}{query}",
            o.bucket
        )
    } else {
        format!(
            "https://s3.dualstack.{region}.{d}/{}/{key}{query}",
            o.bucket
        )
    }
}

/// The bucket's region from a HEAD request's `x-amz-bucket-region` (given on any status).
/// Upstream asks anonymously; with credentials at hand flint signs the question (with the
/// hint's region), which S3 answers the same way and S3 servers that refuse anonymous
/// requests answer at all.
pub(crate) fn bucket_region(
    http: &HttpClient,
    o: &Object,
    hint: &str,
    endpoint: Option<&str>,
    creds: Option<&RoleCredentials>,
) -> Result<String, String> {
    let url = match endpoint {
        Some(e) => format!("{}/{}", e.trim_end_matches('/'), o.bucket),
        None if virtual_hostable(&o.bucket) => {
            format!("https://{}.s3.{hint}.{}", o.bucket, domain(hint))
        }
        None => format!("https://s3.{hint}.{}/{}", domain(hint), o.bucket),
    };
    let mut c = http.clone();
    if c.total_timeout.is_none() {
        c.total_timeout = Some(std::time::Duration::from_secs(30));
    }
    let headers = match creds {
        Some(cr) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            sign("HEAD", &url, hint, cr, now, &[])?
        }
        None => Vec::new(),
    };
    let resp = c.send(&Request {
        method: "HEAD",
        url: &url,
        headers: &headers,
        body: None,
        retry_codes: &[],
    })?;
    match resp.header("x-amz-bucket-region") {
        Some(r) if !r.is_empty() => Ok(r.to_string()),
        _ if resp.status == 404 => Err(format!("could not find bucket {:?}", o.bucket)),
        _ => Err(format!(
            "couldn't determine the region for bucket {:?} (HEAD {} gave {} without x-amz-bucket-region)",
            o.bucket,
            redact(&url),
            resp.status
        )),
    }
}

/// The UTC time as SigV4 wants it: (`YYYYMMDDTHHMMSSZ`, `YYYYMMDD`).
pub(crate) fn amz_date(unix: u64) -> (String, String) {
    let t = crate::civil::Utc::from_unix(unix as i64);
    let date = format!("{:04}{:02}{:02}", t.year, t.month, t.day);
    let time = format!("{:02}{:02}{:02}", t.hour, t.minute, t.second);
    (format!("{date}T{time}Z"), date)
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// The headers that sign a GET (or HEAD) of `url` with SigV4 for service `s3`.
pub(crate) fn sign(
    method: &str,
    url: &str,
    region: &str,
    creds: &RoleCredentials,
    unix_time: u64,
    extra: &[(&str, &str)],
) -> Result<Vec<(String, String)>, String> {
    let u = super::url::Url::parse(url)?;
    let (path, query) = match u.path.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (u.path.clone(), String::new()),
    };
    let host = if u.port == if u.scheme == "https" { 443 } else { 80 } {
        u.host.clone()
    } else {
        format!("{}:{}", u.host, u.port)
    };
    // Query parameters sorted by name, each already escaped in the URL.
    let mut params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    params.sort();
    let canonical_query = params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let (amz_date, date) = amz_date(unix_time);
    let payload = super::hex(&Sha256::digest(b""));
    let mut headers = vec![
        ("host".to_string(), host),
        ("x-amz-content-sha256".to_string(), payload.clone()),
        ("x-amz-date".to_string(), amz_date.clone()),
    ];
    if let Some(t) = &creds.token {
        headers.push(("x-amz-security-token".to_string(), t.clone()));
    }
    for (k, v) in extra {
        headers.push((k.to_ascii_lowercase(), v.to_string()));
    }
    headers.sort();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(k, v)| format!("{k}:{}\n", v.trim()))
        .collect();
    let canonical =
        format!("{method}\n{path}\n{canonical_query}\n{canonical_headers}\n{signed}\n{payload}");
    let scope = format!("{date}/{region}/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        super::hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{}", creds.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [region, "s3", "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = super::hex(&hmac(&key, to_sign.as_bytes()));
    let mut out: Vec<(String, String)> = headers.into_iter().filter(|(k, _)| k != "host").collect();
    out.push((
        "Authorization".to_string(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            creds.access_key_id
        ),
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sources() {
        let o = parse("s3://b/k/x?versionId=3").unwrap();
        assert_eq!((o.bucket.as_str(), o.key.as_str()), ("b", "k/x"));
        assert_eq!(o.version.as_deref(), Some("3"));
        let o = parse("arn:aws:s3:us-west-1:123:accesspoint/ap/object/some/path").unwrap();
        assert_eq!(o.bucket, "ap-123");
        assert_eq!(o.region.as_deref(), Some("us-west-1"));
        assert!(o.access_point);
        let o = parse("arn:aws-cn:s3:::b/k").unwrap();
        assert_eq!(o.region_hint.as_deref(), Some("cn-north-1"));
        assert!(parse("arn:aws:iam:::b/k").is_err());
        assert_eq!(
            object_url(&parse("s3://my-bucket/a b+c").unwrap(), "eu-west-1", None),
            "https://my-bucket.s3.dualstack.eu-west-1.amazonaws.com/a%20b%2Bc"
        );
        assert_eq!(
            object_url(&parse("s3://my.bucket/k").unwrap(), "cn-north-1", None),
            "https://s3.dualstack.cn-north-1.amazonaws.com.cn/my.bucket/k"
        );
        assert_eq!(
            object_url(
                &parse("arn:aws:s3:us-west-1:123:accesspoint/ap/object/k").unwrap(),
                "us-west-1",
                None
            ),
            "https://ap-123.s3-accesspoint.dualstack.us-west-1.amazonaws.com/k"
        );
    }

    #[test]
    fn signs_like_the_aws_documentation() {
        // The GET Object example of the S3 SigV4 documentation (examplebucket, test.txt).
        let creds = RoleCredentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            token: None,
        };
        assert_eq!(amz_date(1369353600).0, "20130524T000000Z");
        let h = sign(
            "GET",
            "https://examplebucket.s3.amazonaws.com/test.txt",
            "us-east-1",
            &creds,
            1369353600,
            &[("Range", "bytes=0-9")],
        )
        .unwrap();
        let auth = &h.iter().find(|(k, _)| k == "Authorization").unwrap().1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }
}
