//! How upstream Butane words a YAML type error: go-yaml names the Go type of the field it
//! could not fill (`[]v0_7.File`, `v1_7.BootDevice`, `v0_5.Group`, `map[string]string`), so
//! flint's message only matches when it knows the types of upstream's structs. This maps a
//! path in a Butane config of a given spec version to that type; the decoder's own words
//! (`array`, `object`, `string`) are kept where it does not know one.

use super::Variant;
use super::base::BaseVersion;
use flint_go::tree::{JsonPath, Seg};

/// The package a struct type lives in.
#[derive(Clone, Copy, PartialEq)]
enum Pkg {
    Base,
    Fcos,
    OpenShift,
}

/// A Go type as the struct tables name it: a builtin (`None` package) or a named type of
/// one of the packages, `slice` deep in `[]`.
#[derive(Clone, Copy)]
struct Ty {
    slice: bool,
    pkg: Option<Pkg>,
    name: &'static str,
}

const fn named(pkg: Option<Pkg>, name: &'static str) -> Ty {
    Ty {
        slice: false,
        pkg,
        name,
    }
}

/// A type of the base package, of fcos's, of OpenShift's; a builtin.
const fn b(name: &'static str) -> Ty {
    named(Some(Pkg::Base), name)
}

const fn f(name: &'static str) -> Ty {
    named(Some(Pkg::Fcos), name)
}

const fn o(name: &'static str) -> Ty {
    named(Some(Pkg::OpenShift), name)
}

const fn builtin(name: &'static str) -> Ty {
    named(None, name)
}

const fn list(t: Ty) -> Ty {
    Ty { slice: true, ..t }
}

const STRING: Ty = builtin("string");
const INT: Ty = builtin("int");
const BOOL: Ty = builtin("bool");
const STRINGS: Ty = list(STRING);

/// The type of field `key` of struct `ty` (in its package) in base version `base`.
fn field(ty: Ty, key: &str, base: BaseVersion) -> Option<Ty> {
    use BaseVersion::*;
    // Fields pointed to (`*int`) are named by what they point to, as go-yaml names them.
    Some(match (ty.pkg?, ty.name, key) {
        (Pkg::Base, "Config", "ignition") => b("Ignition"),
        (Pkg::Base, "Config", "kernel_arguments") => b("KernelArguments"),
        (Pkg::Base, "Config", "passwd") => b("Passwd"),
        (Pkg::Base, "Config", "storage") => b("Storage"),
        (Pkg::Base, "Config", "systemd") => b("Systemd"),
        (Pkg::Base, "Config", "boot_device") => f("BootDevice"),
        (Pkg::Base, "Config", "grub") => f("Grub"),
        (Pkg::Base, "Config", "metadata") => o("Metadata"),
        (Pkg::Base, "Config", "openshift") => o("OpenShift"),
        (Pkg::Base, "Ignition", "config") => b("IgnitionConfig"),
        (Pkg::Base, "Ignition", "proxy") => b("Proxy"),
        (Pkg::Base, "Ignition", "security") => b("Security"),
        (Pkg::Base, "Ignition", "timeouts") => b("Timeouts"),
        (Pkg::Base, "IgnitionConfig", "merge") if base == V0_1 => list(b("ConfigReference")),
        (Pkg::Base, "IgnitionConfig", "replace") if base == V0_1 => b("ConfigReference"),
        (Pkg::Base, "IgnitionConfig", "merge") => list(b("Resource")),
        (Pkg::Base, "IgnitionConfig", "replace") => b("Resource"),
        (Pkg::Base, "Security", "tls") => b("TLS"),
        (Pkg::Base, "TLS", "certificate_authorities") if base == V0_1 => list(b("CaReference")),
        (Pkg::Base, "TLS", "certificate_authorities") => list(b("Resource")),
        (Pkg::Base, "Proxy", "no_proxy") => STRINGS,
        (Pkg::Base, _, "verification") => b("Verification"),
        (Pkg::Base, _, "http_headers") => b("HTTPHeaders"),
        (Pkg::Base, "KernelArguments", _) => list(b("KernelArgument")),
        (Pkg::Base, "Passwd", "groups") => list(b("PasswdGroup")),
        (Pkg::Base, "Passwd", "users") => list(b("PasswdUser")),
        (Pkg::Base, "PasswdUser", "groups") => list(b("Group")),
        (Pkg::Base, "PasswdUser", "ssh_authorized_keys") => list(b("SSHAuthorizedKey")),
        (Pkg::Base, "PasswdUser", "ssh_authorized_keys_local") => STRINGS,
        (Pkg::Base, "Storage", "directories") => list(b("Directory")),
        (Pkg::Base, "Storage", "disks") => list(b("Disk")),
        (Pkg::Base, "Storage", "files") => list(b("File")),
        (Pkg::Base, "Storage", "filesystems") => list(b("Filesystem")),
        (Pkg::Base, "Storage", "links") => list(b("Link")),
        (Pkg::Base, "Storage", "luks") => list(b("Luks")),
        (Pkg::Base, "Storage", "raid") => list(b("Raid")),
        (Pkg::Base, "Storage", "trees") => list(b("Tree")),
        (Pkg::Base, "File" | "Directory" | "Link" | "Tree", "user") => b("NodeUser"),
        (Pkg::Base, "File" | "Directory" | "Link" | "Tree", "group") => b("NodeGroup"),
        (Pkg::Base, "File", "append") if base == V0_1 => list(b("FileContents")),
        (Pkg::Base, "File", "contents") if base == V0_1 => b("FileContents"),
        (Pkg::Base, "File", "append") => list(b("Resource")),
        (Pkg::Base, "File", "contents") => b("Resource"),
        (Pkg::Base, "Disk", "partitions") => list(b("Partition")),
        (Pkg::Base, "Filesystem", "mount_options") => STRINGS,
        (Pkg::Base, "Filesystem", "options") if base == V0_1 => list(b("FilesystemOption")),
        (Pkg::Base, "Filesystem", "options") => STRINGS,
        (Pkg::Base, "Luks", "cex") => b("Cex"),
        (Pkg::Base, "Luks", "clevis") => b("Clevis"),
        (Pkg::Base, "Luks", "key_file") => b("Resource"),
        (Pkg::Base, "Luks", "open_options") => STRINGS,
        (Pkg::Base, "Luks", "options") if base <= V0_4 => list(b("LuksOption")),
        (Pkg::Base, "Luks", "options") => STRINGS,
        (Pkg::Base, "Clevis", "custom") if base == V0_3 => b("Custom"),
        (Pkg::Base, "Clevis", "custom") => b("ClevisCustom"),
        (Pkg::Base, "Clevis", "tang") => list(b("Tang")),
        (Pkg::Base, "Raid", "devices") => list(b("Device")),
        (Pkg::Base, "Raid", "options") if base <= V0_4 => list(b("RaidOption")),
        (Pkg::Base, "Raid", "options") => STRINGS,
        (Pkg::Base, "Systemd", "units") => list(b("Unit")),
        (Pkg::Base, "Systemd", "quadlets") => list(b("Quadlet")),
        (Pkg::Base, "Unit" | "Quadlet", "dropins") => list(b("Dropin")),
        (Pkg::Fcos, "BootDevice", "luks") => f("BootDeviceLuks"),
        (Pkg::Fcos, "BootDevice", "mirror") => f("BootDeviceMirror"),
        (Pkg::Fcos, "BootDeviceLuks", "cex") => b("Cex"),
        (Pkg::Fcos, "BootDeviceLuks", "tang") => list(b("Tang")),
        (Pkg::Fcos, "BootDeviceMirror", "devices") => STRINGS,
        (Pkg::Fcos, "Grub", "users") => list(f("GrubUser")),
        (Pkg::OpenShift, "Metadata", "labels") => builtin("map[string]string"),
        (Pkg::OpenShift, "OpenShift", "kernel_arguments" | "extensions") => STRINGS,
        (_, _, k) => leaf(k),
    })
}

/// The builtin type of a scalar field, known from its name alone.
fn leaf(key: &str) -> Ty {
    match key {
        "mode"
        | "file_mode"
        | "dir_mode"
        | "number"
        | "size_mib"
        | "start_mib"
        | "uid"
        | "gid"
        | "id"
        | "threshold"
        | "spares"
        | "http_response_headers"
        | "http_total" => INT,
        "overwrite"
        | "hard"
        | "wipe_table"
        | "should_exist"
        | "resize"
        | "wipe_partition_entry"
        | "wipe_filesystem"
        | "with_mount_unit"
        | "wipe_volume"
        | "discard"
        | "tpm2"
        | "needs_network"
        | "enabled"
        | "mask"
        | "system"
        | "no_create_home"
        | "no_log_init"
        | "no_user_group"
        | "rootful"
        | "fips" => BOOL,
        _ => STRING,
    }
}

/// The type of the value at `path`, `None` past what the tables know.
fn type_at(path: &JsonPath, base: BaseVersion) -> Option<Ty> {
    let mut ty = b("Config");
    for seg in path.segs() {
        ty = match seg {
            Seg::Index(_) if ty.slice => Ty { slice: false, ..ty },
            Seg::Index(_) if ty.name == "HTTPHeaders" => b("HTTPHeader"),
            Seg::Index(_) => return None,
            // A map's values.
            Seg::Key(_) if ty.name == "map[string]string" => STRING,
            Seg::Key(k) if !ty.slice => field(ty, k, base)?,
            Seg::Key(_) => return None,
        };
    }
    Some(ty)
}

fn base_package(base: BaseVersion) -> &'static str {
    use BaseVersion::*;
    match base {
        V0_1 => "v0_1",
        V0_2 => "v0_2",
        V0_3 => "v0_3",
        V0_4 => "v0_4",
        V0_5 => "v0_5",
        V0_6 => "v0_6",
        V0_7 => "v0_7",
        V0_8Exp => "v0_8_exp",
    }
}

/// How Go prints `ty` in spec version `spec`.
fn display(ty: Ty, spec: &Variant) -> String {
    let name = match ty.pkg {
        None => ty.name.to_string(),
        Some(Pkg::Base) => format!("{}.{}", base_package(spec.base), ty.name),
        Some(Pkg::OpenShift) => format!("{}.{}", spec.go_package(), ty.name),
        // OpenShift's struct embeds the fcos spec its release builds on.
        Some(Pkg::Fcos) => format!("{}.{}", spec.fcos_go_package(), ty.name),
    };
    if ty.slice { format!("[]{name}") } else { name }
}

/// Upstream's words for a type error the decoder worded `cannot unmarshal X into WANT` at
/// `path`: WANT becomes the Go type there. Other messages are kept.
pub(crate) fn reword(message: &str, path: Option<&JsonPath>, spec: &Variant) -> Option<String> {
    let (head, want) = message.rsplit_once(" into ")?;
    if !head.starts_with("cannot unmarshal ") || !matches!(want, "array" | "object" | "string") {
        return None;
    }
    let ty = type_at(path?, spec.base)?;
    // Only a type of the kind the decoder wanted: a table that missed a struct field
    // leaves the decoder's words rather than naming the wrong type.
    let named_string = matches!(
        ty.name,
        "Group"
            | "KernelArgument"
            | "SSHAuthorizedKey"
            | "Device"
            | "RaidOption"
            | "FilesystemOption"
            | "LuksOption"
    );
    let kind = match ty.pkg {
        _ if ty.slice || ty.name == "HTTPHeaders" => "array",
        Some(_) if named_string => "string",
        Some(_) => "object",
        None if ty.name == "map[string]string" => "object",
        None => ty.name,
    };
    (kind == want).then(|| format!("{head} into {}", display(ty, spec)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup;

    fn p(segs: &[&'static str]) -> JsonPath {
        JsonPath::of(segs)
    }

    fn word(variant: &str, version: &str, segs: &[&'static str], want: &str) -> String {
        let spec = lookup(variant, version).unwrap();
        let message = format!("cannot unmarshal !!map into {want}");
        reword(&message, Some(&p(segs)), spec).unwrap_or(message)
    }

    #[test]
    fn names_types_as_go_prints_them() {
        let m = |t: &str| format!("cannot unmarshal !!map into {t}");
        assert_eq!(
            word("fcos", "1.7.0", &["storage", "files"], "array"),
            m("[]v0_7.File")
        );
        assert_eq!(
            word("flatcar", "1.1.0", &["storage", "files", "0"], "object"),
            m("v0_5.File")
        );
        assert_eq!(
            word(
                "flatcar",
                "1.0.0",
                &["kernel_arguments", "should_exist", "0"],
                "string"
            ),
            m("v0_4.KernelArgument")
        );
        assert_eq!(
            word(
                "fcos",
                "1.8.0-experimental",
                &["boot_device", "luks", "tang"],
                "array"
            ),
            m("[]v0_8_exp.Tang")
        );
        assert_eq!(
            word("openshift", "4.20.0", &["boot_device"], "object"),
            m("v1_6.BootDevice")
        );
        assert_eq!(
            word("openshift", "4.23.0-experimental", &["metadata"], "object"),
            m("v4_23_exp.Metadata")
        );
        assert_eq!(
            word("openshift", "4.14.0", &["metadata", "labels"], "object"),
            m("map[string]string")
        );
        assert_eq!(
            word(
                "fcos",
                "1.0.0",
                &["storage", "files", "0", "contents"],
                "object"
            ),
            m("v0_1.FileContents")
        );
        assert_eq!(
            word(
                "fcos",
                "1.2.0",
                &["storage", "luks", "0", "clevis", "custom"],
                "object"
            ),
            m("v0_3.Custom")
        );
        // Builtins and unknown places keep the decoder's words.
        assert_eq!(
            word(
                "fcos",
                "1.7.0",
                &["storage", "files", "0", "path"],
                "string"
            ),
            m("string")
        );
        assert_eq!(
            word(
                "fcos",
                "1.7.0",
                &["storage", "files", "0", "bogus"],
                "array"
            ),
            m("array")
        );
    }
}
