//! The Butane base spec shared by the variants: its types, which keys each base version has,
//! the source rules, and the translation into the Ignition model.

pub mod local;
pub(crate) mod mode;
mod mount;
mod quadlets;
mod trees;
pub(crate) mod types;
pub(crate) mod validate;

use crate::pathmap::PathMap;
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use flint_ignition::validate::Issue;
use flint_ignition::{Version, dataurl};
use local::FilesDir;
use types as bu;

// Where the versions and their differences are listed.
pub use crate::registry::BaseVersion;

/// How the base translation is done for a variant version.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    pub files: FilesDir<'a>,
    pub base: BaseVersion,
    /// The Ignition version of the output.
    pub out_version: Version,
    /// Whether embedded contents may be gzipped (`Variant::allows_compression`).
    pub allow_gzip: bool,
    /// Contents encoded ahead, on another thread, while the document was read.
    pub ahead: Option<&'a super::ahead::Ahead>,
    /// Contents encoded in earlier translations of the document.
    pub memo: Option<&'a crate::memo::Memo>,
    /// The document's `!!binary` values, when it has any.
    pub binary: Option<BinaryValues<'a>>,
}

/// The `!!binary` values of a document. Where go-yaml decodes one into a string, the
/// string holds the bytes: text fields show them as Go's JSON encoder does (one U+FFFD per
/// byte that is not UTF-8, which is what the tree holds), but embedded contents (`inline`)
/// are the bytes themselves.
#[derive(Debug, Clone, Copy)]
pub struct BinaryValues<'a> {
    pub root: &'a flint_go::tree::Node,
    pub tags: &'a std::collections::HashMap<u32, flint_go::yaml::TagNote>,
}

impl BinaryValues<'_> {
    /// The bytes of the `!!binary` value at `path`, if that is one.
    pub fn bytes_at(&self, path: &JsonPath) -> Option<Vec<u8>> {
        match self.tags.get(&self.root.at(path)?.start)? {
            flint_go::yaml::TagNote::Named { tag, text, .. } if tag == "!!binary" => {
                flint_go::yaml::binary_data(text)
            }
            _ => None,
        }
    }
}

impl Settings<'_> {
    /// The data URL for embedded `data` and the compression to write with it. Base 0.1 only
    /// percent-encodes and leaves `compression` as the user wrote it.
    pub fn data_url(&self, data: &[u8], user: Option<&str>) -> (String, Option<String>) {
        if !self.base.chooses_encoding() {
            let url = format!("data:,{}", dataurl::percent_encode(data));
            return (url, user.map(str::to_string));
        }
        if self.allow_gzip || user.is_some_and(|c| !c.is_empty()) {
            if user.is_none()
                && let Some(done) = self.ahead.and_then(|a| a.take(data))
            {
                return done;
            }
            if let (None, Some(memo)) = (user, self.memo) {
                return memo.encode(data);
            }
            return dataurl::encode(data, user);
        }
        // No automatic compression: the shorter of percent-encoding and base64, with the
        // compression set explicitly to none, as upstream writes it.
        let (url, _) = dataurl::encode(data, Some("none"));
        (url, Some(String::new()))
    }
}

/// What translating produced: the config, where its parts came from, and the findings (at
/// source paths); `failed` when an error among them stops the translation.
pub struct Translation {
    pub config: ig::Config,
    pub map: PathMap,
    pub issues: Vec<Issue>,
    pub failed: bool,
}

fn has_error(issues: &[Issue]) -> bool {
    issues
        .iter()
        .any(|i| i.severity == flint_go::diag::Severity::Error)
}

/// Translates `src` (already validated) into the Ignition model: the fields, then the
/// generated mount units, then trees and quadlets, as upstream does.
pub fn translate(src: &bu::Config, set: Settings<'_>) -> Translation {
    let mut tr = Translator {
        set,
        issues: Vec::new(),
        map: PathMap::default(),
    };
    let mut cfg = tr.config(src);
    mount::add_units(&mut tr, src, &mut cfg);
    trees::apply(&mut tr, src, &mut cfg);
    quadlets::apply(&mut tr, src, &mut cfg);
    Translation {
        failed: has_error(&tr.issues),
        config: cfg,
        map: tr.map,
        issues: tr.issues,
    }
}

pub(crate) struct Translator<'a> {
    pub set: Settings<'a>,
    pub issues: Vec<Issue>,
    pub map: PathMap,
}

fn path(parts: &[&'static str]) -> JsonPath {
    parts.iter().fold(JsonPath::root(), |p, k| p.key(*k))
}

impl Translator<'_> {
    pub(crate) fn error(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: flint_go::diag::Severity::Error,
            path,
            message: message.into(),
        });
    }

    pub(crate) fn data_url(&self, data: &[u8], user: Option<&str>) -> (String, Option<String>) {
        self.set.data_url(data, user)
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
            .map(|(i, r)| self.resource(&r.as_resource(), &base.key("merge").index(i)))
            .collect();
        let replace = self.resource(&src.config.replace.as_resource(), &base.key("replace"));
        let cas = path(&["ignition", "security", "tls", "certificate_authorities"]);
        let certificate_authorities = src
            .security
            .tls
            .certificate_authorities
            .iter()
            .enumerate()
            .map(|(i, r)| self.resource(&r.as_resource(), &cas.index(i)))
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
            version: self.set.out_version.to_string(),
        }
    }

    /// Translates a resource: `inline` and `local` become data URLs.
    pub(crate) fn resource(&mut self, r: &bu::Resource, at: &JsonPath) -> ig::Resource {
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
            (Some(text), _) => Some(
                (self.set.binary)
                    .and_then(|b| b.bytes_at(&at.key("inline")))
                    .unwrap_or_else(|| text.as_bytes().to_vec()),
            ),
            (None, Some(l)) => match self.set.files.read(l) {
                Ok(b) => Some(b),
                Err(e) => {
                    self.error(at.key("local"), e);
                    None
                }
            },
            _ => None,
        };
        if let Some(data) = data {
            let (url, compression) = self.data_url(&data, r.compression.as_deref());
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
            if !u.ssh_authorized_keys_local.is_empty() && self.set.files.dir.is_none() {
                self.error(locals.clone(), local::NO_FILES_DIR);
            } else {
                for (j, file) in u.ssh_authorized_keys_local.iter().enumerate() {
                    match self.set.files.read(file) {
                        Ok(bytes) => {
                            // One key per line, lines ending in `\n` or `\r\n` (a `\r` at the
                            // very end, with no line break after it, stays); only empty lines
                            // are skipped.
                            let text = flint_go::bytes::go_lossy(&bytes);
                            let lines: Vec<&str> = text.split('\n').collect();
                            for (k, line) in lines.iter().enumerate() {
                                let ended = k + 1 < lines.len();
                                let line = match ended {
                                    true => line.strip_suffix('\r').unwrap_or(line),
                                    false => line,
                                };
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
                cex: ig::Cex {
                    enabled: l.cex.enabled,
                },
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
        let set = self.set;
        let one = |(i, f): (usize, &bu::File)| {
            let mut sub = Translator {
                set,
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
        };
        // Unzipped in place: a second pass moving every file into a new list showed.
        let (out, issues): (Vec<ig::File>, Vec<Vec<Issue>>) =
            flint_ignition::par::map_indexed(src, one);
        self.issues.extend(issues.into_iter().flatten());
        out
    }

    fn systemd(&mut self, src: &bu::Systemd, at: &JsonPath) -> ig::Systemd {
        let mut units = Vec::with_capacity(src.units.len());
        for (i, u) in src.units.iter().enumerate() {
            let up = at.key("units").index(i);
            // Upstream reads the drop-ins' local files before the unit's own: a missing
            // one of each is reported in that order.
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
            let contents = self.unit_contents(&u.contents, &u.contents_local, &up, i, None);
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
        match self.set.files.read(l) {
            Ok(bytes) => {
                let mut out = path(&["systemd", "units"]).index(unit);
                if let Some(j) = dropin {
                    out = out.key("dropins").index(j);
                }
                self.map.add(out.key("contents"), at.key("contents_local"));
                Some(flint_go::bytes::go_lossy(&bytes).into_owned())
            }
            Err(e) => {
                self.error(at.key("contents_local"), e);
                None
            }
        }
    }
}

pub(crate) fn user(u: &bu::NodeUser) -> ig::NodeUser {
    ig::NodeUser {
        id: u.id,
        name: u.name.clone(),
    }
}

pub(crate) fn group(g: &bu::NodeGroup) -> ig::NodeGroup {
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
