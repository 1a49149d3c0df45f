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
                    /// How the data at `source` is compressed, so that Ignition decompresses it:
                    /// `gzip`, or empty or omitted for none. Data Butane embeds itself is
                    /// compressed when that pays off, unless this is set: the data is then taken as
                    /// already compressed.
                    pub compression: Option<String>,
                    /// Extra HTTP headers sent with the request; only for `http` and `https`
                    /// sources.
                    pub http_headers: Vec<HttpHeader>,
                    /// The URL of the data, e.g. `https://...`, `tftp://...`, `s3://bucket/key` or
                    /// a `data:` URL holding the data itself. Prefer `https`, or set
                    /// `verification`, since plain `http` can be tampered with.
                    pub source: Option<String>,
                    /// The data itself, written in the config; Butane turns it into a `data:` URL
                    /// in `source` (gzipped when that is shorter). Not together with `source`.
                    pub inline: Option<String>,
                    /// Path of a file relative to the files directory (`--files-dir`) whose
                    /// contents Butane embeds as a `data:` URL in `source`. Not together with
                    /// `source` or `inline`.
                    pub local: Option<String>,
                    /// A hash the data must match; on a mismatch Ignition fails.
                    pub verification: Verification,
                }
            )*
        }
    };
}

resource!(
    /// Data for a file, a fragment appended to one, or a LUKS key: fetched from a URL, or
    /// embedded in the config by Butane.
    Resource,
    // The same fields as `Resource`; a type of its own because base 0.1 gave these only
    // `source` and `verification`.
    /// A config to merge or replace this one with, or a certificate bundle: fetched from a
    /// URL, or embedded in the config by Butane.
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
    /// A Butane config, which Butane translates into an Ignition config (or, for OpenShift, a
    /// MachineConfig).
    pub struct Config {
        /// The Butane spec version the config is written against, e.g. `1.5.0` (`4.16.0` for
        /// OpenShift); required. Together with `variant` it decides which fields are available and
        /// the Ignition spec version of the output.
        pub version: String,
        /// The distribution the config is for: `fcos`, `flatcar`, `openshift`, `r4e` or `fiot`;
        /// required.
        pub variant: String,
        /// Settings of the config itself: other configs to merge into it or replace it with, and
        /// how resources are fetched. Butane sets the Ignition spec version.
        pub ignition: Ignition,
        /// Kernel command-line arguments to add to or remove from the installed system.
        pub kernel_arguments: KernelArguments,
        /// Local users and groups to create, modify or delete.
        pub passwd: Passwd,
        /// Disks, partitions, RAID arrays, LUKS volumes and filesystems to set up, and the files,
        /// directories and links to write.
        pub storage: Storage,
        /// Systemd units and drop-ins to write, enable, disable or mask.
        pub systemd: Systemd,
        /// Encryption (LUKS) and/or mirroring (RAID1) of the boot disk. Butane turns it into the
        /// disks, partitions, RAID arrays, LUKS volume and filesystems that reproduce the OS
        /// image's layout.
        pub boot_device: BootDevice,
        /// GRUB bootloader settings: superusers whose password protects the boot menu. Butane
        /// appends them to `/boot/grub2/user.cfg` on the boot filesystem.
        pub grub: Grub,
        /// The name and labels of the MachineConfig Butane writes; not part of a plain Ignition
        /// config (`--raw`).
        pub metadata: Metadata,
        /// MachineConfig settings the Machine Config Operator applies itself (kernel arguments,
        /// extensions, FIPS, kernel type); ignored when writing a plain Ignition config (`--raw`).
        pub openshift: OpenShift,
    }

    /// Settings of the config itself rather than of the machine.
    pub struct Ignition {
        /// Other configs to merge into this one, or to replace it with.
        pub config: IgnitionConfig,
        /// HTTP(S) proxies for the resources Ignition fetches.
        pub proxy: Proxy,
        /// Security settings for fetching resources: TLS certificate authorities.
        pub security: Security,
        /// Time limits for fetching resources over HTTP(S).
        pub timeouts: Timeouts,
    }

    /// Other configs to merge into this one, or to replace it with.
    pub struct IgnitionConfig {
        /// Configs merged into this one, in order; where both set a value, the merged config's
        /// value wins, and list entries with the same key are merged.
        pub merge: Vec<IgnitionResource>,
        /// A config used instead of this one; everything else in this config is then ignored.
        pub replace: IgnitionResource,
    }

    /// Proxies for fetching resources over HTTP(S).
    pub struct Proxy {
        /// URL of the proxy for HTTP requests, and for HTTPS requests too unless `https_proxy` is
        /// set.
        pub http_proxy: Option<String>,
        /// URL of the proxy for HTTPS requests.
        pub https_proxy: Option<String>,
        /// Hosts reached without a proxy: IP addresses or prefixes, CIDR ranges, or domain names
        /// (which include their subdomains; with a leading `.`, only the subdomains). `*` turns
        /// proxying off entirely.
        pub no_proxy: Vec<String>,
    }

    /// Security settings for fetching resources.
    pub struct Security {
        /// TLS settings for resources fetched over HTTPS.
        pub tls: Tls,
    }

    /// TLS settings for resources fetched over HTTPS.
    pub struct Tls {
        /// Certificate bundles (PEM, possibly several certificates each) trusted for HTTPS fetches
        /// in addition to the system's own authorities; each at most once.
        pub certificate_authorities: Vec<IgnitionResource>,
    }

    /// Time limits for fetching resources over HTTP(S), in seconds.
    pub struct Timeouts {
        /// Seconds to wait for a server's response headers after sending a request; 0 means no
        /// limit. Default 10.
        pub http_response_headers: Option<i64>,
        /// Seconds allowed for a whole fetch, from connecting to the end of the response and
        /// including retries; 0, the default, means no limit.
        pub http_total: Option<i64>,
    }

    /// An HTTP header sent when fetching a resource.
    pub struct HttpHeader {
        /// The header's name, e.g. `Authorization`; required. It replaces a header Ignition would
        /// send by default with the same name.
        pub name: String,
        /// The header's value. When configs are merged, a header without a value removes the header
        /// of that name the parent config set.
        pub value: Option<String>,
    }

    /// A check of fetched data against a known hash.
    pub struct Verification {
        /// The expected hash as `sha512-<hex digest>` or `sha256-<hex digest>`; with `compression`,
        /// the hash of the decompressed data.
        pub hash: Option<String>,
    }

    /// Kernel command-line arguments to change on the installed system.
    pub struct KernelArguments {
        /// Arguments that must be on the kernel command line, e.g. `console=ttyS0`; missing ones
        /// are added.
        pub should_exist: Vec<String>,
        /// Arguments that must not be on the kernel command line; present ones are removed.
        pub should_not_exist: Vec<String>,
    }

    /// Local users and groups.
    pub struct Passwd {
        /// Groups to create, modify or delete; each `name` at most once.
        pub groups: Vec<PasswdGroup>,
        /// User accounts to create, modify or delete; each `name` at most once.
        pub users: Vec<PasswdUser>,
    }

    /// A group of the system's group database, created if it doesn't exist and modified if it does.
    pub struct PasswdGroup {
        /// The numeric group ID; chosen by the system if omitted.
        pub gid: Option<i64>,
        /// The group's name; required.
        pub name: String,
        /// The group's password, already hashed (crypt format, e.g. as `mkpasswd` prints it); never
        /// the plain password.
        pub password_hash: Option<String>,
        /// Whether the group should exist; default true. False deletes the group if it exists.
        pub should_exist: Option<bool>,
        /// Create it as a system group, with an ID from the system range; has no effect on a group
        /// that already exists.
        pub system: Option<bool>,
    }

    /// A user account, created if it doesn't exist and modified if it does.
    pub struct PasswdUser {
        /// The GECOS (comment) field, usually the user's full name.
        pub gecos: Option<String>,
        /// Supplementary groups the user is a member of; the groups must exist.
        pub groups: Vec<String>,
        /// The home directory; the system default (usually `/home/NAME`) if omitted. For an
        /// existing user, the home directory is moved there.
        pub home_dir: Option<String>,
        /// The login name; required.
        pub name: String,
        /// Don't create the home directory; has no effect on a user that already exists.
        pub no_create_home: Option<bool>,
        /// Don't add the user to the lastlog and faillog databases; has no effect on a user that
        /// already exists.
        pub no_log_init: Option<bool>,
        /// Don't create a group named after the user; has no effect on a user that already exists.
        pub no_user_group: Option<bool>,
        /// The login password, already hashed (crypt format, e.g. as `mkpasswd` prints it); never
        /// the plain password. An empty string disables password login, as does omitting it for a
        /// new user.
        pub password_hash: Option<String>,
        /// Name or ID of the user's primary group; omitted, a new user gets a group of its own name
        /// (unless `no_user_group`).
        pub primary_group: Option<String>,
        /// Whether the user should exist; default true. False deletes the user if it exists.
        pub should_exist: Option<bool>,
        /// SSH public keys that may log in as the user, one key per entry, each at most once.
        pub ssh_authorized_keys: Vec<String>,
        /// Files relative to the files directory (`--files-dir`) holding SSH public keys, one per
        /// line; Butane adds each key to `ssh_authorized_keys`.
        pub ssh_authorized_keys_local: Vec<String>,
        /// The login shell, e.g. `/bin/bash`; the system default if omitted.
        pub shell: Option<String>,
        /// Create it as a system account, with an ID from the system range; has no effect on a user
        /// that already exists.
        pub system: Option<bool>,
        /// The numeric user ID; chosen by the system if omitted.
        pub uid: Option<i64>,
    }

    /// The machine's storage: block devices to set up, and filesystem entries to write.
    pub struct Storage {
        /// Directories to create in the installed system; each `path` at most once across files,
        /// directories and links.
        pub directories: Vec<Directory>,
        /// Disks to partition; each `device` at most once.
        pub disks: Vec<Disk>,
        /// Regular files to write; each `path` at most once across files, directories and links.
        pub files: Vec<File>,
        /// Filesystems to create or reuse, and where Ignition mounts them to write files; each
        /// `device` at most once.
        pub filesystems: Vec<Filesystem>,
        /// Symbolic and hard links to create; each `path` at most once across files, directories
        /// and links.
        pub links: Vec<Link>,
        /// LUKS encrypted volumes to create or reuse; each `name` at most once.
        pub luks: Vec<Luks>,
        /// Software RAID (md) arrays to create; each `name` at most once.
        pub raid: Vec<Raid>,
        /// Directory trees relative to the files directory (`--files-dir`) to copy into the
        /// installed system. Butane turns each file into a `files` entry and each symbolic link
        /// into a `links` entry; entries you write for the same paths (without contents or target)
        /// set their attributes.
        pub trees: Vec<Tree>,
    }

    /// A disk whose GPT partition table Ignition sets up.
    pub struct Disk {
        /// Absolute path of the disk, preferably a stable `/dev/disk/by-*` link; required.
        pub device: String,
        /// Partitions the disk should (or should not) have; existing partitions not listed are
        /// kept.
        pub partitions: Vec<Partition>,
        /// Erase the whole partition table before creating the partitions; default false.
        pub wipe_table: Option<bool>,
    }

    /// A GPT partition, identified by its `number`, or by its `label` when the number is 0.
    pub struct Partition {
        /// The partition's unique GUID; random if omitted.
        pub guid: Option<String>,
        /// The partition's GPT name (PARTLABEL), at most 36 characters; it appears as
        /// `/dev/disk/by-partlabel/LABEL`.
        pub label: Option<String>,
        /// Position in the partition table, counted from 1; 0 or omitted takes the next free slot.
        pub number: i64,
        /// Resize an existing partition that matches the entry in everything but its size, instead
        /// of failing; default false.
        pub resize: Option<bool>,
        /// Whether the partition should exist; default true. False deletes it (if
        /// `wipe_partition_entry` allows, else Ignition fails) and needs `number` set and no other
        /// layout fields.
        pub should_exist: Option<bool>,
        /// Size in MiB; 0 or omitted makes the partition as large as the free space allows.
        pub size_mib: Option<i64>,
        /// Start offset in MiB; 0 or omitted places the partition at the start of the largest free
        /// space.
        pub start_mib: Option<i64>,
        /// The GPT partition type GUID; Linux filesystem data
        /// (`0FC63DAF-8483-4772-8E79-3D69D8477DE4`) if omitted.
        pub type_guid: Option<String>,
        /// Allow Ignition to delete an existing partition that doesn't match the entry and create
        /// it anew, instead of failing; default false.
        pub wipe_partition_entry: Option<bool>,
    }

    /// A Linux software RAID (md) array, created with `mdadm`.
    pub struct Raid {
        /// Absolute paths of the member devices; required.
        pub devices: Vec<String>,
        /// The RAID level, e.g. `raid1`, `raid5`, `raid6`, `raid10`, `raid0` or `linear`; required.
        pub level: Option<String>,
        /// The array's name; the array appears as `/dev/md/NAME`. Required.
        pub name: String,
        /// Extra arguments passed to `mdadm --create`.
        pub options: Vec<String>,
        /// How many of `devices` are kept as spares rather than active members; not for `raid0` or
        /// `linear`.
        pub spares: Option<i64>,
    }

    /// A filesystem on a block device, created anew or reused if it is already there.
    pub struct Filesystem {
        /// Absolute path of the block device, preferably a stable `/dev/disk/by-*` link; required.
        pub device: String,
        /// The filesystem type, e.g. `xfs`, `ext4`, `btrfs`, `vfat` or `swap`; `none` for no
        /// filesystem (with `wipe_filesystem`, the old one is erased and nothing new is made).
        pub format: Option<String>,
        /// The filesystem's label; how long it may be depends on the format.
        pub label: Option<String>,
        /// Mount options used when Ignition mounts the filesystem, as `mount -o` takes them (e.g.
        /// `compress=zstd`).
        pub mount_options: Vec<String>,
        /// Extra arguments for the format's `mkfs` tool when the filesystem is created.
        pub options: Vec<String>,
        /// Where Ignition mounts the filesystem, relative to the installed system's root, while it
        /// writes files; it does not make the mount permanent.
        pub path: Option<String>,
        /// The filesystem's UUID: given to a new filesystem, and required of an existing one to
        /// reuse it.
        pub uuid: Option<String>,
        /// Erase what is on the device and create the filesystem anew; default false, which reuses
        /// an existing filesystem of the same format (and `label`/`uuid`, where set) and fails on
        /// any other.
        pub wipe_filesystem: Option<bool>,
        /// Have Butane generate an enabled systemd mount unit for the filesystem (a swap unit for
        /// `swap`), named after the escaped `path` (or device) and using `mount_options`. A unit of
        /// the same name in `systemd.units` is merged into it.
        pub with_mount_unit: Option<bool>,
    }

    /// A LUKS2 encrypted volume, opened as `/dev/mapper/NAME` and set up to be opened again at
    /// boot.
    pub struct Luks {
        /// Unlock the volume automatically at boot with Clevis: with Tang servers, a TPM2, or a
        /// custom pin.
        pub clevis: Clevis,
        /// Protect the volume's key with an IBM Crypto Express (CEX) card (s390x); not together
        /// with `clevis` or `key_file`.
        pub cex: Cex,
        /// Absolute path of the device to encrypt, preferably a stable `/dev/disk/by-*` link;
        /// required.
        pub device: Option<String>,
        /// Pass discard (TRIM) requests through to the device: better for SSDs and thin-provisioned
        /// storage, but it reveals which blocks are in use. Default false.
        pub discard: Option<bool>,
        /// The volume's key. Omitted, Ignition generates a random one, which is removed again once
        /// Clevis is bound, or else kept in the installed system to open the volume at boot.
        pub key_file: Resource,
        /// The LUKS header's label.
        pub label: Option<String>,
        /// The name of the opened volume, which appears as `/dev/mapper/NAME`; required, without
        /// slashes.
        pub name: String,
        /// Extra arguments for `cryptsetup luksOpen`; those cryptsetup can store are kept in the
        /// LUKS header for later boots.
        pub open_options: Vec<String>,
        /// Extra arguments for `cryptsetup luksFormat`, e.g. a `--cipher`.
        pub options: Vec<String>,
        /// The LUKS volume's UUID.
        pub uuid: Option<String>,
        /// Erase what is on the device and create the volume anew; default false, which reuses an
        /// existing LUKS volume if it matches and fails otherwise.
        pub wipe_volume: Option<bool>,
    }

    /// How Clevis unlocks a LUKS volume automatically at boot.
    pub struct Clevis {
        /// A Clevis pin and configuration given directly, instead of `tang`, `tpm2` and
        /// `threshold`.
        pub custom: ClevisCustom,
        /// Tang servers that can unlock the volume over the network; each `url` at most once.
        pub tang: Vec<Tang>,
        /// How many of the Tang servers and the TPM2 are needed to unlock the volume; default 1
        /// (any one of them).
        pub threshold: Option<i64>,
        /// Bind the volume's key to this machine's TPM2 chip.
        pub tpm2: Option<bool>,
    }

    /// A Clevis binding given as the pin and configuration `clevis luks bind` takes.
    pub struct ClevisCustom {
        /// The pin's configuration as JSON, passed to `clevis luks bind` unchanged; required.
        pub config: Option<String>,
        /// Whether binding and unlocking with this pin needs the network, so that the volume is
        /// opened once the network is up.
        pub needs_network: Option<bool>,
        /// The Clevis pin: `tang`, `tpm2` or `sss`; required.
        pub pin: Option<String>,
    }

    /// A Tang server that can unlock a LUKS volume over the network.
    pub struct Tang {
        /// Thumbprint of one of the server's signing keys that is trusted, as `tang-show-keys`
        /// prints it; required.
        pub thumbprint: Option<String>,
        /// The Tang server's URL, e.g. `http://tang.example.com`; required.
        pub url: String,
        /// The server's advertisement (JSON), so that binding needs no contact with the server
        /// during provisioning; omitted, it is fetched from the server.
        pub advertisement: Option<String>,
    }

    /// IBM Crypto Express (CEX) card protection of a LUKS volume's key (s390x).
    pub struct Cex {
        /// Encrypt the volume with a secure key from a CEX card; default false.
        pub enabled: Option<bool>,
    }

    /// A regular file to write in the installed system.
    pub struct File {
        /// The file's group, by group ID or by name (not both); root if omitted.
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first; `contents` must then be given. Default
        /// false: an existing file is left as it is if `contents` gives no data, and anything else
        /// there is an error.
        pub overwrite: Option<bool>,
        /// Absolute path of the file in the installed system; required.
        pub path: String,
        /// The file's owner, by user ID or by name (not both); root if omitted.
        pub user: NodeUser,
        /// Data appended to the file, in order, after its contents.
        pub append: Vec<Resource>,
        /// Where the file's contents come from. Without any data, an existing file keeps its
        /// contents and a missing one is created empty.
        pub contents: Resource,
        /// Permission bits, written in octal with a leading 0 (e.g. `0644`), which YAML reads as an
        /// octal number. Default 0644, or the mode of an existing file that is kept.
        pub mode: Option<i64>,
    }

    /// A directory to create in the installed system (with missing parents).
    pub struct Directory {
        /// The directory's group, by group ID or by name (not both); root if omitted.
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first. Default false: an existing directory
        /// is kept (only its owner and mode are set), and anything else there is an error.
        pub overwrite: Option<bool>,
        /// Absolute path of the directory in the installed system; required.
        pub path: String,
        /// The directory's owner, by user ID or by name (not both); root if omitted.
        pub user: NodeUser,
        /// Permission bits, written in octal with a leading 0 (e.g. `0755`), which YAML reads as an
        /// octal number. Default 0755, or the mode of an existing directory that is kept.
        pub mode: Option<i64>,
    }

    /// A symbolic or hard link to create in the installed system.
    pub struct Link {
        /// The symbolic link's group, by group ID or by name (not both); root if omitted. Not for
        /// hard links.
        pub group: NodeGroup,
        /// Delete whatever already exists at the path first. Default false: an existing link to the
        /// same target is kept, and anything else there is an error.
        pub overwrite: Option<bool>,
        /// Absolute path of the link in the installed system; required.
        pub path: String,
        /// The symbolic link's owner, by user ID or by name (not both); root if omitted. Not for
        /// hard links.
        pub user: NodeUser,
        /// Make a hard link instead of a symbolic one; default false. A hard link's target must not
        /// be a directory.
        pub hard: Option<bool>,
        /// The path the link points to; required. A relative symbolic link target is resolved from
        /// the link's directory.
        pub target: Option<String>,
    }

    /// The owner of a file, directory or link: a user ID or a user name.
    pub struct NodeUser {
        /// The owner's numeric user ID.
        pub id: Option<i64>,
        /// The owner's user name, looked up in the installed system.
        pub name: Option<String>,
    }

    /// The group of a file, directory or link: a group ID or a group name.
    pub struct NodeGroup {
        /// The numeric group ID.
        pub id: Option<i64>,
        /// The group's name, looked up in the installed system.
        pub name: Option<String>,
    }

    /// A directory tree from the files directory, copied into the installed system.
    pub struct Tree {
        /// The group of everything the tree creates, by group ID or by name (not both); root if
        /// omitted.
        pub group: NodeGroup,
        /// The tree's directory, relative to the files directory (`--files-dir`); required.
        pub local: Option<String>,
        /// Where the top of the tree goes in the installed system; default `/`.
        pub path: Option<String>,
        /// The owner of everything the tree creates, by user ID or by name (not both); root if
        /// omitted.
        pub user: NodeUser,
        /// Permission bits of the tree's files, in octal as for a file's `mode` (e.g. `0640`).
        /// Default 0755 for files executable in the files directory and 0644 for the others.
        pub file_mode: Option<i64>,
        /// Permission bits of the tree's directories, in octal (e.g. `0750`); default 0755. Setting
        /// it (or an owner) gives each directory a `directories` entry of its own.
        pub dir_mode: Option<i64>,
    }

    /// Systemd units and Podman quadlets.
    pub struct Systemd {
        /// Units to write, enable, disable or mask; each `name` at most once.
        pub units: Vec<Unit>,
        /// Podman Quadlet files, which Podman turns into systemd services. Butane writes each as a
        /// file under `/etc/containers/systemd` (or `/etc/containers/systemd/users`).
        pub quadlets: Vec<Quadlet>,
    }

    /// A systemd unit, written to `/etc/systemd/system`.
    pub struct Unit {
        /// The unit file's text. Omitted, no unit file is written, e.g. to enable, mask or add
        /// drop-ins to a unit the OS ships.
        pub contents: Option<String>,
        /// Path of a file relative to the files directory (`--files-dir`) whose text Butane puts
        /// into `contents`; not together with `contents`.
        pub contents_local: Option<String>,
        /// Drop-in files changing some of the unit's settings, written to
        /// `/etc/systemd/system/NAME.d/`; each `name` at most once.
        pub dropins: Vec<Dropin>,
        /// True enables the unit, false disables it (through a systemd preset); omitted, it is left
        /// as it is. Only units with an `[Install]` section can be enabled.
        pub enabled: Option<bool>,
        /// True masks the unit (links it to `/dev/null`) so that it cannot be started; false
        /// removes such a mask.
        pub mask: Option<bool>,
        /// The unit's file name with its type suffix, e.g. `app.service` or `data.mount`; required.
        pub name: String,
    }

    /// A systemd drop-in: a file that changes some of a unit's settings.
    pub struct Dropin {
        /// The drop-in's text, e.g. a `[Service]` section with the settings to change.
        pub contents: Option<String>,
        /// Path of a file relative to the files directory (`--files-dir`) whose text Butane puts
        /// into `contents`; not together with `contents`.
        pub contents_local: Option<String>,
        /// The drop-in's file name, ending in `.conf`; required.
        pub name: String,
    }

    /// A Podman Quadlet file: a container, volume, network, pod or similar that Podman runs as a
    /// systemd service.
    pub struct Quadlet {
        /// The quadlet file's text, e.g. a `[Container]` section; not together with
        /// `contents_local`, nor for a template instance.
        pub contents: Option<String>,
        /// Path of a file relative to the files directory (`--files-dir`) holding the quadlet; not
        /// together with `contents`, nor for a template instance.
        pub contents_local: Option<String>,
        /// The file name, ending in `.container`, `.volume`, `.network`, `.kube`, `.image`,
        /// `.build`, `.pod` or `.artifact`; required. A template instance such as `web@1.container`
        /// becomes a link to its template `web@.container`.
        pub name: String,
        /// Run it with root's Podman (`/etc/containers/systemd`) rather than for every other user
        /// (`/etc/containers/systemd/users`); default false.
        pub rootful: bool,
        /// Drop-in files changing some of the quadlet's settings, written to the `NAME.d/`
        /// directory next to it.
        pub dropins: Vec<Dropin>,
    }

    /// The boot disk's encryption and mirroring (Butane sugar).
    pub struct BootDevice {
        /// The OS image's architecture, which decides the partitions generated: `x86_64` (the
        /// default), `aarch64`, `ppc64le`, or where supported `s390x-eckd`, `s390x-virt` and
        /// `s390x-zfcp`.
        pub layout: Option<String>,
        /// Encrypt the root filesystem with LUKS, unlocked at boot by Tang, a TPM2 or (s390x) a CEX
        /// card. Butane generates a LUKS volume `root` and the root filesystem on it.
        pub luks: BootDeviceLuks,
        /// Mirror the boot disk onto several disks (RAID1). Butane partitions each disk as the OS
        /// image is and generates the RAID arrays for `/boot` and the root filesystem.
        pub mirror: BootDeviceMirror,
    }

    /// How the root filesystem is encrypted and unlocked: with Tang servers, a TPM2, or a CEX card
    /// (s390x).
    pub struct BootDeviceLuks {
        /// Protect the key with an IBM Crypto Express (CEX) card (s390x layouts only), instead of
        /// Tang or a TPM2.
        pub cex: Cex,
        /// Pass discard (TRIM) requests through to the device: better for SSDs and thin-provisioned
        /// storage, but it reveals which blocks are in use. Default false.
        pub discard: Option<bool>,
        /// The whole disk (not a partition) holding the root filesystem; required for the
        /// `s390x-eckd` layout (a `/dev/dasd...` disk) and the `s390x-zfcp` layout (a `/dev/sd...`
        /// disk).
        pub device: Option<String>,
        /// Tang servers that can unlock the root filesystem over the network.
        pub tang: Vec<Tang>,
        /// How many of the Tang servers and the TPM2 are needed to unlock the root filesystem;
        /// default 1 (any one of them).
        pub threshold: Option<i64>,
        /// Bind the root filesystem's key to this machine's TPM2 chip.
        pub tpm2: Option<bool>,
    }

    /// The disks the boot disk is mirrored onto.
    pub struct BootDeviceMirror {
        /// The whole-disk devices (not partitions) to mirror onto, e.g. `/dev/sda`; at least two.
        /// Not for s390x layouts.
        pub devices: Vec<String>,
    }

    /// GRUB bootloader settings.
    pub struct Grub {
        /// GRUB superusers: once any is set, changing boot entries or using the GRUB command line
        /// asks for a superuser's name and password.
        pub users: Vec<GrubUser>,
    }

    /// A GRUB superuser.
    pub struct GrubUser {
        /// The user name given at GRUB's prompt; required.
        pub name: String,
        /// The password's PBKDF2 hash as `grub2-mkpasswd-pbkdf2` prints it
        /// (`grub.pbkdf2.sha512...`); required.
        pub password_hash: Option<String>,
    }

    /// The Kubernetes metadata of the MachineConfig.
    pub struct Metadata {
        /// The MachineConfig's name, unique in the cluster; required.
        pub name: String,
        /// Kubernetes labels of the MachineConfig; `machineconfiguration.openshift.io/role` is
        /// required and names the machine pool it applies to (e.g. `worker`).
        pub labels: BTreeMap<String, String>,
    }

    /// Settings of the MachineConfig that the Machine Config Operator applies itself, rather than
    /// Ignition.
    pub struct OpenShift {
        // Options, to tell a list given empty (`[]`) from none: upstream's raw mode
        // reports an empty one as ignored too, but not a null or missing one.
        /// Arguments the Machine Config Operator adds to the kernel command line; each at most
        /// once.
        pub kernel_arguments: Option<Vec<String>>,
        /// RHCOS extensions to install on the node, e.g. `usbguard`; each at most once.
        pub extensions: Option<Vec<String>>,
        /// Run the node in FIPS mode; default false. Butane may also give LUKS volumes that name no
        /// cipher a FIPS-approved one.
        pub fips: Option<bool>,
        /// The kernel the node runs: `default` or `realtime`.
        pub kernel_type: Option<String>,
    }
}
