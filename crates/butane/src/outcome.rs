//! What a translation is asked to do, and what it gives.

use crate::legacy;
use crate::openshift::MachineConfig;
use crate::pathmap::PathMap;
use crate::registry::Variant;
use flint_go::diag::{Diagnostic, Severity};
use flint_ignition::Version;
use flint_ignition::types as ig;
use flint_ignition::validate::Issue;
use std::path::Path;

/// How to translate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// The directory `local` references are read from.
    pub files_dir: Option<&'a Path>,
    /// Ignition output even for variants that wrap it (OpenShift's MachineConfig).
    pub raw: bool,
    /// List where each part of the output came from (`Outcome::translations`).
    pub debug: bool,
    /// Render the output (pretty or not) while the generated config is checked, on another
    /// core, for [`Outcome::render`].
    pub render: Option<bool>,
    /// The process ends once the outcome is written: what the translation read and
    /// decoded is left unfreed (freed allocation by allocation, a large document keeps a
    /// core busy as long as rendering takes).
    pub exiting: bool,
    /// Data URLs remembered from earlier translations of the document (an editor's): taken
    /// from there, and the translation runs on this thread alone.
    pub memo: Option<&'a crate::memo::Memo>,
}

/// What translating a document gave.
pub struct Outcome {
    /// The Ignition config, when translation succeeded.
    pub config: Option<ig::Config>,
    /// The MachineConfig around it, for OpenShift without `raw`.
    pub machine_config: Option<MachineConfig>,
    /// The spec version the document named (when it was found).
    pub variant: Option<&'static Variant>,
    /// Findings located in the source.
    pub diagnostics: Vec<Diagnostic>,
    /// Why translation failed (printed after "Error translating config: ").
    pub failure: Option<String>,
    /// Where each part of the output came from (for `--debug`).
    pub map: PathMap,
    /// With `Options::debug`, the listing of where each output path came from, made as
    /// soon as the translation is done (also when checks fail later).
    pub translations: Option<String>,
    /// The Ignition JSON rendered ahead (`Options::render`), and whether it is pretty.
    pub(crate) rendered: Option<(bool, Vec<u8>)>,
}

impl Outcome {
    /// A translation that failed before its spec version was known.
    pub(crate) fn failed(message: impl Into<String>, diagnostics: Vec<Diagnostic>) -> Self {
        Outcome {
            config: None,
            machine_config: None,
            variant: None,
            diagnostics,
            failure: Some(message.into()),
            map: PathMap::default(),
            translations: None,
            rendered: None,
        }
    }

    /// A translation of spec version `spec` under way: nothing found yet.
    pub(crate) fn of(spec: &'static Variant) -> Self {
        Outcome {
            variant: Some(spec),
            failure: None,
            ..Outcome::failed("", Vec::new())
        }
    }

    /// Stops the translation with `failure` (the findings explaining it are reported).
    pub(crate) fn fail(&mut self, failure: impl Into<String>) {
        self.failure = Some(failure.into());
    }

    pub fn has_warnings(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Warning)
    }

    /// The output as upstream prints it (without the final newline): Ignition JSON, or the
    /// MachineConfig as YAML.
    pub fn render(&mut self, pretty: bool) -> Option<Vec<u8>> {
        if let Some((p, json)) = self.rendered.take()
            && p == pretty
        {
            return Some(json);
        }
        let version = self.variant.map_or(Version::NEWEST, |v| v.ignition);
        if let Some(mc) = &self.machine_config {
            return Some(mc.to_yaml(version));
        }
        let config = self.config.as_ref()?;
        Some(legacy::to_json(config, version, pretty))
    }
}

/// A finding made while translating: at a source path, or at an output path that the
/// final path map locates, or at an output path upstream reports as it is (its own
/// fallback: the path spelled the Butane way, wherever that lands in the source).
pub enum Finding {
    Source(Issue),
    Output(Issue),
    Unmapped(Issue),
}

impl Finding {
    pub(crate) fn issue(&self) -> &Issue {
        match self {
            Finding::Source(i) | Finding::Output(i) | Finding::Unmapped(i) => i,
        }
    }

    /// Whether any of `findings` is an error.
    pub(crate) fn any_error(findings: &[Finding]) -> bool {
        findings
            .iter()
            .any(|f| f.issue().severity == Severity::Error)
    }
}
