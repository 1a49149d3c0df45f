//! The 2.x validation rules, with the old validator's messages, reported at JSON paths (the
//! old validator only gave positions). Run on a config already brought to 2.4.0's meaning,
//! with the document's own version deciding the few rules that changed.
//!
//! Deprecated fields (partition `size`/`start` in sectors) are errors here: Flatcar's
//! translation to 3.x refuses any deprecation, so such a config never provisions.

use super::types::*;
use super::version::LegacyVersion;
use crate::dataurl;
use crate::validate::Issue;
use crate::validate::resource::parse_url;
use crate::validate::unit;
use flint_go::diag::Severity;
use flint_go::tree::JsonPath;
use std::collections::HashSet;

struct Rules {
    v: LegacyVersion,
    issues: Vec<Issue>,
}

impl Rules {
    fn error(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: Severity::Error,
            path,
            message: message.into(),
        });
    }

    fn warning(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: Severity::Warning,
            path,
            message: message.into(),
        });
    }
}

/// Validates `cfg` (read as version `v`, upgraded to 2.4.0's meaning).
pub fn validate(cfg: &Config, v: LegacyVersion) -> Vec<Issue> {
    let mut r = Rules {
        v,
        issues: Vec::new(),
    };
    let root = JsonPath::root();
    ignition(&mut r, &cfg.ignition, &root.key("ignition"));
    storage(&mut r, &cfg.storage, &root.key("storage"));
    systemd(&mut r, &cfg.systemd, &root.key("systemd"));
    networkd(&mut r, &cfg.networkd, &root.key("networkd"));
    passwd(&mut r, &cfg.passwd, &root.key("passwd"));
    if !r.issues.iter().any(|i| i.severity == Severity::Error) {
        special_bits(&mut r, &cfg.storage, &root.key("storage"));
    }
    r.issues
}

/// Flatcar validates a valid 2.x config again once translated to 3.x, whose rules warn of
/// setuid/setgid/sticky bits (not applied before 3.6.0): directories first, then files, as
/// that validator walks them.
fn special_bits(r: &mut Rules, s: &Storage, path: &JsonPath) {
    let dirs = (s.directories.iter().enumerate()).map(|(i, d)| (d.mode, "directories", i));
    let files = (s.files.iter().enumerate()).map(|(i, f)| (f.mode, "files", i));
    for (m, list, i) in dirs.chain(files) {
        if m.is_some_and(|m| m & 0o7000 != 0) {
            r.warning(
                path.key(list).index(i).key("mode"),
                crate::validate::SPECIAL_BITS,
            );
        }
    }
}

/// The 2.x URL rule; `Err` holds the old validator's message.
pub fn check_url(s: &str, v: LegacyVersion) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    let u = parse_url(s)?;
    match u.scheme.as_str() {
        "http" | "https" | "oem" => Ok(()),
        "tftp" if v >= LegacyVersion::V2_1 => Ok(()),
        "s3" if v >= LegacyVersion::V2_1 => {
            let version_id = (u.query.unwrap_or("").split('&'))
                .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
                .find(|(k, _)| *k == "versionId");
            match version_id {
                Some((_, "")) => Err("invalid S3 object VersionId".into()),
                _ => Ok(()),
            }
        }
        "data" => {
            let body = &s["data:".len()..];
            dataurl::check(s)?;
            // The data URL parser takes only URL characters after the comma (no '#', space,
            // control or non-ASCII bytes), whatever the encoding.
            let (header, data) = body.split_once(',').unwrap_or(("", body));
            let url_char =
                |b: u8| b.is_ascii() && b > 0x1f && b != 0x7f && !b" <>#\"{}|\\^[]`".contains(&b);
            if !header.ends_with(";base64") && !data.bytes().all(url_char) {
                return Err("invalid data character".into());
            }
            Ok(())
        }
        _ => Err("invalid url scheme".into()),
    }
}

fn hash(r: &mut Rules, h: &Option<String>, path: &JsonPath) {
    let Some(h) = h else { return };
    let p = path.key("hash");
    match h.split_once('-') {
        None => r.error(p, "malformed hash specifier"),
        Some(("sha512", sum)) if sum.len() != 128 => r.error(p, "incorrect size for hash sum"),
        Some(("sha512", _)) => {}
        Some(_) => r.error(p, "unrecognized hash function"),
    }
}

fn headers(r: &mut Rules, list: &[HttpHeader], source: &str, path: &JsonPath) {
    if list.is_empty() {
        return;
    }
    let p = path.key("httpHeaders");
    let mut seen = HashSet::new();
    for (i, h) in list.iter().enumerate() {
        if h.name.is_empty() {
            r.error(p.index(i).key("name"), "HTTP header name can't be empty");
        } else if !seen.insert(h.name.as_str()) {
            r.error(
                p.index(i).key("name"),
                format!("Found duplicate HTTP header: {:?}", h.name),
            );
        }
    }
    match parse_url(source) {
        Err(_) => r.error(p, "unable to parse url"),
        Ok(u) if !matches!(u.scheme.as_str(), "http" | "https") => {
            r.error(p, "cannot use HTTP headers with this source scheme")
        }
        Ok(_) => {}
    }
}

fn reference(r: &mut Rules, c: &ConfigReference, path: &JsonPath) {
    if let Err(e) = check_url(&c.source, r.v) {
        r.error(path.key("source"), e);
    }
    headers(r, &c.http_headers, &c.source, path);
    hash(r, &c.verification.hash, &path.key("verification"));
}

fn ignition(r: &mut Rules, ig: &Ignition, path: &JsonPath) {
    let cfg = path.key("config");
    for (i, a) in ig.config.append.iter().enumerate() {
        reference(r, a, &cfg.key("append").index(i));
    }
    if let Some(rep) = &ig.config.replace {
        reference(r, rep, &cfg.key("replace"));
    }
    let cas = path
        .key("security")
        .key("tls")
        .key("certificateAuthorities");
    for (i, ca) in ig.security.tls.certificate_authorities.iter().enumerate() {
        reference(r, ca, &cas.index(i));
    }
}

fn absolute(p: &str) -> bool {
    p.starts_with('/')
}

fn storage(r: &mut Rules, s: &Storage, path: &JsonPath) {
    for (i, d) in s.disks.iter().enumerate() {
        disk(r, d, &path.key("disks").index(i));
    }
    for (i, a) in s.raid.iter().enumerate() {
        raid(r, a, &path.key("raid").index(i));
    }
    let mut names: HashSet<&str> = HashSet::from(["root"]);
    for (i, fs) in s.filesystems.iter().enumerate() {
        let p = path.key("filesystems").index(i);
        if !names.insert(fs.name.as_str()) {
            r.warning(
                p.clone(),
                format!(
                    "Filesystem {:?} shadows exising filesystem definition",
                    fs.name
                ),
            );
        }
        filesystem(r, fs, &p);
    }
    for (i, f) in s.files.iter().enumerate() {
        let p = path.key("files").index(i);
        node(r, &f.node(), &names, "File", &p);
        file(r, f, &p);
    }
    for (i, d) in s.directories.iter().enumerate() {
        let p = path.key("directories").index(i);
        node(r, &d.node(), &names, "Directory", &p);
        mode(r, d.mode, &p);
    }
    for (i, l) in s.links.iter().enumerate() {
        let p = path.key("links").index(i);
        node(r, &l.node(), &names, "Link", &p);
    }
}

fn disk(r: &mut Rules, d: &Disk, path: &JsonPath) {
    if d.device.is_empty() {
        r.error(path.key("device"), "disk device is required");
    } else if !absolute(&d.device) {
        r.error(path.key("device"), "path not absolute");
    }
    let parts = &d.partitions;
    let pp = path.key("partitions");
    let mut numbers = HashSet::new();
    if parts
        .iter()
        .filter(|p| p.number != 0)
        .any(|p| !numbers.insert(p.number))
    {
        r.error(pp.clone(), "partition numbers collide");
    }
    if overlap(parts) {
        r.error(pp.clone(), "partitions overlap");
    }
    if parts.iter().any(|p| p.start.is_some_and(|s| s & 2047 != 0)) {
        r.error(pp.clone(), "partitions misaligned");
    }
    if r.v >= LegacyVersion::V2_3 {
        let zero = parts.iter().any(|p| p.number == 0);
        let gone = parts.iter().any(|p| p.should_exist == Some(false));
        if zero && gone {
            r.error(
                pp.clone(),
                "shouldExist is false for a partition and other partition(s) has start or size 0",
            );
        }
        let sectors = parts.iter().any(|p| p.size.is_some() || p.start.is_some());
        let mib = parts
            .iter()
            .any(|p| p.size_mib.is_some() || p.start_mib.is_some());
        if sectors && mib {
            r.error(pp.clone(), "cannot mix MBs and sectors within a disk");
        }
    }
    for (j, p) in parts.iter().enumerate() {
        partition(r, p, &pp.index(j));
    }
}

/// Whether two partitions with explicit start and size share a sector (start 0 means "the
/// largest free block" and size 0 "to the end": neither is checked).
fn overlap(parts: &[Partition]) -> bool {
    let dims: Vec<(i64, i64)> = parts
        .iter()
        .filter_map(|p| Some((p.start?, p.size?)))
        .filter(|(s, _)| *s != 0)
        .collect();
    let end = |(s, z): (i64, i64)| if z == 0 { s } else { s + z - 1 };
    for (i, &p) in dims.iter().enumerate() {
        for (j, &o) in dims.iter().enumerate() {
            if i == j || p == o {
                continue;
            }
            let (ps, pe, os, oe) = (p.0, end(p), o.0, end(o));
            if (ps >= os && ps <= oe) || (pe >= os && pe <= oe) || (ps < os && pe > oe) {
                return true;
            }
        }
    }
    false
}

fn guid_ok(g: &str) -> bool {
    let groups: Vec<&str> = g.split('-').collect();
    g.is_empty()
        || (groups.iter().map(|s| s.len()).eq([8, 4, 4, 4, 12])
            && groups
                .iter()
                .all(|s| s.bytes().all(|b| b.is_ascii_hexdigit())))
}

fn partition(r: &mut Rules, p: &Partition, path: &JsonPath) {
    if r.v >= LegacyVersion::V2_3 {
        if (p.start.is_some() || p.size.is_some())
            && (p.start_mib.is_some() || p.size_mib.is_some())
        {
            r.error(path.clone(), "cannot mix MBs and sectors within a disk");
        }
        if p.should_exist == Some(false)
            && (p.label.is_some()
                || !p.type_guid.is_empty()
                || !p.guid.is_empty()
                || p.start.is_some()
                || p.size.is_some())
        {
            r.error(
                path.clone(),
                "shouldExist specified false with other options also specified",
            );
        }
        if p.size.is_some() {
            r.error(
                path.key("size"),
                "size is deprecated; use sizeMiB instead (Flatcar's translation to 3.x refuses deprecated fields)",
            );
        }
        if p.start.is_some() {
            r.error(
                path.key("start"),
                "start is deprecated; use startMiB instead (Flatcar's translation to 3.x refuses deprecated fields)",
            );
        }
    } else {
        r.error(
            path.clone(),
            format!(
                "partitions of spec {} give their start and size in sectors, which Flatcar's translation to 3.x refuses (use spec 2.3.0 and startMiB/sizeMiB)",
                r.v
            ),
        );
    }
    if let Some(label) = &p.label {
        if label.len() > 36 {
            r.error(
                path.key("label"),
                "partition labels may not exceed 36 characters",
            );
        }
        if label.contains(':') && r.v != LegacyVersion::V1 {
            r.warning(
                path.key("label"),
                "partition label will be truncated to text before the colon",
            );
        }
    }
    for (key, g) in [("typeGuid", &p.type_guid), ("guid", &p.guid)] {
        if !guid_ok(g) {
            r.error(
                path.key(key),
                "doesn't match the form \"01234567-89AB-CDEF-EDCB-A98765432101\"",
            );
        }
    }
}

fn raid(r: &mut Rules, a: &Raid, path: &JsonPath) {
    match a.level.as_str() {
        "linear" | "raid0" | "0" | "stripe" => {
            if a.spares != 0 {
                r.error(
                    path.key("level"),
                    "spares unsupported for arrays with a level greater than 0",
                );
            }
        }
        "raid1" | "1" | "mirror" | "raid4" | "4" | "raid5" | "5" | "raid6" | "6" | "raid10"
        | "10" => {}
        _ => r.error(path.key("level"), "unrecognized raid level"),
    }
    for (i, d) in a.devices.iter().enumerate() {
        if !absolute(d) {
            r.error(path.key("devices").index(i), "path not absolute");
        }
    }
}

fn filesystem(r: &mut Rules, fs: &Filesystem, path: &JsonPath) {
    match (&fs.mount, &fs.path) {
        (None, None) => r.error(path.clone(), "filesystem is missing mount or path"),
        (Some(_), Some(_)) => r.error(path.clone(), "filesystem has both mount and path defined"),
        _ => {}
    }
    if let Some(p) = &fs.path
        && !absolute(p)
    {
        let msg = if r.v >= LegacyVersion::V2_3 {
            format!("filesystem {:?}: path not absolute", fs.name)
        } else {
            "path not absolute".into()
        };
        r.error(path.key("path"), msg);
    }
    let Some(m) = &fs.mount else { return };
    let mp = path.key("mount");
    if let Some(c) = &m.create
        && r.v >= LegacyVersion::V2_1
    {
        if m.wipe_filesystem {
            r.error(
                mp.clone(),
                "cannot use both create object and wipeFilesystem field",
            );
        }
        if !m.options.is_empty() {
            r.error(
                mp.clone(),
                "cannot use both create object and mount-level options field",
            );
        }
        let _ = c;
        r.warning(
            mp.key("create"),
            "the create object has been deprecated in favor of mount-level options",
        );
    }
    let formats: &[&str] = if r.v >= LegacyVersion::V2_1 {
        &["ext4", "btrfs", "xfs", "swap", "vfat"]
    } else {
        &["ext4", "btrfs", "xfs"]
    };
    if !formats.contains(&m.format.as_str()) {
        r.error(mp.key("format"), "invalid filesystem format");
    }
    if !absolute(&m.device) {
        r.error(mp.key("device"), "path not absolute");
    }
    if let Some(label) = &m.label {
        let limit = match m.format.as_str() {
            "ext4" => Some((16, "ext4")),
            "btrfs" => Some((256, "btrfs")),
            "xfs" => Some((12, "xfs")),
            "swap" => Some((15, "swap")),
            "vfat" => Some((11, "vfat")),
            _ => None,
        };
        if let Some((n, f)) = limit
            && label.len() > n
        {
            r.error(
                mp.key("label"),
                format!("filesystem labels cannot be longer than {n} characters when using {f}"),
            );
        }
    }
}

fn owner(r: &mut Rules, o: &Option<NodeOwner>, path: &JsonPath) {
    if let Some(o) = o
        && o.id.is_some()
        && !o.name.is_empty()
    {
        r.error(path.clone(), "cannot set both id and name");
    }
}

fn node(r: &mut Rules, n: &NodeRef, names: &HashSet<&str>, kind: &str, path: &JsonPath) {
    if n.filesystem.is_empty() {
        r.error(path.key("filesystem"), "no filesystem specified");
    } else if !names.contains(n.filesystem) {
        r.warning(
            path.key("filesystem"),
            format!(
                "{kind} {:?} references nonexistent filesystem {:?}. (This is ok if it is defined in a referenced config)",
                n.path, n.filesystem
            ),
        );
    }
    if !absolute(n.path) {
        r.error(path.key("path"), "path not absolute");
    }
    owner(r, n.user, &path.key("user"));
    owner(r, n.group, &path.key("group"));
}

fn mode(r: &mut Rules, m: Option<i64>, path: &JsonPath) {
    if let Some(m) = m
        && !(0..=0o7777).contains(&m)
    {
        r.error(path.key("mode"), "illegal file mode");
    }
}

fn file(r: &mut Rules, f: &File, path: &JsonPath) {
    if f.overwrite == Some(true) && f.append {
        r.error(path.clone(), "cannot set both append and overwrite to true");
    }
    mode(r, f.mode, path);
    let c = &f.contents;
    let cp = path.key("contents");
    if !matches!(c.compression.as_str(), "" | "gzip") {
        r.error(cp.key("compression"), "invalid compression method");
    }
    if let Err(e) = check_url(&c.source, r.v) {
        let msg = if r.v >= LegacyVersion::V2_3 {
            format!("invalid url {:?}: {e}", c.source)
        } else {
            e
        };
        r.error(cp.key("source"), msg);
    }
    headers(r, &c.http_headers, &c.source, &cp);
    hash(r, &c.verification.hash, &cp.key("verification"));
}

fn unit_contents(r: &mut Rules, contents: &str, path: &JsonPath) -> Option<Vec<unit::UnitOption>> {
    match unit::parse(contents) {
        Ok(o) => Some(o),
        Err(e) => {
            r.error(path.clone(), format!("invalid unit content: {e}"));
            None
        }
    }
}

/// Go's `path.Ext`: the suffix from the last dot of the last element.
fn ext(name: &str) -> &str {
    let last = name.rsplit('/').next().unwrap_or(name);
    last.rfind('.').map_or("", |i| &last[i..])
}

const UNIT_EXTS: &[&str] = &[
    ".service",
    ".socket",
    ".device",
    ".mount",
    ".automount",
    ".swap",
    ".target",
    ".path",
    ".timer",
    ".snapshot",
    ".slice",
    ".scope",
];

fn systemd(r: &mut Rules, s: &Systemd, path: &JsonPath) {
    for (i, u) in s.units.iter().enumerate() {
        let p = path.key("units").index(i);
        let opts = unit_contents(r, &u.contents, &p.key("contents"));
        let enabled = u.enable || u.enabled == Some(true);
        if let Some(opts) = opts
            && enabled
            && !u.contents.is_empty()
            && !unit::has_install(&opts)
        {
            r.warning(
                p.key("contents"),
                format!(
                    "unit {} is enabled, but has no install section so enable does nothing",
                    flint_go::goquote::quote(&u.name)
                ),
            );
        }
        if !UNIT_EXTS.contains(&ext(&u.name)) {
            r.error(p.key("name"), "invalid systemd unit extension");
        }
        for (j, d) in u.dropins.iter().enumerate() {
            let dp = p.key("dropins").index(j);
            unit_contents(r, &d.contents, &dp.key("contents"));
            if ext(&d.name) != ".conf" {
                r.error(dp.key("name"), "invalid systemd drop-in extension");
            }
        }
    }
}

fn networkd(r: &mut Rules, n: &Networkd, path: &JsonPath) {
    for (i, u) in n.units.iter().enumerate() {
        let p = path.key("units").index(i);
        unit_contents(r, &u.contents, &p.key("contents"));
        if !matches!(ext(&u.name), ".link" | ".netdev" | ".network") {
            r.error(p.key("name"), "invalid networkd unit extension");
        }
        for (j, d) in u.dropins.iter().enumerate() {
            let dp = p.key("dropins").index(j);
            unit_contents(r, &d.contents, &dp.key("contents"));
            if ext(&d.name) != ".conf" {
                r.error(dp.key("name"), "invalid networkd drop-in extension");
            }
        }
    }
}

fn passwd(r: &mut Rules, p: &Passwd, path: &JsonPath) {
    if r.v < LegacyVersion::V2_1 {
        return;
    }
    for (i, u) in p.users.iter().enumerate() {
        if u.create.is_none() {
            continue;
        }
        let up = path.key("users").index(i);
        r.warning(
            up.key("create"),
            "the create object has been deprecated in favor of user-level options",
        );
        let clashes = [
            ("gecos", !u.gecos.is_empty()),
            ("groups", !u.groups.is_empty()),
            ("homeDir", !u.home_dir.is_empty()),
            ("noCreateHome", u.no_create_home),
            ("noLogInit", u.no_log_init),
            ("noUserGroup", u.no_user_group),
            ("primaryGroup", !u.primary_group.is_empty()),
            ("shell", !u.shell.is_empty()),
            ("system", u.system),
            ("uid", u.uid.is_some()),
        ];
        for (key, set) in clashes {
            if set {
                r.error(
                    up.key(key),
                    format!("cannot use both the create object and the user-level {key} field"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_ext() {
        assert_eq!(ext("a.service"), ".service");
        assert_eq!(ext("a"), "");
        assert_eq!(ext("x.d/a"), "");
    }

    #[test]
    fn urls_by_version() {
        assert!(check_url("oem:///x", LegacyVersion::V2_0).is_ok());
        assert!(check_url("tftp://h/x", LegacyVersion::V2_0).is_err());
        assert!(check_url("tftp://h/x", LegacyVersion::V2_1).is_ok());
        assert!(check_url("gs://b/x", LegacyVersion::V2_4).is_err());
        assert!(check_url("data:,a%20b", LegacyVersion::V2_4).is_ok());
        assert!(check_url("", LegacyVersion::V2_4).is_ok());
        assert!(check_url("data:,a#b", LegacyVersion::V2_0).is_err());
        assert!(check_url("data:,a b", LegacyVersion::V2_0).is_err());
    }

    #[test]
    fn sector_partitions_are_refused() {
        let mut c = Config::default();
        c.storage.disks.push(Disk {
            device: "/dev/sdb".into(),
            partitions: vec![Partition {
                number: 1,
                ..Default::default()
            }],
            ..Default::default()
        });
        LegacyVersion::V2_2.upgrade(&mut c);
        let issues = validate(&c, LegacyVersion::V2_2);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path.to_string(), "$.storage.disks.0.partitions.0");
    }
}
