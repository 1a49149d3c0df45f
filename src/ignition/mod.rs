//! The Ignition config: model, versions, parsing, validation.

pub mod dataurl;
pub mod legacy;
pub mod merge;
pub mod parse;
pub mod types;
pub mod upgrade;
pub mod validate;
pub mod version;

pub use parse::{Parsed, parse};
pub use types::Config;
pub use upgrade::upgrade;
pub use version::Version;

use crate::diag::Diagnostic;

/// Everything the upstream validator would report about `bytes`: a read failure, or the
/// validation findings followed by unused-key warnings.
pub fn check(bytes: &[u8]) -> Vec<Diagnostic> {
    check_with(bytes, validate::Options::UPSTREAM)
}

/// [`check`] with the validator `options` name (e.g. Flatcar's, which accepts `oem://`).
pub fn check_with(bytes: &[u8], options: validate::Options) -> Vec<Diagnostic> {
    if let Some((tree, version)) = legacy_tree(bytes) {
        return legacy::check(bytes, tree, version);
    }
    match parse(bytes) {
        Err(d) => vec![d],
        Ok(p) => {
            let src = crate::tree::Source::new(bytes);
            let issues = validate::validate_with(&p.config, p.version, options);
            let mut out = validate::locate(issues, &p.tree, &src);
            out.extend(p.warnings);
            out
        }
    }
}

/// The tree of `bytes` and its version when it is a legacy (spec 1 or 2.x) config.
pub fn legacy_tree(
    bytes: &[u8],
) -> Option<(crate::tree::Node, Result<legacy::LegacyVersion, String>)> {
    let tree = parse::read_json(bytes).ok()?;
    let version = legacy::detect(&tree)?;
    Some((tree, version))
}
