//! Plain-HTTP GETs that ureq cannot make: from a privileged source port (1–1023), which
//! Scaleway's metadata service requires so that only root on the instance can read the user
//! data, and to IPv6 link-local hosts with a zone (`http://[fe80::a9fe:a9fe%25eth0]/`,
//! OpenStack's metadata service). A small HTTP/1.1 client: one request per connection,
//! `Connection: close`, Content-Length or chunked bodies.

use super::http::HttpClient;
use super::url::{Url, redact};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

/// A response: status and body.
pub(crate) struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

/// A metadata service's answer at `url` (http only), asked with the settings of `http`
/// (its User-Agent, what it accepts, no compression, its total timeout, two minutes when it
/// has none): the body for 200 and 204, `None` for 404, an error for any other status.
/// From a random free port below 1024 when `low_port` (retrying connection errors and 5xx
/// with backoff until the timeout), else from any port (for hosts with an IPv6 zone).
pub(crate) fn get_metadata(
    http: &HttpClient,
    url: &str,
    low_port: bool,
) -> Result<Option<Vec<u8>>, String> {
    let headers = [
        ("User-Agent".to_string(), http.user_agent.clone()),
        ("Accept".to_string(), super::http::ACCEPT.to_string()),
        ("Accept-Encoding".to_string(), "identity".to_string()),
    ];
    let total = http.total_timeout.unwrap_or(Duration::from_secs(120));
    let r = get_from(url, &headers, total, http.limit, low_port)?;
    match r.status {
        200 | 204 => Ok(Some(r.body)),
        404 => Ok(None),
        s => Err(format!("GET {url}: status {s}")),
    }
}

fn get_from(
    url: &str,
    headers: &[(String, String)],
    total: Duration,
    limit: u64,
    low: bool,
) -> Result<Reply, String> {
    let u = Url::parse(url)?;
    if u.scheme != "http" {
        return Err(format!("{}: only http is supported here", redact(url)));
    }
    let deadline = Instant::now() + total;
    let mut delay = Duration::from_millis(100);
    loop {
        let err = match attempt(&u, headers, deadline, limit, low) {
            Ok(r) if r.status < 500 => return Ok(r),
            Ok(r) => format!("GET {}: server error {}", redact(url), r.status),
            Err(e) => format!("GET {}: {e}", redact(url)),
        };
        if Instant::now() + delay >= deadline {
            return Err(format!("{err} (gave up: total timeout reached)"));
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_secs(5));
    }
}

/// The address of `host` (a name, an IPv4 or IPv6 literal, IPv6 with `%25ZONE`).
fn address(host: &str, port: u16) -> Result<SocketAddr, String> {
    if let Some((ip, zone)) = host.split_once("%25").or_else(|| host.split_once('%')) {
        let ip: std::net::Ipv6Addr = ip.parse().map_err(|_| format!("bad IPv6 address {ip}"))?;
        let name = std::ffi::CString::new(zone).map_err(|_| "bad zone")?;
        // SAFETY: a valid NUL-terminated interface name.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(format!("no network interface {zone}"));
        }
        return Ok(SocketAddr::V6(std::net::SocketAddrV6::new(
            ip, port, 0, index,
        )));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| "no address".to_string())
}

fn attempt(
    u: &Url,
    headers: &[(String, String)],
    deadline: Instant,
    limit: u64,
    low: bool,
) -> Result<Reply, String> {
    let addr = address(u.bare_host(), u.port)?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
        .min(Duration::from_secs(10));
    let mut s = if low {
        connect_from_low_port(addr)?
    } else {
        TcpStream::connect_timeout(&addr, left).map_err(|e| e.to_string())?
    };
    s.set_read_timeout(Some(left)).ok();
    s.set_write_timeout(Some(left)).ok();
    // The zone is local to this machine: not part of the Host header.
    let host = match u.host.split_once('%') {
        Some((h, _)) => format!("{h}]"),
        None => u.host.clone(),
    };
    let mut req = format!(
        "GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n",
        u.path
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.take(limit + 64 * 1024)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    parse(&raw, limit)
}

/// A TCP connection to `addr` from a free port in 1..=1023, tried in a random order.
fn connect_from_low_port(addr: SocketAddr) -> Result<TcpStream, String> {
    let mut seed = [0u8; 2];
    crate::system::random_bytes(&mut seed);
    let start = u16::from_le_bytes(seed) % 1023;
    let mut last = String::from("no free port below 1024");
    for i in 0..1023u16 {
        let port = (start + i) % 1023 + 1;
        match try_port(addr, port) {
            Ok(s) => return Ok(s),
            Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) => continue,
            Err(e) => {
                last = format!("connecting from port {port}: {e}");
                if e.raw_os_error() == Some(libc::EACCES) {
                    return Err(format!("{last} (binding a port below 1024 needs root)"));
                }
                return Err(last);
            }
        }
    }
    Err(last)
}

fn try_port(addr: SocketAddr, port: u16) -> std::io::Result<TcpStream> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket calls on a descriptor we own; the sockaddr structs are
    // initialized and their sizes passed along.
    unsafe {
        let fd = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = TcpStream::from_raw_fd(fd);
        match addr {
            SocketAddr::V4(a) => {
                let mut local: libc::sockaddr_in = std::mem::zeroed();
                local.sin_family = libc::AF_INET as _;
                local.sin_port = port.to_be();
                let mut remote = local;
                remote.sin_port = a.port().to_be();
                remote.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                bind_connect(fd, &local, &remote)?;
            }
            SocketAddr::V6(a) => {
                let mut local: libc::sockaddr_in6 = std::mem::zeroed();
                local.sin6_family = libc::AF_INET6 as _;
                local.sin6_port = port.to_be();
                let mut remote = local;
                remote.sin6_port = a.port().to_be();
                remote.sin6_addr.s6_addr = a.ip().octets();
                remote.sin6_scope_id = a.scope_id();
                bind_connect(fd, &local, &remote)?;
            }
        }
        Ok(stream)
    }
}

/// Binds socket `fd` to `local` and connects it to `remote`.
///
/// # Safety
/// `T` is the sockaddr type of `fd`'s address family (`sockaddr_in`, `sockaddr_in6`).
unsafe fn bind_connect<T>(fd: libc::c_int, local: &T, remote: &T) -> std::io::Result<()> {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: both point to initialized sockaddrs of `len` bytes, of the socket's family.
    unsafe {
        if libc::bind(fd, (local as *const T).cast(), len) != 0
            || libc::connect(fd, (remote as *const T).cast(), len) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Parses a whole HTTP/1.1 response.
fn parse(raw: &[u8], limit: u64) -> Result<Reply, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("malformed response: no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("malformed status line")?;
    let mut chunked = false;
    let mut length: Option<usize> = None;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked") {
                chunked = true;
            } else if k == "content-length" {
                length = v.parse().ok();
            }
        }
    }
    let mut body = &raw[end + 4..];
    let body = if chunked {
        let mut out = Vec::new();
        loop {
            let i = body
                .windows(2)
                .position(|w| w == b"\r\n")
                .ok_or("truncated chunk")?;
            let size_line = String::from_utf8_lossy(&body[..i]);
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| "bad chunk size")?;
            body = &body[i + 2..];
            if size == 0 {
                break;
            }
            if body.len() < size + 2 {
                return Err("truncated chunk".into());
            }
            out.extend_from_slice(&body[..size]);
            body = &body[size + 2..];
        }
        out
    } else {
        match length {
            Some(n) if body.len() < n => return Err("body cut short".into()),
            Some(n) => body[..n].to_vec(),
            None => body.to_vec(),
        }
    };
    if body.len() as u64 > limit {
        return Err(format!("larger than the {limit}-byte limit"));
    }
    Ok(Reply { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoned_ipv6_hosts() {
        let a = address("fe80::a9fe:a9fe%25lo", 80).unwrap();
        assert!(matches!(a, SocketAddr::V6(v) if v.scope_id() > 0));
        assert!(address("fe80::1%25no-such-if", 80).is_err());
        // A request over it reaches a server on the loopback interface.
        let l = std::net::TcpListener::bind("[::1]:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut b = [0u8; 1024];
            let n = c.read(&mut b).unwrap();
            assert!(String::from_utf8_lossy(&b[..n]).contains("Host: [::1]\r\n"));
            c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
        });
        let r = get_from(
            &format!("http://[::1%25lo]:{port}/x"),
            &[],
            Duration::from_secs(5),
            100,
            false,
        )
        .unwrap();
        assert_eq!(r.body, b"ok");
    }

    #[test]
    fn parses_responses() {
        let r = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef", 100).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"abc"[..]));
        let r = parse(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            100,
        )
        .unwrap();
        assert_eq!(r.body, b"abcde");
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab", 100).is_err());
        assert_eq!(parse(b"HTTP/1.0 404 NF\r\n\r\n", 100).unwrap().status, 404);
    }
}
