//! Translating a 2.x config (brought to 2.4.0's meaning) into the 3.x model, as Flatcar's
//! Ignition does (its copy of ign-converter's 2.4 → 3.1 translation, with Flatcar's OEM rules):
//!
//! - filesystems are named in 2.x and mounted at paths in 3.x: `root` is `/`, `oem` is
//!   `/oem` (and, unless wiped, btrfs whatever format it declares), any other name
//!   `/tmp/NAME-ignN` with N counting the names seen so far in the process;
//! - files, directories and links move under their filesystem's path; 2.x files overwrite
//!   by default; an appended file never overwrites;
//! - `networkd` units and drop-ins become files under `/etc/systemd/network`;
//! - units of the same name are merged with the 3.x merge rules;
//! - the deprecated `create` objects of users and filesystems become their fields;
//! - the result is a 3.1.0 config and must pass 3.1.0 validation.
//!
//! Refused, as Flatcar refuses them: a `mount.create` without `force`, two entries at the
//! same path, an entry below a link of the same config, two drop-ins of one unit with the
//! same name, and a filesystem given by `path` instead of `mount` (on which Flatcar's
//! Ignition crashes).

use super::types as old;
use crate::types as new;
use crate::validate::paths::clean;
use flint_go::tree::JsonPath;
use std::collections::HashMap;
use std::sync::Mutex;

/// Why a config cannot be translated, at the entry responsible.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslateError {
    pub path: Option<JsonPath>,
    pub message: String,
}

fn fail(path: Option<JsonPath>, message: impl Into<String>) -> TranslateError {
    TranslateError {
        path,
        message: message.into(),
    }
}

/// The counters Flatcar's translation keeps for generated filesystem names and paths. They
/// live as long as the process (so the second 2.x config translated by one run continues the
/// numbering of the first); `Counters::default()` starts afresh.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    generated_names: u64,
    added_paths: u64,
}

/// The process-wide counters, for provisioning runs.
pub static PROCESS_COUNTERS: Mutex<Counters> = Mutex::new(Counters {
    generated_names: 0,
    added_paths: 0,
});

/// Go's `path.Join` for the cases here: joined with `/`, empty parts skipped, cleaned.
fn join(parts: &[&str]) -> String {
    let nonempty: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    if nonempty.is_empty() {
        return String::new();
    }
    clean(&nonempty.join("/"))
}

/// Go's `url.PathEscape` (a path segment: `/`, `;`, `,` and `?` are escaped too).
pub fn path_escape(s: &str) -> String {
    let mut out = String::new();
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~$&+:=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn some_str(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn some_true(b: bool) -> Option<bool> {
    b.then_some(true)
}

/// Where each filesystem name is mounted.
type FsMap = HashMap<String, String>;

fn filesystem_paths(cfg: &old::Config, counters: &mut Counters) -> Result<FsMap, TranslateError> {
    let mut m = FsMap::from([("root".to_string(), "/".to_string())]);
    for (i, fs) in cfg.storage.filesystems.iter().enumerate() {
        let at = JsonPath::root().key("storage").key("filesystems").index(i);
        let mut name = fs.name.clone();
        if name.is_empty() {
            counters.generated_names += 1;
            name = format!("ignition{}", counters.generated_names);
        }
        if let std::collections::hash_map::Entry::Vacant(slot) = m.entry(name) {
            counters.added_paths += 1;
            let p = if slot.key() == "oem" {
                "/oem".to_string()
            } else {
                format!("/tmp/{}-ign{}", slot.key(), counters.added_paths)
            };
            slot.insert(p);
        }
        match &fs.mount {
            None => {
                return Err(fail(
                    Some(at),
                    format!(
                        "filesystem {:?} is given by path, which cannot be translated to 3.x (Flatcar's Ignition crashes on it): use mount",
                        fs.name
                    ),
                ));
            }
            Some(mnt) if mnt.create.as_ref().is_some_and(|c| !c.force) => {
                return Err(fail(
                    Some(at.key("mount").key("create")),
                    "Config must force filesystem creation in case `mount.create` object is defined.",
                ));
            }
            _ => {}
        }
    }
    Ok(m)
}

/// `path` of a node on filesystem `fs`, as the duplicate checks see it.
fn full_path(m: &FsMap, fs: &str, path: &str) -> String {
    join(&["/", m.get(fs).map_or("", String::as_str), path])
}

/// The first link of `links` that `path` lies below.
fn uses_link<'a>(links: &'a [String], path: &str) -> Option<&'a str> {
    links
        .iter()
        .find(|l| {
            let dir = if l.ends_with('/') {
                l.to_string()
            } else {
                format!("{l}/")
            };
            path.starts_with(&dir) && path != l.as_str()
        })
        .map(String::as_str)
}

fn check_nodes(cfg: &old::Config, m: &FsMap) -> Result<(), TranslateError> {
    let s = &cfg.storage;
    let storage = JsonPath::root().key("storage");
    let links: Vec<String> = s
        .links
        .iter()
        .map(|l| full_path(m, &l.filesystem, &l.path))
        .collect();
    let mut seen: HashMap<String, String> = HashMap::new();
    let nodes = s
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| ("File", "files", i, f.node()))
        .chain(
            s.directories
                .iter()
                .enumerate()
                .map(|(i, d)| ("Directory", "directories", i, d.node())),
        )
        .chain(
            s.links
                .iter()
                .enumerate()
                .map(|(i, l)| ("Link", "links", i, l.node())),
        );
    for (kind, key, i, n) in nodes {
        let p = full_path(m, n.filesystem, n.path);
        let name = format!("{kind}: {p}");
        let at = storage.key(key).index(i);
        if let Some(old) = seen.get(&p) {
            return Err(fail(
                Some(at.key("path")),
                format!(
                    "Config has conflicting inodes: {old:?} and {name:?}.  All files, directories and links must specify a unique `path`."
                ),
            ));
        }
        seen.insert(p.clone(), name.clone());
        if let Some(l) = uses_link(&links, &p) {
            return Err(fail(
                Some(at.key("path")),
                format!(
                    "{name} uses link defined in config {l:?}. Please use a link not defined in Storage:Links"
                ),
            ));
        }
    }
    for (i, u) in cfg.systemd.units.iter().enumerate() {
        let mut names = std::collections::HashSet::new();
        for (j, d) in u.dropins.iter().enumerate() {
            if !names.insert(d.name.as_str()) {
                return Err(fail(
                    Some(
                        JsonPath::root()
                            .key("systemd")
                            .key("units")
                            .index(i)
                            .key("dropins")
                            .index(j)
                            .key("name"),
                    ),
                    format!(
                        "Config has duplicate dropin name {:?} in unit {:?}.  All dropins must specify a unique `name`.",
                        d.name, u.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Translates `cfg` (upgraded to 2.4.0's meaning and valid by the 2.x rules) into a 3.1.0
/// config in the 3.x model.
pub fn translate(
    cfg: &old::Config,
    counters: &mut Counters,
) -> Result<new::Config, TranslateError> {
    let m = filesystem_paths(cfg, counters)?;
    check_nodes(cfg, &m)?;
    let ig = &cfg.ignition;
    let mut files: Vec<new::File> = cfg.storage.files.iter().map(|f| file(f, &m)).collect();
    files.extend(networkd(&cfg.networkd, &m));
    let out = new::Config {
        ignition: new::Ignition {
            version: "3.1.0".into(),
            config: new::IgnitionConfig {
                replace: ig
                    .config
                    .replace
                    .as_ref()
                    .map(reference)
                    .unwrap_or_default(),
                merge: ig.config.append.iter().map(reference).collect(),
            },
            security: new::Security {
                tls: new::Tls {
                    certificate_authorities: ig
                        .security
                        .tls
                        .certificate_authorities
                        .iter()
                        .map(reference)
                        .collect(),
                },
            },
            timeouts: new::Timeouts {
                http_response_headers: ig.timeouts.http_response_headers,
                http_total: ig.timeouts.http_total,
            },
            proxy: new::Proxy {
                http_proxy: some_str(&ig.proxy.http_proxy),
                https_proxy: some_str(&ig.proxy.https_proxy),
                no_proxy: ig.proxy.no_proxy.clone(),
            },
        },
        kernel_arguments: Default::default(),
        passwd: new::Passwd {
            users: cfg.passwd.users.iter().map(user).collect(),
            groups: cfg.passwd.groups.iter().map(group).collect(),
        },
        systemd: new::Systemd {
            units: units(&cfg.systemd.units),
        },
        storage: new::Storage {
            disks: cfg.storage.disks.iter().map(disk).collect(),
            raid: cfg.storage.raid.iter().map(raid).collect(),
            filesystems: cfg
                .storage
                .filesystems
                .iter()
                .filter(|f| f.name != "root")
                .map(|f| filesystem(f, &m))
                .collect(),
            files,
            directories: cfg
                .storage
                .directories
                .iter()
                .map(|d| new::Directory {
                    path: node_path(&m, &d.filesystem, &d.path),
                    user: node_user(&d.user),
                    group: node_group(&d.group),
                    overwrite: d.overwrite,
                    mode: d.mode,
                })
                .collect(),
            links: cfg
                .storage
                .links
                .iter()
                .map(|l| new::Link {
                    path: node_path(&m, &l.filesystem, &l.path),
                    user: node_user(&l.user),
                    group: node_group(&l.group),
                    overwrite: l.overwrite,
                    hard: some_true(l.hard),
                    target: some_str(&l.target),
                })
                .collect(),
            luks: Vec::new(),
        },
    };
    Ok(out)
}

fn headers(list: &[old::HttpHeader]) -> Vec<new::HttpHeader> {
    list.iter()
        .map(|h| new::HttpHeader {
            name: h.name.clone(),
            value: some_str(&h.value),
        })
        .collect()
}

fn reference(r: &old::ConfigReference) -> new::Resource {
    new::Resource {
        source: Some(r.source.clone()),
        verification: new::Verification {
            hash: r.verification.hash.clone(),
        },
        http_headers: headers(&r.http_headers),
        compression: None,
    }
}

fn user(u: &old::User) -> new::PasswdUser {
    let mut t = new::PasswdUser {
        name: u.name.clone(),
        password_hash: u.password_hash.clone(),
        ssh_authorized_keys: u.ssh_authorized_keys.clone(),
        uid: u.uid,
        gecos: some_str(&u.gecos),
        home_dir: some_str(&u.home_dir),
        no_create_home: some_true(u.no_create_home),
        primary_group: some_str(&u.primary_group),
        groups: u.groups.clone(),
        no_user_group: some_true(u.no_user_group),
        no_log_init: some_true(u.no_log_init),
        shell: some_str(&u.shell),
        system: some_true(u.system),
        should_exist: None,
    };
    // The deprecated `create` object, where given, supplies every field it has.
    if let Some(c) = &u.create {
        t.uid = c.uid;
        t.gecos = some_str(&c.gecos);
        t.home_dir = some_str(&c.home_dir);
        t.no_create_home = some_true(c.no_create_home);
        t.primary_group = some_str(&c.primary_group);
        t.no_user_group = some_true(c.no_user_group);
        t.no_log_init = some_true(c.no_log_init);
        t.shell = some_str(&c.shell);
        t.system = some_true(c.system);
        t.groups = c.groups.clone();
    }
    t
}

fn group(g: &old::Group) -> new::PasswdGroup {
    new::PasswdGroup {
        name: g.name.clone(),
        gid: g.gid,
        password_hash: some_str(&g.password_hash),
        system: some_true(g.system),
        should_exist: None,
    }
}

/// Units in the order of their first appearance; a unit named again is merged into it.
fn units(list: &[old::Unit]) -> Vec<new::Unit> {
    let mut out: Vec<new::Unit> = Vec::new();
    for u in list {
        // `enabled` wins over the deprecated `enable`.
        let enabled = match u.enabled {
            Some(false) => Some(false),
            Some(true) => Some(true),
            None => some_true(u.enable),
        };
        let t = new::Unit {
            name: u.name.clone(),
            enabled,
            mask: some_true(u.mask),
            contents: some_str(&u.contents),
            dropins: u
                .dropins
                .iter()
                .map(|d| new::Dropin {
                    name: d.name.clone(),
                    contents: some_str(&d.contents),
                })
                .collect(),
        };
        match out.iter_mut().find(|p| p.name == t.name) {
            Some(prev) => {
                let wrap = |u: new::Unit| new::Config {
                    systemd: new::Systemd { units: vec![u] },
                    ..Default::default()
                };
                let merged = crate::merge::merge(wrap(prev.clone()), wrap(t));
                *prev = merged.systemd.units.into_iter().next().unwrap_or_default();
            }
            None => out.push(t),
        }
    }
    out
}

fn disk(d: &old::Disk) -> new::Disk {
    new::Disk {
        device: d.device.clone(),
        wipe_table: some_true(d.wipe_table),
        partitions: d
            .partitions
            .iter()
            .map(|p| new::Partition {
                label: p.label.clone(),
                number: p.number,
                size_mib: p.size_mib,
                start_mib: p.start_mib,
                type_guid: some_str(&p.type_guid),
                guid: some_str(&p.guid),
                wipe_partition_entry: some_true(p.wipe_partition_entry),
                should_exist: p.should_exist,
                resize: None,
            })
            .collect(),
    }
}

fn raid(r: &old::Raid) -> new::Raid {
    new::Raid {
        name: r.name.clone(),
        level: some_str(&r.level),
        devices: r.devices.clone(),
        spares: (r.spares != 0).then_some(r.spares),
        options: r.options.clone(),
    }
}

fn filesystem(f: &old::Filesystem, m: &FsMap) -> new::Filesystem {
    let mount = f.mount.clone().unwrap_or_default();
    let mut wipe = some_true(mount.wipe_filesystem);
    let mut options = mount.options.clone();
    if let Some(c) = &mount.create {
        // Only a forced `create` gets here: it wipes, and its options are mkfs options.
        wipe = some_true(c.force);
        options.extend(c.options.iter().cloned());
    }
    let mut format = mount.format.clone();
    if f.name.eq_ignore_ascii_case("oem") && wipe != Some(true) {
        // Flatcar's OEM partition is btrfs whatever an old config says, unless it is wiped.
        format = "btrfs".into();
    }
    new::Filesystem {
        device: mount.device,
        format: some_str(&format),
        wipe_filesystem: wipe,
        label: mount.label,
        uuid: mount.uuid,
        options,
        path: m.get(&f.name).and_then(|p| some_str(p)),
        mount_options: Vec::new(),
    }
}

fn node_path(m: &FsMap, fs: &str, path: &str) -> String {
    join(&[m.get(fs).map_or("", String::as_str), path])
}

fn node_user(o: &Option<old::NodeOwner>) -> new::NodeUser {
    let o = o.clone().unwrap_or_default();
    new::NodeUser {
        id: o.id,
        name: some_str(&o.name),
    }
}

fn node_group(o: &Option<old::NodeOwner>) -> new::NodeGroup {
    let o = o.clone().unwrap_or_default();
    new::NodeGroup {
        id: o.id,
        name: some_str(&o.name),
    }
}

fn file(f: &old::File, m: &FsMap) -> new::File {
    // 2.x files overwrite unless told otherwise; appending never overwrites.
    let overwrite = if f.append {
        Some(false)
    } else {
        Some(f.overwrite.unwrap_or(true))
    };
    let c = new::Resource {
        compression: some_str(&f.contents.compression),
        source: Some(f.contents.source.clone()),
        http_headers: headers(&f.contents.http_headers),
        verification: new::Verification {
            hash: f.contents.verification.hash.clone(),
        },
    };
    let (contents, append) = if f.append {
        (new::Resource::default(), vec![c])
    } else {
        (c, Vec::new())
    };
    new::File {
        path: node_path(m, &f.filesystem, &f.path),
        user: node_user(&f.user),
        group: node_group(&f.group),
        overwrite,
        mode: f.mode,
        contents,
        append,
    }
}

/// networkd units and drop-ins as files (where Ignition 2.x wrote them).
fn networkd(n: &old::Networkd, m: &FsMap) -> Vec<new::File> {
    let root = m.get("root").map_or("/", String::as_str);
    let mk = |path: String, contents: &str| new::File {
        path,
        overwrite: Some(true),
        mode: Some(0o644),
        contents: new::Resource {
            source: Some(format!("data:,{}", path_escape(contents))),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut out = Vec::new();
    for u in &n.units {
        if !u.contents.is_empty() {
            out.push(mk(
                join(&[root, "/etc/systemd/network", &u.name]),
                &u.contents,
            ));
        }
        for d in &u.dropins {
            out.push(mk(
                join(&[
                    root,
                    "/etc/systemd/network",
                    &format!("{}.d", u.name),
                    &d.name,
                ]),
                &d.contents,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_helpers() {
        assert_eq!(
            path_escape("[Match]\nName=eth0 x"),
            "%5BMatch%5D%0AName=eth0%20x"
        );
        assert_eq!(
            path_escape("a/b?c;d,e*f$&+:=@~"),
            "a%2Fb%3Fc%3Bd%2Ce%2Af$&+:=@~"
        );
        assert_eq!(join(&["/", "", "a//b/"]), "/a/b");
        assert_eq!(join(&["", "a"]), "a");
        assert_eq!(join(&["/tmp/x-ign1", "/a"]), "/tmp/x-ign1/a");
    }

    #[test]
    fn names_filesystems_like_flatcar() {
        let mut c = old::Config::default();
        for name in ["data", "oem", "", "data", "root"] {
            c.storage.filesystems.push(old::Filesystem {
                name: name.into(),
                mount: Some(old::Mount {
                    device: "/dev/x".into(),
                    format: "ext4".into(),
                    ..Default::default()
                }),
                path: None,
            });
        }
        let mut n = Counters::default();
        let m = filesystem_paths(&c, &mut n).unwrap();
        assert_eq!(m["data"], "/tmp/data-ign1");
        assert_eq!(m["oem"], "/oem");
        assert_eq!(m["ignition1"], "/tmp/ignition1-ign3");
        assert_eq!(m["root"], "/");
        let out = translate(&c, &mut Counters::default()).unwrap();
        let fss = &out.storage.filesystems;
        assert_eq!(fss.len(), 4);
        assert_eq!(fss[1].format.as_deref(), Some("btrfs"));
        assert_eq!(fss[2].path, None);
    }
}
