//! The Butane base config (the fields of base v0.5, of which v0.4 is a subset; which keys a
//! version has is decided in `spec::base::has_key`). Keys are snake_case as users write them.

use schemars::JsonSchema;
use serde::Deserialize;

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

butane! {
    /// A Butane config.
    pub struct Config {
        /// The distribution variant, e.g. `flatcar`.
        pub variant: String,
        /// The Butane spec version, e.g. `1.0.0`.
        pub version: String,
        pub ignition: Ignition,
        pub kernel_arguments: KernelArguments,
        pub passwd: Passwd,
        pub storage: Storage,
        pub systemd: Systemd,
    }

    pub struct Ignition {
        pub config: IgnitionConfig,
        pub proxy: Proxy,
        pub security: Security,
        pub timeouts: Timeouts,
    }

    pub struct IgnitionConfig {
        pub merge: Vec<Resource>,
        pub replace: Resource,
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
        pub certificate_authorities: Vec<Resource>,
    }

    pub struct Timeouts {
        pub http_response_headers: Option<i64>,
        pub http_total: Option<i64>,
    }

    /// Contents given by URL (`source`), inline text (`inline`) or a file under the files
    /// directory (`local`): exactly one of them.
    pub struct Resource {
        pub compression: Option<String>,
        pub http_headers: Vec<HttpHeader>,
        pub source: Option<String>,
        pub inline: Option<String>,
        pub local: Option<String>,
        pub verification: Verification,
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
        pub ssh_authorized_keys: Vec<String>,
        /// Files under the files directory whose lines are SSH keys (1.1.0).
        pub ssh_authorized_keys_local: Vec<String>,
        pub shell: Option<String>,
        pub should_exist: Option<bool>,
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
        /// A directory under the files directory.
        pub local: Option<String>,
        /// Where the tree lands in the target (default `/`).
        pub path: Option<String>,
    }

    pub struct Systemd {
        pub units: Vec<Unit>,
    }

    pub struct Unit {
        pub contents: Option<String>,
        /// A file under the files directory holding the unit (1.1.0).
        pub contents_local: Option<String>,
        pub dropins: Vec<Dropin>,
        pub enabled: Option<bool>,
        pub mask: Option<bool>,
        pub name: String,
    }

    pub struct Dropin {
        pub contents: Option<String>,
        /// A file under the files directory holding the drop-in (1.1.0).
        pub contents_local: Option<String>,
        pub name: String,
    }
}
