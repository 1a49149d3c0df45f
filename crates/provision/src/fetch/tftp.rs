//! A TFTP read client (RFC 1350, octet mode): request, then acknowledge 512-byte blocks
//! until a short one ends the transfer. Lost packets are retransmitted after a timeout.

use std::net::{ToSocketAddrs, UdpSocket};
use std::time::Duration;

const OP_RRQ: u16 = 1;
const OP_DATA: u16 = 3;
const OP_ACK: u16 = 4;
const OP_ERROR: u16 = 5;
const BLOCK: usize = 512;

/// Fetches `path` from the TFTP server at `host:port`, refusing more than `limit` bytes.
pub(crate) fn get(
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
    limit: u64,
) -> Result<Vec<u8>, String> {
    let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
        .to_socket_addrs()
        .map_err(|e| format!("resolving {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("no address for {host}"))?;
    let bind = if addr.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let sock = UdpSocket::bind(bind).map_err(|e| format!("tftp socket: {e}"))?;
    sock.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;

    let file = path.trim_start_matches('/');
    let mut rrq = OP_RRQ.to_be_bytes().to_vec();
    rrq.extend_from_slice(file.as_bytes());
    rrq.push(0);
    rrq.extend_from_slice(b"octet\0");

    let mut data = Vec::new();
    let mut expected: u16 = 1;
    // What to resend when nothing arrives: the request, then the last acknowledgement.
    let mut last_sent = rrq.clone();
    let mut peer = addr;
    sock.send_to(&rrq, addr)
        .map_err(|e| format!("tftp send: {e}"))?;
    let mut buf = [0u8; 4 + BLOCK + 4];
    let mut retries = 0;
    loop {
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                retries += 1;
                if retries > 5 {
                    return Err(format!("tftp: no answer from {host}:{port} (timed out)"));
                }
                sock.send_to(&last_sent, peer)
                    .map_err(|e| format!("tftp send: {e}"))?;
                continue;
            }
            Err(e) => return Err(format!("tftp receive: {e}")),
        };
        if n < 4 {
            continue;
        }
        let op = u16::from_be_bytes([buf[0], buf[1]]);
        let num = u16::from_be_bytes([buf[2], buf[3]]);
        match op {
            OP_ERROR => {
                let msg = String::from_utf8_lossy(&buf[4..n]);
                return Err(format!("tftp error {num}: {}", msg.trim_end_matches('\0')));
            }
            OP_DATA => {
                // The transfer continues from the server's own port.
                if expected == 1 {
                    peer = from;
                } else if from != peer {
                    continue;
                }
                let ack = [&OP_ACK.to_be_bytes()[..], &num.to_be_bytes()[..]].concat();
                if num == expected {
                    data.extend_from_slice(&buf[4..n]);
                    if data.len() as u64 > limit {
                        return Err(format!("tftp: file larger than the {limit}-byte limit"));
                    }
                    expected = expected.wrapping_add(1);
                    retries = 0;
                }
                sock.send_to(&ack, peer)
                    .map_err(|e| format!("tftp send: {e}"))?;
                last_sent = ack;
                if num == expected.wrapping_sub(1) && n - 4 < BLOCK {
                    return Ok(data);
                }
            }
            _ => continue,
        }
    }
}
