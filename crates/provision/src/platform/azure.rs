//! Microsoft Azure: the user data from IMDS (`Metadata: true`, 404/410/429 retried,
//! base64); when IMDS has none, the custom data on the provisioning CD-ROM (a UDF disc
//! holding `ovf-env.xml`; its `CustomData.bin`, absent = no config). Azure Stack reads only
//! the CD-ROM, UDF or ISO9660. Blob URLs are fetched with the VM's managed identity.
//!
//! Upstream waits for the CD-ROM for ever; flint for the provider fetch timeout. A device
//! that is not a CD drive at all (a loop device, a virtio disk) is read too; a CD drive is
//! read only when it reports a disc.

use super::{Context, Credentials, Platform, UserData, drive, userdata};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const USER_DATA: &str =
    "http://169.254.169.254/metadata/instance/compute/userData?api-version=2021-01-01&format=text";

pub(super) struct Azure;
pub(super) struct AzureStack;

impl Platform for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }

    fn needs_network(&self) -> bool {
        true
    }

    fn credentials(&self) -> Credentials {
        Credentials::Azure
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let data = cx
            .get(USER_DATA, &[("Metadata", "true")], &[404, 410, 429])
            .map_err(|e| format!("fetching to buffer: {e}"))?;
        if !data.is_empty() {
            let data =
                userdata::base64_decode(&data).map_err(|e| format!("decoding userdata: {e}"))?;
            return Ok(UserData::new(data, cx.url(USER_DATA)));
        }
        cx.note("no user data in IMDS; looking for the custom data on the provisioning CD-ROM");
        from_ovf_device(cx, &["udf"])
    }
}

impl Platform for AzureStack {
    fn name(&self) -> &'static str {
        "azurestack"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        from_ovf_device(cx, &["udf", "iso9660"])
    }
}

/// Waits for a device of one of `types` carrying `ovf-env.xml`; its `CustomData.bin`.
fn from_ovf_device(cx: &Context, types: &[&str]) -> Result<UserData, String> {
    let start = Instant::now();
    let mut checked: Vec<PathBuf> = Vec::new();
    loop {
        for dev in block_devices() {
            if checked.contains(&dev) {
                continue;
            }
            let kind = match drive::fs_type(&dev) {
                Ok(k) if types.contains(&k.as_str()) => k,
                _ => continue,
            };
            if !disc_present(&dev) {
                continue;
            }
            checked.push(dev.clone());
            match drive::read_files_as(cx, &dev, &kind, &["/ovf-env.xml", "/CustomData.bin"]) {
                Ok(files) if files[0].is_some() => {
                    let data = files.into_iter().nth(1).flatten().unwrap_or_default();
                    return Ok(UserData::new(
                        data,
                        format!("custom data on {}", dev.display()),
                    ));
                }
                Ok(_) => cx.note(format!(
                    "{} does not appear to be a config drive (no ovf-env.xml)",
                    dev.display()
                )),
                Err(e) => cx.note(format!("failed to read {}: {e}", dev.display())),
            }
        }
        if start.elapsed() >= cx.fetch_timeout() {
            return Err(format!(
                "no provisioning CD-ROM ({}) with ovf-env.xml appeared within {:.0} s",
                types.join(" or "),
                cx.fetch_timeout().as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Every block device node the kernel lists.
fn block_devices() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| Path::new("/dev").join(e.file_name()))
        .filter(|p| p.exists())
        .collect();
    v.sort();
    v
}

/// A CD drive with a disc in it, or no CD drive at all.
fn disc_present(dev: &Path) -> bool {
    use std::os::fd::AsRawFd;
    const CDROM_DRIVE_STATUS: libc::c_ulong = 0x5326;
    const CDS_DISC_OK: libc::c_int = 4;
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_nonblock()
        .open(dev)
    else {
        return false;
    };
    // SAFETY: an ioctl without an argument on a descriptor we own.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), CDROM_DRIVE_STATUS as _, 0) };
    if rc < 0 {
        let e = std::io::Error::last_os_error().raw_os_error();
        return matches!(e, Some(libc::ENOTTY) | Some(libc::EINVAL));
    }
    rc == CDS_DISC_OK
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}
