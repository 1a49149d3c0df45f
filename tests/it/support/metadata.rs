//! A server on 127.0.0.1 that speaks a metadata service's protocol: every request goes to
//! a handler that checks methods, paths, headers and tokens as the real service does and
//! answers with any status. Requests are recorded (with the client's source port).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Names in lower case.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub peer_port: u16,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

pub fn reply(status: u16, body: impl Into<Vec<u8>>) -> Resp {
    Resp {
        status,
        headers: Vec::new(),
        body: body.into(),
    }
}

type Handler = Arc<dyn Fn(&Req) -> Resp + Send + Sync>;

pub struct MetaServer {
    pub port: u16,
    seen: Arc<Mutex<Vec<Req>>>,
}

impl MetaServer {
    pub fn start(handler: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> MetaServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let s = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let (h, s) = (handler.clone(), s.clone());
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    let peer_port = conn.peer_addr().map(|a| a.port()).unwrap_or(0);
                    let mut r = BufReader::new(conn.try_clone().unwrap());
                    let mut line = String::new();
                    if r.read_line(&mut line).is_err() {
                        return;
                    }
                    let mut parts = line.split_whitespace();
                    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
                        return;
                    };
                    let mut headers = HashMap::new();
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).is_err() {
                            return;
                        }
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                        }
                    }
                    let len: usize = headers
                        .get("content-length")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    let mut body = vec![0; len];
                    let _ = r.read_exact(&mut body);
                    let req = Req {
                        method: method.into(),
                        path: path.into(),
                        headers,
                        body,
                        peer_port,
                    };
                    s.lock().unwrap().push(req.clone());
                    let resp = h(&req);
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                        resp.status,
                        resp.body.len()
                    );
                    for (k, v) in &resp.headers {
                        head.push_str(&format!("{k}: {v}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = conn.write_all(head.as_bytes());
                    if method != "HEAD" {
                        let _ = conn.write_all(&resp.body);
                    }
                });
            }
        });
        MetaServer { port, seen }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn seen(&self) -> Vec<Req> {
        self.seen.lock().unwrap().clone()
    }

    /// How many requests asked for `path` (without the query).
    pub fn hits(&self, path: &str) -> usize {
        self.seen()
            .iter()
            .filter(|r| r.path.split('?').next() == Some(path))
            .count()
    }
}
