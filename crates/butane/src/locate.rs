//! Where findings point in the source: a source path is itself, an output path goes
//! through the path map (when upstream's map knows it) or is reported the way upstream
//! falls back to, and the place is the deepest node of the path that exists.

use crate::base::types as bu;
use crate::decode::{LazySource, Read};
use crate::fcos;
use crate::legacy;
use crate::outcome::{Finding, Outcome};
use crate::pathmap::{self, PathMap};
use crate::registry::{Family, Variant};
use flint_go::diag::Diagnostic;
use flint_go::tree::{JsonPath, Seg};
use flint_ignition::Version;
use flint_ignition::types as ig;

/// What placing findings needs to know of the document and its translation.
pub(crate) struct Locator<'a> {
    doc: &'a Read,
    src: &'a LazySource<'a>,
    spec: &'static Variant,
    /// Whether upstream merged the config under generated parts (see `known`).
    merged: bool,
    /// Whether the output is a MachineConfig, which puts the Ignition config under
    /// `spec.config`; upstream's fallback keeps that.
    wrapped: bool,
}

impl<'a> Locator<'a> {
    pub(crate) fn new(
        doc: &'a Read,
        src: &'a LazySource<'a>,
        config: &bu::Config,
        raw: bool,
    ) -> Self {
        let spec = doc.spec;
        Locator {
            doc,
            src,
            spec,
            merged: merged(spec, config),
            wrapped: spec.family == Family::OpenShift && !raw,
        }
    }

    /// Whether findings at output paths are reported as in a MachineConfig.
    pub(crate) fn wrapped(&self) -> bool {
        self.wrapped
    }

    /// Reports `findings`, placed by `map` (and, for output paths, the config generated
    /// `cfg`, when there is one yet); an error among them stops the translation with
    /// `failure`. Whether the translation goes on.
    pub(crate) fn report(
        &self,
        outcome: &mut Outcome,
        findings: Vec<Finding>,
        map: &PathMap,
        cfg: Option<&ig::Config>,
        failure: &str,
    ) -> bool {
        let invalid = Finding::any_error(&findings);
        outcome.diagnostics.extend(self.locate(findings, map, cfg));
        if invalid {
            outcome.fail(failure);
        }
        !invalid
    }

    /// `findings` placed in the source.
    pub(crate) fn locate(
        &self,
        findings: Vec<Finding>,
        map: &PathMap,
        cfg: Option<&ig::Config>,
    ) -> Vec<Diagnostic> {
        // The output as JSON, made once if an output path needs it.
        let json = std::cell::OnceCell::new();
        let output = |cfg: &ig::Config| {
            let bytes = legacy::to_json(cfg, self.spec.ignition, false);
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_default()
        };
        let known = |path: &JsonPath| {
            cfg.is_none_or(|c| {
                let json = json.get_or_init(|| output(c));
                known(json, path, self.merged, self.spec.ignition)
            })
        };
        findings
            .into_iter()
            .map(|f| {
                let path = match &f {
                    Finding::Source(i) => i.path.clone(),
                    Finding::Unmapped(i) => pathmap::snake_path(&i.path),
                    Finding::Output(i) if known(&i.path) => map.source_of(&i.path),
                    Finding::Output(i) => self.fallback(&i.path),
                };
                let i = f.issue();
                Diagnostic {
                    severity: i.severity,
                    pos: Some(self.src.locate(self.marker(&path))),
                    path: Some(path),
                    message: i.message.clone(),
                    fatal: false,
                }
            })
            .collect()
    }

    /// Upstream's own fallback for output path `path`: spelled the Butane way, under
    /// `spec.config` in a MachineConfig.
    fn fallback(&self, path: &JsonPath) -> JsonPath {
        let snake = pathmap::snake_path(path);
        if !self.wrapped {
            return snake;
        }
        let mut p = crate::jpath(&["spec", "config"]);
        for s in snake.segs() {
            p.push(s.clone());
        }
        p
    }

    /// Where a path points: the deepest node that exists, but an alias hides what is below.
    fn marker(&self, path: &JsonPath) -> u32 {
        let root = &self.doc.root;
        match (self.doc.aliases.iter()).find(|a| path.segs().starts_with(a.segs())) {
            Some(a) => root.deepest(a).start,
            None => root.deepest(path).start,
        }
    }
}

/// Whether upstream merged the translated config under generated parts: mount units (for
/// any filesystem), the boot device's, the GRUB users' config (even when there are none).
fn merged(spec: &Variant, config: &bu::Config) -> bool {
    (spec.base.merges_mount_units() && !config.storage.filesystems.is_empty())
        || fcos::boot_device_generates(&config.boot_device, spec)
        || spec.has_grub()
}

/// Whether upstream's path map knows output path `path`: it knows the paths translation
/// produced (those with a value in the output), but after it merged the config under
/// generated parts (mount units, boot device, GRUB) only the paths of values that are not
/// zero: empty strings and numbers of the fields that are no pointers in the Go structs of
/// the output's Ignition version are forgotten, and so are entries with nothing else in them.
fn known(json: &serde_json::Value, path: &JsonPath, merged: bool, ignition: Version) -> bool {
    let mut v = json;
    let (mut key, mut ctx) = ("", "");
    for s in path.segs() {
        let next = match s {
            Seg::Key(k) => {
                if !key.is_empty() {
                    ctx = key;
                }
                key = k;
                v.get(k.as_ref())
            }
            Seg::Index(i) => {
                ctx = key;
                key = "";
                v.get(*i)
            }
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    !merged || !forgotten(v, key, ctx, ignition)
}

/// Whether field `key` of an object in `ctx` (the list or object holding it) is a plain
/// string in the Go structs of Ignition `ignition`, not a pointer.
fn plain_string(key: &str, ctx: &str, ignition: Version) -> bool {
    match key {
        "version" | "url" => true,
        // Node paths; a filesystem's is a pointer.
        "path" => ctx != "filesystems",
        // Disks, filesystems, RAID devices; a LUKS volume's is a pointer.
        "device" => ctx != "luks",
        // A node's owner by name is a pointer.
        "name" => ctx != "user" && ctx != "group",
        // Pointers from Ignition 3.3.
        "level" | "target" => ignition < Version::V3_3,
        _ => false,
    }
}

/// Whether a merge drops every path of value `v` (at key `key`, "" for list entries, in the
/// list or object `ctx`).
fn forgotten(v: &serde_json::Value, key: &str, ctx: &str, ignition: Version) -> bool {
    use serde_json::Value as J;
    match v {
        J::String(s) => s.is_empty() && (key.is_empty() || plain_string(key, ctx, ignition)),
        J::Number(n) => key == "number" && n.as_i64() == Some(0),
        J::Array(a) => a.iter().all(|x| forgotten(x, "", key, ignition)),
        J::Object(m) => {
            let inner = if key.is_empty() { ctx } else { key };
            m.iter().all(|(k, x)| forgotten(x, k, inner, ignition))
        }
        _ => false,
    }
}
