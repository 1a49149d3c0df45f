//! Config acquisition and resource fetching against real servers on 127.0.0.1: HTTP and
//! HTTPS (a CA made by the test), a forwarding proxy, TFTP (tftpd-hpa), S3 and GCS paths
//! through the endpoint override, and the faults the issue names.
use crate::common;
use crate::common::TempDir;
use crate::support;

use flint_provision::acquire::{Places, Source};
use flint_provision::fetch::Settings;
use flint_provision::fetch::cloud::Endpoints;
use flint_provision::stage::{Acquired, Options, StageError};
use flint_provision::stages::fetch::fetch_stage;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

fn options(dir: &Path, config: &str, settings: Settings) -> Options {
    let file = dir.join("config.ign");
    std::fs::write(&file, config).unwrap();
    Options {
        source: Source::File(file),
        places: Places {
            cmdline: dir.join("cmdline"),
            fw_cfg: dir.join("fw_cfg"),
            dmi: dir.join("dmi"),
            system: flint_provision::platform::system::SystemDirs::under(&dir.join("sys")),
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
        fetch_timeout: Duration::from_secs(120),
    }
}

fn run(config: &str) -> Result<Acquired, StageError> {
    let dir = TempDir::new("fetch");
    fetch_stage(&options(&dir, config, Settings::default()))
}

fn file_config(extra_ignition: &str, files: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"3.4.0"{extra_ignition}}},"storage":{{"files":[{files}]}}}}"#
    )
}

fn contents(acq: &Acquired, i: usize) -> Vec<u8> {
    let p = flint_go::tree::JsonPath::root()
        .key("storage")
        .key("files")
        .index(i)
        .key("contents");
    acq.fetched
        .get(&p)
        .expect("fetched")
        .to_vec()
        .expect("readable")
}

#[test]
fn http_contents_verified_and_decompressed() {
    let s = Server::start(None);
    let body = b"hello from http\n".to_vec();
    let gz = flint_ignition::dataurl::gzip_best(&body);
    s.route("/plain", ok(body.clone()));
    s.route("/gz", ok(gz));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}","verification":{{"hash":"{}"}}}}}},
           {{"path":"/b","contents":{{"source":"{}","compression":"gzip","verification":{{"hash":"{}"}}}}}},
           {{"path":"/c","contents":{{"source":"{}"}}}}"#,
        s.url("/plain"),
        sha512(&body),
        s.url("/gz"),
        sha512(&body),
        s.url("/plain"),
    );
    let acq = run(&file_config("", &files)).unwrap();
    assert_eq!(contents(&acq, 0), body);
    assert_eq!(
        contents(&acq, 1),
        body,
        "the hash is of the decompressed data"
    );
    assert_eq!(contents(&acq, 2), body);
    // The same resource is fetched once, however often it is referenced.
    assert_eq!(s.hits("/plain"), 1);
}

#[test]
fn https_with_the_configs_ca_and_without() {
    let ca = test_ca();
    let s = Server::start(Some(&ca));
    s.route("/secret", ok("tls works"));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/secret")
    );
    let tls = format!(
        r#","security":{{"tls":{{"certificateAuthorities":[{{"source":"{}"}}]}}}}"#,
        data_url(ca.ca_pem.as_bytes())
    );
    let acq = run(&file_config(&tls, &files)).unwrap();
    assert_eq!(contents(&acq, 0), b"tls works");

    // Refused, and tried again until the total timeout, as upstream tries.
    let t = Instant::now();
    let e = run(&file_config(r#","timeouts":{"httpTotal":2}"#, &files))
        .err()
        .expect("an unknown CA is refused");
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");
    assert!(e.message.contains("total timeout"), "{e}");
    let took = t.elapsed();
    assert!(
        took > Duration::from_millis(1400) && took < Duration::from_secs(4),
        "tried for {took:?}"
    );
}

/// A certificate that does not verify at first (a clock not yet set, a proxy starting) is
/// tried again, as other failures are: the fetch succeeds once it verifies.
#[test]
fn a_certificate_that_verifies_later_is_tried_again() {
    let (untrusted, ca) = (test_ca(), test_ca());
    let s = Server::start(Some(&untrusted));
    s.route("/late", ok("verified at last"));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/late")
    );
    let tls = format!(
        r#","timeouts":{{"httpTotal":20}},"security":{{"tls":{{"certificateAuthorities":[{{"source":"{}"}}]}}}}"#,
        data_url(ca.ca_pem.as_bytes())
    );
    let t = Instant::now();
    let switch = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(800));
            s.use_certificate(&ca);
        });
        run(&file_config(&tls, &files))
    });
    let acq = switch.expect("fetched once the certificate verifies");
    assert_eq!(contents(&acq, 0), b"verified at last");
    assert!(t.elapsed() >= Duration::from_millis(800));
    assert_eq!(
        s.hits("/late"),
        1,
        "only the verified connection got a request"
    );
}

/// When the next backoff would pass the total timeout, one last try is made before it: a
/// server that answers in the last second is not missed (the tries at 0, 0.1, 0.3, 0.7 and
/// 1.5 s fail; the next backoff would end at 3.1 s, past the 3 s timeout).
#[test]
fn a_last_try_before_the_total_timeout() {
    let s = Server::start(None);
    s.route("/soon", status(503));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/soon")
    );
    let t = Instant::now();
    let got = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(2000));
            s.route("/soon", ok("just in time"));
        });
        run(&file_config(r#","timeouts":{"httpTotal":3}"#, &files))
    });
    let acq = got.expect("the last try succeeds");
    assert_eq!(contents(&acq, 0), b"just in time");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(s.hits("/soon"), 6, "five failed tries and the last one");
}

#[test]
fn ca_bundles_are_fetched_and_verified_themselves() {
    let ca = test_ca();
    let plain = Server::start(None);
    plain.route("/ca.pem", ok(ca.ca_pem.clone()));
    let s = Server::start(Some(&ca));
    s.route("/x", ok("x"));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/x")
    );
    let good = format!(
        r#","security":{{"tls":{{"certificateAuthorities":[{{"source":"{}","verification":{{"hash":"{}"}}}}]}}}}"#,
        plain.url("/ca.pem"),
        sha512(ca.ca_pem.as_bytes())
    );
    assert!(run(&file_config(&good, &files)).is_ok());
    let bad = good.replace(&sha512(ca.ca_pem.as_bytes()), &sha512(b"other"));
    let e = run(&file_config(&bad, &files)).err().unwrap();
    assert_eq!(
        e.path.as_ref().unwrap().to_string(),
        "$.ignition.security.tls.certificateAuthorities.0"
    );
    assert!(e.message.contains("mismatch"), "{e}");
}

#[test]
fn headers_override_defaults_and_stay_behind_on_redirect() {
    let s = Server::start(None);
    s.route("/start", redirect("/final"));
    s.route("/final", ok("done"));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}","httpHeaders":[{{"name":"X-Token","value":"t0k3n"}},{{"name":"User-Agent","value":"custom-agent"}}]}}}}"#,
        s.url("/start")
    );
    let acq = run(&file_config("", &files)).unwrap();
    assert_eq!(contents(&acq, 0), b"done");
    let seen = s.seen();
    let first = seen.iter().find(|r| r.path == "/start").unwrap();
    assert_eq!(
        first.headers.get("x-token").map(String::as_str),
        Some("t0k3n")
    );
    assert_eq!(
        first.headers.get("user-agent").map(String::as_str),
        Some("custom-agent")
    );
    assert_eq!(
        first.headers.get("accept").map(String::as_str),
        Some("application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1")
    );
    let second = seen.iter().find(|r| r.path == "/final").unwrap();
    assert!(
        !second.headers.contains_key("x-token"),
        "custom headers are not resent"
    );
    assert!(second.headers["user-agent"].starts_with("Ignition/"));
}

#[test]
fn not_found_fails_at_once_naming_entry_and_url() {
    let s = Server::start(None);
    let files = format!(
        r#"{{"path":"/ok","contents":{{"source":"data:,x"}}}},{{"path":"/gone","contents":{{"source":"{}"}}}}"#,
        s.url("/missing?token=secret")
    );
    let e = run(&file_config("", &files)).err().unwrap();
    assert_eq!(
        e.path.as_ref().unwrap().to_string(),
        "$.storage.files.1.contents"
    );
    assert!(e.message.contains("resource not found (404)"), "{e}");
    assert!(
        e.message.contains("token=***") && !e.message.contains("secret"),
        "{e}"
    );
    assert_eq!(s.hits("/missing"), 1, "a 404 is not retried");
}

#[test]
fn server_errors_are_retried_with_backoff() {
    let s = Server::start(None);
    s.route("/flaky", Reply::FailFirst(2, b"finally".to_vec()));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/flaky")
    );
    let t = Instant::now();
    let acq = run(&file_config("", &files)).unwrap();
    assert_eq!(contents(&acq, 0), b"finally");
    assert_eq!(s.hits("/flaky"), 3);
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "waits 100 ms, then 200 ms"
    );
}

#[test]
fn a_stalled_server_times_out_within_the_total() {
    let s = Server::start(None);
    s.route(
        "/stall",
        Reply::Stall(Duration::from_secs(8), b"late".to_vec()),
    );
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/stall")
    );
    let timeouts = r#","timeouts":{"httpResponseHeaders":1,"httpTotal":3}"#;
    let t = Instant::now();
    let e = run(&file_config(timeouts, &files)).err().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(6),
        "took {:?}",
        t.elapsed()
    );
    assert!(
        e.message.contains("total timeout") || e.message.contains("timeout"),
        "{e}"
    );
}

/// What goes on the wire is what Go's client sends for the same URL (checked against
/// Flatcar's Ignition): a path with characters it must not carry escaped whole, user
/// information decoded into Basic credentials (unless the config sends Authorization), no
/// fragment; only 200 and 204 answer a fetch; redirects resolved with dot segments removed,
/// and followed past 10.
#[test]
fn urls_statuses_and_redirects_as_upstreams_client_has_them() {
    let s = Server::start(None);
    s.route("/e/%5Bx%5D%7By%7D", ok("escaped"));
    s.route("/k/[x]", ok("kept"));
    s.route("/created", status(201));
    s.route("/partial", status(206));
    s.route("/empty", Reply::Fixed(204, vec![], vec![]));
    let moved =
        |code: u16, to: &str| Reply::Fixed(code, vec![("Location".into(), to.into())], vec![]);
    s.route("/choices", moved(300, "/k/[x]"));
    s.route("/use-proxy", moved(305, "/k/[x]"));
    for i in 1..=15 {
        s.route(
            &format!("/hop/{i}/n"),
            moved(307, &format!("../{}/./n", i - 1)),
        );
    }
    s.route("/hop/0/n", ok("end"));
    let base = s.url("");
    let with_user = base.replacen("http://", "http://u%3Ap:p%40ss@", 1);
    let entry = |src: String, extra: &str| {
        let n = src.len();
        format!(r#"{{"path":"/x{n}","contents":{{"source":"{src}"{extra}}}}}"#)
    };
    let files = [
        entry(format!("{with_user}/e/[x]{{y}}?q=[1]#frag"), ""),
        entry(
            format!("{with_user}/k/[x]"),
            r#","httpHeaders":[{"name":"authorization","value":"Bearer t"}]"#,
        ),
        entry(s.url("/empty"), ""),
        entry(s.url("/hop/15/n"), ""),
    ];
    let acq = run(&file_config("", &files.join(","))).unwrap();
    let got: Vec<Vec<u8>> = (0..4).map(|i| contents(&acq, i)).collect();
    assert_eq!(got, [&b"escaped"[..], b"kept", b"", b"end"]);
    let seen = s.seen();
    let first = seen.iter().find(|r| r.path.starts_with("/e/")).unwrap();
    assert_eq!(first.path, "/e/%5Bx%5D%7By%7D?q=[1]");
    // base64 of "u:p:p@ss": the user is "u:p", the password "p@ss".
    assert_eq!(first.headers["authorization"], "Basic dTpwOnBAc3M=");
    let kept = seen.iter().find(|r| r.path == "/k/[x]").unwrap();
    assert_eq!(kept.headers["authorization"], "Bearer t");
    assert_eq!(s.hits("/hop/0/n"), 1);
    for path in ["/created", "/partial", "/choices", "/use-proxy"] {
        let e = run(&file_config("", &entry(s.url(path), "")))
            .err()
            .unwrap();
        assert!(e.message.contains(path), "{path}: {e}");
    }
    assert_eq!(s.hits("/k/[x]"), 1, "300 and 305 are not followed");
}

#[test]
fn redirect_loops_hash_mismatches_corrupt_gzip_and_oversize_fail() {
    let s = Server::start(None);
    s.route("/a", redirect("/b"));
    s.route("/b", redirect("/a"));
    s.route("/data", ok("data"));
    let cases = [
        (
            format!(
                r#"{{"path":"/x","contents":{{"source":"{}"}}}}"#,
                s.url("/a")
            ),
            "redirect loop",
        ),
        (
            format!(
                r#"{{"path":"/x","contents":{{"source":"{}","verification":{{"hash":"{}"}}}}}}"#,
                s.url("/data"),
                sha512(b"other")
            ),
            "sha512 mismatch",
        ),
        (
            format!(
                r#"{{"path":"/x","contents":{{"source":"{}","compression":"gzip"}}}}"#,
                s.url("/data")
            ),
            "corrupt gzip",
        ),
    ];
    for (files, want) in cases {
        let e = run(&file_config("", &files)).err().unwrap();
        assert!(e.message.contains(want), "{want}: {e}");
    }
    // A payload over the limit, and a small gzip that inflates past it.
    s.route("/big", ok(vec![b'x'; 300_000]));
    let bomb = flint_ignition::dataurl::gzip_best(&vec![0u8; 5_000_000]);
    let bomb_url = format!(
        "data:;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bomb)
    );
    let limited = Settings {
        limit: 100_000,
        ..Settings::default()
    };
    for (src, comp) in [(s.url("/big"), ""), (bomb_url, r#","compression":"gzip""#)] {
        let dir = TempDir::new("limit");
        let files = format!(r#"{{"path":"/x","contents":{{"source":"{src}"{comp}}}}}"#);
        let e = fetch_stage(&options(&dir, &file_config("", &files), limited.clone()))
            .err()
            .unwrap();
        assert!(e.message.contains("100000-byte limit"), "{e}");
    }
}

#[test]
fn tftp_files_come_from_a_real_tftp_server() {
    let dir = TempDir::new("tftp");
    let content: Vec<u8> = (0..3000u32).flat_map(|i| i.to_le_bytes()).collect();
    std::fs::write(dir.join("blob.bin"), &content).unwrap();
    std::fs::write(dir.join("exact.bin"), vec![7u8; 1024]).unwrap();
    let t = Tftp::start(&dir);
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"tftp://127.0.0.1:{p}/blob.bin","verification":{{"hash":"{h}"}}}}}},
           {{"path":"/b","contents":{{"source":"tftp://127.0.0.1:{p}/exact.bin"}}}}"#,
        p = t.port,
        h = sha512(&content)
    );
    let acq = run(&file_config("", &files)).unwrap();
    assert_eq!(contents(&acq, 0), content);
    assert_eq!(
        contents(&acq, 1),
        vec![7u8; 1024],
        "a multiple of 512 ends with an empty block"
    );
    let missing = format!(
        r#"{{"path":"/a","contents":{{"source":"tftp://127.0.0.1:{}/nope"}}}}"#,
        t.port
    );
    let e = run(&file_config("", &missing)).err().unwrap();
    assert!(e.message.contains("tftp error"), "{e}");
}

#[test]
fn s3_arn_and_gs_objects_through_the_endpoint_override() {
    let s = Server::start(None);
    s.route("/bucket/dir/key", ok("s3 object"));
    s.route("/ap-123456789012/some/key", ok("access point object"));
    s.route("/storage/v1/b/gbucket/o/obj", ok("gs object"));
    s.route("/private/key", status(403));
    let settings = Settings {
        endpoints: Endpoints {
            s3: Some(s.url("")),
            gs: Some(s.url("")),
            azure_blob: None,
        },
        // No GCE metadata server here: GCS is fetched anonymously.
        metadata: flint_provision::fetch::metadata::Endpoint {
            replace: Some(format!("http://127.0.0.1:{}", closed_port())),
        },
        limit: 1 << 20,
        ..Settings::default()
    };
    let files = r#"{"path":"/a","contents":{"source":"s3://bucket/dir/key?versionId=v1"}},
        {"path":"/b","contents":{"source":"arn:aws:s3:us-east-1:123456789012:accesspoint/ap/object/some/key"}},
        {"path":"/c","contents":{"source":"gs://gbucket/obj"}}"#;
    let dir = TempDir::new("s3");
    let acq = fetch_stage(&options(&dir, &file_config("", files), settings.clone())).unwrap();
    assert_eq!(contents(&acq, 0), b"s3 object");
    assert_eq!(contents(&acq, 1), b"access point object");
    assert_eq!(contents(&acq, 2), b"gs object");
    assert!(
        s.seen()
            .iter()
            .any(|r| r.path == "/bucket/dir/key?versionId=v1")
    );

    let private = r#"{"path":"/a","contents":{"source":"s3://private/key"}}"#;
    let e = fetch_stage(&options(&dir, &file_config("", private), settings))
        .err()
        .unwrap();
    assert!(
        e.message.contains("anonymously") && e.message.contains("credentials"),
        "{e}"
    );
}

/// A server whose certificate is self-signed with `CA:TRUE` (what `openssl req -x509` makes),
/// that certificate given in `certificateAuthorities`: Go accepts it as the server's own, and
/// so does flint. Without it, the fetch fails (tried again until the total timeout).
#[test]
fn a_self_signed_ca_certificate_as_the_servers_own() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let own = TestCa {
        ca_pem: cert.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    };
    let s = Server::start(Some(&own));
    s.route("/f", ok("over tls"));
    let files = format!(
        r#"{{"path":"/a","contents":{{"source":"{}"}}}}"#,
        s.url("/f")
    );
    let tls = format!(
        r#","security":{{"tls":{{"certificateAuthorities":[{{"source":"{}"}}]}}}}"#,
        data_url(own.ca_pem.as_bytes())
    );
    let acq = run(&file_config(&tls, &files)).unwrap();
    assert_eq!(contents(&acq, 0), b"over tls");
    let timeout = r#","timeouts":{"httpTotal":1}"#;
    let Err(e) = run(&file_config(timeout, &files)) else {
        panic!("an untrusted certificate was accepted")
    };
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");
    // Another name than the certificate's is still refused.
    let other = files.replace("127.0.0.1", "localhost");
    let tls = tls.replacen(r#","security""#, &format!(r#"{timeout},"security""#), 1);
    let Err(e) = run(&file_config(&tls, &other)) else {
        panic!("another name than the certificate's was accepted")
    };
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn proxies_and_no_proxy() {
    let s = Server::start(None);
    s.route("/via-proxy", ok("proxied"));
    let p = Proxy::start(s.port);
    let files = r#"{"path":"/a","contents":{"source":"http://files.flint.test/via-proxy"}}"#;
    let proxy = format!(r#","proxy":{{"httpProxy":"http://127.0.0.1:{}"}}"#, p.port);
    let acq = run(&file_config(&proxy, files)).unwrap();
    assert_eq!(contents(&acq, 0), b"proxied");
    assert!(
        p.asked
            .lock()
            .unwrap()
            .iter()
            .any(|h| h.starts_with("files.flint.test"))
    );
    // Plain HTTP goes to the proxy as an absolute-form request (as Go sends it), not through
    // a CONNECT tunnel that many proxies refuse for port 80; the name (which does not resolve
    // here) is left to the proxy.
    assert_eq!(p.methods.lock().unwrap().as_slice(), ["GET"]);

    // Excluded by noProxy, the host is resolved directly, and does not exist.
    let excluded = format!(
        r#","proxy":{{"httpProxy":"http://127.0.0.1:{}","noProxy":[".flint.test"]}},"timeouts":{{"httpTotal":1}}"#,
        p.port
    );
    let before = p.asked.lock().unwrap().len();
    assert!(run(&file_config(&excluded, files)).is_err());
    assert_eq!(
        p.asked.lock().unwrap().len(),
        before,
        "noProxy hosts bypass the proxy"
    );
}

#[test]
fn merge_chains_upgrade_versions_and_replace_discards() {
    let s = Server::start(None);
    // 3.4 parent merges a 3.0 child, which merges a 3.2 grandchild.
    s.route(
        "/grandchild.ign",
        ok(r#"{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/g","mode":384}]}}"#),
    );
    s.route(
        "/child.ign",
        ok(format!(
            r#"{{"ignition":{{"version":"3.0.0","config":{{"merge":[{{"source":"{}"}}]}}}},"storage":{{"files":[{{"path":"/c"}},{{"path":"/g","mode":420}}]}}}}"#,
            s.url("/grandchild.ign")
        )),
    );
    s.route(
        "/replacement.ign",
        ok(r#"{"ignition":{"version":"3.3.0"},"passwd":{"users":[{"name":"replaced"}]}}"#),
    );
    let merge = format!(
        r#","config":{{"merge":[{{"source":"{}"}}]}}"#,
        s.url("/child.ign")
    );
    let acq = run(&file_config(&merge, r#"{"path":"/p"}"#)).unwrap();
    let files: Vec<(&str, Option<i64>)> = acq
        .config
        .storage
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.mode))
        .collect();
    assert_eq!(
        files,
        [("/p", None), ("/c", None), ("/g", Some(384))],
        "grandchild wins"
    );

    let replace = format!(
        r#","config":{{"replace":{{"source":"{}"}}}}"#,
        s.url("/replacement.ign")
    );
    let acq = run(&file_config(&replace, r#"{"path":"/p"}"#)).unwrap();
    assert!(
        acq.config.storage.files.is_empty(),
        "replace discards the rest"
    );
    assert_eq!(acq.config.passwd.users[0].name, "replaced");
}

#[test]
fn a_config_merging_itself_is_a_cycle() {
    let s = Server::start(None);
    s.route(
        "/a.ign",
        ok(format!(
            r#"{{"ignition":{{"version":"3.4.0","config":{{"merge":[{{"source":"{}"}}]}}}}}}"#,
            s.url("/b.ign")
        )),
    );
    s.route(
        "/b.ign",
        ok(format!(
            r#"{{"ignition":{{"version":"3.4.0","config":{{"merge":[{{"source":"{}"}}]}}}}}}"#,
            s.url("/a.ign")
        )),
    );
    let merge = format!(
        r#","config":{{"merge":[{{"source":"{}"}}]}}"#,
        s.url("/a.ign")
    );
    let e = run(&file_config(&merge, r#"{"path":"/p"}"#)).err().unwrap();
    assert!(e.message.contains("cycle"), "{e}");
    assert!(s.hits("/a.ign") <= 2);
}

#[test]
fn config_sources_cmdline_fw_cfg_and_none() {
    let s = Server::start(None);
    s.route(
        "/user.ign",
        ok(r#"{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"from-url"}]}}"#),
    );
    let dir = TempDir::new("sources");
    let mut opts = options(&dir, "{}", Settings::default());
    opts.source = Source::Auto;
    // No config anywhere on metal: a successful run of nothing.
    let acq = fetch_stage(&opts).unwrap();
    assert!(!acq.user_provided);
    assert!(acq.config.storage.files.is_empty());

    // fw_cfg is read on the qemu platform (named, or QEMU in DMI as Flatcar detects it).
    std::fs::create_dir_all(dir.join("dmi")).unwrap();
    std::fs::write(dir.join("dmi/sys_vendor"), "QEMU\n").unwrap();

    let fw = dir.join("fw_cfg/opt/org.flatcar-linux/config");
    std::fs::create_dir_all(&fw).unwrap();
    std::fs::write(
        fw.join("raw"),
        "variant: flatcar\nversion: 1.0.0\npasswd:\n  users:\n    - name: from-fw-cfg\n",
    )
    .unwrap();
    assert_eq!(
        fetch_stage(&opts).unwrap().config.passwd.users[0].name,
        "from-fw-cfg"
    );

    std::fs::write(
        dir.join("cmdline"),
        format!("quiet ignition.config.url={}\n", s.url("/user.ign")),
    )
    .unwrap();
    assert_eq!(
        fetch_stage(&opts).unwrap().config.passwd.users[0].name,
        "from-url"
    );
}

#[test]
fn base_configs_go_underneath_and_the_cache_pins_the_config() {
    let dir = TempDir::new("base");
    let base = dir.join("base.d");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(
        base.join("10-base.ign"),
        r#"{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/base","mode":420},{"path":"/shared","mode":420}]}}"#,
    )
    .unwrap();
    let mut opts = options(
        &dir,
        r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/shared","mode":384}]}}"#,
        Settings::default(),
    );
    opts.base_dir = Some(base);
    opts.cache = Some(dir.join("ignition.json"));
    let acq = fetch_stage(&opts).unwrap();
    let files: Vec<(&str, Option<i64>)> = acq
        .config
        .storage
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.mode))
        .collect();
    assert_eq!(
        files,
        [("/base", Some(420)), ("/shared", Some(384))],
        "the user config wins"
    );

    // A later stage run reads the cache, not the (changed) source.
    std::fs::write(
        dir.join("config.ign"),
        r#"{"ignition":{"version":"3.4.0"}}"#,
    )
    .unwrap();
    let again = fetch_stage(&opts).unwrap();
    assert_eq!(again.config, acq.config);
}

#[test]
fn plan_after_a_failed_fetch_shows_the_failure_and_touches_nothing() {
    let s = Server::start(None);
    let dir = TempDir::new("plan");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/hostname"), "old\n").unwrap();
    let config = file_config(
        "",
        &format!(
            r#"{{"path":"/etc/hostname","overwrite":true,"contents":{{"source":"data:,new"}}}},{{"path":"/etc/x","contents":{{"source":"{}"}}}}"#,
            s.url("/missing")
        ),
    );
    std::fs::write(dir.join("c.ign"), config).unwrap();
    for (cmd, format) in [("plan", "human"), ("apply", "human"), ("plan", "json")] {
        let out = common::run_in(
            &dir,
            &common::flint(),
            &[cmd, "--root", "root", "--format", format, "c.ign"],
        );
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(v["stage"], "fetch");
            assert_eq!(v["path"], "$.storage.files.1.contents");
        } else {
            assert!(stdout.is_empty(), "no actions: {stdout}");
            assert!(
                stderr.contains("fetch stage failed at $.storage.files.1.contents"),
                "{stderr}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(root.join("etc/hostname")).unwrap(),
        "old\n"
    );
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
}
