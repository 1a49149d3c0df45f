//! HTTP(S) fetches with Ignition's semantics: default `Accept`/`User-Agent` headers that
//! the config's headers may override, custom headers not resent after a redirect, retries
//! with exponential backoff (100 ms doubling to 5 s) on connection errors and server errors,
//! a response-header timeout, an optional total timeout, proxies, and TLS trusting the
//! system roots plus the config's certificate authorities.

use super::blob::BodySink;
use super::proxy::ProxyConfig;
use super::url::{Url, redact};
use std::sync::Arc;
use std::time::{Duration, Instant};
use ureq::tls::Certificate;

/// Redirects followed before a fetch fails (upstream follows any number: a chain this long
/// is a broken server, and a loop is failed at once, see `send_into`).
const MAX_REDIRECTS: usize = 100;
/// What Ignition accepts, sent with every HTTP(S) fetch unless the config overrides it: the
/// newest stable spec version (Flatcar's Ignition v2.26 names 3.6.0; a server may refuse a
/// request naming another, as upstream's own test server does).
pub const ACCEPT: &str = "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1";
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// The time a last try before the total timeout is given.
const LAST_TRY: Duration = Duration::from_millis(500);

/// How HTTP fetches are made; built from the config's `ignition` section.
#[derive(Clone)]
pub struct HttpClient {
    pub response_header_timeout: Duration,
    /// Across all attempts of one fetch; `None` waits as long as it takes.
    pub total_timeout: Option<Duration>,
    pub proxy: ProxyConfig,
    pub roots: Arc<Vec<Certificate<'static>>>,
    /// Largest body accepted.
    pub limit: u64,
    pub user_agent: String,
}

/// Well-known places of the system's CA bundle.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/usr/share/ca-certificates/ca-bundle.crt",
];

/// The certificates of a PEM bundle (anything that is not a certificate is skipped).
pub fn parse_certs(pem: &[u8]) -> Vec<Certificate<'static>> {
    ureq::tls::parse_pem(pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect()
}

/// The system's trusted roots (`SSL_CERT_FILE` first when set).
pub fn system_roots() -> Vec<Certificate<'static>> {
    let env = std::env::var("SSL_CERT_FILE").ok();
    env.iter()
        .map(String::as_str)
        .chain(SYSTEM_BUNDLES.iter().copied())
        .find_map(|p| std::fs::read(p).ok())
        .map(|b| parse_certs(&b))
        .unwrap_or_default()
}

/// Why an attempt failed, and whether trying again may help.
enum Attempt {
    Retry(String),
    /// The body broke off: tried again a few times, not for ever (upstream fails at once).
    Broken(String),
    Fail(String),
}

/// Attempts after a body broke off mid-way before the fetch fails.
const BROKEN_BODY_TRIES: u32 = 3;

impl HttpClient {
    fn agent(&self, target: &Url) -> Result<ureq::Agent, String> {
        use super::connect::{AbsoluteForm, TlsConnector, ToProxy};
        use ureq::unversioned::resolver::DefaultResolver;
        use ureq::unversioned::transport::{ConnectProxyConnector, Connector, TcpConnector};
        let proxy = self
            .proxy
            .for_target(&target.scheme, target.bare_host(), target.port);
        let config = |proxy: Option<ureq::Proxy>| {
            ureq::Agent::config_builder()
                .proxy(proxy)
                .max_redirects(0)
                .http_status_as_error(false)
                .timeout_recv_response(Some(self.response_header_timeout))
                .timeout_connect(Some(self.response_header_timeout))
                // Set per request, so that a config header can replace it.
                .user_agent(ureq::config::AutoHeaderValue::None)
                .build()
        };
        // Plain HTTP through a proxy: absolute-form requests to the proxy (see connect.rs).
        if let (Some(p), "http") = (proxy, target.scheme.as_str()) {
            let uri: ureq::http::Uri =
                p.parse().map_err(|e| format!("proxy {}: {e}", redact(p)))?;
            let auth = Url::parse(p).ok().and_then(|u| u.basic_credentials());
            let connector = TcpConnector::default().chain(AbsoluteForm { auth });
            return Ok(ureq::Agent::with_parts(
                config(None),
                connector,
                ToProxy(uri),
            ));
        }
        let proxy = match proxy {
            Some(p) => Some(ureq::Proxy::new(p).map_err(|e| format!("proxy {}: {e}", redact(p)))?),
            None => None,
        };
        let roots: Vec<rustls::pki_types::CertificateDer<'static>> = self
            .roots
            .iter()
            .map(|c| rustls::pki_types::CertificateDer::from(c.der().to_vec()))
            .collect();
        let tls = TlsConnector(super::connect::client_config(&roots)?);
        let connector = ConnectProxyConnector::default()
            .chain(TcpConnector::default())
            .chain(tls);
        Ok(ureq::Agent::with_parts(
            config(proxy),
            connector,
            DefaultResolver::default(),
        ))
    }

    /// Fetches `url` with the config's `headers` (name, value); follows redirects. Only 200 and 204
    /// bodies are returned; a 404 says "resource not found (404)".
    pub fn get(&self, url: &str, headers: &[(String, String)]) -> Result<Vec<u8>, String> {
        let resp = self.send(&Request::get(url, headers))?;
        resp.into_body(url)
    }

    /// [`HttpClient::get`], with the body handed to `sink` as it arrives instead of
    /// collected (restarted when a broken-off download is tried again).
    pub fn get_into(
        &self,
        url: &str,
        headers: &[(String, String)],
        sink: &mut dyn BodySink,
    ) -> Result<(), String> {
        let resp = self.send_into(&Request::get(url, headers), &mut Some(sink))?;
        resp.into_body(url).map(drop)
    }

    /// Sends `req`, following redirects, retrying connection errors, 5xx and the request's
    /// `retry_codes` with backoff until the total timeout; any other status is returned.
    pub fn send(&self, req: &Request) -> Result<Response, String> {
        self.send_into(req, &mut None)
    }

    /// [`HttpClient::send`]; a successful body goes to `sink` when there is one.
    fn send_into(
        &self,
        req: &Request,
        sink: &mut Option<&mut dyn BodySink>,
    ) -> Result<Response, String> {
        let deadline = self.total_timeout.map(|t| Instant::now() + t);
        let mut current = req.url.to_string();
        let mut seen = Vec::new();
        for hop in 0..=MAX_REDIRECTS {
            // Custom headers go to the URL the config names, not to where it redirects
            // (which may be another host).
            let hdrs = if hop == 0 { req.headers } else { &[] };
            match self.send_with_retries(req, &current, hdrs, deadline, sink)? {
                Reply::Done(r) => return Ok(r),
                Reply::Redirect(to) => {
                    seen.push(current.clone());
                    if seen.contains(&to) {
                        return Err(format!("redirect loop at {}", redact(&to)));
                    }
                    current = to;
                }
            }
        }
        Err(format!(
            "more than {MAX_REDIRECTS} redirects from {}",
            redact(req.url)
        ))
    }

    fn send_with_retries(
        &self,
        req: &Request,
        url: &str,
        headers: &[(String, String)],
        deadline: Option<Instant>,
        sink: &mut Option<&mut dyn BodySink>,
    ) -> Result<Reply, String> {
        let mut delay = BACKOFF_START;
        let mut broken = 0;
        loop {
            let last_error = match self.attempt(req, url, headers, deadline, sink) {
                Ok(r) => return Ok(r),
                Err(Attempt::Fail(e)) => return Err(e),
                Err(Attempt::Broken(e)) => {
                    broken += 1;
                    if broken >= BROKEN_BODY_TRIES {
                        return Err(format!("{e} (gave up after {broken} tries)"));
                    }
                    e
                }
                Err(Attempt::Retry(e)) => e,
            };
            if let Some(d) = deadline {
                let now = Instant::now();
                if now + LAST_TRY >= d {
                    return Err(format!("{last_error} (gave up: total timeout reached)"));
                }
                // When the next backoff would pass the deadline, one last try is still made
                // in the time left (upstream waits out its backoff, given up at the
                // deadline, so a server that comes up in its last seconds is missed).
                if now + delay + LAST_TRY > d {
                    std::thread::sleep(d - LAST_TRY - now);
                    continue;
                }
            }
            std::thread::sleep(delay);
            delay = (delay * 2).min(BACKOFF_MAX);
        }
    }

    /// The request headers: Ignition's defaults and `credentials`, replaced by same-named
    /// custom headers.
    fn headers(
        &self,
        credentials: &[(String, String)],
        custom: &[(String, String)],
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = vec![
            ("User-Agent".into(), self.user_agent.clone()),
            ("Accept".into(), ACCEPT.into()),
            ("Accept-Encoding".into(), "identity".into()),
        ];
        out.extend_from_slice(credentials);
        for (k, v) in custom {
            out.retain(|(d, _)| !d.eq_ignore_ascii_case(k));
            out.push((k.clone(), v.clone()));
        }
        out
    }

    fn attempt(
        &self,
        req: &Request,
        url: &str,
        custom: &[(String, String)],
        deadline: Option<Instant>,
        sink: &mut Option<&mut dyn BodySink>,
    ) -> Result<Reply, Attempt> {
        let target = Url::parse(url).map_err(Attempt::Fail)?;
        let mut resp = self.send_once(req, url, &target, custom, deadline)?;
        let status = resp.status().as_u16();
        // Go's client follows these (others, 300 and 305 among them, are final answers).
        if [301, 302, 303, 307, 308].contains(&status) {
            let loc = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .filter(|l| !l.is_empty())
                .ok_or_else(|| {
                    Attempt::Fail(format!(
                        "{} {}: {status} without Location",
                        req.method,
                        redact(url)
                    ))
                })?;
            let to = target.join(loc).map_err(|e| {
                Attempt::Fail(format!("{} {}: Location: {e}", req.method, redact(url)))
            })?;
            return Ok(Reply::Redirect(to));
        }
        if status >= 500 || req.retry_codes.contains(&status) {
            return Err(Attempt::Retry(format!(
                "{} {}: {}",
                req.method,
                redact(url),
                if status >= 500 {
                    format!("server error {status}")
                } else {
                    format!("{status} {}", reason(status))
                }
            )));
        }
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        if req.method == "HEAD" {
            return Ok(Reply::Done(Response {
                method: req.method.to_string(),
                status,
                headers,
                body: Vec::new(),
            }));
        }
        let done = |body| {
            Reply::Done(Response {
                method: req.method.to_string(),
                status,
                headers,
                body,
            })
        };
        self.read_body(req, url, status, &mut resp, sink).map(done)
    }

    /// Sends the request (its body, if any) and waits for the response's head.
    fn send_once(
        &self,
        req: &Request,
        url: &str,
        target: &Url,
        custom: &[(String, String)],
        deadline: Option<Instant>,
    ) -> Result<ureq::http::Response<ureq::Body>, Attempt> {
        let agent = self.agent(target).map_err(Attempt::Fail)?;
        let method = ureq::http::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| Attempt::Fail(format!("bad HTTP method {:?}", req.method)))?;
        // User information goes as Basic credentials, decoded, unless the config sends
        // its own Authorization; never in the request's URL.
        let credentials = target
            .basic_credentials()
            .map(|c| ("Authorization".to_string(), c));
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(target.request_url());
        for (k, v) in self.headers(credentials.as_slice(), custom) {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let left = deadline.map(|d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        let bad =
            |e: ureq::http::Error| Attempt::Fail(format!("{} {}: {e}", req.method, redact(url)));
        let sent = match req.body {
            // PUT and POST send their body (possibly empty, with a Content-Length).
            Some(b) => {
                let r = builder.body(b.to_vec()).map_err(bad)?;
                let r = agent
                    .configure_request(r)
                    .timeout_global(left)
                    .allow_non_standard_methods(true)
                    .build();
                agent.run(r)
            }
            None => {
                let r = builder.body(()).map_err(bad)?;
                agent.run(agent.configure_request(r).timeout_global(left).build())
            }
        };
        // Tried again like any failure to connect, a certificate that does not verify
        // included, as upstream does: it may verify a moment later (the clock not yet set at
        // first boot, a proxy still starting).
        sent.map_err(|e| Attempt::Retry(format!("{} {}: {e}", req.method, redact(url))))
    }

    /// The response's body: into the sink when the status is a success and there is one
    /// (an empty body returned), else in memory.
    fn read_body(
        &self,
        req: &Request,
        url: &str,
        status: u16,
        resp: &mut ureq::http::Response<ureq::Body>,
        sink: &mut Option<&mut dyn BodySink>,
    ) -> Result<Vec<u8>, Attempt> {
        let body_error = |e: ureq::Error| match e {
            ureq::Error::BodyExceedsLimit(n) => Attempt::Fail(format!(
                "{} {}: larger than the {n}-byte limit",
                req.method,
                redact(url),
            )),
            e => Attempt::Broken(format!(
                "{} {}: reading the body: {e}",
                req.method,
                redact(url)
            )),
        };
        // Only a body that is streamed may be larger than memory should hold.
        let limit = if sink.is_some() {
            self.limit
        } else {
            self.limit.min(super::IN_MEMORY_LIMIT)
        };
        let body = resp.body_mut().with_config().limit(limit);
        match sink {
            Some(sink) if is_success(status) => {
                use std::io::Read;
                sink.restart();
                let mut reader = body.reader();
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    let n = reader
                        .read(&mut buf)
                        .map_err(|e| body_error(ureq::Error::from(e)))?;
                    if n == 0 {
                        break;
                    }
                    // What the data turned out to be (too large unpacked, corrupt, not the
                    // hash) does not change by asking again.
                    sink.put(&buf[..n]).map_err(Attempt::Fail)?;
                }
                Ok(Vec::new())
            }
            _ => body.read_to_vec().map_err(body_error),
        }
    }
}

/// One HTTP request: method, URL, custom headers (they replace Ignition's defaults of the
/// same name), body, and statuses below 500 that are retried like server errors.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub body: Option<&'a [u8]>,
    pub retry_codes: &'a [u16],
}

impl<'a> Request<'a> {
    pub fn get(url: &'a str, headers: &'a [(String, String)]) -> Request<'a> {
        Request {
            method: "GET",
            url,
            headers,
            body: None,
            retry_codes: &[],
        }
    }
}

/// A final (non-redirect) response.
#[derive(Debug, Clone)]
pub struct Response {
    pub method: String,
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body of a successful response; an error naming the status otherwise.
    pub fn into_body(self, url: &str) -> Result<Vec<u8>, String> {
        match self.status {
            s if is_success(s) => Ok(self.body),
            404 => Err(format!(
                "{} {}: resource not found (404)",
                self.method,
                redact(url)
            )),
            s => Err(format!(
                "{} {}: {s} {}",
                self.method,
                redact(url),
                reason(s)
            )),
        }
    }
}

enum Reply {
    Done(Response),
    Redirect(String),
}

/// The statuses whose body is the resource: Ignition takes 200 and 204 (empty), and no
/// other (a 201 or a 206 fails the fetch).
fn is_success(status: u16) -> bool {
    status == 200 || status == 204
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        410 => "Gone",
        429 => "Too Many Requests",
        _ => "client error",
    }
}
