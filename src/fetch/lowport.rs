//! Plain-HTTP GETs sent from a privileged source port (1–1023), which Scaleway's metadata
//! service requires so that only root on the instance can read the user data. ureq cannot
//! choose the local port, so this is a small HTTP/1.1 client of its own: one request per
//! connection, `Connection: close`, Content-Length or chunked bodies.

use super::url::{Url, redact};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

/// A response: status and body.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

/// GET `url` (http only) from a random free port below 1024, retrying connection errors
/// and 5xx with backoff until `total` has passed.
pub fn get(
    url: &str,
    headers: &[(String, String)],
    total: Duration,
    limit: u64,
) -> Result<Reply, String> {
    let u = Url::parse(url)?;
    if u.scheme != "http" {
        return Err(format!(
            "{}: only http is supported from a low port",
            redact(url)
        ));
    }
    let deadline = Instant::now() + total;
    let mut delay = Duration::from_millis(100);
    loop {
        let err = match attempt(&u, headers, deadline, limit) {
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

fn attempt(
    u: &Url,
    headers: &[(String, String)],
    deadline: Instant,
    limit: u64,
) -> Result<Reply, String> {
    let addr = (u.bare_host(), u.port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let mut s = connect_from_low_port(addr)?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    s.set_read_timeout(Some(left.min(Duration::from_secs(10))))
        .ok();
    s.set_write_timeout(Some(left.min(Duration::from_secs(10))))
        .ok();
    let mut req = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        u.path, u.host
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
        let rc = match addr {
            SocketAddr::V4(a) => {
                let mut local: libc::sockaddr_in = std::mem::zeroed();
                local.sin_family = libc::AF_INET as _;
                local.sin_port = port.to_be();
                let rc = libc::bind(
                    fd,
                    &local as *const _ as *const _,
                    std::mem::size_of_val(&local) as _,
                );
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let mut remote: libc::sockaddr_in = std::mem::zeroed();
                remote.sin_family = libc::AF_INET as _;
                remote.sin_port = a.port().to_be();
                remote.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                libc::connect(
                    fd,
                    &remote as *const _ as *const _,
                    std::mem::size_of_val(&remote) as _,
                )
            }
            SocketAddr::V6(a) => {
                let mut local: libc::sockaddr_in6 = std::mem::zeroed();
                local.sin6_family = libc::AF_INET6 as _;
                local.sin6_port = port.to_be();
                let rc = libc::bind(
                    fd,
                    &local as *const _ as *const _,
                    std::mem::size_of_val(&local) as _,
                );
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let mut remote: libc::sockaddr_in6 = std::mem::zeroed();
                remote.sin6_family = libc::AF_INET6 as _;
                remote.sin6_port = a.port().to_be();
                remote.sin6_addr.s6_addr = a.ip().octets();
                remote.sin6_scope_id = a.scope_id();
                libc::connect(
                    fd,
                    &remote as *const _ as *const _,
                    std::mem::size_of_val(&remote) as _,
                )
            }
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
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
