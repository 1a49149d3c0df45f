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
    /// An Ignition config: what Ignition sets up on a machine's first boot.
    pub struct Config {
        /// Settings of the config itself: its spec version (required), other configs to merge into
        /// it or replace it with, and how resources are fetched.
        pub ignition: Ignition,
        /// Kernel command-line arguments to add to or remove from the installed system.
        #[serde(skip_serializing_if = "omit_struct")]
        pub kernel_arguments: KernelArguments,
        /// Local users and groups to create, modify or delete.
        #[serde(skip_serializing_if = "omit_struct")]
        pub passwd: Passwd,
        /// Disks, partitions, RAID arrays, LUKS volumes and filesystems to set up, and the files,
        /// directories and links to write.
        #[serde(skip_serializing_if = "omit_struct")]
        pub storage: Storage,
        /// Systemd units and drop-ins to write, enable, disable or mask.
        #[serde(skip_serializing_if = "omit_struct")]
        pub systemd: Systemd,
    }

    /// Settings of the config itself rather than of the machine.
    pub struct Ignition {
        /// Other configs to merge into this one, or to replace it with.
        #[serde(skip_serializing_if = "omit_struct")]
        pub config: IgnitionConfig,
        /// HTTP(S) proxies for the resources Ignition fetches.
        #[serde(skip_serializing_if = "omit_struct")]
        pub proxy: Proxy,
        /// Security settings for fetching resources: TLS certificate authorities.
        #[serde(skip_serializing_if = "omit_struct")]
        pub security: Security,
        /// Time limits for fetching resources over HTTP(S).
        #[serde(skip_serializing_if = "omit_struct")]
        pub timeouts: Timeouts,
        /// The spec version the config is written against, e.g. `3.4.0`; required.
        pub version: String,
    }

    /// Other configs to merge into this one, or to replace it with.
    pub struct IgnitionConfig {
        /// Configs fetched and merged into this one, in order; where both set a value, the fetched
        /// config's value wins, and list entries with the same key are merged.
        #[serde(skip_serializing_if = "is_zero")]
        pub merge: Vec<Resource>,
        /// A config fetched and used instead of this one; everything else in this config is then
        /// ignored.
        #[serde(skip_serializing_if = "omit_struct")]
        pub replace: Resource,
    }

    /// Proxies for fetching resources over HTTP(S).
    pub struct Proxy {
        /// URL of the proxy for HTTP requests, and for HTTPS requests too unless `httpsProxy` is
        /// set.
        #[serde(skip_serializing_if = "is_zero")]
        pub http_proxy: Option<String>,
        /// URL of the proxy for HTTPS requests.
        #[serde(skip_serializing_if = "is_zero")]
        pub https_proxy: Option<String>,
        /// Hosts reached without a proxy: IP addresses or prefixes, CIDR ranges, or domain names
        /// (which include their subdomains; with a leading `.`, only the subdomains). `*` turns
        /// proxying off entirely.
        #[serde(skip_serializing_if = "is_zero")]
        pub no_proxy: Vec<String>,
    }

    /// Security settings for fetching resources.
    pub struct Security {
        /// TLS settings for resources fetched over HTTPS.
        #[serde(skip_serializing_if = "omit_struct")]
        pub tls: Tls,
    }

    /// TLS settings for resources fetched over HTTPS.
    pub struct Tls {
        /// Certificate bundles (PEM, possibly several certificates each) trusted for HTTPS fetches
        /// in addition to the system's own authorities; each `source` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub certificate_authorities: Vec<Resource>,
    }

    /// Time limits for fetching resources over HTTP(S), in seconds.
    pub struct Timeouts {
        /// Seconds to wait for a server's response headers after sending a request; 0 means no
        /// limit. Default 10.
        #[serde(skip_serializing_if = "is_zero")]
        pub http_response_headers: Option<i64>,
        /// Seconds allowed for a whole fetch, from connecting to the end of the response and
        /// including retries; 0, the default, means no limit.
        #[serde(skip_serializing_if = "is_zero")]
        pub http_total: Option<i64>,
    }

    /// Data Ignition fetches from a URL, optionally compressed, with optional request headers and
    /// an optional hash to check.
    pub struct Resource {
        /// How the fetched data is compressed, so that Ignition decompresses it: `gzip`, or empty
        /// or omitted for none. Not possible with `s3` sources.
        #[serde(skip_serializing_if = "is_zero")]
        pub compression: Option<String>,
        /// Extra HTTP headers sent with the request; only for `http` and `https` sources.
        #[serde(skip_serializing_if = "is_zero")]
        pub http_headers: Vec<HttpHeader>,
        /// The URL of the data, e.g. `https://...`, `tftp://...`, `s3://bucket/key` or a `data:`
        /// URL holding the data itself. Prefer `https`, or set `verification`, since plain `http`
        /// can be tampered with.
        #[serde(skip_serializing_if = "is_zero")]
        pub source: Option<String>,
        /// A hash the fetched data must match; on a mismatch Ignition fails.
        #[serde(skip_serializing_if = "omit_struct")]
        pub verification: Verification,
    }

    /// An HTTP header sent when fetching a resource.
    pub struct HttpHeader {
        /// The header's name, e.g. `Authorization`; required. It replaces a header Ignition would
        /// send by default with the same name.
        pub name: String,
        /// The header's value. When configs are merged, a header without a value removes the header
        /// of that name the parent config set.
        #[serde(skip_serializing_if = "is_zero")]
        pub value: Option<String>,
    }

    /// A check of fetched data against a known hash.
    pub struct Verification {
        /// The expected hash as `sha512-<hex digest>` or `sha256-<hex digest>`; with `compression`,
        /// the hash of the decompressed data.
        #[serde(skip_serializing_if = "is_zero")]
        pub hash: Option<String>,
    }

    /// Kernel command-line arguments to change on the installed system.
    pub struct KernelArguments {
        /// Arguments that must be on the kernel command line, e.g. `console=ttyS0`; missing ones
        /// are added.
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Vec<String>,
        /// Arguments that must not be on the kernel command line; present ones are removed.
        #[serde(skip_serializing_if = "is_zero")]
        pub should_not_exist: Vec<String>,
    }

    /// Local users and groups.
    pub struct Passwd {
        /// Groups to create, modify or delete; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub groups: Vec<PasswdGroup>,
        /// User accounts to create, modify or delete; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub users: Vec<PasswdUser>,
    }

    /// A group of the system's group database, created if it doesn't exist and modified if it does.
    pub struct PasswdGroup {
        /// The numeric group ID; chosen by the system if omitted.
        #[serde(skip_serializing_if = "is_zero")]
        pub gid: Option<i64>,
        /// The group's name; required.
        pub name: String,
        /// The group's password, already hashed (crypt format, e.g. as `mkpasswd` prints it); never
        /// the plain password.
        #[serde(skip_serializing_if = "is_zero")]
        pub password_hash: Option<String>,
        /// Whether the group should exist; default true. False deletes the group if it exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        /// Create it as a system group, with an ID from the system range; has no effect on a group
        /// that already exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub system: Option<bool>,
    }

    /// A user account, created if it doesn't exist and modified if it does.
    pub struct PasswdUser {
        /// The GECOS (comment) field, usually the user's full name.
        #[serde(skip_serializing_if = "is_zero")]
        pub gecos: Option<String>,
        /// Supplementary groups the user is a member of; the groups must exist.
        #[serde(skip_serializing_if = "is_zero")]
        pub groups: Vec<String>,
        /// The home directory; the system default (usually `/home/NAME`) if omitted. For an
        /// existing user, the home directory is moved there.
        #[serde(skip_serializing_if = "is_zero")]
        pub home_dir: Option<String>,
        /// The login name; required.
        pub name: String,
        /// Don't create the home directory; has no effect on a user that already exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub no_create_home: Option<bool>,
        /// Don't add the user to the lastlog and faillog databases; has no effect on a user that
        /// already exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub no_log_init: Option<bool>,
        /// Don't create a group named after the user; has no effect on a user that already exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub no_user_group: Option<bool>,
        /// The login password, already hashed (crypt format, e.g. as `mkpasswd` prints it); never
        /// the plain password. An empty string disables password login, as does omitting it for a
        /// new user.
        #[serde(skip_serializing_if = "is_zero")]
        pub password_hash: Option<String>,
        /// Name or ID of the user's primary group; omitted, a new user gets a group of its own name
        /// (unless `noUserGroup`).
        #[serde(skip_serializing_if = "is_zero")]
        pub primary_group: Option<String>,
        /// SSH public keys that may log in as the user, one key per entry, each at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub ssh_authorized_keys: Vec<String>,
        /// The login shell, e.g. `/bin/bash`; the system default if omitted.
        #[serde(skip_serializing_if = "is_zero")]
        pub shell: Option<String>,
        /// Whether the user should exist; default true. False deletes the user if it exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        /// Create it as a system account, with an ID from the system range; has no effect on a user
        /// that already exists.
        #[serde(skip_serializing_if = "is_zero")]
        pub system: Option<bool>,
        /// The numeric user ID; chosen by the system if omitted.
        #[serde(skip_serializing_if = "is_zero")]
        pub uid: Option<i64>,
    }

    /// The machine's storage: block devices to set up, and filesystem entries to write.
    pub struct Storage {
        /// Directories to create in the installed system; each `path` at most once across files,
        /// directories and links.
        #[serde(skip_serializing_if = "is_zero")]
        pub directories: Vec<Directory>,
        /// Disks to partition; each `device` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub disks: Vec<Disk>,
        /// Regular files to write; each `path` at most once across files, directories and links.
        #[serde(skip_serializing_if = "is_zero")]
        pub files: Vec<File>,
        /// Filesystems to create or reuse, and where Ignition mounts them to write files; each
        /// `device` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub filesystems: Vec<Filesystem>,
        /// Symbolic and hard links to create; each `path` at most once across files, directories
        /// and links.
        #[serde(skip_serializing_if = "is_zero")]
        pub links: Vec<Link>,
        /// LUKS encrypted volumes to create or reuse; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub luks: Vec<Luks>,
        /// Software RAID (md) arrays to create; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub raid: Vec<Raid>,
    }

    /// A disk whose GPT partition table Ignition sets up.
    pub struct Disk {
        /// Absolute path of the disk, preferably a stable `/dev/disk/by-*` link; required.
        pub device: String,
        /// Partitions the disk should (or should not) have; existing partitions not listed are
        /// kept.
        #[serde(skip_serializing_if = "is_zero")]
        pub partitions: Vec<Partition>,
        /// Erase the whole partition table before creating the partitions; default false.
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_table: Option<bool>,
    }

    /// A GPT partition, identified by its `number`, or by its `label` when the number is 0.
    pub struct Partition {
        /// The partition's unique GUID; random if omitted.
        #[serde(skip_serializing_if = "is_zero")]
        pub guid: Option<String>,
        /// The partition's GPT name (PARTLABEL), at most 36 characters; it appears as
        /// `/dev/disk/by-partlabel/LABEL`.
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        /// Position in the partition table, counted from 1; 0 or omitted takes the next free slot.
        #[serde(skip_serializing_if = "is_zero")]
        pub number: i64,
        /// Resize an existing partition that matches the entry in everything but its size, instead
        /// of failing; default false.
        #[serde(skip_serializing_if = "is_zero")]
        pub resize: Option<bool>,
        /// Whether the partition should exist; default true. False deletes it (if
        /// `wipePartitionEntry` allows, else Ignition fails) and needs `number` set and no other
        /// layout fields.
        #[serde(skip_serializing_if = "is_zero")]
        pub should_exist: Option<bool>,
        /// Size in MiB; 0 or omitted makes the partition as large as the free space allows.
        #[serde(rename = "sizeMiB", skip_serializing_if = "is_zero")]
        pub size_mib: Option<i64>,
        /// Start offset in MiB; 0 or omitted places the partition at the start of the largest free
        /// space.
        #[serde(rename = "startMiB", skip_serializing_if = "is_zero")]
        pub start_mib: Option<i64>,
        /// The GPT partition type GUID; Linux filesystem data
        /// (`0FC63DAF-8483-4772-8E79-3D69D8477DE4`) if omitted.
        #[serde(skip_serializing_if = "is_zero")]
        pub type_guid: Option<String>,
        /// Allow Ignition to delete an existing partition that doesn't match the entry and create
        /// it anew, instead of failing; default false.
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_partition_entry: Option<bool>,
    }

    /// A Linux software RAID (md) array, created with `mdadm`.
    pub struct Raid {
        /// Absolute paths of the member devices; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub devices: Vec<String>,
        /// The RAID level, e.g. `raid1`, `raid5`, `raid6`, `raid10`, `raid0` or `linear`; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub level: Option<String>,
        /// The array's name; the array appears as `/dev/md/NAME`. Required.
        pub name: String,
        /// Extra arguments passed to `mdadm --create`.
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        /// How many of `devices` are kept as spares rather than active members; not for `raid0` or
        /// `linear`.
        #[serde(skip_serializing_if = "is_zero")]
        pub spares: Option<i64>,
    }

    /// A filesystem on a block device, created anew or reused if it is already there.
    pub struct Filesystem {
        /// Absolute path of the block device, preferably a stable `/dev/disk/by-*` link; required.
        pub device: String,
        /// The filesystem type, e.g. `xfs`, `ext4`, `btrfs`, `vfat` or `swap`; `none` for no
        /// filesystem (with `wipeFilesystem`, the old one is erased and nothing new is made).
        #[serde(skip_serializing_if = "is_zero")]
        pub format: Option<String>,
        /// The filesystem's label; how long it may be depends on the format.
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        /// Mount options used when Ignition mounts the filesystem, as `mount -o` takes them (e.g.
        /// `compress=zstd`).
        #[serde(skip_serializing_if = "is_zero")]
        pub mount_options: Vec<String>,
        /// Extra arguments for the format's `mkfs` tool when the filesystem is created.
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        /// Where Ignition mounts the filesystem, relative to the installed system's root, while it
        /// writes files; it does not make the mount permanent.
        #[serde(skip_serializing_if = "is_zero")]
        pub path: Option<String>,
        /// The filesystem's UUID: given to a new filesystem, and required of an existing one to
        /// reuse it.
        #[serde(skip_serializing_if = "is_zero")]
        pub uuid: Option<String>,
        /// Erase what is on the device and create the filesystem anew; default false, which reuses
        /// an existing filesystem of the same format (and `label`/`uuid`, where set) and fails on
        /// any other.
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_filesystem: Option<bool>,
    }

    /// A LUKS2 encrypted volume, opened as `/dev/mapper/NAME` and set up to be opened again at
    /// boot.
    pub struct Luks {
        /// Protect the volume's key with an IBM Crypto Express (CEX) card (s390x); not together
        /// with `clevis` or `keyFile`.
        #[serde(skip_serializing_if = "omit_struct")]
        pub cex: Cex,
        /// Unlock the volume automatically at boot with Clevis: with Tang servers, a TPM2, or a
        /// custom pin.
        #[serde(skip_serializing_if = "omit_struct")]
        pub clevis: Clevis,
        /// Absolute path of the device to encrypt, preferably a stable `/dev/disk/by-*` link;
        /// required.
        #[serde(skip_serializing_if = "is_zero")]
        pub device: Option<String>,
        /// Pass discard (TRIM) requests through to the device: better for SSDs and thin-provisioned
        /// storage, but it reveals which blocks are in use. Default false.
        #[serde(skip_serializing_if = "is_zero")]
        pub discard: Option<bool>,
        /// The volume's key. Omitted, Ignition generates a random one, which is removed again once
        /// Clevis is bound, or else kept in the installed system to open the volume at boot.
        #[serde(skip_serializing_if = "omit_struct")]
        pub key_file: Resource,
        /// The LUKS header's label.
        #[serde(skip_serializing_if = "is_zero")]
        pub label: Option<String>,
        /// The name of the opened volume, which appears as `/dev/mapper/NAME`; required, without
        /// slashes.
        pub name: String,
        /// Extra arguments for `cryptsetup luksOpen`; those cryptsetup can store are kept in the
        /// LUKS header for later boots.
        #[serde(skip_serializing_if = "is_zero")]
        pub open_options: Vec<String>,
        /// Extra arguments for `cryptsetup luksFormat`, e.g. a `--cipher`.
        #[serde(skip_serializing_if = "is_zero")]
        pub options: Vec<String>,
        /// The LUKS volume's UUID.
        #[serde(skip_serializing_if = "is_zero")]
        pub uuid: Option<String>,
        /// Erase what is on the device and create the volume anew; default false, which reuses an
        /// existing LUKS volume if it matches and fails otherwise.
        #[serde(skip_serializing_if = "is_zero")]
        pub wipe_volume: Option<bool>,
    }

    /// IBM Crypto Express (CEX) card protection of a LUKS volume's key (s390x).
    pub struct Cex {
        /// Encrypt the volume with a secure key from a CEX card; default false.
        #[serde(skip_serializing_if = "is_zero")]
        pub enabled: Option<bool>,
    }

    /// How Clevis unlocks a LUKS volume automatically at boot.
    pub struct Clevis {
        /// A Clevis pin and configuration given directly, instead of `tang`, `tpm2` and
        /// `threshold`.
        #[serde(skip_serializing_if = "omit_struct")]
        pub custom: ClevisCustom,
        /// Tang servers that can unlock the volume over the network; each `url` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub tang: Vec<Tang>,
        /// How many of the Tang servers and the TPM2 are needed to unlock the volume; default 1
        /// (any one of them).
        #[serde(skip_serializing_if = "is_zero")]
        pub threshold: Option<i64>,
        /// Bind the volume's key to this machine's TPM2 chip.
        #[serde(skip_serializing_if = "is_zero")]
        pub tpm2: Option<bool>,
    }

    /// A Clevis binding given as the pin and configuration `clevis luks bind` takes.
    pub struct ClevisCustom {
        /// The pin's configuration as JSON, passed to `clevis luks bind` unchanged; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub config: Option<String>,
        /// Whether binding and unlocking with this pin needs the network, so that the volume is
        /// opened once the network is up.
        #[serde(skip_serializing_if = "is_zero")]
        pub needs_network: Option<bool>,
        /// The Clevis pin: `tang`, `tpm2` or `sss`; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub pin: Option<String>,
    }

    /// A Tang server that can unlock a LUKS volume over the network.
    pub struct Tang {
        /// The server's advertisement (JSON), so that binding needs no contact with the server
        /// during provisioning; omitted, it is fetched from the server.
        #[serde(skip_serializing_if = "is_zero")]
        pub advertisement: Option<String>,
        /// Thumbprint of one of the server's signing keys that is trusted, as `tang-show-keys`
        /// prints it; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub thumbprint: Option<String>,
        /// The Tang server's URL, e.g. `http://tang.example.com`; required.
        #[serde(skip_serializing_if = "is_zero")]
        pub url: String,
    }

    /// A regular file to write in the installed system.
    pub struct File {
        /// The file's group, by group ID or by name (not both); root if omitted.
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first; `contents` must then be given. Default
        /// false: an existing file is left as it is if `contents` has no source, and anything else
        /// there is an error.
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        /// Absolute path of the file in the installed system; required.
        pub path: String,
        /// The file's owner, by user ID or by name (not both); root if omitted.
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        /// Data fetched and appended to the file, in order, after its contents.
        #[serde(skip_serializing_if = "is_zero")]
        pub append: Vec<Resource>,
        /// Where the file's contents come from. Without a source, an existing file keeps its
        /// contents and a missing one is created empty.
        #[serde(skip_serializing_if = "omit_struct")]
        pub contents: Resource,
        /// Permission bits as a decimal number, e.g. 420 for octal 0644. Default 0644, or the mode
        /// of an existing file that is kept.
        #[serde(skip_serializing_if = "is_zero")]
        pub mode: Option<i64>,
    }

    /// A directory to create in the installed system (with missing parents).
    pub struct Directory {
        /// The directory's group, by group ID or by name (not both); root if omitted.
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first. Default false: an existing directory
        /// is kept (only its owner and mode are set), and anything else there is an error.
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        /// Absolute path of the directory in the installed system; required.
        pub path: String,
        /// The directory's owner, by user ID or by name (not both); root if omitted.
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        /// Permission bits as a decimal number, e.g. 493 for octal 0755. Default 0755, or the mode
        /// of an existing directory that is kept.
        #[serde(skip_serializing_if = "is_zero")]
        pub mode: Option<i64>,
    }

    /// A symbolic or hard link to create in the installed system.
    pub struct Link {
        /// The symbolic link's group, by group ID or by name (not both); root if omitted. Not for
        /// hard links.
        #[serde(skip_serializing_if = "omit_struct")]
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first. Default false: an existing link to the
        /// same target is kept, and anything else there is an error.
        #[serde(skip_serializing_if = "is_zero")]
        pub overwrite: Option<bool>,
        /// Absolute path of the link in the installed system; required.
        pub path: String,
        /// The symbolic link's owner, by user ID or by name (not both); root if omitted. Not for
        /// hard links.
        #[serde(skip_serializing_if = "omit_struct")]
        pub user: NodeUser,
        /// Make a hard link instead of a symbolic one; default false. A hard link's target must not
        /// be a directory.
        #[serde(skip_serializing_if = "is_zero")]
        pub hard: Option<bool>,
        /// The path the link points to; required. A relative symbolic link target is resolved from
        /// the link's directory.
        #[serde(skip_serializing_if = "is_zero")]
        pub target: Option<String>,
    }

    /// The owner of a file, directory or link: a user ID or a user name.
    pub struct NodeUser {
        /// The owner's numeric user ID.
        #[serde(skip_serializing_if = "is_zero")]
        pub id: Option<i64>,
        /// The owner's user name, looked up in the installed system.
        #[serde(skip_serializing_if = "is_zero")]
        pub name: Option<String>,
    }

    /// The group of a file, directory or link: a group ID or a group name.
    pub struct NodeGroup {
        /// The numeric group ID.
        #[serde(skip_serializing_if = "is_zero")]
        pub id: Option<i64>,
        /// The group's name, looked up in the installed system.
        #[serde(skip_serializing_if = "is_zero")]
        pub name: Option<String>,
    }

    /// Systemd units.
    pub struct Systemd {
        /// Units to write, enable, disable or mask; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub units: Vec<Unit>,
    }

    /// A systemd unit, written to `/etc/systemd/system`.
    pub struct Unit {
        /// The unit file's text. Omitted, no unit file is written, e.g. to enable, mask or add
        /// drop-ins to a unit the OS ships.
        #[serde(skip_serializing_if = "is_zero")]
        pub contents: Option<String>,
        /// Drop-in files changing some of the unit's settings, written to
        /// `/etc/systemd/system/NAME.d/`; each `name` at most once.
        #[serde(skip_serializing_if = "is_zero")]
        pub dropins: Vec<Dropin>,
        /// True enables the unit, false disables it (through a systemd preset); omitted, it is left
        /// as it is. Only units with an `[Install]` section can be enabled.
        #[serde(skip_serializing_if = "is_zero")]
        pub enabled: Option<bool>,
        /// True masks the unit (links it to `/dev/null`) so that it cannot be started; false
        /// removes such a mask.
        #[serde(skip_serializing_if = "is_zero")]
        pub mask: Option<bool>,
        /// The unit's file name with its type suffix, e.g. `app.service` or `data.mount`; required.
        pub name: String,
    }

    /// A systemd drop-in: a file that changes some of a unit's settings.
    pub struct Dropin {
        /// The drop-in's text, e.g. a `[Service]` section with the settings to change.
        #[serde(skip_serializing_if = "is_zero")]
        pub contents: Option<String>,
        /// The drop-in's file name, ending in `.conf`; required.
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
