//! The Ignition config model: spec 3.7.0-experimental (= 3.6.0), of which every earlier 3.x
//! version is a subset (keys a version lacks are gated in `version.rs`).
//!
//! Fields are declared in the order the upstream Go structs declare them, because that is
//! the order of keys in the JSON the upstream tools print. A field is left out of the output
//! when it is empty (`None`, an empty list, a struct with nothing set, `0` for a partition
//! number), as Ignition's JSON encoder does; required strings are always written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// True for values the upstream encoder omits.
pub fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

thread_local! {
    /// Set while [`to_encoding_json`] writes on this thread.
    static EVERY_STRUCT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`is_zero`] for fields that are structs. The tools that print configs (Butane, the
/// validator) write them with a JSON library that leaves out empty structs; Ignition itself
/// writes its config cache and state with Go's `encoding/json`, whose `omitempty` never
/// leaves out a struct, so there they are written empty (`"verification":{}`).
fn omit_struct<T: Default + PartialEq>(v: &T) -> bool {
    !EVERY_STRUCT.with(std::cell::Cell::get) && is_zero(v)
}

/// `value` written compact as Go's `encoding/json` writes it (`json.Marshal`: empty structs
/// included, no trailing newline), as Ignition writes its config cache and state file.
pub fn to_encoding_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            EVERY_STRUCT.with(|c| c.set(self.0));
        }
    }
    // The writer runs on this thread only; the flag is put back even if it panics.
    let _reset = Reset(EVERY_STRUCT.with(|c| c.replace(true)));
    let mut out = flint_go::json::to_vec(value, false);
    out.pop();
    out
}

macro_rules! model {
    ($($(#[$m:meta])* pub struct $name:ident { $($body:tt)* })*) => {
        $(
            $(#[$m])*
            #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
            #[serde(default, rename_all = "camelCase")]
            pub struct $name { $($body)* }
        )*
    };
}

model! {
    /// An Ignition config.
    pub struct Config {
        pub ignition: Ignition,
        #[serde(skip_serializing_if = "omit_struct")]
        pub kernel_arguments: KernelArguments,
        #[serde(skip_serializing_if = "omit_struct")]
        pub passwd: Passwd,
        #[serde(skip_serializing_if = "omit_struct")]
        pub storage: Storage,
        #[serde(skip_serializing_if = "omit_struct")]
        pub systemd: Systemd,
    }

    /// Metadata about the config itself.
    pub struct Ignition {
        #[serde(skip_serializing_if = "omit_struct")]
        pub config: IgnitionConfig,
        #[serde(skip_serializing_if = "omit_struct")]
        pub proxy: Proxy,
        #[serde(skip_serializing_if = "omit_struct")]
        pub security: Security,
        #[serde(skip_serializing_if = "omit_struct")]
        pub timeouts: Timeouts,
        /// The config's spec version, e.g. `3.4.0`.
        pub version: String,
    }

    /// Other configs to merge into this one, or to replace it with.
    pub struct IgnitionConfig {
        #[serde(skip_serializing_if = "is_zero")]
        pub merge: Vec<Resource>,
        #[serde(skip_serializing_if = "omit_struct")]
        pub replace: Resource,
    }

    /// Proxies for HTTP(S) fetches.
    pub struct Proxy {
        #[serde(skip_serializing_if = "is_zero")]
        pub http_proxy: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub https_proxy: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub no_proxy: Vec<String>,
    }

    pub struct Security {
        #[serde(skip_serializing_if = "omit_struct")]
        pub tls: Tls,
    }

    pub struct Tls {
        /// Extra certificate authorities trusted for HTTPS fetches.
        #[serde(skip_serializing_if = "is_zero")]
        pub certificate_authorities: Vec<Resource>,
    }

    /// HTTP timeouts in seconds.
    pub struct Timeouts {
        #[serde(skip_serializing_if = "is_zero")]
        pub http_response_headers: Option<i64>,
        #[serde(skip_serializing_if = "is_zero")]
        pub http_total: Option<i64>,
    }

    /// Something fetched: a URL with optional decompression, headers and hash.
    pub struct Resource {
        #[serde(skip_serializing_if = "is_zero")]
        pub compression: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub http_headers: Vec<HttpHeader>,
        #[serde(skip_serializing_if = "is_zero")]
        pub source: Option<String>,
        #[serde(skip_serializing_if = "omit_struct")]
        pub verification: Verification,
    }

    pub struct HttpHeader {
        pub name: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub value: Option<String>,
    }

    pub struct Verification {
        /// `sha512-<hex>` or `sha256-<hex>`.
        #[serde(skip_serializing_if = "is_zero")]
        pub hash: Option<String>,
    }

    pub struct KernelArguments {
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub should_not_exist: Vec<String>,
    }

    pub struct Passwd {
        #[serde(skip_serializing_if = "is_zero")]
        pub groups: Vec<PasswdGroup>,
        #[serde(skip_serializing_if = "is_zero")]
        pub users: Vec<PasswdUser>,
    }

    pub struct PasswdGroup {
        #[serde(skip_serializing_if = "is_zero")]
        pub gid: Option<i64>,
        pub name: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub password_hash: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub system: Option<bool>,
    }

    pub struct PasswdUser {
        #[serde(skip_serializing_if = "is_zero")]
        pub gecos: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub groups: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub home_dir: Option<String>,
        pub name: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub no_create_home: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub no_log_init: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub no_user_group: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub password_hash: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub primary_group: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub ssh_authorized_keys: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub shell: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub system: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub uid: Option<i64>,
    }

    pub struct Storage {
        #[serde(skip_serializing_if = "is_zero")]
        pub directories: Vec<Directory>,
        #[serde(skip_serializing_if = "is_zero")]
        pub disks: Vec<Disk>,
        #[serde(skip_serializing_if = "is_zero")]
        pub files: Vec<File>,
        #[serde(skip_serializing_if = "is_zero")]
        pub filesystems: Vec<Filesystem>,
        #[serde(skip_serializing_if = "is_zero")]
        pub links: Vec<Link>,
        #[serde(skip_serializing_if = "is_zero")]
        pub luks: Vec<Luks>,
        #[serde(skip_serializing_if = "is_zero")]
        pub raid: Vec<Raid>,
    }

    pub struct Disk {
        pub device: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub partitions: Vec<Partition>,
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_table: Option<bool>,
    }

    pub struct Partition {
        #[serde(skip_serializing_if = "is_zero")]
        pub guid: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub number: i64,
        #[serde(skip_serializing_if = "is_zero")]
        pub resize: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        #[serde(rename = "sizeMiB", skip_serializing_if = "is_zero")]
        pub size_mib: Option<i64>,
        #[serde(rename = "startMiB", skip_serializing_if = "is_zero")]
        pub start_mib: Option<i64>,
        #[serde(skip_serializing_if = "is_zero")]
        pub type_guid: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_partition_entry: Option<bool>,
    }

    pub struct Raid {
        #[serde(skip_serializing_if = "is_zero")]
        pub devices: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub level: Option<String>,
        pub name: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub spares: Option<i64>,
    }

    pub struct Filesystem {
        pub device: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub format: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub mount_options: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub path: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub uuid: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_filesystem: Option<bool>,
    }

    pub struct Luks {
        /// IBM Crypto Express (s390x) key protection; spec 3.5.0 and later.
        #[serde(skip_serializing_if = "omit_struct")]
        pub cex: Cex,
        #[serde(skip_serializing_if = "omit_struct")]
        pub clevis: Clevis,
        #[serde(skip_serializing_if = "is_zero")]
        pub device: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub discard: Option<bool>,
        #[serde(skip_serializing_if = "omit_struct")]
        pub key_file: Resource,
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        pub name: String,
        #[serde(skip_serializing_if = "is_zero")]
        pub open_options: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub uuid: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_volume: Option<bool>,
    }

    pub struct Cex {
        #[serde(skip_serializing_if = "is_zero")]
        pub enabled: Option<bool>,
    }

    pub struct Clevis {
        #[serde(skip_serializing_if = "omit_struct")]
        pub custom: ClevisCustom,
        #[serde(skip_serializing_if = "is_zero")]
        pub tang: Vec<Tang>,
        #[serde(skip_serializing_if = "is_zero")]
        pub threshold: Option<i64>,
        #[serde(skip_serializing_if = "is_zero")]
        pub tpm2: Option<bool>,
    }

    pub struct ClevisCustom {
        #[serde(skip_serializing_if = "is_zero")]
        pub config: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub needs_network: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub pin: Option<String>,
    }

    pub struct Tang {
        #[serde(skip_serializing_if = "is_zero")]
        pub advertisement: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub thumbprint: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub url: String,
    }

    /// A regular file.
    pub struct File {
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        pub path: String,
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        #[serde(skip_serializing_if = "is_zero")]
        pub append: Vec<Resource>,
        #[serde(skip_serializing_if = "omit_struct")]
        pub contents: Resource,
        #[serde(skip_serializing_if = "is_zero")]
        pub mode: Option<i64>,
    }

    pub struct Directory {
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        pub path: String,
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        #[serde(skip_serializing_if = "is_zero")]
        pub mode: Option<i64>,
    }

    /// A symbolic or hard link.
    pub struct Link {
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        pub path: String,
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        #[serde(skip_serializing_if = "is_zero")]
        pub hard: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub target: Option<String>,
    }

    /// An owner given by id or by name.
    pub struct NodeUser {
        #[serde(skip_serializing_if = "is_zero")]
        pub id: Option<i64>,
        #[serde(skip_serializing_if = "is_zero")]
        pub name: Option<String>,
    }

    pub struct NodeGroup {
        #[serde(skip_serializing_if = "is_zero")]
        pub id: Option<i64>,
        #[serde(skip_serializing_if = "is_zero")]
        pub name: Option<String>,
    }

    pub struct Systemd {
        #[serde(skip_serializing_if = "is_zero")]
        pub units: Vec<Unit>,
    }

    pub struct Unit {
        #[serde(skip_serializing_if = "is_zero")]
        pub contents: Option<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub dropins: Vec<Dropin>,
        #[serde(skip_serializing_if = "is_zero")]
        pub enabled: Option<bool>,
        #[serde(skip_serializing_if = "is_zero")]
        pub mask: Option<bool>,
        pub name: String,
    }

    pub struct Dropin {
        #[serde(skip_serializing_if = "is_zero")]
        pub contents: Option<String>,
        pub name: String,
    }
}

/// The ownership and overwrite fields files, directories and links share.
pub struct NodeRef<'a> {
    pub path: &'a str,
    pub overwrite: Option<bool>,
    pub user: &'a NodeUser,
    pub group: &'a NodeGroup,
}

macro_rules! node_ref {
    ($($t:ty),*) => {$(
        impl $t {
            pub fn node(&self) -> NodeRef<'_> {
                NodeRef { path: &self.path, overwrite: self.overwrite, user: &self.user, group: &self.group }
            }
        }
    )*};
}
node_ref!(File, Directory, Link);

impl Cex {
    /// Upstream's test: only `enabled: true` asks for CEX.
    pub fn is_present(&self) -> bool {
        self.enabled == Some(true)
    }
}

impl Clevis {
    /// Upstream's test for "this volume is bound with Clevis".
    pub fn is_present(&self) -> bool {
        self.custom.pin.as_deref().is_some_and(|p| !p.is_empty())
            || !self.tang.is_empty()
            || self.tpm2 == Some(true)
            || self.threshold.is_some_and(|t| t != 0)
    }

    /// Whether binding the volume needs the network (upstream's fetch-offline asks for it):
    /// a Tang server whose advertisement is not in the config, or a custom pin that says so.
    pub fn needs_network_to_bind(&self) -> bool {
        (self.tang.iter()).any(|t| t.advertisement.as_deref().is_none_or(str::is_empty))
            || self.custom.needs_network == Some(true)
    }

    /// Whether opening the volume at boot needs the network (crypttab's `_netdev`): a Tang
    /// server, or a custom pin that says so.
    pub fn needs_network_at_boot(&self) -> bool {
        let custom = self.custom.pin.as_deref().is_some_and(|p| !p.is_empty());
        !self.tang.is_empty() || (custom && self.custom.needs_network == Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_json_writes_empty_structs_as_go_does() {
        let mut c = Config::default();
        c.ignition.version = "3.7.0-experimental".into();
        // As Ignition v2.26.0 caches `{"ignition":{"version":"3.4.0"}}`.
        let empty = r#"{"ignition":{"config":{"replace":{"verification":{}}},"proxy":{},"security":{"tls":{}},"timeouts":{},"version":"3.7.0-experimental"},"kernelArguments":{},"passwd":{},"storage":{},"systemd":{}}"#;
        assert_eq!(String::from_utf8(to_encoding_json(&c)).unwrap(), empty);
        let f = File {
            path: "/etc/foo".into(),
            contents: Resource {
                source: Some("data:,hello".into()),
                ..Default::default()
            },
            mode: Some(420),
            ..Default::default()
        };
        let want = r#"{"group":{},"path":"/etc/foo","user":{},"contents":{"source":"data:,hello","verification":{}},"mode":420}"#;
        assert_eq!(String::from_utf8(to_encoding_json(&f)).unwrap(), want);
        // The tools' own form is untouched.
        assert_eq!(
            flint_go::json::to_vec(&c, false),
            b"{\"ignition\":{\"version\":\"3.7.0-experimental\"}}\n"
        );
    }
}
