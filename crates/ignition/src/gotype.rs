//! How upstream's decoder words a type error: Go's `encoding/json` message names the Go type
//! of the field (`types.Resource`, `[]types.File`, `int`) and the field's path in the Go
//! structs, so the validator's output can only match if we know those names. This is the map
//! from a JSON path in a config of a given version to that Go type.

use super::Version;
use flint_go::tree::{JsonPath, Seg, Value};

/// The Go type (as a `types` package name, `[]`-prefixed for slices, or a builtin) of the
/// value at `path` in the version stub or the config of `version`.
fn type_at(path: &JsonPath, version: Option<Version>) -> Option<String> {
    let Some(version) = version else {
        // The version stub: `struct { Ignition struct { Version string } }`.
        return match path.segs() {
            [] => Some("util.versionStub".into()),
            [Seg::Key(k)] if k == "ignition" => Some("struct { Version string }".into()),
            [Seg::Key(a), Seg::Key(b)] if a == "ignition" && b == "version" => {
                Some("string".into())
            }
            _ => None,
        };
    };
    let mut ty = "Config".to_string();
    for seg in path.segs() {
        ty = match seg {
            Seg::Index(_) => match ty.strip_prefix("[]") {
                Some(elem) => elem.to_string(),
                None if ty == "HTTPHeaders" => "HTTPHeader".into(),
                None => return None,
            },
            Seg::Key(k) => field(&ty, canonical(k), version)?.to_string(),
        };
    }
    Some(ty)
}

/// Every key of the model, to read a key decoded case-insensitively (as Go matches field
/// names) by its proper name.
const KEYS: &[&str] = &[
    "advertisement",
    "append",
    "certificateAuthorities",
    "cex",
    "clevis",
    "compression",
    "config",
    "contents",
    "custom",
    "device",
    "devices",
    "directories",
    "discard",
    "disks",
    "dropins",
    "enabled",
    "files",
    "filesystems",
    "format",
    "gecos",
    "gid",
    "group",
    "groups",
    "guid",
    "hard",
    "hash",
    "homeDir",
    "httpHeaders",
    "httpProxy",
    "httpResponseHeaders",
    "httpTotal",
    "httpsProxy",
    "id",
    "ignition",
    "kernelArguments",
    "keyFile",
    "label",
    "level",
    "links",
    "luks",
    "mask",
    "merge",
    "mode",
    "mountOptions",
    "name",
    "needsNetwork",
    "noCreateHome",
    "noLogInit",
    "noProxy",
    "noUserGroup",
    "number",
    "openOptions",
    "options",
    "overwrite",
    "partitions",
    "passwd",
    "passwordHash",
    "path",
    "pin",
    "primaryGroup",
    "proxy",
    "raid",
    "replace",
    "resize",
    "security",
    "shell",
    "shouldExist",
    "shouldNotExist",
    "sizeMiB",
    "source",
    "spares",
    "sshAuthorizedKeys",
    "startMiB",
    "storage",
    "system",
    "systemd",
    "tang",
    "target",
    "threshold",
    "thumbprint",
    "timeouts",
    "tls",
    "tpm2",
    "typeGuid",
    "uid",
    "units",
    "url",
    "user",
    "users",
    "uuid",
    "value",
    "verification",
    "version",
    "wipeFilesystem",
    "wipePartitionEntry",
    "wipeTable",
    "wipeVolume",
];

fn canonical(key: &str) -> &str {
    KEYS.iter()
        .find(|k| k.eq_ignore_ascii_case(key))
        .copied()
        .unwrap_or(key)
}

/// The Go type of field `key` of struct `ty`.
fn field(ty: &str, key: &str, version: Version) -> Option<&'static str> {
    let old = version == Version::V3_0;
    Some(match (ty, key) {
        ("Config", "ignition") => "Ignition",
        ("Config", "kernelArguments") => "KernelArguments",
        ("Config", "passwd") => "Passwd",
        ("Config", "storage") => "Storage",
        ("Config", "systemd") => "Systemd",
        ("Ignition", "config") => "IgnitionConfig",
        ("Ignition", "proxy") => "Proxy",
        ("Ignition", "security") => "Security",
        ("Ignition", "timeouts") => "Timeouts",
        ("IgnitionConfig", "merge") if old => "[]ConfigReference",
        ("IgnitionConfig", "replace") if old => "ConfigReference",
        ("IgnitionConfig", "merge") => "[]Resource",
        ("IgnitionConfig", "replace") => "Resource",
        ("Proxy", "noProxy") => "[]NoProxyItem",
        ("Security", "tls") => "TLS",
        ("TLS", "certificateAuthorities") if old => "[]CaReference",
        ("TLS", "certificateAuthorities") => "[]Resource",
        ("Resource" | "ConfigReference" | "CaReference" | "FileContents", "httpHeaders") => {
            "HTTPHeaders"
        }
        ("Resource" | "ConfigReference" | "CaReference" | "FileContents", "verification") => {
            "Verification"
        }
        ("KernelArguments", _) => "[]KernelArgument",
        ("Passwd", "groups") => "[]PasswdGroup",
        ("Passwd", "users") => "[]PasswdUser",
        ("PasswdUser", "groups") => "[]Group",
        ("PasswdUser", "sshAuthorizedKeys") => "[]SSHAuthorizedKey",
        ("Storage", "directories") => "[]Directory",
        ("Storage", "disks") => "[]Disk",
        ("Storage", "files") => "[]File",
        ("Storage", "filesystems") => "[]Filesystem",
        ("Storage", "links") => "[]Link",
        ("Storage", "luks") => "[]Luks",
        ("Storage", "raid") => "[]Raid",
        ("Disk", "partitions") => "[]Partition",
        ("Raid", "devices") => "[]Device",
        ("Raid", "options") => "[]RaidOption",
        ("Filesystem", "mountOptions") => "[]MountOption",
        ("Filesystem", "options") => "[]FilesystemOption",
        ("Luks", "cex") => "Cex",
        ("Luks", "clevis") => "Clevis",
        ("Luks", "keyFile") => "Resource",
        ("Luks", "openOptions") => "[]OpenOption",
        ("Luks", "options") => "[]LuksOption",
        // 3.2.0 named the struct differently.
        ("Clevis", "custom") if version == Version::V3_2 => "Custom",
        ("Clevis", "custom") => "ClevisCustom",
        ("Clevis", "tang") => "[]Tang",
        ("File", "append") if old => "[]FileContents",
        ("File", "contents") if old => "FileContents",
        ("File", "append") => "[]Resource",
        ("File", "contents") => "Resource",
        ("File" | "Directory" | "Link", "user") => "NodeUser",
        ("File" | "Directory" | "Link", "group") => "NodeGroup",
        ("Systemd", "units") => "[]Unit",
        ("Unit", "dropins") => "[]Dropin",
        (_, k) => leaf(k),
    })
}

/// The builtin type of a scalar field, known from its name alone.
fn leaf(key: &str) -> &'static str {
    match key {
        "mode"
        | "number"
        | "sizeMiB"
        | "startMiB"
        | "uid"
        | "gid"
        | "id"
        | "threshold"
        | "spares"
        | "httpResponseHeaders"
        | "httpTotal" => "int",
        "overwrite" | "hard" | "wipeTable" | "shouldExist" | "resize" | "wipePartitionEntry"
        | "wipeFilesystem" | "wipeVolume" | "discard" | "tpm2" | "needsNetwork" | "enabled"
        | "mask" | "system" | "noCreateHome" | "noLogInit" | "noUserGroup" => "bool",
        _ => "string",
    }
}

/// Whether the value at `path` is a Go struct that upstream's validator walks (a struct held
/// by value: 3.2.0 holds `clevis` and `custom` by pointer, and a null pointer is not walked).
pub(crate) fn is_walked_struct(path: &JsonPath, version: Version) -> bool {
    if version == Version::V3_2
        && let Some(Seg::Key(k)) = path.segs().last()
        && (k == "clevis" || k == "custom")
    {
        return false;
    }
    match type_at(path, Some(version)) {
        None => false,
        Some(ty) => {
            !ty.starts_with("[]")
                && !matches!(
                    ty.as_str(),
                    "int"
                        | "bool"
                        | "string"
                        | "HTTPHeaders"
                        | "KernelArgument"
                        | "NoProxyItem"
                        | "Group"
                        | "SSHAuthorizedKey"
                        | "Device"
                        | "RaidOption"
                        | "FilesystemOption"
                        | "MountOption"
                        | "LuksOption"
                        | "OpenOption"
                )
        }
    }
}

/// Where upstream's unused-key pass reaches the struct at `path`: sorting by these keys
/// gives the order it reports unused keys and "context tree" warnings in. That pass walks the
/// decoded config depth first and reports a struct's own keys before anything below it;
/// the generated Go structs declare their fields alphabetically (the JSON names compared
/// without case, for every field that holds a struct), except that files, directories and
/// links embed the fields they share (`group`, `overwrite`, `path`, `user`) first.
pub(crate) fn walk_position(path: &JsonPath, version: Version) -> Vec<(u8, usize, String)> {
    let mut key = Vec::with_capacity(path.segs().len());
    let mut ty = Some("Config".to_string());
    for seg in path.segs() {
        match seg {
            Seg::Index(i) => {
                key.push((0, *i, String::new()));
                ty = ty.and_then(|t| match t.strip_prefix("[]") {
                    Some(elem) => Some(elem.to_string()),
                    None if t == "HTTPHeaders" => Some("HTTPHeader".into()),
                    None => None,
                });
            }
            Seg::Key(k) => {
                let name = canonical(k);
                let shared = matches!(ty.as_deref(), Some("File" | "Directory" | "Link"))
                    && matches!(name, "group" | "overwrite" | "path" | "user");
                key.push((u8::from(!shared), 0, name.to_ascii_lowercase()));
                ty = ty.and_then(|t| field(&t, name, version).map(str::to_string));
            }
        }
    }
    key
}

/// How Go prints a type in an error: builtins as they are, the rest qualified by package.
fn display(ty: &str) -> String {
    if let Some(elem) = ty.strip_prefix("[]") {
        return format!("[]{}", display(elem));
    }
    match ty {
        "int" | "bool" | "string" | "util.versionStub" | "struct { Version string }" => {
            ty.to_string()
        }
        _ => format!("types.{ty}"),
    }
}

use super::MAX_QUOTED_NUMBER;

/// Go's message for decoding `found` into the value at `path` (`version` `None` for the
/// version stub), or `None` when the path is not one the model has.
pub(crate) fn type_error(
    path: &JsonPath,
    found: &Value,
    version: Option<Version>,
) -> Option<String> {
    let ty = type_at(path, version)?;
    let what = match found {
        // Only a number that does not fit a number field is quoted.
        // Go quotes the number whole; a hostile one is clipped (see differences.md).
        Value::Number(n) if ty == "int" && n.len() > MAX_QUOTED_NUMBER => {
            format!("number {}… ({} characters)", &n[..32], n.len())
        }
        Value::Number(n) if ty == "int" => format!("number {n}"),
        v => v.kind_name().to_string(),
    };
    let stub = if version.is_none() {
        "versionStub"
    } else {
        "Config"
    };
    let target = match path.segs() {
        [] => format!("Go value of type {}", display(&ty)),
        [.., Seg::Index(_)] => format!("{stub}.{} of type {}", path.dotted(), display(&ty)),
        _ => format!(
            "Go struct field {stub}.{} of type {}",
            path.dotted(),
            display(&ty)
        ),
    };
    Some(format!("json: cannot unmarshal {what} into {target}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(segs: &[&'static str]) -> JsonPath {
        JsonPath::of(segs)
    }

    #[test]
    fn words_type_errors_like_go() {
        let v = Some(Version::V3_4);
        assert_eq!(
            type_error(&p(&["storage", "files"]), &Value::String("x".into()), v).unwrap(),
            "json: cannot unmarshal string into Go struct field Config.storage.files of type []types.File"
        );
        assert_eq!(
            type_error(
                &p(&["storage", "files", "0"]),
                &Value::Number("1".into()),
                v
            )
            .unwrap(),
            "json: cannot unmarshal number into Config.storage.files.0 of type types.File"
        );
        assert_eq!(
            type_error(
                &p(&["storage", "files", "0", "mode"]),
                &Value::Number("1.5".into()),
                v
            )
            .unwrap(),
            "json: cannot unmarshal number 1.5 into Go struct field Config.storage.files.0.mode of type int"
        );
        assert_eq!(
            type_error(&p(&[]), &Value::Array(vec![]), None).unwrap(),
            "json: cannot unmarshal array into Go value of type util.versionStub"
        );
        assert_eq!(
            type_error(
                &p(&["ignition", "config", "merge"]),
                &Value::Bool(true),
                Some(Version::V3_0)
            )
            .unwrap(),
            "json: cannot unmarshal bool into Go struct field Config.ignition.config.merge of type []types.ConfigReference"
        );
    }
}
