//! Platforms: where a machine's user config comes from (a cloud's metadata service, a
//! config drive, a hypervisor channel, the kernel command line) and what else a platform
//! does (delete the config after boot, report status, lend credentials for object storage).
//!
//! A platform is a small module behind [`Platform`]; [`get`] finds one by name and
//! [`from_cmdline`] picks the one the kernel command line names (`ignition.platform.id=`,
//! else Flatcar's `flatcar.oem.id=`/`coreos.oem.id=` with Flatcar's renames, else `qemu`
//! on a QEMU/KVM machine as Flatcar's `ignition-setup-pre` does, else `metal`).
//! [`acquire`] runs upstream's chain: the kernel command line, then the system config
//! directories' `user.ign`, then the platform.

pub(crate) mod cmdline;
pub(crate) mod drive;
pub mod system;
pub(crate) mod userdata;

mod akamai;
mod aliyun;
mod aws;
mod azure;
mod cloudsigma;
mod cloudstack;
mod digitalocean;
mod exoscale;
mod file;
mod gcp;
mod hetzner;
pub(crate) mod hyperv;
mod ibmcloud;
mod kubevirt;
mod metal;
mod nutanix;
mod openstack;
mod oraclecloud;
mod packet;
mod proxmoxve;
pub(crate) mod qemu;
mod scaleway;
mod upcloud;
pub(crate) mod virtualbox;
pub(crate) mod vmware;
mod vultr;

use crate::fetch::Fetcher;
use crate::fetch::metadata::Endpoint;
use flint_ignition::types::File;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// What a platform hands over.
#[derive(Debug, Clone, Default)]
pub struct UserData {
    /// The raw user data; empty when the platform has none (a successful run of the base
    /// config alone).
    pub bytes: Vec<u8>,
    /// Where it came from, for messages.
    pub origin: String,
    /// Files the platform wants written by the files stage (Hyper-V's KVP pools).
    pub files: Vec<File>,
    /// Which of upstream's providers answered: `cmdline`, `system`, or the platform's
    /// name (upstream's state file records it).
    pub provider: &'static str,
}

impl UserData {
    pub fn new(bytes: Vec<u8>, origin: impl Into<String>) -> UserData {
        UserData {
            bytes,
            origin: origin.into(),
            files: Vec::new(),
            provider: "",
        }
    }

    /// No user data.
    pub fn none(origin: impl Into<String>) -> UserData {
        UserData::new(Vec::new(), origin)
    }
}

/// Which credentials a platform lends to object-storage fetches (s3://, arn:, gs://, Azure
/// Blob URLs). GCS tokens come from the GCE metadata server on any platform, as upstream.
pub use crate::fetch::cloud::Credentials;

/// Whether user data is an Ignition config (not empty, not a script or cloud-config).
pub fn is_config(data: &[u8]) -> bool {
    userdata::classify(data) == userdata::Kind::Config
}

/// A platform.
pub trait Platform: Sync {
    fn name(&self) -> &'static str;

    /// The user config (empty bytes: none).
    fn fetch(&self, cx: &Context) -> Result<UserData, String>;

    /// Whether fetching the user config needs the network (upstream's fetch-offline
    /// stage would ask for it).
    fn needs_network(&self) -> bool {
        false
    }

    /// Deletes the config from the hypervisor after boot (`flint rmcfg`).
    fn delete_config(&self, _cx: &Context) -> Result<(), String> {
        Err(format!("cannot delete config on platform {}", self.name()))
    }

    /// Reports a stage's outcome to the platform (Equinix Metal's timeline).
    fn report(&self, _cx: &Context, _stage: &str, _error: Option<&str>) -> Result<(), String> {
        Ok(())
    }

    fn credentials(&self) -> Credentials {
        Credentials::Anonymous
    }
}

/// Where platforms look; every path overridable so that tests can stage them.
#[derive(Debug, Clone)]
pub struct Places {
    pub cmdline: PathBuf,
    /// QEMU fw_cfg entries by name.
    pub fw_cfg: PathBuf,
    /// DMI identity (sys_vendor, product_name) for the QEMU/KVM default.
    pub dmi: PathBuf,
    pub system: system::SystemDirs,
    /// systemd-networkd's DHCP leases (CloudStack's metadata server is the DHCP server).
    pub leases: PathBuf,
    /// Network interfaces (OpenStack's IPv6 metadata service is per interface).
    pub net: PathBuf,
    /// Hyper-V's KVP device.
    pub kvp: PathBuf,
    /// VirtualBox's guest device.
    pub vboxguest: PathBuf,
    /// CloudSigma's server-context serial port.
    pub cloudsigma_serial: PathBuf,
    /// Where config drives are mounted while they are read.
    pub mount_dir: PathBuf,
    /// How long devices are waited for where upstream waits a fixed time (30 s) or for
    /// ever: at most this long (`FLINT_DEVICE_TIMEOUT`, default 30 s).
    pub device_wait: Duration,
}

impl Default for Places {
    fn default() -> Self {
        let env = |var: &str, default: &str| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| default.into())
        };
        Places {
            // Upstream's name for the hook (newer than 2.26.0's, which has none) too.
            cmdline: std::env::var_os("FLINT_CMDLINE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| env("IGNITION_KERNEL_CMDLINE_PATH", "/proc/cmdline")),
            fw_cfg: env("FLINT_FW_CFG", "/sys/firmware/qemu_fw_cfg/by_name"),
            dmi: "/sys/class/dmi/id".into(),
            system: system::SystemDirs::default(),
            leases: "/run/systemd/netif/leases".into(),
            net: "/sys/class/net".into(),
            kvp: "/dev/vmbus/hv_kvp".into(),
            vboxguest: "/dev/vboxguest".into(),
            cloudsigma_serial: env("FLINT_CLOUDSIGMA_SERIAL", "/dev/ttyS1"),
            mount_dir: std::env::temp_dir(),
            device_wait: crate::system::devices::timeout(),
        }
    }
}

/// What a platform works with.
pub struct Context {
    /// For metadata services: Ignition's HTTP settings, the provider fetch timeout.
    pub fetcher: Fetcher,
    pub endpoint: Endpoint,
    pub places: Places,
    /// How long config drives and devices are waited for.
    pub device_timeout: Duration,
    notes: Mutex<Vec<String>>,
}

impl Context {
    pub fn new(fetcher: Fetcher, places: Places) -> Context {
        Context {
            device_timeout: places.device_wait,
            endpoint: fetcher.endpoint.clone(),
            fetcher,
            places,
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Records a line for the run's output.
    pub fn note(&self, text: impl Into<String>) {
        self.notes
            .lock()
            .expect("no holder panics")
            .push(text.into());
    }

    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().expect("no holder panics"))
    }

    /// How long a provider may take: the fetcher's total timeout (`--fetch-timeout`).
    pub fn fetch_timeout(&self) -> Duration {
        self.fetcher
            .http
            .total_timeout
            .unwrap_or(Duration::from_secs(120))
    }

    /// The metadata URL `url`, as rewritten by `FLINT_METADATA_ENDPOINT`.
    pub fn url(&self, url: &str) -> String {
        self.endpoint.url(url)
    }

    /// GET a metadata URL: body on 2xx, `None` on 404.
    pub fn get_optional(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        retry: &[u16],
    ) -> Result<Option<Vec<u8>>, String> {
        crate::fetch::metadata::get_optional(
            &self.fetcher.http,
            &self.endpoint,
            url,
            headers,
            retry,
        )
    }

    /// GET a metadata URL: body on 2xx, an error otherwise.
    pub fn get(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        retry: &[u16],
    ) -> Result<Vec<u8>, String> {
        crate::fetch::metadata::get(&self.fetcher.http, &self.endpoint, url, headers, retry)
    }
}

/// Every platform, by name. Aliases share a module.
static PLATFORMS: &[&dyn Platform] = &[
    &akamai::Akamai,
    &aliyun::Aliyun,
    &aws::Aws,
    &azure::Azure,
    &azure::AzureStack,
    &openstack::OpenStack("brightbox"),
    &cloudsigma::CloudSigma,
    &cloudstack::CloudStack,
    &digitalocean::DigitalOcean,
    &packet::Packet("equinix"),
    &exoscale::Exoscale,
    &file::FilePlatform,
    &gcp::Gcp,
    &hetzner::Hetzner,
    &hyperv::HyperV,
    &ibmcloud::IbmCloud,
    &kubevirt::KubeVirt,
    &metal::Metal,
    &nutanix::Nutanix,
    &openstack::OpenStack("openstack"),
    &oraclecloud::OracleCloud,
    &packet::Packet("packet"),
    &proxmoxve::ProxmoxVE,
    &qemu::Qemu,
    &scaleway::Scaleway,
    &openstack::OpenStack("stackit"),
    &upcloud::UpCloud,
    &virtualbox::VirtualBox("vagrant"),
    &virtualbox::VirtualBox("virtualbox"),
    &vmware::VMware,
    &vultr::Vultr,
];

/// The platform called `name`.
pub fn get(name: &str) -> Option<&'static dyn Platform> {
    PLATFORMS.iter().copied().find(|p| p.name() == name)
}

/// Every platform name, sorted.
pub fn names() -> Vec<&'static str> {
    PLATFORMS.iter().map(|p| p.name()).collect()
}

/// The platform name the kernel command line `cmdline` gives, with `dmi` (a DMI identity
/// directory) deciding the default as Flatcar does.
pub fn name_from_cmdline(cmdline: &str, dmi: &std::path::Path) -> String {
    let last = |key: &str| {
        cmdline
            .split_whitespace()
            .filter_map(|a| a.split_once('='))
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
            .next_back()
    };
    if let Some(id) = last("ignition.platform.id").filter(|v| !v.is_empty()) {
        return id;
    }
    // Flatcar's ignition-setup-pre: flatcar.oem.id when it differs from the default,
    // else coreos.oem.id, else the default; then its renames.
    let default = if on_qemu(dmi) { "qemu" } else { "metal" };
    let mut oem = last("flatcar.oem.id").unwrap_or_else(|| default.to_string());
    if oem == default {
        oem = last("coreos.oem.id").unwrap_or_else(|| default.to_string());
    }
    match oem.as_str() {
        "ec2" => "aws".into(),
        "gce" => "gcp".into(),
        "pxe" => "metal".into(),
        _ => oem,
    }
}

/// Whether DMI says QEMU or KVM (what systemd-detect-virt reports as kvm or qemu).
fn on_qemu(dmi: &std::path::Path) -> bool {
    ["sys_vendor", "product_name", "bios_vendor"]
        .iter()
        .any(|f| {
            std::fs::read_to_string(dmi.join(f)).is_ok_and(|v| {
                let v = v.trim();
                v == "QEMU" || v.starts_with("KVM") || v.contains("QEMU")
            })
        })
}

/// The platform for a run: `explicit` when given, else from the kernel command line.
pub fn select(explicit: Option<&str>, places: &Places) -> Result<&'static dyn Platform, String> {
    let name = match explicit {
        Some(n) => n.to_string(),
        None => {
            let cmdline = std::fs::read_to_string(&places.cmdline).unwrap_or_default();
            name_from_cmdline(&cmdline, &places.dmi)
        }
    };
    get(&name).ok_or_else(|| format!("unknown platform {name:?}; known: {}", names().join(", ")))
}

/// Whether getting the user config needs the network (what upstream's fetch-offline stage
/// decides before bringing the network up): a URL on the kernel command line decides by its
/// scheme, a labelled device or a `user.ign` needs none, else the platform says. (Resources
/// the config then references are another matter: see [`crate::fetch::needs_network`].)
pub fn source_needs_network(platform: &dyn Platform, places: &Places) -> bool {
    let text = std::fs::read_to_string(&places.cmdline).unwrap_or_default();
    let r = cmdline::parse(&text);
    if let Some(url) = &r.url {
        return crate::fetch::needs_network(url);
    }
    if r.device.is_some() && r.path.is_some() {
        return false;
    }
    if matches!(places.system.user_config(), Ok(Some(_))) {
        return false;
    }
    platform.needs_network()
}

/// The user data, where upstream looks for it: the kernel command line (a URL, or a
/// labelled device), then `user.ign` in the system config directories, then the platform.
pub fn acquire(platform: &dyn Platform, cx: &Context) -> Result<UserData, String> {
    if let Some(u) = cmdline::fetch(cx)? {
        return Ok(UserData {
            provider: "cmdline",
            ..u
        });
    }
    if let Some((path, bytes)) = cx.places.system.user_config()? {
        return Ok(UserData {
            provider: "system",
            ..UserData::new(bytes, path.display().to_string())
        });
    }
    let u = (platform.fetch(cx)).map_err(|e| format!("platform {}: {e}", platform.name()))?;
    Ok(UserData {
        provider: platform.name(),
        ..u
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_from_the_command_line() {
        let none = std::path::Path::new("/nonexistent");
        let n = |c: &str| name_from_cmdline(c, none);
        assert_eq!(n("quiet"), "metal");
        assert_eq!(n("ignition.platform.id=aws flatcar.oem.id=gce"), "aws");
        assert_eq!(n("flatcar.oem.id=ec2"), "aws");
        assert_eq!(n("flatcar.oem.id=gce"), "gcp");
        assert_eq!(n("flatcar.oem.id=pxe"), "metal");
        assert_eq!(n("coreos.oem.id=azure"), "azure");
        assert_eq!(n("flatcar.oem.id=vmware coreos.oem.id=azure"), "vmware");
        // flatcar.oem.id equal to the default lets coreos.oem.id speak.
        assert_eq!(n("flatcar.oem.id=metal coreos.oem.id=packet"), "packet");
        assert_eq!(n("flatcar.oem.id=a flatcar.oem.id=hetzner"), "hetzner");
        assert_eq!(n("ignition.platform.id= flatcar.oem.id=ec2"), "aws");
        let t = std::env::temp_dir().join(format!("flint-dmi-{}", std::process::id()));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("sys_vendor"), "QEMU\n").unwrap();
        assert_eq!(name_from_cmdline("quiet", &t), "qemu");
        assert_eq!(
            name_from_cmdline("flatcar.oem.id=qemu coreos.oem.id=ec2", &t),
            "aws"
        );
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn which_sources_need_the_network() {
        let t = std::env::temp_dir().join(format!("flint-neednet-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(&t).unwrap();
        let places = Places {
            cmdline: t.join("cmdline"),
            system: system::SystemDirs::under(&t.join("sys")),
            ..Places::default()
        };
        let aws = get("aws").unwrap();
        let qemu = get("qemu").unwrap();
        std::fs::write(&places.cmdline, "quiet").unwrap();
        assert!(source_needs_network(aws, &places));
        assert!(!source_needs_network(qemu, &places));
        std::fs::write(&places.cmdline, "ignition.config.url=data:,{}").unwrap();
        assert!(!source_needs_network(aws, &places));
        std::fs::write(&places.cmdline, "ignition.config.url=tftp://h/c.ign").unwrap();
        assert!(source_needs_network(qemu, &places));
        std::fs::write(&places.cmdline, "quiet").unwrap();
        std::fs::create_dir_all(&places.system.vendor).unwrap();
        std::fs::write(places.system.vendor.join("user.ign"), "{}").unwrap();
        assert!(!source_needs_network(aws, &places));
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn every_platform_is_found_by_its_name() {
        for n in names() {
            assert_eq!(get(n).unwrap().name(), n);
        }
        assert!(get("nope").is_none());
        assert!(crate::fetch::needs_network("http://x"));
        assert!(crate::fetch::needs_network("s3://b/k"));
        assert!(!crate::fetch::needs_network("data:,x"));
        assert!(!crate::fetch::needs_network("OEM:///x"));
    }
}
