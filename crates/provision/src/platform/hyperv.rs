//! Microsoft Hyper-V: the config in the Data Exchange Service (KVP), read as a KVP daemon
//! does from the kernel's `/dev/vmbus/hv_kvp`: register, then take the host's SET
//! messages until it falls silent for a second. Pool 0 holds `ignition.config`, or the
//! pieces `ignition.config.0`, `.1`, … concatenated. As upstream, the pools are also
//! written into the target root (`/var/lib/hyperv/.kvp_pool_N`, mode 0600) so that the
//! KVP daemon of the booted system finds them; loads `hv_utils` when it is not there.
//!
//! Without Hyper-V the device is absent: the protocol is tested on recorded exchanges.

use super::{Context, Platform, UserData};
use flint_ignition::types::{File, Resource};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;

/// The size of `struct hv_kvp_msg` (linux/hyperv.h).
pub(crate) const MSG_SIZE: usize = 7432;
const OP_SET: u8 = 1;
const OP_REGISTER1: u8 = 100;
const KEY_OFFSET: usize = 16;
const VALUE_OFFSET: usize = 528;
pub(crate) const MAX_KEY: usize = 512;
pub(crate) const MAX_VALUE: usize = 2048;
const HV_E_FAIL: u32 = 0x8000_4005;
pub(crate) const POOLS: u8 = 5;
const POOL_DIR: &str = "/var/lib/hyperv";

/// The kernel's KVP channel: whole messages written and read.
pub(crate) trait Channel {
    fn send(&mut self, msg: &[u8]) -> Result<(), String>;
    /// The next message, or `None` when nothing came within a second.
    fn receive(&mut self) -> Result<Option<Vec<u8>>, String>;
}

/// Key/value pairs by pool, in arrival order.
pub(crate) type Pools = Vec<Vec<(String, String)>>;

fn c_string(b: &[u8], size: u32) -> String {
    let n = (size as usize).saturating_sub(1).min(b.len());
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// Registers and collects what the host sends.
pub(crate) fn read_pools(ch: &mut dyn Channel) -> Result<Pools, String> {
    let mut pools: Pools = vec![Vec::new(); POOLS as usize];
    let mut reg = vec![0u8; MSG_SIZE];
    reg[0] = OP_REGISTER1;
    ch.send(&reg)?;
    while let Some(msg) = ch.receive()? {
        if msg.len() != MSG_SIZE {
            return Err("failed to read from hv_kvp".into());
        }
        let mut reply = vec![0u8; MSG_SIZE];
        match msg[0] {
            OP_REGISTER1 => continue,
            OP_SET => {
                let key_size = u32::from_le_bytes(msg[8..12].try_into().expect("4"));
                let value_size = u32::from_le_bytes(msg[12..16].try_into().expect("4"));
                let key = c_string(&msg[KEY_OFFSET..KEY_OFFSET + MAX_KEY], key_size);
                let value = c_string(&msg[VALUE_OFFSET..VALUE_OFFSET + MAX_VALUE], value_size);
                if let Some(p) = pools.get_mut(msg[1] as usize) {
                    p.push((key, value));
                }
            }
            _ => reply[0..4].copy_from_slice(&HV_E_FAIL.to_le_bytes()),
        }
        ch.send(&reply)?;
    }
    Ok(pools)
}

/// The config in pool 0: `ignition.config`, else `ignition.config.0`, `.1`, … joined.
pub(crate) fn config_of(pools: &Pools) -> String {
    let pool = &pools[0];
    let get = |k: &str| {
        pool.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    if let Some(v) = get("ignition.config").filter(|v| !v.is_empty()) {
        return v;
    }
    let mut out = String::new();
    for i in 0.. {
        match get(&format!("ignition.config.{i}")) {
            Some(v) => out.push_str(&v),
            None => break,
        }
    }
    out
}

/// A pool as the KVP daemon keeps it: each key in 512 bytes, each value in 2048.
pub(crate) fn pool_file(pairs: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in pairs {
        let mut key = vec![0u8; MAX_KEY];
        let mut val = vec![0u8; MAX_VALUE];
        let kb = &k.as_bytes()[..k.len().min(MAX_KEY)];
        let vb = &v.as_bytes()[..v.len().min(MAX_VALUE)];
        key[..kb.len()].copy_from_slice(kb);
        val[..vb.len()].copy_from_slice(vb);
        out.extend(key);
        out.extend(val);
    }
    out
}

/// The user data and the pool files.
pub(crate) fn fetch_with(ch: &mut dyn Channel) -> Result<UserData, String> {
    let pools = read_pools(ch).map_err(|e| format!("reading key-value pairs: {e}"))?;
    let mut u = UserData::new(config_of(&pools).into_bytes(), "Hyper-V KVP pool 0");
    for (i, pairs) in pools.iter().enumerate() {
        let data = pool_file(pairs);
        u.files.push(File {
            path: format!("{POOL_DIR}/.kvp_pool_{i}"),
            overwrite: Some(true),
            mode: Some(0o600),
            contents: Resource {
                source: Some(format!(
                    "data:;base64,{}",
                    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &data)
                )),
                ..Default::default()
            },
            ..Default::default()
        });
    }
    Ok(u)
}

pub(crate) struct HyperV;

impl Platform for HyperV {
    fn name(&self) -> &'static str {
        "hyperv"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        if !std::path::Path::new("/sys/bus/vmbus/drivers/hv_utils").exists() {
            crate::system::tool::run("modprobe", ["hv_utils"])
                .map_err(|e| format!("loading hv_utils kernel module: {e}"))?;
        }
        let mut dev = Device::open(&cx.places.kvp)?;
        fetch_with(&mut dev)
    }
}

/// `/dev/vmbus/hv_kvp`.
struct Device(std::fs::File);

impl Device {
    fn open(path: &std::path::Path) -> Result<Device, String> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map(Device)
            .map_err(|e| format!("opening {}: {e}", path.display()))
    }
}

impl Channel for Device {
    fn send(&mut self, msg: &[u8]) -> Result<(), String> {
        let n = self
            .0
            .write(msg)
            .map_err(|e| format!("writing to hv_kvp: {e}"))?;
        if n != msg.len() {
            return Err("failed to write to hv_kvp".into());
        }
        Ok(())
    }

    fn receive(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            let mut pfd = libc::pollfd {
                fd: self.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("polling hv_kvp: {e}"));
            }
            if n == 0 {
                return Ok(None);
            }
            let mut buf = vec![0u8; MSG_SIZE];
            match self.0.read(&mut buf) {
                Ok(n) => {
                    buf.truncate(n);
                    return Ok(Some(buf));
                }
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::Interrupted =>
                {
                    continue;
                }
                Err(e) => return Err(format!("reading from hv_kvp: {e}")),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A message as the kernel driver hands one to the daemon.
    pub(crate) fn set_msg(pool: u8, key: &str, value: &str) -> Vec<u8> {
        let mut m = vec![0u8; MSG_SIZE];
        m[0] = OP_SET;
        m[1] = pool;
        m[8..12].copy_from_slice(&(key.len() as u32 + 1).to_le_bytes());
        m[12..16].copy_from_slice(&(value.len() as u32 + 1).to_le_bytes());
        m[KEY_OFFSET..KEY_OFFSET + key.len()].copy_from_slice(key.as_bytes());
        m[VALUE_OFFSET..VALUE_OFFSET + value.len()].copy_from_slice(value.as_bytes());
        m
    }

    /// A recorded session: the kernel's messages in order; what the daemon wrote.
    struct Recorded {
        incoming: std::collections::VecDeque<Vec<u8>>,
        sent: Vec<Vec<u8>>,
    }

    impl Channel for Recorded {
        fn send(&mut self, msg: &[u8]) -> Result<(), String> {
            assert_eq!(msg.len(), MSG_SIZE);
            self.sent.push(msg.to_vec());
            Ok(())
        }
        fn receive(&mut self) -> Result<Option<Vec<u8>>, String> {
            Ok(self.incoming.pop_front())
        }
    }

    #[test]
    fn registers_collects_and_splits() {
        let mut reg = vec![0u8; MSG_SIZE];
        reg[0] = OP_REGISTER1;
        let cfg = r#"{"ignition":{"version":"3.4.0"}}"#;
        let mut ch = Recorded {
            incoming: vec![
                reg,
                set_msg(0, "ignition.config.0", &cfg[..10]),
                set_msg(0, "ignition.config.1", &cfg[10..]),
                set_msg(3, "HostName", "hv-host"),
            ]
            .into(),
            sent: Vec::new(),
        };
        let u = fetch_with(&mut ch).unwrap();
        assert_eq!(u.bytes, cfg.as_bytes());
        // Registration, then one OK reply per SET (none for the driver's REGISTER1 echo).
        assert_eq!(ch.sent.len(), 4);
        assert_eq!(ch.sent[0][0], OP_REGISTER1);
        assert!(ch.sent[1..].iter().all(|r| r[0..4] == [0, 0, 0, 0]));
        assert_eq!(u.files.len(), 5);
        assert_eq!(u.files[3].path, "/var/lib/hyperv/.kvp_pool_3");
        assert_eq!(u.files[3].mode, Some(0o600));
        let pool3 = pool_file(&[("HostName".into(), "hv-host".into())]);
        assert_eq!(pool3.len(), MAX_KEY + MAX_VALUE);

        let single = Recorded {
            incoming: vec![
                set_msg(0, "ignition.config", "{}"),
                set_msg(0, "ignition.config.0", "ignored"),
            ]
            .into(),
            sent: Vec::new(),
        };
        let mut single = single;
        assert_eq!(fetch_with(&mut single).unwrap().bytes, b"{}");
        let mut none = Recorded {
            incoming: Default::default(),
            sent: Vec::new(),
        };
        assert!(fetch_with(&mut none).unwrap().bytes.is_empty());
    }
}
