//! Platforms against servers on 127.0.0.1 that speak each metadata service's protocol
//! (paths, required headers, token flows, 404/410/429/5xx), reached through the
//! FLINT_METADATA_ENDPOINT hook; the kernel command line, the system config directories
//! and their precedence; user data meant for cloud-init; Equinix Metal's phone-home; the
//! CloudSigma serial protocol on a pseudo-terminal.
use crate::common;
use crate::support;

use flint_provision::acquire::Source;
use flint_provision::fetch::Settings;
use flint_provision::fetch::metadata::Endpoint;
use flint_provision::platform::Places;
use flint_provision::platform::system::SystemDirs;
use flint_provision::stage::{Acquired, Options, StageError};
use flint_provision::stages::fetch::fetch_stage;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::metadata::{MetaServer, Req, Resp, reply};

use crate::common::TempDir;

/// A config that writes /etc/marker with `text`.
fn config(text: &str) -> String {
    format!(
        r#"{{"ignition":{{"version":"3.4.0"}},"storage":{{"files":[{{"path":"/etc/marker","contents":{{"source":"data:,{text}"}}}}]}}}}"#
    )
}

fn b64(data: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, data)
}

fn options(dir: &Path, platform: &str, endpoint: Option<String>) -> Options {
    std::fs::create_dir_all(dir).unwrap();
    if !dir.join("cmdline").exists() {
        std::fs::write(dir.join("cmdline"), "quiet\n").unwrap();
    }
    Options {
        source: Source::Platform(platform.into()),
        places: Places {
            cmdline: dir.join("cmdline"),
            fw_cfg: dir.join("fw_cfg"),
            dmi: dir.join("dmi"),
            system: SystemDirs::under(&dir.join("sys")),
            leases: dir.join("leases"),
            net: dir.join("net"),
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
        fetch: Settings {
            metadata: Endpoint { replace: endpoint },
            ..Settings::default()
        },
        fetch_timeout: Duration::from_secs(5),
    }
}

fn run(platform: &str, server: &MetaServer) -> Result<Acquired, StageError> {
    let dir = TempDir::new(&format!("platform-{platform}"));
    fetch_stage(&options(&dir, platform, Some(server.endpoint())))
}

/// The marker file's contents in the final config, if any.
fn marker(acq: &Acquired) -> Option<String> {
    let f = acq
        .config
        .storage
        .files
        .iter()
        .find(|f| f.path == "/etc/marker")?;
    let src = f.contents.source.as_deref()?;
    Some(src.trim_start_matches("data:,").to_string())
}

/// A user-data service at `path`: `body` with 200, or 404 when `None`.
fn simple(path: &'static str, body: Option<String>) -> MetaServer {
    MetaServer::start(
        move |r: &Req| match (&body, r.method.as_str(), r.path.as_str()) {
            (Some(b), "GET", p) if p == path => reply(200, b.clone()),
            _ => reply(404, "not found"),
        },
    )
}

/// Providers where 404 is "no config": the config is read, and 404 gives a successful run
/// without one.
#[test]
fn user_data_services_where_404_is_no_config() {
    for (platform, path) in [
        ("aliyun", "/latest/user-data"),
        ("exoscale", "/1.0/user-data"),
        ("hetzner", "/hetzner/v1/userdata"),
        ("upcloud", "/metadata/v1/user_data"),
        ("vultr", "/user-data/user-data"),
    ] {
        let s = simple(path, Some(config(platform)));
        let acq = run(platform, &s).unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert_eq!(marker(&acq).as_deref(), Some(platform), "{platform}");
        assert!(acq.user_provided);
        assert_eq!(s.hits(path), 1, "{platform}");
        // Ignition's headers go to metadata services too.
        let r = &s.seen()[0];
        assert!(
            r.header("accept")
                .unwrap()
                .contains("vnd.coreos.ignition+json")
        );
        assert!(r.header("user-agent").unwrap().starts_with("Ignition/"));

        let none = simple(path, None);
        let acq = run(platform, &none).unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert!(!acq.user_provided, "{platform}");
        assert_eq!(marker(&acq), None);
    }
}

#[test]
fn digitalocean_and_packet_treat_404_as_an_error() {
    let s = simple("/metadata/v1/user-data", Some(config("do")));
    assert_eq!(
        marker(&run("digitalocean", &s).unwrap()).as_deref(),
        Some("do")
    );
    let e = run("digitalocean", &simple("/metadata/v1/user-data", None))
        .err()
        .unwrap();
    assert!(e.message.contains("404"), "{e}");

    let s = MetaServer::start(|r: &Req| {
        if r.path == "/userdata" && r.header("accept") == Some("*/*") {
            reply(200, config("packet"))
        } else {
            reply(404, "")
        }
    });
    assert_eq!(
        marker(&run("packet", &s).unwrap()).as_deref(),
        Some("packet")
    );
    assert_eq!(
        marker(&run("equinix", &s).unwrap()).as_deref(),
        Some("packet")
    );
    assert!(run("packet", &simple("/userdata", None)).is_err());
}

#[test]
fn retries_server_errors_and_gives_up_at_the_fetch_timeout() {
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = n.clone();
    let s = MetaServer::start(move |_r: &Req| {
        if c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 {
            reply(503, "busy")
        } else {
            reply(200, config("after-503"))
        }
    });
    assert_eq!(
        marker(&run("vultr", &s).unwrap()).as_deref(),
        Some("after-503")
    );
    assert_eq!(s.hits("/user-data/user-data"), 3);

    let down = MetaServer::start(|_r: &Req| reply(500, "down"));
    let dir = TempDir::new("platform-timeout");
    let mut o = options(&dir, "hetzner", Some(down.endpoint()));
    o.fetch_timeout = Duration::from_secs(2);
    let t = Instant::now();
    let e = fetch_stage(&o).err().unwrap();
    assert!(e.message.contains("total timeout"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(6));
}

#[test]
fn aws_imdsv2_token_flow_and_fallback_to_imdsv1() {
    let token = "AQAEAFakeToken==";
    let s = MetaServer::start(move |r: &Req| match (r.method.as_str(), r.path.as_str()) {
        ("PUT", "/latest/api/token") => {
            if r.header("x-aws-ec2-metadata-token-ttl-seconds") == Some("21600") {
                reply(200, token)
            } else {
                reply(400, "missing TTL")
            }
        }
        ("GET", "/2019-10-01/user-data") => {
            if r.header("x-aws-ec2-metadata-token") == Some(token) {
                reply(200, config("aws"))
            } else {
                reply(401, "")
            }
        }
        _ => reply(404, ""),
    });
    let acq = run("aws", &s).unwrap();
    assert_eq!(marker(&acq).as_deref(), Some("aws"));

    // IMDSv1 only: the token PUT is 404 and the user data is read without a token.
    let v1 = MetaServer::start(|r: &Req| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/2019-10-01/user-data") if r.header("x-aws-ec2-metadata-token").is_none() => {
            reply(200, config("imdsv1"))
        }
        _ => reply(404, ""),
    });
    let acq = run("aws", &v1).unwrap();
    assert_eq!(marker(&acq).as_deref(), Some("imdsv1"));
    assert!(
        acq.notes.iter().any(|n| n.contains("IMDSv1")),
        "{:?}",
        acq.notes
    );

    // No user data: no config. A token refused otherwise: an error.
    let empty = MetaServer::start(|r: &Req| match r.method.as_str() {
        "PUT" => reply(200, "t"),
        _ => reply(404, ""),
    });
    assert!(!run("aws", &empty).unwrap().user_provided);
    let refused = MetaServer::start(|_r: &Req| reply(403, "forbidden"));
    let e = run("aws", &refused).err().unwrap();
    assert!(e.message.contains("IMDSv2 session token"), "{e}");
}

#[test]
fn akamai_token_then_base64_gzip_user_data() {
    let body = b64(&flint_ignition::dataurl::gzip_best(
        config("akamai").as_bytes(),
    ));
    let s = MetaServer::start(move |r: &Req| match (r.method.as_str(), r.path.as_str()) {
        ("PUT", "/v1/token")
            if r.header("metadata-token-expiry-seconds") == Some("300")
                && r.header("accept") == Some("text/plain") =>
        {
            reply(200, " tok-123\n")
        }
        ("GET", "/v1/user-data") if r.header("metadata-token") == Some("tok-123") => {
            reply(200, body.clone())
        }
        ("GET", "/v1/user-data") => reply(401, ""),
        _ => reply(404, ""),
    });
    assert_eq!(
        marker(&run("akamai", &s).unwrap()).as_deref(),
        Some("akamai")
    );
}

#[test]
fn gcp_needs_the_metadata_flavor_header() {
    let s = MetaServer::start(
        |r: &Req| match (r.path.as_str(), r.header("metadata-flavor")) {
            ("/computeMetadata/v1/instance/attributes/user-data", Some("Google")) => {
                reply(200, config("gcp"))
            }
            (_, None) => reply(403, "missing Metadata-Flavor"),
            _ => reply(404, ""),
        },
    );
    assert_eq!(marker(&run("gcp", &s).unwrap()).as_deref(), Some("gcp"));
}

#[test]
fn azure_imds_with_retried_statuses() {
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = n.clone();
    let body = b64(config("azure").as_bytes());
    let s = MetaServer::start(move |r: &Req| {
        if r.path != "/metadata/instance/compute/userData?api-version=2021-01-01&format=text"
            || r.header("metadata") != Some("true")
        {
            return reply(400, "bad request");
        }
        match c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => reply(410, "gone"),
            1 => reply(429, "slow down"),
            2 => reply(404, "not yet"),
            _ => reply(200, body.clone()),
        }
    });
    assert_eq!(marker(&run("azure", &s).unwrap()).as_deref(), Some("azure"));
    assert_eq!(n.load(std::sync::atomic::Ordering::SeqCst), 4);

    // Empty IMDS user data: the custom data on the provisioning CD-ROM is looked for, and
    // there is none here.
    let empty = MetaServer::start(|_r: &Req| reply(200, ""));
    let dir = TempDir::new("platform-azure-empty");
    let mut o = options(&dir, "azure", Some(empty.endpoint()));
    o.fetch_timeout = Duration::from_secs(1);
    let e = fetch_stage(&o).err().unwrap();
    assert!(e.message.contains("CD-ROM"), "{e}");
}

#[test]
fn oraclecloud_bearer_and_429() {
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = n.clone();
    let body = b64(config("oci").as_bytes());
    let s = MetaServer::start(move |r: &Req| {
        if r.header("authorization") != Some("Bearer Oracle") {
            return reply(401, "");
        }
        if r.path != "/opc/v2/instance/metadata/user_data" {
            return reply(404, "");
        }
        if c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            reply(429, "")
        } else {
            reply(200, body.clone())
        }
    });
    assert_eq!(
        marker(&run("oraclecloud", &s).unwrap()).as_deref(),
        Some("oci")
    );
    assert!(
        !run("oraclecloud", &simple("/x", None))
            .unwrap()
            .user_provided
    );
}

#[test]
fn scaleway_asks_from_a_privileged_port() {
    let s = MetaServer::start(|r: &Req| {
        if r.path != "/user_data/cloud-init" {
            reply(404, "")
        } else if r.peer_port >= 1024 {
            reply(403, "unprivileged port")
        } else {
            reply(200, config("scaleway"))
        }
    });
    let acq = run("scaleway", &s).unwrap();
    assert_eq!(marker(&acq).as_deref(), Some("scaleway"));
    assert!(s.seen()[0].peer_port < 1024);
}

#[test]
fn openstack_metadata_service_and_cloudstack_dhcp_server() {
    let s = simple("/openstack/latest/user_data", Some(config("openstack")));
    for name in ["openstack", "brightbox", "stackit"] {
        assert_eq!(
            marker(&run(name, &s).unwrap()).as_deref(),
            Some("openstack")
        );
    }
    // 404: no config at once, without waiting for a config drive.
    let t = Instant::now();
    assert!(!run("openstack", &simple("/x", None)).unwrap().user_provided);
    assert!(t.elapsed() < Duration::from_secs(3));

    let cs = simple("/latest/user-data", Some(config("cloudstack")));
    let dir = TempDir::new("platform-cloudstack");
    let o = options(&dir, "cloudstack", Some(cs.endpoint()));
    std::fs::create_dir_all(dir.join("leases")).unwrap();
    std::fs::write(
        dir.join("leases/2"),
        "# This is private data. Do not parse.\nADDRESS=10.1.1.20\nSERVER_ADDRESS=10.1.1.1\n",
    )
    .unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("cloudstack")
    );
}

#[test]
fn config_drive_platforms_without_a_drive() {
    // No drive within the wait: proxmoxve and ibmcloud go on without a config (upstream's
    // 30 s), kubevirt after the fetch timeout, nutanix fails.
    for (name, ok) in [
        ("proxmoxve", true),
        ("ibmcloud", true),
        ("kubevirt", true),
        ("nutanix", false),
    ] {
        let dir = TempDir::new(&format!("platform-nodrive-{name}"));
        let mut o = options(&dir, name, None);
        o.fetch_timeout = Duration::from_secs(1);
        let r = fetch_stage(&o);
        assert_eq!(r.is_ok(), ok, "{name}: {:?}", r.err());
        if let Ok(acq) = r {
            assert!(!acq.user_provided);
        }
    }
}

#[test]
fn qemu_fw_cfg_and_metal() {
    let dir = TempDir::new("platform-qemu");
    let o = options(&dir, "qemu", None);
    assert!(!fetch_stage(&o).unwrap().user_provided);
    let e = dir.join("fw_cfg/opt/com.coreos/config");
    std::fs::create_dir_all(&e).unwrap();
    std::fs::write(e.join("raw"), config("coreos-fwcfg")).unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("coreos-fwcfg")
    );
    // Flatcar's name comes first.
    let f = dir.join("fw_cfg/opt/org.flatcar-linux/config");
    std::fs::create_dir_all(&f).unwrap();
    std::fs::write(f.join("raw"), config("flatcar-fwcfg")).unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("flatcar-fwcfg")
    );

    let m = options(&TempDir::new("platform-metal"), "metal", None);
    let acq = fetch_stage(&m).unwrap();
    assert!(!acq.user_provided && acq.config.storage.files.is_empty());
}

#[test]
fn the_kernel_command_line_names_the_platform() {
    let s = simple("/hetzner/v1/userdata", Some(config("hetzner")));
    let dir = TempDir::new("platform-cmdline");
    let mut o = options(&dir, "metal", Some(s.endpoint()));
    o.source = Source::Auto;
    std::fs::write(
        dir.join("cmdline"),
        "root=LABEL=ROOT flatcar.oem.id=hetzner\n",
    )
    .unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("hetzner")
    );
    std::fs::write(
        dir.join("cmdline"),
        "ignition.platform.id=metal flatcar.oem.id=hetzner\n",
    )
    .unwrap();
    assert!(!fetch_stage(&o).unwrap().user_provided);
    std::fs::write(dir.join("cmdline"), "flatcar.oem.id=nonesuch\n").unwrap();
    let e = fetch_stage(&o).err().unwrap();
    assert!(e.message.contains("unknown platform \"nonesuch\""), "{e}");
}

#[test]
fn cmdline_url_preempts_user_ign_which_preempts_the_platform() {
    let platform = simple("/hetzner/v1/userdata", Some(config("platform")));
    let url = simple("/url.ign", Some(config("cmdline-url")));
    let dir = TempDir::new("platform-precedence");
    let o = options(&dir, "hetzner", Some(platform.endpoint()));
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("platform")
    );

    let sys = SystemDirs::under(&dir.join("sys"));
    std::fs::create_dir_all(&sys.vendor).unwrap();
    std::fs::write(sys.vendor.join("user.ign"), config("vendor-user-ign")).unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("vendor-user-ign")
    );
    // /run/ignition and /etc/ignition (upstream after v2.26) come first.
    std::fs::create_dir_all(&sys.local).unwrap();
    std::fs::write(sys.local.join("user.ign"), config("local-user-ign")).unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("local-user-ign")
    );
    std::fs::create_dir_all(&sys.runtime).unwrap();
    std::fs::write(sys.runtime.join("user.ign"), config("runtime-user-ign")).unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("runtime-user-ign")
    );

    // An empty user.ign is "no config", and the platform is not asked (as the reference).
    let before = platform.hits("/hetzner/v1/userdata");
    std::fs::write(sys.runtime.join("user.ign"), "").unwrap();
    let acq = fetch_stage(&o).unwrap();
    assert!(!acq.user_provided);
    assert_eq!(platform.hits("/hetzner/v1/userdata"), before);

    std::fs::write(
        dir.join("cmdline"),
        format!("ignition.config.url={}/url.ign\n", url.endpoint()),
    )
    .unwrap();
    assert_eq!(
        marker(&fetch_stage(&o).unwrap()).as_deref(),
        Some("cmdline-url")
    );

    // Device without path (and the other way round) is an error.
    std::fs::write(dir.join("cmdline"), "ignition.config.device=CFG\n").unwrap();
    let e = fetch_stage(&o).err().unwrap();
    assert!(e.message.contains("must be provided together"), "{e}");
    std::fs::write(
        dir.join("cmdline"),
        "ignition.config.device=NO-SUCH-LABEL ignition.config.path=/config.ign\n",
    )
    .unwrap();
    let e = fetch_stage(&o).err().unwrap();
    assert!(e.message.contains("did not appear"), "{e}");
    std::fs::write(
        dir.join("cmdline"),
        "ignition.config.device=../x ignition.config.path=/config.ign\n",
    )
    .unwrap();
    assert!(
        fetch_stage(&o)
            .err()
            .unwrap()
            .message
            .contains("invalid device label")
    );
}

#[test]
fn base_d_and_base_platform_d_go_underneath_in_order() {
    let s = simple(
        "/hetzner/v1/userdata",
        Some(r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/user","contents":{"source":"data:,u"}}]}}"#.into()),
    );
    let dir = TempDir::new("platform-base");
    let o = options(&dir, "hetzner", Some(s.endpoint()));
    let sys = SystemDirs::under(&dir.join("sys"));
    let file = |text: &str| {
        format!(
            r#"{{"ignition":{{"version":"3.0.0"}},"storage":{{"files":[{{"path":"/etc/marker","contents":{{"source":"data:,{text}"}}}},{{"path":"/etc/{text}","contents":{{"source":"data:,x"}}}}]}}}}"#
        )
    };
    for (d, name, text) in [
        (&sys.vendor, "base.d/10-a.ign", "vendor-a"),
        (&sys.vendor, "base.d/20-b.ign", "vendor-b"),
        (&sys.local, "base.d/20-b.ign", "local-b"),
        (&sys.vendor, "base.platform.d/hetzner/10-p.ign", "platform"),
        (
            &sys.vendor,
            "base.platform.d/aws/10-p.ign",
            "other-platform",
        ),
    ] {
        let p = d.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, file(text)).unwrap();
    }
    let acq = fetch_stage(&o).unwrap();
    let paths: Vec<&str> = acq
        .config
        .storage
        .files
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    // base.d by name (local's 20-b shadows vendor's), then base.platform.d, then the user.
    assert_eq!(
        paths,
        [
            "/etc/marker",
            "/etc/vendor-a",
            "/etc/local-b",
            "/etc/platform",
            "/etc/user"
        ]
    );
    assert_eq!(marker(&acq).as_deref(), Some("platform"));

    // A broken base.platform.d is skipped as a whole (as the reference), with a note.
    std::fs::write(
        sys.vendor.join("base.platform.d/hetzner/20-bad.ign"),
        "garbage",
    )
    .unwrap();
    let acq = fetch_stage(&o).unwrap();
    assert_eq!(marker(&acq).as_deref(), Some("local-b"));
    assert!(
        acq.notes
            .iter()
            .any(|n| n.contains("ignoring the configs in base.platform.d/hetzner"))
    );
    // An empty base.d fragment fails the run (as the reference).
    std::fs::write(sys.vendor.join("base.d/30-empty.ign"), "").unwrap();
    let e = fetch_stage(&o).err().unwrap();
    assert!(
        e.message.contains("failed to acquire system base config"),
        "{e}"
    );
}

#[test]
fn cloud_config_scripts_and_mime_are_left_to_cloudinit() {
    let mime = "Content-Type: multipart/mixed; boundary=\"XX\"\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/cloud-config\n\n#cloud-config\n--XX--\n";
    for (what, body) in [
        ("#cloud-config", b"#cloud-config\nhostname: a\n".to_vec()),
        ("#! script", b"#!/bin/bash\necho hi\n".to_vec()),
        ("multipart MIME", mime.as_bytes().to_vec()),
        (
            "gzip'd MIME",
            flint_ignition::dataurl::gzip_best(mime.as_bytes()),
        ),
    ] {
        let s = MetaServer::start(move |_r: &Req| Resp {
            status: 200,
            headers: vec![],
            body: body.clone(),
        });
        let acq = run("vultr", &s).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!acq.user_provided, "{what}");
        let line = acq.notes.iter().find(|n| n.contains("coreos-cloudinit"));
        assert!(line.is_some(), "{what}: {:?}", acq.notes);
    }
    // Whitespace is no config and no cloud-config: an error, as the reference.
    let s = MetaServer::start(|_r: &Req| reply(200, "  \n"));
    assert!(run("vultr", &s).is_err());
}

fn flint_cmd(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(common::flint());
    c.current_dir(dir)
        .env_remove("FLINT_METADATA_ENDPOINT")
        .env("FLINT_CMDLINE", dir.join("cmdline"))
        .env("IGNITION_SYSTEM_CONFIG_DIR", dir.join("sys/usr-lib"))
        .env("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", dir.join("sys/run"))
        .env("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", dir.join("sys/etc"));
    c
}

#[test]
fn cli_platform_flag_hook_result_record_and_packet_phone_home() {
    let posted = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let ev = posted.clone();
    let port = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(0));
    let p2 = port.clone();
    let s = MetaServer::start(move |r: &Req| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/userdata") => reply(200, config("packet-cli")),
        ("GET", "/metadata") => reply(
            200,
            format!(
                r#"{{"id":"x","phone_home_url":"http://127.0.0.1:{}/phone-home"}}"#,
                p2.load(std::sync::atomic::Ordering::SeqCst)
            ),
        ),
        ("POST", "/events") => {
            assert_eq!(r.header("content-type"), Some("application/json"));
            ev.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&r.body).into_owned());
            reply(200, "")
        }
        _ => reply(404, ""),
    });
    port.store(s.port, std::sync::atomic::Ordering::SeqCst);
    let dir = TempDir::new("platform-cli");
    std::fs::write(dir.join("cmdline"), "quiet\n").unwrap();
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out = flint_cmd(&dir)
        .env("FLINT_METADATA_ENDPOINT", s.endpoint())
        .args(["apply", "--platform", "packet", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("etc/marker")).unwrap(),
        "packet-cli"
    );
    let record = std::fs::read_to_string(root.join("etc/.ignition-result.json")).unwrap();
    assert!(record.contains(r#""userConfigProvided": true"#), "{record}");
    let events = posted.lock().unwrap().clone();
    // One event per stage run, in order.
    let stages: Vec<&str> = events
        .iter()
        .map(|e| {
            e.split('[')
                .nth(1)
                .and_then(|r| r.split(']').next())
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        stages,
        ["fetch", "kargs", "disks", "mount", "files", "umount"],
        "{events:?}"
    );
    assert!(events.iter().all(|e| e.contains(r#""state":"running""#)));
    assert!(events[4].contains("[files] Ignition status: finished successfully"));
    // A failing stage is reported as failed.
    let failing = dir.join("failing-root");
    std::fs::write(&failing, "a file where the root should be").unwrap();
    let out = flint_cmd(&dir)
        .env("FLINT_METADATA_ENDPOINT", s.endpoint())
        .args([
            "apply",
            "--platform",
            "packet",
            "--stage",
            "files",
            "--root",
        ])
        .arg(&failing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let last = posted.lock().unwrap().last().cloned().unwrap_or_default();
    assert!(
        last.contains(r#""state":"failed""#) && last.contains("[files] Ignition error: "),
        "{last}"
    );

    // No config on metal: the run succeeds and the record says no user config.
    let root2 = dir.join("root2");
    std::fs::create_dir_all(&root2).unwrap();
    let out = flint_cmd(&dir)
        .args([
            "apply",
            "--config-source",
            "auto",
            "--stage",
            "files",
            "--root",
        ])
        .arg(&root2)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record = std::fs::read_to_string(root2.join("etc/.ignition-result.json")).unwrap();
    assert!(
        record.contains(r#""userConfigProvided": false"#),
        "{record}"
    );

    let out = flint_cmd(&dir)
        .args(["plan", "--platform", "nonesuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known: akamai"));
    let out = flint_cmd(&dir)
        .args(["rmcfg", "--platform", "aws"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot delete config on platform aws"));
}

#[test]
fn cloudsigma_server_context_over_a_serial_line() {
    // A pseudo-terminal stands in for /dev/ttyS1: the test answers as the host does.
    let (master, slave) = openpty();
    let ctx = format!(
        r#"{{"name":"vm","meta":{{"base64_fields":"cloudinit-user-data","cloudinit-user-data":"{}"}}}}"#,
        b64(config("cloudsigma").as_bytes())
    );
    let host = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut m = master;
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        while !got.ends_with(b">") {
            let n = m.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        m.write_all(ctx.as_bytes()).unwrap();
        m.write_all(b"\x04\n").unwrap();
        std::thread::sleep(Duration::from_millis(500));
        got
    });
    let dir = TempDir::new("platform-cloudsigma");
    let mut o = options(&dir, "cloudsigma", None);
    o.places.cloudsigma_serial = slave;
    let acq = fetch_stage(&o).unwrap();
    assert_eq!(marker(&acq).as_deref(), Some("cloudsigma"));
    assert_eq!(host.join().unwrap(), b"<\n\n>");
}

/// A pseudo-terminal pair: the master as a file, the slave's path.
fn openpty() -> (std::fs::File, PathBuf) {
    use std::os::fd::FromRawFd;
    let (mut m, mut s) = (0, 0);
    // SAFETY: openpty fills two descriptors we then own.
    let rc = unsafe { libc_openpty(&mut m, &mut s) };
    assert_eq!(rc, 0);
    let path = std::fs::read_link(format!("/proc/self/fd/{s}")).unwrap();
    // SAFETY: m is a fresh descriptor owned from here on.
    let master = unsafe { std::fs::File::from_raw_fd(m) };
    // Keep the slave open in this process so that the line stays up between opens.
    std::mem::forget(unsafe { std::fs::File::from_raw_fd(s) });
    (master, path)
}

unsafe fn libc_openpty(m: &mut i32, s: &mut i32) -> i32 {
    // SAFETY: the caller passes valid pointers; null name, termios and winsize are allowed.
    unsafe {
        libc::openpty(
            m,
            s,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    }
}
