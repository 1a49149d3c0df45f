//! The Butane base spec shared by the variants: its types, which keys each base version has,
//! the source rules, and the translation into the Ignition model.

pub mod local;
pub mod mode;
mod mount;
mod trees;
pub mod types;
mod validate;

use crate::ignition::types as ig;
use crate::ignition::validate::{Checker, Issue};
use crate::ignition::{Version, dataurl};
use crate::spec::pathmap::PathMap;
use crate::tree::JsonPath;
use local::FilesDir;
use rayon::prelude::*;
use types as bu;

/// A base spec version. Ordered: later versions compare greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BaseVersion {
    V0_4,
    V0_5,
}

impl BaseVersion {
    /// Whether this base version has key `key` on Butane struct `ty`.
    pub fn has_key(self, ty: &str, key: &str) -> bool {
        let since = match (ty, key) {
            ("Luks", "discard" | "open_options")
            | ("Tang", "advertisement")
            | ("Unit" | "Dropin", "contents_local")
            | ("PasswdUser", "ssh_authorized_keys_local") => BaseVersion::V0_5,
            _ => BaseVersion::V0_4,
        };
        since <= self
    }
}

/// What translating produced: the config, where its parts came from, and the findings (at
/// source paths). `failed` names the stage that made the source invalid, if one did.
pub struct Translation {
    pub config: ig::Config,
    pub map: PathMap,
    pub issues: Vec<Issue>,
    pub source_invalid: bool,
}

/// Validates and translates `src`. Source findings stop the translation early, as upstream.
pub fn translate(src: &bu::Config, out_version: Version, files: FilesDir<'_>) -> Translation {
    let mut checker = Checker::new(out_version);
    validate::check(&mut checker, src);
    let mut t = Translation {
        config: ig::Config::default(),
        map: PathMap::default(),
        issues: checker.issues,
        source_invalid: false,
    };
    if t.issues
        .iter()
        .any(|i| i.severity == crate::diag::Severity::Error)
    {
        t.source_invalid = true;
        return t;
    }
    let mut tr = Translator {
        files,
        out_version,
        issues: Vec::new(),
        map: PathMap::default(),
    };
    let mut cfg = tr.config(src);
    mount::add_units(&mut tr, src, &mut cfg);
    trees::apply(&mut tr, src, &mut cfg);
    t.source_invalid = tr
        .issues
        .iter()
        .any(|i| i.severity == crate::diag::Severity::Error);
    t.issues.extend(tr.issues);
    t.config = cfg;
    t.map = tr.map;
    t
}

pub(crate) struct Translator<'a> {
    pub files: FilesDir<'a>,
    pub out_version: Version,
    pub issues: Vec<Issue>,
    pub map: PathMap,
}

fn path(parts: &[&str]) -> JsonPath {
    parts.iter().fold(JsonPath::root(), |p, k| p.key(k))
}

impl Translator<'_> {
    pub fn error(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: crate::diag::Severity::Error,
            path,
            message: message.into(),
        });
    }

    pub fn warning(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: crate::diag::Severity::Warning,
            path,
            message: message.into(),
        });
    }

    fn config(&mut self, src: &bu::Config) -> ig::Config {
        let root = JsonPath::root();
        ig::Config {
            ignition: self.ignition(&src.ignition),
            kernel_arguments: ig::KernelArguments {
                should_exist: src.kernel_arguments.should_exist.clone(),
                should_not_exist: src.kernel_arguments.should_not_exist.clone(),
            },
            passwd: self.passwd(&src.passwd, &root.key("passwd")),
            storage: self.storage(&src.storage, &root.key("storage")),
            systemd: self.systemd(&src.systemd, &root.key("systemd")),
        }
    }

    fn ignition(&mut self, src: &bu::Ignition) -> ig::Ignition {
        let base = path(&["ignition", "config"]);
        let merge = src
            .config
            .merge
            .iter()
            .enumerate()
            .map(|(i, r)| self.config_resource(r, &base.key("merge").index(i)))
            .collect();
        let replace = self.config_resource(&src.config.replace, &base.key("replace"));
        let cas = path(&["ignition", "security", "tls", "certificate_authorities"]);
        let certificate_authorities = src
            .security
            .tls
            .certificate_authorities
            .iter()
            .enumerate()
            .map(|(i, r)| self.resource(r, &cas.index(i)))
            .collect();
        ig::Ignition {
            config: ig::IgnitionConfig { merge, replace },
            proxy: ig::Proxy {
                http_proxy: src.proxy.http_proxy.clone(),
                https_proxy: src.proxy.https_proxy.clone(),
                no_proxy: src.proxy.no_proxy.clone(),
            },
            security: ig::Security {
                tls: ig::Tls {
                    certificate_authorities,
                },
            },
            timeouts: ig::Timeouts {
                http_response_headers: src.timeouts.http_response_headers,
                http_total: src.timeouts.http_total,
            },
            version: self.out_version.to_string(),
        }
    }

    /// A merge/replace config: an inline one is validated as an Ignition config too.
    /// (Upstream never validates `local` ones; neither do we, to give the same results.)
    fn config_resource(&mut self, r: &bu::Resource, at: &JsonPath) -> ig::Resource {
        if let Some(text) = &r.inline {
            self.check_embedded_config(text.as_bytes(), at);
        }
        self.resource(r, at)
    }

    /// Upstream skips (with a warning) any embedded config whose version is not exactly the
    /// output version; flint reads every version it supports up to the output version and
    /// validates it by its own version's rules, warning only for the rest.
    fn check_embedded_config(&mut self, bytes: &[u8], at: &JsonPath) {
        let inline = at.key("inline");
        match crate::ignition::parse(bytes) {
            Ok(p) if p.version <= self.out_version => {
                for issue in crate::ignition::validate::validate(&p.config, p.version) {
                    let mut full = inline.clone();
                    for s in issue.path.segs() {
                        full.push(s.clone());
                    }
                    self.issues.push(Issue {
                        path: full,
                        ..issue
                    });
                }
            }
            Ok(_) => self.skip_embedded(at),
            Err(d) if d.fatal && d.message.starts_with("unsupported config version") => {
                self.skip_embedded(at)
            }
            Err(d) => {
                let mut full = inline.clone();
                if let Some(p) = &d.path {
                    for s in p.segs() {
                        full.push(s.clone());
                    }
                }
                self.error(full, d.message);
                self.error(inline, "config is not valid");
            }
        }
    }

    fn skip_embedded(&mut self, at: &JsonPath) {
        self.warning(
            at.key("version"),
            "skipping validation for the merge/replace ignition config due to an unkown version",
        );
    }

    /// Translates a resource: `inline` and `local` become data URLs.
    pub fn resource(&mut self, r: &bu::Resource, at: &JsonPath) -> ig::Resource {
        let mut out = ig::Resource {
            compression: r.compression.clone(),
            http_headers: r
                .http_headers
                .iter()
                .map(|h| ig::HttpHeader {
                    name: h.name.clone(),
                    value: h.value.clone(),
                })
                .collect(),
            source: r.source.clone(),
            verification: ig::Verification {
                hash: r.verification.hash.clone(),
            },
        };
        let data = match (&r.inline, &r.local) {
            (Some(text), _) => Some(text.as_bytes().to_vec()),
            (None, Some(l)) => match self.files.read(l) {
                Ok(b) => Some(b),
                Err(e) => {
                    self.error(at.key("local"), e);
                    None
                }
            },
            _ => None,
        };
        if let Some(data) = data {
            let (url, compression) = dataurl::encode(&data, r.compression.as_deref());
            out.source = Some(url);
            out.compression = compression;
        }
        out
    }

    fn passwd(&mut self, src: &bu::Passwd, at: &JsonPath) -> ig::Passwd {
        let mut users = Vec::with_capacity(src.users.len());
        for (i, u) in src.users.iter().enumerate() {
            let up = at.key("users").index(i);
            let mut keys = u.ssh_authorized_keys.clone();
            let locals = up.key("ssh_authorized_keys_local");
            if !u.ssh_authorized_keys_local.is_empty() && self.files.dir.is_none() {
                self.error(locals.clone(), local::NO_FILES_DIR);
            } else {
                for (j, file) in u.ssh_authorized_keys_local.iter().enumerate() {
                    match self.files.read(file) {
                        Ok(bytes) => {
                            // One key per line; only empty lines are skipped.
                            let text = String::from_utf8_lossy(&bytes);
                            for line in text.split('\n') {
                                let line = line.strip_suffix('\r').unwrap_or(line);
                                if line.is_empty() {
                                    continue;
                                }
                                let out = path(&["passwd", "users"])
                                    .index(i)
                                    .key("sshAuthorizedKeys")
                                    .index(keys.len());
                                self.map.add(out, locals.index(j));
                                keys.push(line.to_string());
                            }
                        }
                        Err(e) => self.error(locals.index(j), e),
                    }
                }
            }
            users.push(ig::PasswdUser {
                gecos: u.gecos.clone(),
                groups: u.groups.clone(),
                home_dir: u.home_dir.clone(),
                name: u.name.clone(),
                no_create_home: u.no_create_home,
                no_log_init: u.no_log_init,
                no_user_group: u.no_user_group,
                password_hash: u.password_hash.clone(),
                primary_group: u.primary_group.clone(),
                ssh_authorized_keys: keys,
                shell: u.shell.clone(),
                should_exist: u.should_exist,
                system: u.system,
                uid: u.uid,
            });
        }
        let groups = src
            .groups
            .iter()
            .map(|g| ig::PasswdGroup {
                gid: g.gid,
                name: g.name.clone(),
                password_hash: g.password_hash.clone(),
                should_exist: g.should_exist,
                system: g.system,
            })
            .collect();
        ig::Passwd { groups, users }
    }

    fn storage(&mut self, src: &bu::Storage, at: &JsonPath) -> ig::Storage {
        let files = self.files(&src.files, &at.key("files"));
        let luks = src
            .luks
            .iter()
            .enumerate()
            .map(|(i, l)| ig::Luks {
                clevis: clevis(&l.clevis),
                device: l.device.clone(),
                discard: l.discard,
                key_file: self.resource(&l.key_file, &at.key("luks").index(i).key("key_file")),
                label: l.label.clone(),
                name: l.name.clone(),
                open_options: l.open_options.clone(),
                options: l.options.clone(),
                uuid: l.uuid.clone(),
                wipe_volume: l.wipe_volume,
                ..Default::default()
            })
            .collect();
        ig::Storage {
            directories: src
                .directories
                .iter()
                .map(|d| ig::Directory {
                    group: group(&d.group),
                    overwrite: d.overwrite,
                    path: d.path.clone(),
                    user: user(&d.user),
                    mode: d.mode,
                })
                .collect(),
            disks: src.disks.iter().map(disk).collect(),
            files,
            filesystems: src
                .filesystems
                .iter()
                .map(|f| ig::Filesystem {
                    device: f.device.clone(),
                    format: f.format.clone(),
                    label: f.label.clone(),
                    mount_options: f.mount_options.clone(),
                    options: f.options.clone(),
                    path: f.path.clone(),
                    uuid: f.uuid.clone(),
                    wipe_filesystem: f.wipe_filesystem,
                })
                .collect(),
            links: src
                .links
                .iter()
                .map(|l| ig::Link {
                    group: group(&l.group),
                    overwrite: l.overwrite,
                    path: l.path.clone(),
                    user: user(&l.user),
                    hard: l.hard,
                    target: l.target.clone(),
                })
                .collect(),
            luks,
            raid: src
                .raid
                .iter()
                .map(|r| ig::Raid {
                    devices: r.devices.clone(),
                    level: r.level.clone(),
                    name: r.name.clone(),
                    options: r.options.clone(),
                    spares: r.spares,
                })
                .collect(),
        }
    }

    /// Files are independent of each other, and encoding their contents (gzip at best
    /// compression) is most of the work: do it on every core. The order of the output, and
    /// of the findings, does not depend on the number of threads.
    fn files(&mut self, src: &[bu::File], at: &JsonPath) -> Vec<ig::File> {
        let files = self.files;
        let out_version = self.out_version;
        let results: Vec<(ig::File, Vec<Issue>)> = src
            .par_iter()
            .enumerate()
            .map(|(i, f)| {
                let mut sub = Translator {
                    files,
                    out_version,
                    issues: Vec::new(),
                    map: PathMap::default(),
                };
                let p = at.index(i);
                let file = ig::File {
                    group: group(&f.group),
                    overwrite: f.overwrite,
                    path: f.path.clone(),
                    user: user(&f.user),
                    append: f
                        .append
                        .iter()
                        .enumerate()
                        .map(|(j, a)| sub.resource(a, &p.key("append").index(j)))
                        .collect(),
                    contents: sub.resource(&f.contents, &p.key("contents")),
                    mode: f.mode,
                };
                (file, sub.issues)
            })
            .collect();
        let mut out = Vec::with_capacity(results.len());
        for (file, issues) in results {
            self.issues.extend(issues);
            out.push(file);
        }
        out
    }

    fn systemd(&mut self, src: &bu::Systemd, at: &JsonPath) -> ig::Systemd {
        let mut units = Vec::with_capacity(src.units.len());
        for (i, u) in src.units.iter().enumerate() {
            let up = at.key("units").index(i);
            let contents = self.unit_contents(&u.contents, &u.contents_local, &up, i, None);
            let dropins = u
                .dropins
                .iter()
                .enumerate()
                .map(|(j, d)| ig::Dropin {
                    contents: self.unit_contents(
                        &d.contents,
                        &d.contents_local,
                        &up.key("dropins").index(j),
                        i,
                        Some(j),
                    ),
                    name: d.name.clone(),
                })
                .collect();
            units.push(ig::Unit {
                contents,
                dropins,
                enabled: u.enabled,
                mask: u.mask,
                name: u.name.clone(),
            });
        }
        ig::Systemd { units }
    }

    /// `contents`, or the text of the file `contents_local` names.
    fn unit_contents(
        &mut self,
        contents: &Option<String>,
        local: &Option<String>,
        at: &JsonPath,
        unit: usize,
        dropin: Option<usize>,
    ) -> Option<String> {
        let Some(l) = local.as_deref().filter(|l| !l.is_empty()) else {
            return contents.clone();
        };
        match self.files.read(l) {
            Ok(bytes) => {
                let mut out = path(&["systemd", "units"]).index(unit);
                if let Some(j) = dropin {
                    out = out.key("dropins").index(j);
                }
                self.map.add(out.key("contents"), at.key("contents_local"));
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            Err(e) => {
                self.error(at.key("contents_local"), e);
                None
            }
        }
    }
}

fn user(u: &bu::NodeUser) -> ig::NodeUser {
    ig::NodeUser {
        id: u.id,
        name: u.name.clone(),
    }
}

fn group(g: &bu::NodeGroup) -> ig::NodeGroup {
    ig::NodeGroup {
        id: g.id,
        name: g.name.clone(),
    }
}

fn disk(d: &bu::Disk) -> ig::Disk {
    ig::Disk {
        device: d.device.clone(),
        partitions: d
            .partitions
            .iter()
            .map(|p| ig::Partition {
                guid: p.guid.clone(),
                label: p.label.clone(),
                number: p.number,
                resize: p.resize,
                should_exist: p.should_exist,
                size_mib: p.size_mib,
                start_mib: p.start_mib,
                type_guid: p.type_guid.clone(),
                wipe_partition_entry: p.wipe_partition_entry,
            })
            .collect(),
        wipe_table: d.wipe_table,
    }
}

fn clevis(c: &bu::Clevis) -> ig::Clevis {
    ig::Clevis {
        custom: ig::ClevisCustom {
            config: c.custom.config.clone(),
            needs_network: c.custom.needs_network,
            pin: c.custom.pin.clone(),
        },
        tang: c
            .tang
            .iter()
            .map(|t| ig::Tang {
                thumbprint: t.thumbprint.clone(),
                url: t.url.clone(),
                advertisement: t.advertisement.clone(),
            })
            .collect(),
        threshold: c.threshold,
        tpm2: c.tpm2,
    }
}
