//! The Ignition 2.x config model: spec 2.4.0, of which 2.0.0–2.3.0 are subsets (keys a version
//! lacks are gated in `version.rs`; the few fields whose meaning changed between versions are
//! normalised to 2.4.0's by the version modules).
//!
//! `Option` marks the fields 2.x has as pointers (absent and zero differ); plain fields are
//! Go value fields, absent meaning zero. Files, directories and links carry the 2.x `Node`
//! fields directly, as the JSON does.

use serde::Deserialize;

macro_rules! model {
    ($($(#[$m:meta])* pub struct $name:ident { $($body:tt)* })*) => {
        $(
            $(#[$m])*
            #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct $name { $($body)* }
        )*
    };
}

model! {
    /// A 2.x config.
    pub struct Config {
        pub ignition: Ignition,
        pub networkd: Networkd,
        pub passwd: Passwd,
        pub storage: Storage,
        pub systemd: Systemd,
    }

    pub struct Ignition {
        pub config: IgnitionConfig,
        pub proxy: Proxy,
        pub security: Security,
        pub timeouts: Timeouts,
        pub version: Option<String>,
    }

    pub struct IgnitionConfig {
        pub append: Vec<ConfigReference>,
        pub replace: Option<ConfigReference>,
    }

    /// A referenced config or certificate authority.
    pub struct ConfigReference {
        pub http_headers: Vec<HttpHeader>,
        pub source: String,
        pub verification: Verification,
    }

    pub struct HttpHeader {
        pub name: String,
        pub value: String,
    }

    pub struct Verification {
        pub hash: Option<String>,
    }

    pub struct Proxy {
        pub http_proxy: String,
        pub https_proxy: String,
        pub no_proxy: Vec<String>,
    }

    pub struct Security {
        pub tls: Tls,
    }

    pub struct Tls {
        pub certificate_authorities: Vec<ConfigReference>,
    }

    pub struct Timeouts {
        pub http_response_headers: Option<i64>,
        pub http_total: Option<i64>,
    }

    pub struct Networkd {
        pub units: Vec<NetworkdUnit>,
    }

    pub struct NetworkdUnit {
        pub contents: String,
        pub dropins: Vec<Dropin>,
        pub name: String,
    }

    /// A drop-in of a systemd or networkd unit.
    pub struct Dropin {
        pub contents: String,
        pub name: String,
    }

    pub struct Passwd {
        pub groups: Vec<Group>,
        pub users: Vec<User>,
    }

    pub struct Group {
        pub gid: Option<i64>,
        pub name: String,
        pub password_hash: String,
        pub system: bool,
    }

    pub struct User {
        /// Deprecated in 2.1 in favour of the user-level fields.
        pub create: Option<UserCreate>,
        pub gecos: String,
        pub groups: Vec<String>,
        pub home_dir: String,
        pub name: String,
        pub no_create_home: bool,
        pub no_log_init: bool,
        pub no_user_group: bool,
        pub password_hash: Option<String>,
        pub primary_group: String,
        pub ssh_authorized_keys: Vec<String>,
        pub shell: String,
        pub system: bool,
        pub uid: Option<i64>,
    }

    pub struct UserCreate {
        pub gecos: String,
        pub groups: Vec<String>,
        pub home_dir: String,
        pub no_create_home: bool,
        pub no_log_init: bool,
        pub no_user_group: bool,
        pub primary_group: String,
        pub shell: String,
        pub system: bool,
        pub uid: Option<i64>,
    }

    pub struct Storage {
        pub directories: Vec<Directory>,
        pub disks: Vec<Disk>,
        pub files: Vec<File>,
        pub filesystems: Vec<Filesystem>,
        pub links: Vec<Link>,
        pub raid: Vec<Raid>,
    }

    pub struct Disk {
        pub device: String,
        pub partitions: Vec<Partition>,
        pub wipe_table: bool,
    }

    pub struct Partition {
        pub guid: String,
        pub label: Option<String>,
        pub number: i64,
        pub should_exist: Option<bool>,
        /// Sectors; deprecated since 2.3 (and refused by the translation to 3.x).
        pub size: Option<i64>,
        #[serde(rename = "sizeMiB")]
        pub size_mib: Option<i64>,
        pub start: Option<i64>,
        #[serde(rename = "startMiB")]
        pub start_mib: Option<i64>,
        pub type_guid: String,
        pub wipe_partition_entry: bool,
    }

    pub struct Raid {
        pub devices: Vec<String>,
        pub level: String,
        pub name: String,
        pub options: Vec<String>,
        pub spares: i64,
    }

    /// A filesystem, named so that files can refer to it.
    pub struct Filesystem {
        pub mount: Option<Mount>,
        pub name: String,
        pub path: Option<String>,
    }

    pub struct Mount {
        /// Deprecated in 2.1 in favour of `wipeFilesystem` and `options`.
        pub create: Option<Create>,
        pub device: String,
        pub format: String,
        pub label: Option<String>,
        pub options: Vec<String>,
        pub uuid: Option<String>,
        pub wipe_filesystem: bool,
    }

    pub struct Create {
        pub force: bool,
        pub options: Vec<String>,
    }

    pub struct File {
        pub filesystem: String,
        pub group: Option<NodeOwner>,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: Option<NodeOwner>,
        pub append: bool,
        pub contents: FileContents,
        pub mode: Option<i64>,
    }

    pub struct FileContents {
        pub compression: String,
        pub http_headers: Vec<HttpHeader>,
        pub source: String,
        pub verification: Verification,
    }

    pub struct Directory {
        pub filesystem: String,
        pub group: Option<NodeOwner>,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: Option<NodeOwner>,
        pub mode: Option<i64>,
    }

    pub struct Link {
        pub filesystem: String,
        pub group: Option<NodeOwner>,
        pub overwrite: Option<bool>,
        pub path: String,
        pub user: Option<NodeOwner>,
        pub hard: bool,
        pub target: String,
    }

    /// The owner (user or group) of a file, directory or link.
    pub struct NodeOwner {
        pub id: Option<i64>,
        pub name: String,
    }

    pub struct Systemd {
        pub units: Vec<Unit>,
    }

    pub struct Unit {
        pub contents: String,
        pub dropins: Vec<Dropin>,
        /// Deprecated in 2.1 in favour of `enabled`.
        pub enable: bool,
        pub enabled: Option<bool>,
        pub mask: bool,
        pub name: String,
    }
}

/// The node fields files, directories and links share.
pub struct NodeRef<'a> {
    pub filesystem: &'a str,
    pub path: &'a str,
    pub overwrite: Option<bool>,
    pub user: &'a Option<NodeOwner>,
    pub group: &'a Option<NodeOwner>,
}

macro_rules! node_ref {
    ($($t:ty),*) => {$(
        impl $t {
            pub fn node(&self) -> NodeRef<'_> {
                NodeRef {
                    filesystem: &self.filesystem,
                    path: &self.path,
                    overwrite: self.overwrite,
                    user: &self.user,
                    group: &self.group,
                }
            }
        }
    )*};
}
node_ref!(File, Directory, Link);
