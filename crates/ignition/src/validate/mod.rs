//! Semantic validation of a config, with the rules and messages of the upstream validator
//! for the config's own spec version.
//!
//! Validation walks the typed model and reports (severity, JSON path, message); positions are
//! attached afterwards from whatever tree the config came from (Ignition JSON, or the Butane
//! YAML through the transpiler's path map).

mod ignition;
mod node;
pub(crate) use node::SPECIAL_BITS;
mod passwd;
pub mod paths;
pub mod resource;
mod storage;
mod systemd;
pub mod unit;

/// What an editor may offer as values, from the rules that check them.
pub use resource::hash_functions;
pub use storage::filesystem_formats;
pub use systemd::UNIT_SUFFIXES;

use super::types::Config;
use super::version::Version;
use flint_go::diag::Severity;
use flint_go::tree::JsonPath;
use std::collections::HashMap;
use std::hash::Hash;

/// One finding, not yet located in a source.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub severity: Severity,
    pub path: JsonPath,
    pub message: String,
}

/// Which validator to be: upstream's `ignition-validate` (the default) or Flatcar's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Accept `oem://` resource URLs, as Flatcar's Ignition (which fetches them from the OEM
    /// partition) does in every 3.x version.
    pub oem_urls: bool,
    /// Leave the data of `data:` URLs unread: a config made of configs already validated
    /// (the provisioner's merged config) holds no URL they did not, and reading megabytes
    /// of inline files again is most of the second validation.
    pub skip_data_contents: bool,
}

impl Options {
    /// Upstream's rules.
    pub const UPSTREAM: Options = Options {
        oem_urls: false,
        skip_data_contents: false,
    };
    /// Flatcar's rules: upstream's plus `oem://` sources.
    pub const FLATCAR: Options = Options {
        oem_urls: true,
        skip_data_contents: false,
    };
}

/// Collects findings while the rules walk the config.
pub struct Checker {
    pub version: Version,
    pub options: Options,
    pub issues: Vec<Issue>,
}

impl Checker {
    /// A checker with upstream's rules for spec `version`.
    pub fn new(version: Version) -> Checker {
        Checker {
            version,
            options: Options::UPSTREAM,
            issues: Vec::new(),
        }
    }

    /// A resource URL by the rules of this version and validator.
    pub fn check_url(&self, s: &str) -> Result<(), String> {
        if self.options.skip_data_contents
            && s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:"))
        {
            return Ok(());
        }
        resource::check_url_with(s, self.version, self.options.oem_urls)
    }

    pub fn error(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: Severity::Error,
            path,
            message: message.into(),
        });
    }

    pub fn warning(&mut self, path: JsonPath, message: impl Into<String>) {
        self.issues.push(Issue {
            severity: Severity::Warning,
            path,
            message: message.into(),
        });
    }

    /// Reports "duplicate entry defined" at every item whose key an earlier item already had.
    pub fn unique<'a, T: 'a, K: Eq + Hash>(
        &mut self,
        base: &JsonPath,
        items: impl IntoIterator<Item = &'a T>,
        key: impl Fn(&'a T) -> K,
    ) {
        let mut seen = HashMap::new();
        for (i, item) in items.into_iter().enumerate() {
            if seen.insert(key(item), i).is_some() {
                self.error(base.index(i), DUPLICATE);
            }
        }
    }
}

pub const DUPLICATE: &str = "duplicate entry defined";

/// Validates `config` by upstream's rules for spec `version`.
pub fn validate(config: &Config, version: Version) -> Vec<Issue> {
    validate_with(config, version, Options::UPSTREAM)
}

/// Validates `config` by the rules of spec `version` and the validator `options` name.
pub fn validate_with(config: &Config, version: Version, options: Options) -> Vec<Issue> {
    let mut c = Checker {
        version,
        options,
        issues: Vec::new(),
    };
    let root = JsonPath::root();
    ignition::check(&mut c, &config.ignition, &root.key("ignition"));
    storage::check(&mut c, &config.storage, &root.key("storage"));
    node::check_nodes(&mut c, config, &root.key("storage"));
    systemd::check(&mut c, &config.systemd, &root.key("systemd"));
    passwd::check(&mut c, &config.passwd, &root.key("passwd"));
    passwd::check_kernel_arguments(
        &mut c,
        &config.kernel_arguments,
        &root.key("kernelArguments"),
    );
    in_upstream_order(c.issues)
}

/// The findings in the order upstream reports them. Its validator walks the config's Go
/// structs: at each value, the type's own rules, then its fields in declaration order
/// (alphabetical, but for the path and owner fields of files, directories and links, which
/// come first); and once the walk is done, a second one for duplicate entries. The rules
/// here report each entry's findings in upstream's order already; what is put in order is
/// the sections (a stable sort), the rules the config and storage types apply across their
/// entries (before the entries' own), and the duplicates (last, see [`dup_order`]).
fn in_upstream_order(issues: Vec<Issue>) -> Vec<Issue> {
    let (mut dups, mut walk): (Vec<Issue>, Vec<Issue>) =
        issues.into_iter().partition(|i| i.message == DUPLICATE);
    walk.sort_by_key(walk_rank);
    dups.sort_by_cached_key(|i| dup_order(i.path.segs()));
    walk.extend(dups);
    walk
}

/// When upstream's walk for duplicates reports one at `path` (an item of a list). At each
/// struct it checks all its lists first, then goes into its fields in turn: so a list is
/// keyed, level by level, by the struct fields (and items) it is reached through, each
/// marked 1, and by its own field, marked 0 (lists before what the struct holds). Fields
/// come in alphabetical order, letter case aside.
fn dup_order(path: &[flint_go::tree::Seg]) -> Vec<(u8, String, usize)> {
    use flint_go::tree::Seg;
    let list = &path[..path.len().saturating_sub(1)];
    let mut key = Vec::new();
    let mut segs = list.iter().peekable();
    while let Some(s) = segs.next() {
        let Seg::Key(k) = s else { continue };
        let k = k.to_ascii_lowercase();
        match segs.peek() {
            None => key.push((0, k, 0)),
            Some(Seg::Index(i)) => {
                key.push((1, k, *i));
                segs.next();
            }
            Some(Seg::Key(_)) => key.push((1, k, 0)),
        }
    }
    key
}

/// Where a finding comes in upstream's walk, at the level of sections.
fn walk_rank(i: &Issue) -> (u8, u8) {
    use flint_go::tree::Seg;
    // The config's own rule, before any of its fields.
    if i.message == node::UNIT_PATH_CONFLICT {
        return (0, 0);
    }
    let key = |n: usize| match i.path.segs().get(n) {
        Some(Seg::Key(k)) => k.as_ref(),
        _ => "",
    };
    let section = [
        "ignition",
        "kernelArguments",
        "passwd",
        "storage",
        "systemd",
    ]
    .iter()
    .position(|s| *s == key(0))
    .map_or(0, |p| p as u8 + 1);
    if key(0) != "storage" {
        return (section, 0);
    }
    // The storage section's own rules: entries below links and link targets, then
    // filesystems over disks.
    let m = i.message.as_str();
    let within = match m {
        _ if m.ends_with(node::BELOW_LINK) => 0,
        node::LINK_TARGET_REQUIRED | node::HARD_LINK_TO_DIR | node::HARD_LINK_OWNER => 0,
        storage::FS_OVER_PARTITIONS | storage::FS_OVER_WIPED_TABLE => 1,
        _ => [
            "directories",
            "disks",
            "files",
            "filesystems",
            "links",
            "luks",
            "raid",
        ]
        .iter()
        .position(|s| *s == key(1))
        .map_or(9, |p| p as u8 + 2),
    };
    (section, within)
}

/// Attaches source positions to `issues` from the tree the config was read from.
pub fn locate(
    issues: Vec<Issue>,
    tree: &flint_go::tree::Node,
    src: &flint_go::tree::Source,
) -> Vec<flint_go::diag::Diagnostic> {
    issues
        .into_iter()
        .map(|i| {
            let pos = Some(src.locate(tree.marker(&i.path)));
            flint_go::diag::Diagnostic {
                severity: i.severity,
                path: Some(i.path),
                pos,
                message: i.message,
                fatal: false,
            }
        })
        .collect()
}

/// What a valid config may ask for that this provisioner cannot do. IBM CEX keys need
/// s390x hardware and tooling flint does not drive: formatting such a volume would leave it
/// unopenable after reboot, so the config is refused before any disk is touched.
pub fn unsupported_by_provisioner(config: &Config) -> Vec<Issue> {
    let mut out = Vec::new();
    let luks = JsonPath::root().key("storage").key("luks");
    for (i, l) in config.storage.luks.iter().enumerate() {
        let at = luks.index(i);
        if l.cex.is_present() {
            out.push(Issue {
                severity: Severity::Error,
                path: at.key("cex"),
                message: format!(
                    "LUKS volume {:?} asks for IBM CEX keys, which flint does not provide; use a keyFile instead",
                    l.name
                ),
            });
        }
    }
    out
}
