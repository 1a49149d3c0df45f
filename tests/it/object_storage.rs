//! Object storage with platform credentials, against real servers: S3 signing (SigV4 with
//! the IAM role's temporary credentials from an IMDSv2 server) verified by a real S3
//! emulator (moto's server, which refuses bad signatures); the anonymous fallback where
//! upstream falls back (no IMDS role) and nowhere else; GCS with the GCE metadata
//! server's service-account token, checked by the storage server; Azure Blob with the
//! managed identity's token, checked by Azurite (Microsoft's emulator) in OAuth mode, and
//! the fallback to an anonymous fetch.
use crate::common;
use crate::support;

use flint_provision::acquire::Source;
use flint_provision::fetch::Settings;
use flint_provision::fetch::cloud::Endpoints;
use flint_provision::fetch::metadata::Endpoint;
use flint_provision::platform::Places;
use flint_provision::platform::system::SystemDirs;
use flint_provision::stage::{Acquired, Options, StageError};
use flint_provision::stages::fetch::fetch_stage;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::metadata::{MetaServer, Req, Resp, reply};

use crate::common::TempDir;

/// A child process stopped when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        for _ in 0..30 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn options(dir: &Path, source: Source, settings: Settings) -> Options {
    std::fs::write(dir.join("cmdline"), "quiet\n").unwrap();
    Options {
        source,
        places: Places {
            cmdline: dir.join("cmdline"),
            fw_cfg: dir.join("fw_cfg"),
            dmi: dir.join("dmi"),
            system: SystemDirs::under(&dir.join("sys")),
            mount_dir: dir.to_path_buf(),
            device_wait: Duration::from_millis(500),
            ..Places::default()
        },
        base_dir: None,
        cache: None,
        root: dir.join("root"),
        state_dir: dir.join("state"),
        kargs_file: None,
        kargs_reboot_flag: None,
        kargs_helper: None,
        neednet: dir.join("neednet"),
        state_file: None,
        live: false,
        fetch: settings,
        fetch_timeout: Duration::from_secs(10),
    }
}

/// A config whose file /etc/object has `source`.
fn config_with(source: &str, extra_ignition: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"3.4.0"{extra_ignition}}},"storage":{{"files":[{{"path":"/etc/object","contents":{{"source":"{source}"}}}}]}}}}"#
    )
}

fn object(acq: &Acquired) -> Vec<u8> {
    let p = flint_go::tree::JsonPath::root()
        .key("storage")
        .key("files")
        .index(0)
        .key("contents");
    acq.fetched
        .get(&p)
        .expect("fetched")
        .to_vec()
        .expect("readable")
}

struct S3 {
    _proc: Proc,
    endpoint: String,
    creds: serde_json::Value,
}

fn start_s3() -> S3 {
    let script = common::repo().join("tests/it/support/s3_emulator.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let proc = Proc(child);
    let creds: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        panic!(
            "the S3 emulator did not start ({e}): is moto installed? run scripts/install-deps.sh"
        )
    });
    S3 {
        _proc: proc,
        endpoint: creds["endpoint"].as_str().unwrap().to_string(),
        creds,
    }
}

/// An IMDSv2 server: token, the role's credentials (as given), the region, user data.
fn imds(creds: Option<serde_json::Value>, user_data: String) -> MetaServer {
    MetaServer::start(move |r: &Req| {
        let token_ok = r.header("x-aws-ec2-metadata-token") == Some("imds-token");
        match (r.method.as_str(), r.path.as_str()) {
            ("PUT", "/latest/api/token") => reply(200, "imds-token"),
            (_, _) if !token_ok => reply(401, "no token"),
            ("GET", "/2019-10-01/user-data") => reply(200, user_data.clone()),
            ("GET", "/latest/meta-data/placement/region") => reply(200, "eu-west-1"),
            ("GET", "/latest/meta-data/iam/security-credentials/") => match &creds {
                Some(_) => reply(200, "flint-role"),
                None => reply(404, ""),
            },
            ("GET", "/latest/meta-data/iam/security-credentials/flint-role") => match &creds {
                Some(c) => reply(
                    200,
                    serde_json::json!({
                        "Code": "Success",
                        "Type": "AWS-HMAC",
                        "AccessKeyId": c["access_key_id"],
                        "SecretAccessKey": c["secret_access_key"],
                        "Token": c["token"],
                        "Expiration": "2099-01-01T00:00:00Z",
                    })
                    .to_string(),
                ),
                None => reply(404, ""),
            },
            _ => reply(404, ""),
        }
    })
}

fn aws_run(imds: &MetaServer, s3: &str) -> Result<Acquired, StageError> {
    let dir = TempDir::new("s3");
    let settings = Settings {
        endpoints: Endpoints {
            s3: Some(s3.to_string()),
            ..Endpoints::default()
        },
        metadata: Endpoint {
            replace: Some(imds.endpoint()),
        },
        ..Settings::default()
    };
    fetch_stage(&options(&dir, Source::Platform("aws".into()), settings))
}

#[test]
fn s3_signed_with_the_instance_role_and_verified_by_the_emulator() {
    let s3 = start_s3();
    let cfg = config_with("s3://flint-bucket/dir/private object.txt", "");
    let md = imds(Some(s3.creds.clone()), cfg.clone());
    let acq = aws_run(&md, &s3.endpoint).unwrap();
    assert_eq!(object(&acq), b"private S3 object\n");
    // The role came from IMDS with the session token.
    assert_eq!(
        md.hits("/latest/meta-data/iam/security-credentials/flint-role"),
        1
    );

    // A wrong secret: the emulator refuses the signature, and there is no anonymous retry.
    let mut bad = s3.creds.clone();
    bad["secret_access_key"] = serde_json::json!("not-the-secret");
    let md = imds(Some(bad), cfg.clone());
    let e = aws_run(&md, &s3.endpoint).err().unwrap();
    assert!(e.message.contains("403"), "{e}");
    assert!(!e.message.contains("anonymously"), "{e}");

    // Also as the config itself: s3:// on the kernel command line (arn form).
    let md = imds(Some(s3.creds.clone()), String::new());
    let dir = TempDir::new("s3-cmdline");
    let settings = Settings {
        endpoints: Endpoints {
            s3: Some(s3.endpoint.clone()),
            ..Endpoints::default()
        },
        metadata: Endpoint {
            replace: Some(md.endpoint()),
        },
        ..Settings::default()
    };
    let o = options(&dir, Source::Platform("aws".into()), settings);
    std::fs::write(
        dir.join("cmdline"),
        "ignition.config.url=arn:aws:s3:::flint-bucket/config.ign\n",
    )
    .unwrap();
    assert!(fetch_stage(&o).unwrap().user_provided);
}

#[test]
fn s3_falls_back_to_anonymous_only_without_an_imds_role() {
    // A public bucket: answers requests without credentials; refuses signed ones it does
    // not know.
    let bucket = MetaServer::start(|r: &Req| {
        if r.header("authorization").is_some() {
            return reply(403, "<Error><Code>InvalidAccessKeyId</Code></Error>");
        }
        match (r.method.as_str(), r.path.as_str()) {
            ("HEAD", "/pub") => Resp {
                status: 200,
                headers: vec![("x-amz-bucket-region".into(), "us-west-2".into())],
                body: vec![],
            },
            ("GET", "/pub/obj") => reply(200, "public object"),
            ("GET", "/pub/secret") => reply(403, "<Error><Code>AccessDenied</Code></Error>"),
            _ => reply(404, ""),
        }
    });
    let md = imds(None, config_with("s3://pub/obj", ""));
    let acq = aws_run(&md, &bucket.endpoint()).unwrap();
    assert_eq!(object(&acq), b"public object");
    assert!(
        bucket
            .seen()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );

    let md = imds(None, config_with("s3://pub/secret", ""));
    let e = aws_run(&md, &bucket.endpoint()).err().unwrap();
    assert!(
        e.message.contains("anonymously") && e.message.contains("no EC2 IMDS role"),
        "{e}"
    );

    // Other platforms never sign.
    let dir = TempDir::new("s3-metal");
    std::fs::write(dir.join("c.ign"), config_with("s3://pub/obj", "")).unwrap();
    let settings = Settings {
        endpoints: Endpoints {
            s3: Some(bucket.endpoint()),
            ..Endpoints::default()
        },
        ..Settings::default()
    };
    let acq = fetch_stage(&options(&dir, Source::File(dir.join("c.ign")), settings)).unwrap();
    assert_eq!(object(&acq), b"public object");
}

/// A GCE metadata server with (or without) a default service account.
fn gce(with_account: bool) -> MetaServer {
    MetaServer::start(move |r: &Req| {
        let flavored = r.header("metadata-flavor") == Some("Google");
        let google = |status: u16, body: &str| Resp {
            status,
            headers: vec![("Metadata-Flavor".into(), "Google".into())],
            body: body.as_bytes().to_vec(),
        };
        match r.path.as_str() {
            "/" => google(200, "computeMetadata/\n"),
            _ if !flavored => google(403, "missing Metadata-Flavor"),
            "/computeMetadata/v1/instance/service-accounts/default/scopes" if with_account => {
                google(
                    200,
                    "https://www.googleapis.com/auth/devstorage.read_only\n",
                )
            }
            "/computeMetadata/v1/instance/service-accounts/default/token?scopes=https://www.googleapis.com/auth/devstorage.read_only"
                if with_account =>
            {
                google(
                    200,
                    r#"{"access_token":"ya29.flint-test","expires_in":3599,"token_type":"Bearer"}"#,
                )
            }
            _ => google(404, ""),
        }
    })
}

#[test]
fn gcs_with_the_service_account_token_and_anonymously() {
    let storage = MetaServer::start(|r: &Req| {
        let authed = r.header("authorization") == Some("Bearer ya29.flint-test");
        match r.path.as_str() {
            "/storage/v1/b/flint-bkt/o/dir%2Fprivate.txt?alt=media" if authed => {
                reply(200, "private gcs object")
            }
            "/storage/v1/b/flint-bkt/o/dir%2Fprivate.txt?alt=media" => reply(401, "login required"),
            "/storage/v1/b/flint-bkt/o/public.txt?alt=media" => reply(200, "public gcs object"),
            _ => reply(404, ""),
        }
    });
    let run = |meta: &MetaServer, src: &str| {
        let dir = TempDir::new("gcs");
        std::fs::write(dir.join("c.ign"), config_with(src, "")).unwrap();
        let settings = Settings {
            endpoints: Endpoints {
                gs: Some(storage.endpoint()),
                ..Endpoints::default()
            },
            metadata: Endpoint {
                replace: Some(meta.endpoint()),
            },
            ..Settings::default()
        };
        fetch_stage(&options(&dir, Source::File(dir.join("c.ign")), settings))
    };
    let acq = run(&gce(true), "gs://flint-bkt/dir/private.txt").unwrap();
    assert_eq!(object(&acq), b"private gcs object");
    // No service account: anonymous, which the private object refuses.
    let e = run(&gce(false), "gs://flint-bkt/dir/private.txt")
        .err()
        .unwrap();
    assert!(e.message.contains("401"), "{e}");
    let acq = run(&gce(false), "gs://flint-bkt/public.txt").unwrap();
    assert_eq!(object(&acq), b"public gcs object");
    // Not on GCE (nothing answers the metadata probe): anonymous.
    let nobody = MetaServer::start(|_r: &Req| reply(404, "not google"));
    let acq = run(&nobody, "gs://flint-bkt/public.txt").unwrap();
    assert_eq!(object(&acq), b"public gcs object");
    assert!(
        storage
            .seen()
            .iter()
            .filter(|r| r.path.contains("public"))
            .all(|r| r.header("authorization").is_none())
    );
}

fn jwt(exp_offset: i64) -> String {
    let b64 = |v: &serde_json::Value| {
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            v.to_string(),
        )
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    format!(
        "{}.{}.{}",
        b64(&serde_json::json!({"alg":"RS256","typ":"JWT"})),
        b64(&serde_json::json!({
            "aud": "https://storage.azure.com",
            "iss": "https://sts.windows.net/ab1f708d-50f6-404c-a006-d71b2ac7a606/",
            "iat": now - 60, "nbf": now - 60, "exp": now + exp_offset,
            "oid": "00000000-0000-0000-0000-000000000001",
            "tid": "ab1f708d-50f6-404c-a006-d71b2ac7a606",
        })),
        "c2lnbmF0dXJl"
    )
}

struct Azurite {
    _proc: Proc,
    endpoint: String,
    ca_pem: String,
}

fn start_azurite(dir: &Path) -> Azurite {
    let ca = support::test_ca();
    std::fs::write(dir.join("cert.pem"), &ca.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &ca.key_pem).unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new("azurite-blob")
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args([
            "--oauth",
            "basic",
            "--skipApiVersionCheck",
            "--silent",
            "--location",
        ])
        .arg(dir.join("azurite"))
        .arg("--cert")
        .arg(dir.join("cert.pem"))
        .arg("--key")
        .arg(dir.join("key.pem"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("azurite-blob: run scripts/install-deps.sh");
    let proc = Proc(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Azurite {
        _proc: proc,
        endpoint: format!("https://127.0.0.1:{port}"),
        ca_pem: ca.ca_pem,
    }
}

/// PUTs with a bearer token through flint's own HTTP client (trusting the test CA).
fn azure_put(ca_pem: &str, url: &str, token: &str, extra: &[(&str, &str)], body: &[u8]) -> u16 {
    let mut f = flint_provision::fetch::Fetcher::new();
    f.add_roots(ca_pem.as_bytes()).unwrap();
    f.http.total_timeout = Some(Duration::from_secs(20));
    let mut headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("x-ms-version".to_string(), "2021-08-06".to_string()),
    ];
    for (k, v) in extra {
        headers.push((k.to_string(), v.to_string()));
    }
    f.http
        .send(&flint_provision::fetch::http::Request {
            method: "PUT",
            url,
            headers: &headers,
            body: Some(body),
            retry_codes: &[],
        })
        .unwrap()
        .status
}

#[test]
fn azure_blob_with_the_managed_identity_and_the_anonymous_fallback() {
    let dir = TempDir::new("azurite");
    let az = start_azurite(&dir);
    let good = jwt(3600);
    let base = format!("{}/devstoreaccount1", az.endpoint);
    assert_eq!(
        azure_put(
            &az.ca_pem,
            &format!("{base}/private?restype=container"),
            &good,
            &[],
            b""
        ),
        201
    );
    assert_eq!(
        azure_put(
            &az.ca_pem,
            &format!("{base}/private/config.ign"),
            &good,
            &[("x-ms-blob-type", "BlockBlob")],
            b"azure private blob"
        ),
        201
    );
    assert_eq!(
        azure_put(
            &az.ca_pem,
            &format!("{base}/public?restype=container"),
            &good,
            &[("x-ms-blob-public-access", "blob")],
            b""
        ),
        201
    );
    assert_eq!(
        azure_put(
            &az.ca_pem,
            &format!("{base}/public/config.ign"),
            &good,
            &[("x-ms-blob-type", "BlockBlob")],
            b"azure public blob"
        ),
        201
    );

    let ca = format!(
        r#","security":{{"tls":{{"certificateAuthorities":[{{"source":"{}"}}]}}}}"#,
        support::data_url(az.ca_pem.as_bytes())
    );
    let run = |token: Option<String>, blob: &str| {
        let user = config_with(
            &format!("https://devstoreaccount1.blob.core.windows.net/{blob}"),
            &ca,
        );
        let imds = MetaServer::start(move |r: &Req| {
            match (r.path.as_str(), r.header("metadata")) {
                ("/metadata/instance/compute/userData?api-version=2021-01-01&format=text", Some("true")) => {
                    reply(200, base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &user))
                }
                ("/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F", Some("true")) => match &token {
                    Some(t) => reply(
                        200,
                        serde_json::json!({"access_token": t, "token_type": "Bearer", "expires_in": "3599", "resource": "https://storage.azure.com/"}).to_string(),
                    ),
                    None => reply(400, r#"{"error":"invalid_request","error_description":"Identity not found"}"#),
                },
                _ => reply(400, "bad request"),
            }
        });
        let d = TempDir::new("azure-run");
        let settings = Settings {
            endpoints: Endpoints {
                azure_blob: Some(az.endpoint.clone()),
                ..Endpoints::default()
            },
            metadata: Endpoint {
                replace: Some(imds.endpoint()),
            },
            ..Settings::default()
        };
        fetch_stage(&options(&d, Source::Platform("azure".into()), settings))
    };
    let acq = run(Some(good.clone()), "private/config.ign").unwrap();
    assert_eq!(object(&acq), b"azure private blob");
    assert!(
        acq.notes.iter().all(|n| !n.contains("falling back")),
        "{:?}",
        acq.notes
    );

    // No managed identity: the fetch falls back to anonymous, which a public container
    // serves and a private one refuses.
    let acq = run(None, "public/config.ign").unwrap();
    assert_eq!(object(&acq), b"azure public blob");
    assert!(
        acq.notes.iter().any(|n| n.contains("falling back")),
        "{:?}",
        acq.notes
    );
    let e = run(None, "private/config.ign").err().unwrap();
    assert!(e.message.contains("403 Forbidden"), "{e}");
    // An expired token: Azurite refuses it; the anonymous retry is refused too.
    let e = run(Some(jwt(-600)), "private/config.ign").err().unwrap();
    assert!(e.message.contains("private/config.ign"), "{e}");
}
