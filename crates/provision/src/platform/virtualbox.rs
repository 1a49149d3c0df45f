//! VirtualBox (also `vagrant`, whose Flatcar boxes run on it): the config in the guest
//! property `/Ignition/Config` (no encoding: `/Ignition/Config/Encoding` must be unset),
//! read through the guest driver's HGCM calls to the guest-property service
//! (`/dev/vboxguest`). An unset property is no config. `flint rmcfg` deletes both
//! properties.
//!
//! Without VirtualBox the device is absent: the property logic is tested against a
//! recorded guest-property service ([`tests`]); the ioctl layouts against the kernel's
//! UAPI header.

use super::{Context, Platform, UserData};
use std::os::fd::AsRawFd;

pub(crate) const CONFIG: &str = "/Ignition/Config";
pub(crate) const ENCODING: &str = "/Ignition/Config/Encoding";

const FN_GET_PROP: u32 = 1;
const FN_DEL_PROP: u32 = 4;
pub(crate) const VINF_SUCCESS: i32 = 0;
pub(crate) const VERR_BUFFER_OVERFLOW: i32 = -41;
pub(crate) const VERR_NOT_FOUND: i32 = -78;

/// One parameter of an HGCM call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    /// Bytes the host reads.
    In(Vec<u8>),
    /// A buffer the host reads and writes.
    Buf(Vec<u8>),
    U32(u32),
    U64(u64),
}

/// HGCM calls to one host service.
pub(crate) trait Hgcm {
    /// Calls `function` of the connected service; returns the service's status code.
    fn call(&mut self, function: u32, params: &mut [Param]) -> Result<i32, String>;
}

/// A guest property's value; `None` when it does not exist.
pub(crate) fn get_property(h: &mut dyn Hgcm, name: &str) -> Result<Option<Vec<u8>>, String> {
    let mut cname = name.as_bytes().to_vec();
    cname.push(0);
    let mut params = [
        Param::In(cname.clone()),
        Param::Buf(vec![0]),
        Param::U64(0),
        Param::U32(0),
    ];
    let rc = h.call(FN_GET_PROP, &mut params)?;
    let size = match rc {
        VINF_SUCCESS | VERR_BUFFER_OVERFLOW => match params[3] {
            Param::U32(n) => n as usize,
            _ => 0,
        },
        VERR_NOT_FOUND => return Ok(None),
        rc => {
            return Err(format!(
                "fetching VirtualBox guest property {name:?}: error {rc}"
            ));
        }
    };
    params[1] = Param::Buf(vec![0; size]);
    let rc = h.call(FN_GET_PROP, &mut params)?;
    if rc != VINF_SUCCESS {
        return Err(format!(
            "fetching VirtualBox guest property {name:?}: error {rc}"
        ));
    }
    let Param::Buf(buf) = &params[1] else {
        return Err("malformed reply".into());
    };
    // The buffer holds the value and its flags, each NUL-terminated.
    let end = buf
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| format!("VirtualBox guest property {name:?} is not NUL-terminated"))?;
    Ok(Some(buf[..end].to_vec()))
}

pub(crate) fn delete_property(h: &mut dyn Hgcm, name: &str) -> Result<(), String> {
    let mut cname = name.as_bytes().to_vec();
    cname.push(0);
    match h.call(FN_DEL_PROP, &mut [Param::In(cname)])? {
        VINF_SUCCESS => Ok(()),
        -10 => Err(format!(
            "deleting VirtualBox guest property {name:?}: permission denied; is the property read-only?"
        )),
        rc => Err(format!(
            "deleting VirtualBox guest property {name:?}: error {rc}"
        )),
    }
}

/// The config as the platform reads it.
pub(crate) fn fetch_with(h: &mut dyn Hgcm) -> Result<UserData, String> {
    if let Some(enc) = get_property(h, ENCODING)?.filter(|e| !e.is_empty()) {
        return Err(format!(
            "unsupported {ENCODING:?} value {:?}",
            String::from_utf8_lossy(&enc)
        ));
    }
    Ok(match get_property(h, CONFIG)? {
        Some(v) => UserData::new(v, format!("VirtualBox guest property {CONFIG}")),
        None => UserData::none(format!("VirtualBox guest property {CONFIG} does not exist")),
    })
}

pub(crate) fn delete_with(h: &mut dyn Hgcm) -> Result<(), String> {
    delete_property(h, ENCODING)?;
    delete_property(h, CONFIG)
}

/// Registered as `virtualbox` and `vagrant`.
pub(crate) struct VirtualBox(pub &'static str);

impl Platform for VirtualBox {
    fn name(&self) -> &'static str {
        self.0
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let mut d = Device::connect(&cx.places.vboxguest)?;
        let r = fetch_with(&mut d);
        d.disconnect();
        r
    }

    fn delete_config(&self, cx: &Context) -> Result<(), String> {
        cx.note("deleting Ignition config from VirtualBox guest property");
        let mut d = Device::connect(&cx.places.vboxguest)?;
        let r = delete_with(&mut d);
        d.disconnect();
        r
    }
}

// The kernel's UAPI (linux/vboxguest.h).
const HDR: usize = 24;
const HDR_VERSION: u32 = 0x10001;
const IOCTL_VERSION_INFO: libc::c_ulong = 0xc02c_5600;
const IOCTL_CONNECT: libc::c_ulong = 0xc09c_5604;
const IOCTL_DISCONNECT: libc::c_ulong = 0xc01c_5605;
const PARM_32BIT: u32 = 1;
const PARM_64BIT: u32 = 2;
const PARM_LINADDR: u32 = 4;
const PARM_LINADDR_IN: u32 = 5;
const LOC_LOCALHOST_EXISTING: u32 = 2;

/// `_IOC(_IOC_READ|_IOC_WRITE, 'V', 7, size)`: a 64-bit HGCM call of `size` bytes.
pub(crate) fn ioctl_call64(size: usize) -> libc::c_ulong {
    (3 << 30) | ((size as libc::c_ulong) << 16) | (0x56 << 8) | 7
}

/// A request buffer: the header, then `body`.
fn request(body_in: usize, body_out: usize) -> Vec<u8> {
    let mut b = vec![0u8; HDR + body_in.max(body_out)];
    b[0..4].copy_from_slice(&((HDR + body_in) as u32).to_le_bytes());
    b[4..8].copy_from_slice(&HDR_VERSION.to_le_bytes());
    b[16..20].copy_from_slice(&((HDR + body_out) as u32).to_le_bytes());
    b
}

fn rc_of(b: &[u8]) -> i32 {
    i32::from_le_bytes(b[12..16].try_into().expect("4 bytes"))
}

/// The guest driver, connected to the guest-property service.
pub(crate) struct Device {
    file: std::fs::File,
    client: u32,
}

impl Device {
    fn ioctl(&self, req: libc::c_ulong, buf: &mut [u8]) -> Result<i32, String> {
        // SAFETY: buf is a request of the size the ioctl number encodes, alive for the call;
        // pointers inside it (HGCM parameters) point at buffers alive for the call too.
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), req as _, buf.as_mut_ptr()) };
        if rc < 0 {
            return Err(format!(
                "ioctl on the VirtualBox guest device: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(rc_of(buf))
    }

    pub(crate) fn connect(path: &std::path::Path) -> Result<Device, String> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("opening {}: {e}", path.display()))?;
        let mut d = Device { file, client: 0 };
        let mut v = request(16, 20);
        v[HDR..HDR + 4].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        v[HDR + 4..HDR + 8].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        let rc = d.ioctl(IOCTL_VERSION_INFO, &mut v)?;
        if rc != VINF_SUCCESS {
            return Err(format!("VirtualBox guest driver version: error {rc}"));
        }
        let mut c = request(132, 4);
        c[HDR..HDR + 4].copy_from_slice(&LOC_LOCALHOST_EXISTING.to_le_bytes());
        let name = b"VBoxGuestPropSvc";
        c[HDR + 4..HDR + 4 + name.len()].copy_from_slice(name);
        let rc = d.ioctl(IOCTL_CONNECT, &mut c)?;
        if rc != VINF_SUCCESS {
            return Err(format!(
                "connecting to the guest property service: error {rc}"
            ));
        }
        d.client = u32::from_le_bytes(c[HDR..HDR + 4].try_into().expect("4 bytes"));
        Ok(d)
    }

    fn disconnect(&mut self) {
        let mut c = request(4, 0);
        c[HDR..HDR + 4].copy_from_slice(&self.client.to_le_bytes());
        let _ = self.ioctl(IOCTL_DISCONNECT, &mut c);
    }
}

/// The bytes of an HGCM call request with `params` (pointers to their buffers).
pub(crate) fn encode_call(client: u32, function: u32, params: &mut [Param]) -> Vec<u8> {
    let size = 40 + 16 * params.len();
    let mut b = request(size - HDR, size - HDR);
    b[24..28].copy_from_slice(&client.to_le_bytes());
    b[28..32].copy_from_slice(&function.to_le_bytes());
    b[32..36].copy_from_slice(&u32::MAX.to_le_bytes()); // no timeout
    b[36] = 1; // interruptible
    b[38..40].copy_from_slice(&(params.len() as u16).to_le_bytes());
    for (i, p) in params.iter_mut().enumerate() {
        let o = 40 + 16 * i;
        let (kind, size, addr, value) = match p {
            Param::In(v) => (PARM_LINADDR_IN, v.len() as u32, v.as_ptr() as u64, 0u64),
            Param::Buf(v) => (PARM_LINADDR, v.len() as u32, v.as_mut_ptr() as u64, 0),
            Param::U32(n) => (PARM_32BIT, 0, 0, u64::from(*n)),
            Param::U64(n) => (PARM_64BIT, 0, 0, *n),
        };
        b[o..o + 4].copy_from_slice(&kind.to_le_bytes());
        if kind == PARM_32BIT || kind == PARM_64BIT {
            b[o + 4..o + 12].copy_from_slice(&value.to_le_bytes());
        } else {
            b[o + 4..o + 8].copy_from_slice(&size.to_le_bytes());
            b[o + 8..o + 16].copy_from_slice(&addr.to_le_bytes());
        }
    }
    b
}

/// Reads the values the host wrote back into `params`.
fn decode_call(b: &[u8], params: &mut [Param]) {
    for (i, p) in params.iter_mut().enumerate() {
        let o = 40 + 16 * i;
        match p {
            Param::U32(n) => *n = u32::from_le_bytes(b[o + 4..o + 8].try_into().expect("4")),
            Param::U64(n) => *n = u64::from_le_bytes(b[o + 4..o + 12].try_into().expect("8")),
            _ => {}
        }
    }
}

impl Hgcm for Device {
    fn call(&mut self, function: u32, params: &mut [Param]) -> Result<i32, String> {
        let mut b = encode_call(self.client, function, params);
        let rc = self.ioctl(ioctl_call64(b.len()), &mut b)?;
        decode_call(&b, params);
        Ok(rc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The guest-property service as recorded from VirtualBox: GET_PROP answers
    /// VERR_BUFFER_OVERFLOW with the needed size when the buffer is short, else the value
    /// and flags NUL-terminated; VERR_NOT_FOUND for unknown names; DEL_PROP removes.
    #[derive(Default)]
    struct Recorded {
        props: HashMap<String, String>,
        calls: Vec<(u32, String)>,
    }

    impl Hgcm for Recorded {
        fn call(&mut self, function: u32, params: &mut [Param]) -> Result<i32, String> {
            let Param::In(name) = &params[0] else {
                panic!("name first")
            };
            let name = String::from_utf8(name[..name.len() - 1].to_vec()).unwrap();
            self.calls.push((function, name.clone()));
            match function {
                FN_GET_PROP => {
                    let Some(v) = self.props.get(&name) else {
                        return Ok(VERR_NOT_FOUND);
                    };
                    let mut out = v.as_bytes().to_vec();
                    out.push(0);
                    out.extend_from_slice(b"RDONLYGUEST\0");
                    params[3] = Param::U32(out.len() as u32);
                    params[2] = Param::U64(1_700_000_000);
                    let Param::Buf(buf) = &mut params[1] else {
                        panic!("buffer second")
                    };
                    if buf.len() < out.len() {
                        return Ok(VERR_BUFFER_OVERFLOW);
                    }
                    buf[..out.len()].copy_from_slice(&out);
                    Ok(VINF_SUCCESS)
                }
                FN_DEL_PROP => {
                    self.props.remove(&name);
                    Ok(VINF_SUCCESS)
                }
                f => panic!("function {f}"),
            }
        }
    }

    #[test]
    fn reads_and_deletes_the_config_property() {
        let mut h = Recorded::default();
        assert!(fetch_with(&mut h).unwrap().bytes.is_empty());
        h.props
            .insert(CONFIG.into(), r#"{"ignition":{"version":"3.4.0"}}"#.into());
        assert_eq!(
            fetch_with(&mut h).unwrap().bytes,
            br#"{"ignition":{"version":"3.4.0"}}"#
        );
        h.props.insert(ENCODING.into(), "gzip".into());
        assert!(fetch_with(&mut h).unwrap_err().contains("unsupported"));
        delete_with(&mut h).unwrap();
        assert!(h.props.is_empty());
        assert_eq!(h.calls.last().unwrap(), &(FN_DEL_PROP, CONFIG.to_string()));
    }

    #[test]
    fn call_layout_matches_the_kernel_uapi() {
        // sizeof(struct vbg_ioctl_hgcm_call) = 40, each parameter 16; the ioctl number of
        // VBG_IOCTL_HGCM_CALL_64(104) from linux/vboxguest.h.
        assert_eq!(ioctl_call64(104), 0xc068_5607);
        let mut p = [Param::In(b"n\0".to_vec()), Param::U32(7)];
        let b = encode_call(3, FN_GET_PROP, &mut p);
        assert_eq!(b.len(), 72);
        assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), 72);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 3);
        assert_eq!(
            u32::from_le_bytes(b[40..44].try_into().unwrap()),
            PARM_LINADDR_IN
        );
        assert_eq!(u32::from_le_bytes(b[44..48].try_into().unwrap()), 2);
        assert_eq!(
            u32::from_le_bytes(b[56..60].try_into().unwrap()),
            PARM_32BIT
        );
        assert_eq!(u32::from_le_bytes(b[60..64].try_into().unwrap()), 7);
    }
}
