//! Semantic validation of a config, with the rules and messages of the upstream validator
//! for the config's own spec version.
//!
//! Validation walks the typed model and reports (severity, JSON path, message); positions are
//! attached afterwards from whatever tree the config came from (Ignition JSON, or the Butane
//! YAML through the transpiler's path map).

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

/// Collects findings while the rules walk the config.
pub struct Checker {
    pub version: Version,
    pub issues: Vec<Issue>,
}

impl Checker {
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

/// Validates `config` by the rules of spec `version`.
pub fn validate(config: &Config, version: Version) -> Vec<Issue> {
    let mut c = Checker {
        version,
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
