//! Real servers on 127.0.0.1 for the fetch tests: an HTTP(S) server with scripted routes, a
//! forwarding proxy, a TFTP server (tftpd-hpa), and a test CA.
#![allow(dead_code)]

pub mod devices;
pub mod metadata;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command};

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a route answers.
#[derive(Clone)]
pub enum Reply {
    /// Status, extra headers, body.
    Fixed(u16, Vec<(String, String)>, Vec<u8>),
    /// The first `n` requests get 500, the rest `body`.
    FailFirst(usize, Vec<u8>),
    /// Waits before answering.
    Stall(Duration, Vec<u8>),
    /// Promises this many bytes, sends the body, and hangs up: a fetch cut short.
    Truncated(usize, Vec<u8>),
    /// This many bytes of [`generated_block`]s, made while they are sent (a body larger
    /// than the test could hold).
    Generated(u64),
}

/// Bytes in a [`generated_block`].
pub const BLOCK: usize = 1 << 16;

/// Block `i` of a generated body: a xorshift stream seeded by the block's number, so no two
/// blocks are alike and nothing has to be stored.
pub fn generated_block(i: u64, buf: &mut [u8]) {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for word in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        word.copy_from_slice(&x.to_le_bytes()[..word.len()]);
    }
}

/// Calls `f` with the first `len` bytes of the generated body, a block at a time.
pub fn each_generated(len: u64, mut f: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; BLOCK];
    let mut sent = 0u64;
    let mut i = 0;
    while sent < len {
        generated_block(i, &mut buf);
        let n = ((len - sent) as usize).min(BLOCK);
        f(&buf[..n]);
        sent += n as u64;
        i += 1;
    }
}

pub fn ok(body: impl Into<Vec<u8>>) -> Reply {
    Reply::Fixed(200, vec![], body.into())
}

pub fn status(code: u16) -> Reply {
    Reply::Fixed(code, vec![], b"no".to_vec())
}

pub fn redirect(to: &str) -> Reply {
    Reply::Fixed(302, vec![("Location".into(), to.into())], vec![])
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Reply>,
    hits: HashMap<String, usize>,
    seen: Vec<Seen>,
}

pub struct Server {
    pub port: u16,
    pub tls: bool,
    state: Arc<Mutex<State>>,
    /// Set by [`Server::stop`]: the listener is closed at the next connection.
    stopped: Arc<std::sync::atomic::AtomicBool>,
    /// The certificate HTTPS connections are answered with, from the next one on.
    certificate: Arc<Mutex<Option<Arc<rustls::ServerConfig>>>>,
}

/// A CA and a server certificate for 127.0.0.1, localhost and *.flint.test.
pub struct TestCa {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

pub fn test_ca() -> TestCa {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let names = vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "files.flint.test".to_string(),
    ];
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    TestCa {
        ca_pem: ca.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

fn tls_config(ca: &TestCa) -> Arc<rustls::ServerConfig> {
    let certs = vec![rustls::pki_types::CertificateDer::from(
        ureq::tls::Certificate::from_pem(ca.cert_pem.as_bytes())
            .unwrap()
            .der()
            .to_vec(),
    )];
    let key = ureq::tls::PrivateKey::from_pem(ca.key_pem.as_bytes()).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::try_from(key.der().to_vec()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    )
}

impl Server {
    /// Starts a server; with `ca`, it speaks HTTPS with the CA's server certificate.
    pub fn start(ca: Option<&TestCa>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let certificate = Arc::new(Mutex::new(ca.map(tls_config)));
        let st = state.clone();
        let current = certificate.clone();
        let stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = stopped.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                let tls = current.lock().unwrap().clone();
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
                    match tls {
                        Some(cfg) => {
                            let Ok(sc) = rustls::ServerConnection::new(cfg) else {
                                return;
                            };
                            let mut s = rustls::StreamOwned::new(sc, conn);
                            serve(&mut s, &st);
                        }
                        None => {
                            let mut c = conn;
                            serve(&mut c, &st);
                        }
                    }
                });
            }
        });
        Server {
            port,
            tls: ca.is_some(),
            state,
            stopped,
            certificate,
        }
    }

    /// Stops listening: connections are refused from now on, as with a network gone.
    pub fn stop(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // The listener waits in accept: one last connection wakes it to close.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Answers HTTPS connections with `ca`'s server certificate from now on.
    pub fn use_certificate(&self, ca: &TestCa) {
        *self.certificate.lock().unwrap() = Some(tls_config(ca));
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }

    pub fn route(&self, path: &str, reply: Reply) {
        self.state
            .lock()
            .unwrap()
            .routes
            .insert(path.to_string(), reply);
    }

    pub fn hits(&self, path: &str) -> usize {
        *self.state.lock().unwrap().hits.get(path).unwrap_or(&0)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }
}

/// Reads one request head: (method, target, headers).
fn read_head(r: &mut impl BufRead) -> Option<(String, String, HashMap<String, String>)> {
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Some((method, target, headers))
}

fn serve<S: Read + Write>(stream: &mut S, state: &Mutex<State>) {
    let mut reader = BufReader::new(&mut *stream);
    let Some((_, target, headers)) = read_head(&mut reader) else {
        return;
    };
    drop(reader);
    // A proxied request names the full URL; keep the path.
    let path = match target.split_once("://") {
        Some((_, rest)) => rest
            .find('/')
            .map_or("/".to_string(), |i| rest[i..].to_string()),
        None => target.clone(),
    };
    let route_key = path.split('?').next().unwrap_or("").to_string();
    let reply = {
        let mut st = state.lock().unwrap();
        st.seen.push(Seen {
            path: path.clone(),
            headers,
        });
        let n = st.hits.entry(route_key.clone()).or_insert(0);
        *n += 1;
        let n = *n;
        match st.routes.get(&route_key).cloned() {
            Some(Reply::FailFirst(k, _)) if n <= k => Reply::Fixed(500, vec![], b"busy".to_vec()),
            Some(Reply::FailFirst(_, body)) => Reply::Fixed(200, vec![], body),
            Some(r) => r,
            None => status(404),
        }
    };
    if let Reply::Generated(len) = reply {
        let head = format!("HTTP/1.1 200 X\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n");
        if stream.write_all(head.as_bytes()).is_err() {
            return;
        }
        let mut failed = false;
        each_generated(len, |b| failed = failed || stream.write_all(b).is_err());
        let _ = stream.flush();
        return;
    }
    let reply_len = match &reply {
        Reply::Truncated(n, _) => Some(*n),
        _ => None,
    };
    let (code, extra, body) = match reply {
        Reply::Fixed(c, h, b) => (c, h, b),
        Reply::Stall(d, b) => {
            std::thread::sleep(d);
            (200, vec![], b)
        }
        Reply::Truncated(_, b) => (200, vec![], b),
        Reply::FailFirst(..) | Reply::Generated(_) => unreachable!("answered above"),
    };
    let promised = match reply_len {
        Some(n) => n,
        None => body.len(),
    };
    let mut head =
        format!("HTTP/1.1 {code} X\r\nContent-Length: {promised}\r\nConnection: close\r\n");
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
    let _ = stream.flush();
}

/// A forwarding proxy: CONNECT tunnels and absolute-form requests all go to `backend`,
/// whatever host they name; the hosts asked for are recorded.
pub struct Proxy {
    pub port: u16,
    pub asked: Arc<Mutex<Vec<String>>>,
    /// The request methods seen (`CONNECT` for tunnels, `GET` for absolute-form requests).
    pub methods: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    pub fn start(backend: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let methods = Arc::new(Mutex::new(Vec::new()));
        let (rec, met) = (asked.clone(), methods.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { continue };
                let (rec, met) = (rec.clone(), met.clone());
                std::thread::spawn(move || proxy_one(client, backend, &rec, &met));
            }
        });
        Proxy {
            port,
            asked,
            methods,
        }
    }
}

fn relay(mut a: TcpStream, mut b: TcpStream) {
    let (mut a2, mut b2) = (a.try_clone().unwrap(), b.try_clone().unwrap());
    let t = std::thread::spawn(move || {
        let _ = std::io::copy(&mut a2, &mut b2);
        let _ = b2.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut b, &mut a);
    let _ = a.shutdown(std::net::Shutdown::Write);
    let _ = t.join();
}

fn proxy_one(
    client: TcpStream,
    backend: u16,
    rec: &Mutex<Vec<String>>,
    methods: &Mutex<Vec<String>>,
) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let Some((method, target, headers)) = read_head(&mut reader) else {
        return;
    };
    methods.lock().unwrap().push(method.clone());
    let upstream = TcpStream::connect(("127.0.0.1", backend)).unwrap();
    if method == "CONNECT" {
        rec.lock().unwrap().push(target.clone());
        let mut c = client;
        let _ = c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
        relay(c, upstream);
    } else {
        let host = target
            .split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or("");
        rec.lock().unwrap().push(host.to_string());
        let mut up = upstream;
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        up.write_all(head.as_bytes()).unwrap();
        relay(client, up);
    }
}

/// tftpd-hpa serving `dir` on 127.0.0.1 (stopped when dropped).
pub struct Tftp {
    pub port: u16,
    child: Child,
}

impl Tftp {
    pub fn start(dir: &Path) -> Tftp {
        let bin = ["/usr/sbin/in.tftpd", "/sbin/in.tftpd"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("tftpd-hpa is installed by scripts/test-all.sh");
        let port = {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.local_addr().unwrap().port()
        };
        let child = Command::new(bin)
            .args(["-L", "-u", "root", "-s", "-a"])
            .arg(format!("127.0.0.1:{port}"))
            .arg(dir)
            .spawn()
            .expect("starting in.tftpd");
        std::thread::sleep(Duration::from_millis(300));
        Tftp { port, child }
    }
}

impl Drop for Tftp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn data_url(bytes: &[u8]) -> String {
    format!("data:,{}", flint_ignition::dataurl::percent_encode(bytes))
}

pub fn sha512(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!(
        "sha512-{}",
        flint_provision::fetch::hex(&sha2::Sha512::digest(bytes))
    )
}
