//! CloudSigma: the server context over the second serial port (`/dev/ttyS1`): the
//! request `<\n\n>` answers the whole context as JSON ended by `\x04`; the user data is
//! `meta["cloudinit-user-data"]`, base64 when `meta["base64_fields"]` lists it. Upstream
//! Ignition has no CloudSigma provider (Flatcar's image left the config to
//! coreos-cloudinit, and its Ignition refuses the platform name): this one is flint's.

use super::{Context, Platform, UserData, userdata};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

pub(super) struct CloudSigma;

impl Platform for CloudSigma {
    fn name(&self) -> &'static str {
        "cloudsigma"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let path = &cx.places.cloudsigma_serial;
        let ctx = read_context(path, Duration::from_secs(30))
            .map_err(|e| format!("reading the server context from {}: {e}", path.display()))?;
        user_data(&ctx).map(|b| UserData::new(b, format!("server context on {}", path.display())))
    }
}

/// Sends the request and reads the answer up to the end-of-transmission byte.
pub(super) fn read_context(path: &std::path::Path, wait: Duration) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut port = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .map_err(|e| e.to_string())?;
    raw_mode(&port);
    port.write_all(b"<\n\n>").map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if start.elapsed() > wait {
            return Err(format!("no answer within {:.0} s", wait.as_secs_f64()));
        }
        match port.read(&mut buf) {
            Ok(0) => std::thread::sleep(Duration::from_millis(20)),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if let Some(i) = out.iter().position(|&b| b == 0x04) {
                    out.truncate(i);
                    return Ok(out);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// 115200 baud, no echo, no line processing; reads return after 0.1 s without data.
fn raw_mode(port: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: termios calls on a descriptor we own with a zeroed-then-filled struct; a
    // port that is no terminal just keeps its settings.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(port.as_raw_fd(), &mut t) != 0 {
            return;
        }
        libc::cfmakeraw(&mut t);
        libc::cfsetispeed(&mut t, libc::B115200);
        libc::cfsetospeed(&mut t, libc::B115200);
        t.c_cc[libc::VMIN] = 0;
        t.c_cc[libc::VTIME] = 1;
        libc::tcsetattr(port.as_raw_fd(), libc::TCSANOW, &t);
    }
}

/// The user data in a server context.
pub(super) fn user_data(context: &[u8]) -> Result<Vec<u8>, String> {
    let v: serde_json::Value =
        serde_json::from_slice(context).map_err(|e| format!("server context: {e}"))?;
    let meta = &v["meta"];
    let Some(data) = meta["cloudinit-user-data"].as_str() else {
        return Ok(Vec::new());
    };
    let b64 = meta["base64_fields"]
        .as_str()
        .unwrap_or("")
        .split(',')
        .any(|f| f.trim() == "cloudinit-user-data");
    if b64 {
        userdata::base64_decode(data.as_bytes())
    } else {
        Ok(data.as_bytes().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_from_the_context() {
        let c =
            br#"{"meta":{"cloudinit-user-data":"e30=","base64_fields":"ssh,cloudinit-user-data"}}"#;
        assert_eq!(user_data(c).unwrap(), b"{}");
        let c = br#"{"meta":{"cloudinit-user-data":"{}"}}"#;
        assert_eq!(user_data(c).unwrap(), b"{}");
        assert!(user_data(br#"{"meta":{}}"#).unwrap().is_empty());
        assert!(user_data(b"nope").is_err());
    }
}
