//! Semantic validation of a config, with the rules and messages of the upstream validator
//! for the config's own spec version.
//!
//! Validation walks the typed model and reports (severity, JSON path, message); positions are
//! attached afterwards from whatever tree the config came from (Ignition JSON, or the Butane
//! YAML through the transpiler's path map).

pub(crate) mod dataurl;
mod ignition;
mod node;
mod passwd;
pub mod paths;
pub mod resource;
mod storage;
mod systemd;
pub mod unit;

use super::types::Config;
use super::version::Version;
use crate::diag::Severity;
use crate::tree::JsonPath;
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
    c.issues
}

/// Attaches source positions to `issues` from the tree the config was read from.
pub fn locate(
    issues: Vec<Issue>,
    tree: &crate::tree::Node,
    src: &crate::tree::Source,
) -> Vec<crate::diag::Diagnostic> {
    issues
        .into_iter()
        .map(|i| {
            let pos = Some(src.locate(tree.marker(&i.path)));
            crate::diag::Diagnostic {
                severity: i.severity,
                path: Some(i.path),
                pos,
                message: i.message,
                fatal: false,
            }
        })
        .collect()
}

/// What a valid config may ask for that this provisioner cannot do. flint's initramfs has no
/// clevis and no CEX tooling: formatting such a volume would bind it to nothing and leave it
/// unopenable after reboot, so the config is refused before any disk is touched.
pub fn unsupported_by_provisioner(config: &Config) -> Vec<Issue> {
    let mut out = Vec::new();
    let luks = JsonPath::root().key("storage").key("luks");
    for (i, l) in config.storage.luks.iter().enumerate() {
        let at = luks.index(i);
        let custom = &l.clevis.custom;
        let clevis_asked = l.clevis.is_present()
            || custom.config.as_deref().is_some_and(|s| !s.is_empty())
            || custom.needs_network == Some(true);
        if clevis_asked {
            out.push(Issue {
                severity: Severity::Error,
                path: at.key("clevis"),
                message: format!(
                    "LUKS volume {:?} asks for Clevis, which flint does not provide (no clevis in its initramfs); use a keyFile instead",
                    l.name
                ),
            });
        }
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
