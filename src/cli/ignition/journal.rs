//! The structured journal entries upstream's `ignition` sends besides its log lines, which
//! distribution scripts look up by `MESSAGE_ID` (Fedora CoreOS's issue writer reads the
//! configs fetched; tools look for the SSH keys written). journald's native protocol: one
//! datagram of `KEY=value` lines to its socket; nothing is sent when no journal listens,
//! and a failure to send never fails a stage.

use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

/// A config was fetched (one entry per config the state file lists).
pub const CONFIG_FETCHED: &str = "57124006b5c94805b77ce473e92a8aeb";
/// An SSH authorized-keys file was written for a user.
pub const KEYS_WRITTEN: &str = "225067b87bbd4a0cb6ab151f82fa364b";

/// journald's socket; `FLINT_JOURNAL_SOCKET` replaces it (tests).
fn socket() -> PathBuf {
    match std::env::var_os("FLINT_JOURNAL_SOCKET") {
        Some(p) if !p.is_empty() => p.into(),
        _ => "/run/systemd/journal/socket".into(),
    }
}

/// The datagram for `fields`, after `MESSAGE` and `PRIORITY=6` (info) as upstream sends
/// them: a value holding a newline goes in the protocol's length-prefixed form.
fn datagram(message: &str, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    let all = [("MESSAGE", message), ("PRIORITY", "6")];
    for (key, value) in all.iter().chain(fields) {
        out.extend_from_slice(key.as_bytes());
        if value.contains('\n') {
            out.push(b'\n');
            out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        } else {
            out.push(b'=');
        }
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Sends one entry, if a journal listens.
pub fn send(message: &str, fields: &[(&str, &str)]) {
    let path = socket();
    if !path.exists() {
        return;
    }
    if let Ok(s) = UnixDatagram::unbound() {
        let _ = s.send_to(&datagram(message, fields), &path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_the_native_protocol() {
        let d = datagram("m", &[("A", "x"), ("B", "two\nlines")]);
        let mut want = b"MESSAGE=m\nPRIORITY=6\nA=x\nB\n".to_vec();
        want.extend_from_slice(&9u64.to_le_bytes());
        want.extend_from_slice(b"two\nlines\n");
        assert_eq!(d, want);
    }
}
