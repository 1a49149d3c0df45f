//! The Butane config: every field of every base version (0.1 to 0.8-experimental) and the
//! variants' own sections (fcos `boot_device` and `grub`, openshift `metadata` and
//! `openshift`). Which keys a variant version has is decided by its key gate
//! (`spec::Variant::has_key`); keys it lacks are reported as unused. Keys are snake_case as
//! users write them; fields are in upstream's order, which is the order of the checks.

use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

macro_rules! butane {
    ($($(#[$m:meta])* pub struct $name:ident { $($body:tt)* })*) => {
        $(
            $(#[$m])*
            #[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
            #[serde(default)]
            pub struct $name { $($body)* }
        )*
    };
}

/// The fields of a resource, for the two types that carry them (see [`IgnitionResource`]).
macro_rules! resource {
    ($($(#[$m:meta])* $name:ident),*) => {
        butane! {
            $(
                $(#[$m])*
                pub struct $name {
                    pub compression: Option<String>,
                    pub http_headers: Vec<HttpHeader>,
                    pub source: Option<String>,
                    /// Text embedded in the config (Butane sugar).
                    pub inline: Option<String>,
                    /// A file under the files directory embedded in the config (Butane sugar).
                    pub local: Option<String>,
                    pub verification: Verification,
                }
            )*
        }
    };
}

resource!(
    /// Contents given by URL (`source`), inline text (`inline`) or a file under the files
    /// directory (`local`): exactly one of them.
    Resource,
    /// A resource of the `ignition` section (merged or replacing configs, certificate
    /// authorities). The same fields as [`Resource`]; a type of its own because base 0.1
    /// gave these only `source` and `verification`.
    IgnitionResource
);

impl IgnitionResource {
    pub fn as_resource(&self) -> Resource {
        Resource {
            compression: self.compression.clone(),
            http_headers: self.http_headers.clone(),
            source: self.source.clone(),
            inline: self.inline.clone(),
            local: self.local.clone(),
            verification: self.verification.clone(),
        }
    }
}

butane! {
    /// A Butane config.
    pub struct Config {
        /// The Butane spec version, e.g. `1.1.0`.
        pub version: String,
        /// The distribution variant, e.g. `flatcar`.
        pub variant: String,
        pub ignition: Ignition,
        pub kernel_arguments: KernelArguments,
        pub passwd: Passwd,
        pub storage: Storage,
        pub systemd: Systemd,
        /// fcos, openshift: an encrypted and/or mirrored boot disk.
        pub boot_device: BootDevice,
        /// fcos, openshift: GRUB superusers.
        pub grub: Grub,
        /// openshift: the MachineConfig's name and labels.
        pub metadata: Metadata,
        /// openshift: MachineConfig-only settings.
        pub openshift: OpenShift,
    }

    pub struct Ignition {
        pub config: IgnitionConfig,
        pub proxy: Proxy,
        pub security: Security,
        pub timeouts: Timeouts,
    }

    pub struct IgnitionConfig {
        pub merge: Vec<IgnitionResource>,
        pub replace: IgnitionResource,
    }

    pub struct Proxy {
        pub http_proxy: Option<String>,
        pub https_proxy: Option<String>,
        pub no_proxy: Vec<String>,
    }

    pub struct Security {
        pub tls: Tls,
    }

    pub struct Tls {
        pub certificate_authorities: Vec<IgnitionResource>,
    }

    pub struct Timeouts {
        pub http_response_headers: Option<i64>,
        pub http_total: Option<i64>,
    }

    pub struct HttpHeader {
        pub name: String,
        pub value: Option<String>,
    }

    pub struct Verification {
        pub hash: Option<String>,
    }

    pub struct KernelArguments {
        pub should_exist: Vec<String>,
        pub should_not_exist: Vec<String>,
    }

    pub struct Passwd {
        pub groups: Vec<PasswdGroup>,
        pub users: Vec<PasswdUser>,
    }

    pub struct PasswdGroup {
        pub gid: Option<i64>,
        pub name: String,
        pub password_hash: Option<String>,
        pub should_exist: Option<bool>,
        pub system: Option<bool>,
    }

    pub struct PasswdUser {
        pub gecos: Option<String>,
        pub groups: Vec<String>,
        pub home_dir: Option<String>,
        pub name: String,
        pub no_create_home: Option<bool>,
        pub no_log_init: Option<bool>,
        pub no_user_group: Option<bool>,
        pub password_hash: Option<String>,
        pub primary_group: Option<String>,
        pub should_exist: Option<bool>,
        pub ssh_authorized_keys: Vec<String>,
        /// Files under the files directory whose lines are SSH keys.
        pub ssh_authorized_keys_local: Vec<String>,
        pub shell: Option<String>,
        pub system: Option<bool>,
        pub uid: Option<i64>,
    }

    pub struct Storage {
        pub directories: Vec<Directory>,
        pub disks: Vec<Disk>,
        pub files: Vec<File>,
        pub filesystems: Vec<Filesystem>,
        pub links: Vec<Link>,
        pub luks: Vec<Luks>,
        pub raid: Vec<Raid>,
        /// Directories under the files directory copied into the config.
        pub trees: Vec<Tree>,
    }

    pub struct Disk {
        pub device: String,
        pub partitions: Vec<Partition>,
        pub wipe_table: Option<bool>,
    }

    pub struct Partition {
        pub guid: Option<String>,
        pub label: Option<String>,
        pub number: i64,
        pub resize: Option<bool>,
        pub should_exist: Option<bool>,
        pub size_mib: Option<i64>,
        pub start_mib: Option<i64>,
        pub type_guid: Option<String>,
        pub wipe_partition_entry: Option<bool>,
    }

    pub struct Raid {
        pub devices: Vec<String>,
        pub level: Option<String>,
        pub name: String,
        pub options: Vec<String>,
        pub spares: Option<i64>,
    }

    pub struct Filesystem {
        pub device: String,
        pub format: Option<String>,
        pub label: Option<String>,
        pub mount_options: Vec<String>,
        pub options: Vec<String>,
        pub path: Option<String>,
        pub uuid: Option<String>,
        pub wipe_filesystem: Option<bool>,
        /// Generate a systemd mount (or swap) unit for this filesystem.
        pub with_mount_unit: Option<bool>,
    }

    pub struct Luks {
        pub clevis: Clevis,
        pub cex: Cex,
        pub device: Option<String>,
        pub discard: Option<bool>,
        pub key_file: Resource,
        pub label: Option<String>,
        pub name: String,
        pub open_options: Vec<String>,
        pub options: Vec<String>,
        pub uuid: Option<String>,
        pub wipe_volume: Option<bool>,
    }

    pub struct Clevis {
        pub custom: ClevisCustom,
        pub tang: Vec<Tang>,
        pub threshold: Option<i64>,
        pub tpm2: Option<bool>,
    }

    pub struct ClevisCustom {
        pub config: Option<String>,
        pub needs_network: Option<bool>,
        pub pin: Option<String>,
    }

    pub struct Tang {
        pub thumbprint: Option<String>,
        pub url: String,
        pub advertisement: Option<String>,
    }

    /// IBM Crypto Express (s390x) LUKS keys.
    pub struct Cex {
        pub enabled: Option<bool>,
    }

    pub struct File {
        pub group: NodeGroup,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: NodeUser,
        pub append: Vec<Resource>,
        pub contents: Resource,
        pub mode: Option<i64>,
    }

    pub struct Directory {
        pub group: NodeGroup,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: NodeUser,
        pub mode: Option<i64>,
    }

    pub struct Link {
        pub group: NodeGroup,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: NodeUser,
        pub hard: Option<bool>,
        pub target: Option<String>,
    }

    pub struct NodeUser {
        pub id: Option<i64>,
        pub name: Option<String>,
    }

    pub struct NodeGroup {
        pub id: Option<i64>,
        pub name: Option<String>,
    }

    pub struct Tree {
        /// Owner group of everything the tree creates.
        pub group: NodeGroup,
        /// A directory under the files directory.
        pub local: Option<String>,
        /// Where the tree lands in the target (default `/`).
        pub path: Option<String>,
        /// Owner of everything the tree creates.
        pub user: NodeUser,
        /// The mode of the tree's files (default 0644, or 0755 for executables).
        pub file_mode: Option<i64>,
        /// The mode of the tree's directories (default 0755); set, they are created.
        pub dir_mode: Option<i64>,
    }

    pub struct Systemd {
        pub units: Vec<Unit>,
        /// Podman quadlets, written under /etc/containers/systemd.
        pub quadlets: Vec<Quadlet>,
    }

    pub struct Unit {
        pub contents: Option<String>,
        /// A file under the files directory holding the unit.
        pub contents_local: Option<String>,
        pub dropins: Vec<Dropin>,
        pub enabled: Option<bool>,
        pub mask: Option<bool>,
        pub name: String,
    }

    pub struct Dropin {
        pub contents: Option<String>,
        /// A file under the files directory holding the drop-in.
        pub contents_local: Option<String>,
        pub name: String,
    }

    pub struct Quadlet {
        pub contents: Option<String>,
        /// A file under the files directory holding the quadlet.
        pub contents_local: Option<String>,
        /// The file name, e.g. `web.container` (or a template instance `web@1.container`).
        pub name: String,
        /// System-wide (`/etc/containers/systemd`) rather than for users.
        pub rootful: bool,
        pub dropins: Vec<Dropin>,
    }

    pub struct BootDevice {
        /// aarch64, ppc64le, x86_64 (default), and from fcos 1.6 s390x-eckd, s390x-virt,
        /// s390x-zfcp.
        pub layout: Option<String>,
        pub luks: BootDeviceLuks,
        pub mirror: BootDeviceMirror,
    }

    pub struct BootDeviceLuks {
        pub cex: Cex,
        pub discard: Option<bool>,
        pub device: Option<String>,
        pub tang: Vec<Tang>,
        pub threshold: Option<i64>,
        pub tpm2: Option<bool>,
    }

    pub struct BootDeviceMirror {
        pub devices: Vec<String>,
    }

    pub struct Grub {
        pub users: Vec<GrubUser>,
    }

    pub struct GrubUser {
        pub name: String,
        pub password_hash: Option<String>,
    }

    pub struct Metadata {
        pub name: String,
        pub labels: BTreeMap<String, String>,
    }

    pub struct OpenShift {
        // Options, to tell a list given empty (`[]`) from none: upstream's raw mode
        // reports an empty one as ignored too, but not a null or missing one.
        pub kernel_arguments: Option<Vec<String>>,
        pub extensions: Option<Vec<String>>,
        pub fips: Option<bool>,
        pub kernel_type: Option<String>,
    }
}
