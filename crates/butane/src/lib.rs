//! Butane specs: one module per variant and version, each a thin layer over a shared base,
//! and the translation pipeline from Butane YAML to an Ignition config (or an OpenShift
//! MachineConfig) with diagnostics.
//!
//! Adding a spec version is adding a module with a [`Variant`] and listing it in
//! [`REGISTRY`].

mod ahead;
pub mod base;
pub mod debug;
pub mod fcos;
pub mod fiot;
pub mod flatcar;
pub mod fragment;
mod gotype;
pub mod legacy;
pub mod migrate;
pub mod openshift;
mod order;
pub mod pathmap;
pub mod r4e;
pub mod schema;

use base::BaseVersion;
use base::local::FilesDir;
use base::types as bu;
use flint_go::de::{self, Flavor};
use flint_go::diag::{Diagnostic, Severity};
use flint_go::tree::{JsonPath, Node, Seg, Source, Value};
use flint_go::yaml::{self, is_null};
use flint_ignition::types as ig;
use flint_ignition::validate::{Checker, Issue};
use flint_ignition::{Version, validate};
use pathmap::PathMap;
use std::path::Path;

/// The distributions Butane has variants for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Flatcar,
    Fcos,
    OpenShift,
    R4e,
    Fiot,
}

/// A Butane spec version of a variant.
#[derive(Debug)]
pub struct Variant {
    pub name: &'static str,
    pub version: &'static str,
    pub family: Family,
    /// The minor version of the spec (fcos 1.x), or of the OpenShift release (4.x).
    pub minor: u8,
    pub base: BaseVersion,
    /// The Ignition spec version the output has.
    pub ignition: Version,
}

impl Variant {
    /// The fcos spec whose sugar (`boot_device`, `grub`) this version has: fcos's own, or
    /// the one an OpenShift release builds on.
    pub fn fcos_level(&self) -> Option<u8> {
        match self.family {
            Family::Fcos => Some(self.minor),
            Family::OpenShift => Some(openshift::fcos_level(self.minor)),
            _ => None,
        }
    }

    /// Whether this spec version has key `key` on Butane struct `ty`.
    pub fn has_key(&self, ty: &str, key: &str) -> bool {
        match (ty, key) {
            ("Config", "boot_device") => self.fcos_level().is_some_and(|l| l >= 3),
            ("Config", "grub") => self.fcos_level().is_some_and(|l| l >= 5),
            ("Config", "metadata" | "openshift") => self.family == Family::OpenShift,
            _ => self.base.has_key(ty, key),
        }
    }

    /// `butane-NAME-VERSION`, the schema's name.
    pub fn schema_name(&self) -> String {
        format!("butane-{}-{}", self.name, self.version)
    }
}

pub const REGISTRY: &[Variant] = &[
    fcos::v1_0::SPEC,
    fcos::v1_1::SPEC,
    fcos::v1_2::SPEC,
    fcos::v1_3::SPEC,
    fcos::v1_4::SPEC,
    fcos::v1_5::SPEC,
    fcos::v1_6::SPEC,
    fcos::v1_7::SPEC,
    fcos::v1_8_exp::SPEC,
    flatcar::v1_0::SPEC,
    flatcar::v1_1::SPEC,
    flatcar::v1_2_exp::SPEC,
    openshift::v4_8::SPEC,
    openshift::v4_9::SPEC,
    openshift::v4_10::SPEC,
    openshift::v4_11::SPEC,
    openshift::v4_12::SPEC,
    openshift::v4_13::SPEC,
    openshift::v4_14::SPEC,
    openshift::v4_15::SPEC,
    openshift::v4_16::SPEC,
    openshift::v4_17::SPEC,
    openshift::v4_18::SPEC,
    openshift::v4_19::SPEC,
    openshift::v4_20::SPEC,
    openshift::v4_21::SPEC,
    openshift::v4_22::SPEC,
    openshift::v4_23_exp::SPEC,
    r4e::v1_0::SPEC,
    r4e::v1_1::SPEC,
    r4e::v1_2_exp::SPEC,
    fiot::v1_0::SPEC,
    fiot::v1_1_exp::SPEC,
];

/// The spec version `name` `version`, if there is one.
pub fn lookup(name: &str, version: &str) -> Option<&'static Variant> {
    REGISTRY
        .iter()
        .find(|s| s.name == name && s.version == version)
}

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
}

/// What translating a document gave.
pub struct Outcome {
    /// The Ignition config, when translation succeeded.
    pub config: Option<ig::Config>,
    /// The MachineConfig around it, for OpenShift without `raw`.
    pub machine_config: Option<openshift::MachineConfig>,
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
    rendered: Option<(bool, Vec<u8>)>,
}

impl Outcome {
    fn failed(message: impl Into<String>, diagnostics: Vec<Diagnostic>) -> Self {
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

/// The text of a top-level scalar field, "" when absent or null.
fn scalar(root: &Node, key: &str) -> String {
    match root.get(key).map(|e| &e.value.value) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Plain(s)) if !flint_go::yaml::resolve::is_null(s) => s.clone(),
        _ => String::new(),
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
    fn issue(&self) -> &Issue {
        match self {
            Finding::Source(i) | Finding::Output(i) | Finding::Unmapped(i) => i,
        }
    }
}

/// Whether upstream's path map knows output path `path`: it knows the paths translation
/// produced (those with a value in the output), but after it merged the config under
/// generated parts (mount units, boot device, GRUB) only the paths of values that are not
/// zero: empty strings and numbers of the fields that are no pointers in the Go structs of
/// the output's Ignition version are forgotten, and so are entries with nothing else in them.
fn known(json: &serde_json::Value, path: &JsonPath, merged: bool, ignition: Version) -> bool {
    use flint_go::tree::Seg;
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

/// A document read, with what go-yaml's decoding of it will meet.
struct Read {
    root: Node,
    /// The paths of its aliases.
    aliases: Vec<JsonPath>,
    /// The mapping keys go-yaml refuses if it decodes them (below the top).
    key_errors: Vec<yaml::KeyError>,
    tags: std::collections::HashMap<u32, yaml::TagNote>,
    bad_merges: Vec<u32>,
    /// Where each alias's anchored node starts, by the alias's offset.
    anchor_of: std::collections::HashMap<u32, u32>,
    /// Whether the document holds a null anywhere (see `without_null_items` and `nulls`).
    has_nulls: bool,
    spec: &'static Variant,
}

/// Reads the document: YAML, a mapping, with a variant and version we know.
// The error is the translation's outcome itself, returned once.
#[allow(clippy::result_large_err)]
fn read(bytes: &[u8], watch: &mut dyn FnMut(&str)) -> Result<Read, Outcome> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(Outcome::failed(
                format!(
                    "Error unmarshaling yaml: yaml: {}",
                    yaml::utf8_problem(bytes, e.valid_up_to())
                ),
                Vec::new(),
            ));
        }
    };
    // Only diagnostics need the line index.
    let src = std::cell::LazyCell::new(|| Source::new(bytes));
    let doc = match flint_go::yaml::parse_watching(text, "inline", watch) {
        Ok(d) => d,
        Err(e) => {
            let located = Diagnostic::error(
                None,
                Some(flint_go::tree::LineCol {
                    line: e.line,
                    col: e.col,
                }),
                e.message.clone(),
            );
            let msg = e
                .message
                .trim_start_matches("while parsing a block collection, ");
            let msg = msg.trim_start_matches("while parsing a block mapping, ");
            let failure = match e.upstream_line {
                0 => format!("Error unmarshaling yaml: yaml: {msg}"),
                n => format!("Error unmarshaling yaml: yaml: line {n}: {msg}"),
            };
            return Err(Outcome::failed(failure, vec![located]));
        }
    };
    let root = doc.root;
    let tags = doc.tags;
    let aliases = alias_paths(&root, &doc.aliases);
    // The first decoding (variant and version) goes through the keys at the top.
    let (top, key_errors): (Vec<_>, Vec<_>) =
        doc.key_errors.into_iter().partition(|e| e.path.is_root());
    if !top.is_empty() {
        let (failure, located) = key_failure(&src, &top);
        return Err(Outcome::failed(
            format!("Error unmarshaling yaml: {failure}"),
            located,
        ));
    }
    // The first decoding stops at a tag it refuses: on a key at the top, on the variant
    // or version, or on the document itself.
    let refused = |at: u32| match tags.get(&at) {
        Some(yaml::TagNote::Refused(m)) => Some((at, m.as_str())),
        _ => None,
    };
    let first_refused = match &root.value {
        Value::Object(entries) => entries.iter().find_map(|e| {
            refused(e.key_start).or_else(|| {
                (matches!(e.key.as_str(), "variant" | "version") && !e.value.is_container())
                    .then(|| refused(e.value.start))
                    .flatten()
            })
        }),
        Value::Array(_) => None,
        _ => refused(root.start),
    };
    // Then it merges the top mapping's `<<`, if it can.
    let first_refused = first_refused.or_else(|| {
        (root.is_container() && doc.bad_merges.contains(&root.start))
            .then_some((root.start, de::BAD_MERGE))
    });
    if let Some((at, m)) = first_refused {
        let located = Diagnostic::error(None, Some(src.locate_chars(at)), m.to_string());
        return Err(Outcome::failed(
            format!("Error unmarshaling yaml: yaml: {m}"),
            vec![located],
        ));
    }
    // A document that is null (in any of its spellings) decodes as no fields at all.
    if !matches!(root.value, Value::Object(_) | Value::Null)
        && !matches!(&root.value, Value::Plain(s) if s.is_empty() || flint_go::yaml::resolve::is_null(s))
    {
        let found = de::yaml_found(&root, Some(&tags));
        let line = src.locate_chars(root.start).line;
        return Err(Outcome::failed(
            format!(
                "Error unmarshaling yaml: yaml: unmarshal errors:\n  line {line}: cannot unmarshal {found} into config.commonFields"
            ),
            Vec::new(),
        ));
    }

    // Upstream's first decoding reads these two into strings: a mapping or a sequence
    // there is a type error, one line each, in document order.
    if let Value::Object(entries) = &root.value {
        let wrong: Vec<String> = (entries.iter())
            .filter(|e| e.key == "variant" || e.key == "version")
            .filter_map(|e| {
                match &e.value.value {
                    Value::Object(_) => Some("!!map"),
                    Value::Array(_) => Some("!!seq"),
                    _ => None,
                }
                .map(|kind| {
                    let line = src.locate_chars(e.value.start).line;
                    format!("\n  line {line}: cannot unmarshal {kind} into string")
                })
            })
            .collect();
        if !wrong.is_empty() {
            return Err(Outcome::failed(
                format!(
                    "Error unmarshaling yaml: yaml: unmarshal errors:{}",
                    wrong.concat()
                ),
                Vec::new(),
            ));
        }
    }
    let variant = scalar(&root, "variant");
    if variant.is_empty() {
        return Err(Outcome::failed(
            "error parsing variant; must be specified",
            Vec::new(),
        ));
    }
    // As upstream reads it (leading zeros, an empty pre-release or build), and named as
    // it prints it from then on.
    let Some(version) = flint_ignition::version::GoSemver::parse(&scalar(&root, "version")) else {
        return Err(Outcome::failed(
            "error parsing version; must be a valid semver",
            Vec::new(),
        ));
    };
    let version = version.to_string();
    if variant == "rhcos" && version == "0.1.0" {
        return Err(Outcome::failed(
            "rhcos variant has been removed; use openshift variant instead: https://coreos.github.io/butane/upgrading-openshift/",
            Vec::new(),
        ));
    }
    match lookup(&variant, &version) {
        Some(spec) => Ok(Read {
            root,
            aliases,
            key_errors,
            tags,
            bad_merges: doc.bad_merges,
            anchor_of: doc.anchor_of,
            has_nulls: doc.has_nulls,
            spec,
        }),
        None => Err(Outcome::failed(
            format!("No translator exists for variant {variant} with version {version}"),
            Vec::new(),
        )),
    }
}

/// go-yaml's decoding errors for refused mapping keys, and the same placed.
fn key_failure(src: &Source, errors: &[yaml::KeyError]) -> (String, Vec<Diagnostic>) {
    let mut failure = String::from("yaml: unmarshal errors:");
    let mut located = Vec::new();
    for e in errors {
        failure.push_str(&format!("\n  line {}: {}", e.line, e.message));
        let pos = src.locate_chars(e.offset);
        located.push(Diagnostic::error(
            Some(e.path.clone()),
            Some(pos),
            e.message.clone(),
        ));
    }
    (failure, located)
}

/// The tree without null list items, if it has any.
fn without_null_items(root: &Node) -> Option<Node> {
    fn any(n: &Node) -> bool {
        match &n.value {
            Value::Array(items) => items.iter().any(|x| is_null(x) || any(x)),
            Value::Object(entries) => entries.iter().any(|e| any(&e.value)),
            _ => false,
        }
    }
    fn strip(n: &mut Node) {
        match &mut n.value {
            Value::Array(items) => {
                items.retain(|x| !is_null(x));
                items.iter_mut().for_each(strip);
            }
            Value::Object(entries) => entries.iter_mut().for_each(|e| strip(&mut e.value)),
            _ => {}
        }
    }
    if !any(root) {
        return None;
    }
    let mut copy = root.clone();
    strip(&mut copy);
    Some(copy)
}

/// The null values in mappings (`key:` with nothing, `~`, `null`), with their paths.
fn nulls(root: &Node) -> Vec<(JsonPath, &Node)> {
    /// A step of the path walked, borrowed from the tree: a path is made only for the
    /// (rare) nulls.
    enum Step<'a> {
        Key(&'a str),
        Index(usize),
    }
    fn walk<'a>(n: &'a Node, at: &mut Vec<Step<'a>>, out: &mut Vec<(JsonPath, &'a Node)>) {
        let mut visit = |step: Step<'a>, x: &'a Node, at: &mut Vec<Step<'a>>| {
            let null = is_null(x);
            if !null && !matches!(x.value, Value::Object(_) | Value::Array(_)) {
                return;
            }
            at.push(step);
            if null {
                let segs = at.iter().map(|s| match s {
                    Step::Key(k) => Seg::Key((*k).to_string().into()),
                    Step::Index(i) => Seg::Index(*i),
                });
                out.push((JsonPath::from(segs.collect::<Vec<_>>()), x));
            } else {
                walk(x, at, out);
            }
            at.pop();
        };
        match &n.value {
            Value::Object(entries) => {
                for e in entries {
                    visit(Step::Key(&e.key), &e.value, at);
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    visit(Step::Index(i), x, at);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(root, &mut Vec::new(), &mut out);
    out
}

/// Where upstream reports an unused key found in the list items decoded without nulls: at
/// the index the item has as written, if its walk (over as many items as were decoded)
/// gets there.
fn as_written(root: &Node, path: &JsonPath) -> Option<JsonPath> {
    let mut node = root;
    let mut segs = Vec::with_capacity(path.segs().len());
    for s in path.segs() {
        match s {
            Seg::Key(k) => {
                segs.push(s.clone());
                if let Some(e) = node.get(k) {
                    node = &e.value;
                }
            }
            Seg::Index(c) => {
                let Value::Array(items) = &node.value else {
                    segs.push(s.clone());
                    continue;
                };
                let kept = items.iter().filter(|x| !is_null(x)).count();
                let (k, item) = items
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| !is_null(x))
                    .nth(*c)?;
                if k >= kept {
                    return None;
                }
                segs.push(Seg::Index(k));
                node = item;
            }
        }
    }
    Some(JsonPath::from(segs))
}

/// The paths of the aliases (outermost ones) in the document: upstream sees an alias as a
/// leaf and cannot look inside.
fn alias_paths(root: &Node, aliases: &[(u32, u32)]) -> Vec<JsonPath> {
    fn walk(n: &Node, at: &JsonPath, aliases: &[(u32, u32)], out: &mut Vec<JsonPath>) {
        if aliases.contains(&(n.start, n.end)) {
            out.push(at.clone());
            return;
        }
        match &n.value {
            Value::Object(entries) => {
                for e in entries {
                    walk(&e.value, &at.key(e.key.clone()), aliases, out);
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, &at.index(i), aliases, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if !aliases.is_empty() {
        walk(root, &JsonPath::root(), aliases, &mut out);
    }
    out
}

/// The document as UTF-8 text: go-yaml also reads UTF-16, little or big endian, from a byte
/// order mark on (the mark itself is not text). Upstream's words when that is malformed.
pub fn source_utf8(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, &'static str> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return Ok(bytes.into()),
    };
    let body = &bytes[2..];
    if body.len() % 2 == 1 {
        return Err("incomplete UTF-16 character");
    }
    let mut units = body.chunks_exact(2).map(|p| {
        let pair = [p[0], p[1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    let mut text = String::with_capacity(body.len());
    while let Some(u) = units.next() {
        let c = match u {
            0xDC00..=0xDFFF => return Err("unexpected low surrogate area"),
            0xD800..=0xDBFF => match units.next() {
                None => return Err("incomplete UTF-16 surrogate pair"),
                Some(low @ 0xDC00..=0xDFFF) => {
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                }
                Some(_) => return Err("expected low surrogate area"),
            },
            u => u32::from(u),
        };
        text.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Ok(text.into_bytes().into())
}

/// A UTF-16 document made UTF-8 (`None` for any other, or one malformed).
pub fn utf16_as_utf8(bytes: &[u8]) -> Option<Vec<u8>> {
    match source_utf8(bytes) {
        Ok(std::borrow::Cow::Owned(b)) => Some(b),
        _ => None,
    }
}

/// Translates the Butane document `bytes` (UTF-8, or UTF-16 with its byte order mark).
pub fn translate(bytes: &[u8], opts: Options<'_>) -> Outcome {
    let bytes = match source_utf8(bytes) {
        Ok(b) => b,
        Err(e) => {
            return Outcome::failed(format!("Error unmarshaling yaml: yaml: {e}"), Vec::new());
        }
    };
    let bytes = &bytes[..];
    // A small document is translated on this thread alone: a worker would cost more than
    // it could take over.
    if bytes.len() < AHEAD_FROM {
        let read = read(bytes, &mut |_| {});
        return translate_read(bytes, read, opts, None);
    }
    let ahead = ahead::Ahead::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let outcome = std::thread::scope(|s| {
        s.spawn(|| ahead.work(rx));
        let read = read(bytes, &mut |v| ahead.submit(&tx, v));
        // The worker ends once it has encoded what it was given.
        ahead.read_done(tx);
        translate_read(bytes, read, opts, Some(&ahead))
    });
    release(ahead, opts.exiting);
    outcome
}

/// The size from which embedded contents are encoded on another thread while the document
/// is read (see `ahead`).
const AHEAD_FROM: usize = 64 * 1024;

fn translate_read(
    bytes: &[u8],
    read: Result<Read, Outcome>,
    opts: Options<'_>,
    ahead: Option<&ahead::Ahead>,
) -> Outcome {
    let Read {
        root,
        aliases,
        key_errors,
        tags,
        bad_merges,
        anchor_of,
        has_nulls,
        spec,
    } = match read {
        Ok(r) => r,
        Err(o) => return o,
    };
    // Only diagnostics need the line index.
    let src = std::cell::LazyCell::new(|| Source::new(bytes));
    let mut outcome = Outcome {
        variant: Some(spec),
        ..Outcome::failed("", Vec::new())
    };
    outcome.failure = None;

    let gate = |ty: &'static str, key: &str| spec.has_key(ty, key);
    // go-yaml leaves out null list items (every Butane list holds structs or strings), but
    // finds what it reports in the document as written: the list indices shift.
    let compacted = if has_nulls {
        without_null_items(&root)
    } else {
        None
    };
    let decoded = compacted.as_ref().unwrap_or(&root);
    let notes = de::YamlNotes {
        tags: &tags,
        bad_merges: &bad_merges,
    };
    let (config, unused) =
        match de::from_tagged_tree::<bu::Config>(decoded, &gate, Flavor::Yaml, Some(notes)) {
            Ok(v) => v,
            // go-yaml stopped at a tag it refuses: that alone is reported.
            Err(e) if e.fatal => {
                let pos = e.offset.map(|o| src.locate_chars(o));
                outcome.failure = Some(format!("yaml: {}", e.message));
                (outcome.diagnostics).push(Diagnostic::error(e.path, pos, e.message));
                return outcome;
            }
            Err(mut e) => {
                let also = std::mem::take(&mut e.also);
                let mut failure = String::from("yaml: unmarshal errors:");
                for mut e in std::iter::once(e).chain(also) {
                    if let Some(m) = gotype::reword(&e.message, e.path.as_ref(), spec) {
                        e.message = m;
                    }
                    let pos = e.offset.map(|o| src.locate_chars(o));
                    // go-yaml names the line of an alias's anchor.
                    let at = e.offset.map(|o| anchor_of.get(&o).copied().unwrap_or(o));
                    let line = at.map_or(0, |o| src.locate_chars(o).line);
                    failure.push_str(&format!("\n  line {line}: {}", e.message));
                    outcome
                        .diagnostics
                        .push(Diagnostic::error(e.path, pos, e.message));
                }
                outcome.failure = Some(failure);
                return outcome;
            }
        };
    // Key errors in mappings the decoding went through (not below unused keys or aliases).
    let reached: Vec<yaml::KeyError> = key_errors
        .into_iter()
        .filter(|e| {
            let under = |p: &JsonPath| e.path.segs().starts_with(p.segs());
            !unused.iter().any(|u| under(&u.path)) && !aliases.iter().any(under)
        })
        .collect();
    if !reached.is_empty() {
        let (failure, located) = key_failure(&src, &reached);
        outcome.diagnostics.extend(located);
        outcome.failure = Some(failure);
        return outcome;
    }

    // Where a path points: the deepest node that exists, but an alias hides what is below.
    let marker = |path: &JsonPath| -> u32 {
        match aliases.iter().find(|a| path.segs().starts_with(a.segs())) {
            Some(a) => root.deepest(a).start,
            None => root.deepest(path).start,
        }
    };
    // Where findings at output paths point. OpenShift's MachineConfig puts the Ignition
    // config under `spec.config`, which upstream's fallback keeps (outside `--raw`).
    let wrapped = spec.family == Family::OpenShift && !opts.raw;
    let level = spec.fcos_level().unwrap_or(0);
    let bd = &config.boot_device;
    let merged = (spec.base >= BaseVersion::V0_2 && !config.storage.filesystems.is_empty())
        || (level >= 3
            && (!bd.mirror.devices.is_empty()
                || !bd.luks.tang.is_empty()
                || bd.luks.tpm2 == Some(true)
                || (level >= 6 && bd.luks.cex.enabled == Some(true))))
        // From level 5 the GRUB users' config is merged in, even when there are none.
        || level >= 5;
    let locate = |findings: Vec<Finding>, map: &PathMap, cfg: Option<&ig::Config>| {
        let json = std::cell::OnceCell::new();
        let output = |cfg: &ig::Config| {
            serde_json::from_slice::<serde_json::Value>(&legacy::to_json(cfg, spec.ignition, false))
                .unwrap_or_default()
        };
        findings
            .into_iter()
            .map(|f| {
                let path = match &f {
                    Finding::Source(i) => i.path.clone(),
                    Finding::Unmapped(i) => pathmap::snake_path(&i.path),
                    Finding::Output(i) => {
                        let known = cfg.is_none_or(|c| {
                            known(
                                json.get_or_init(|| output(c)),
                                &i.path,
                                merged,
                                spec.ignition,
                            )
                        });
                        if known {
                            map.source_of(&i.path)
                        } else if wrapped {
                            let mut p = jpath(&["spec", "config"]);
                            for s in pathmap::snake_path(&i.path).segs() {
                                p.push(s.clone());
                            }
                            p
                        } else {
                            pathmap::snake_path(&i.path)
                        }
                    }
                };
                let i = f.issue();
                let pos = src.locate_chars(marker(&path));
                Diagnostic {
                    severity: i.severity,
                    path: Some(path),
                    pos: Some(pos),
                    message: i.message.clone(),
                    fatal: false,
                }
            })
            .collect::<Vec<Diagnostic>>()
    };
    let any_error = |f: &[Finding]| f.iter().any(|f| f.issue().severity == Severity::Error);

    // Reported in the order upstream's walk over the config reaches them; below an alias
    // upstream sees nothing, and an alias where a mapping belongs gets its own warning.
    let unused: Vec<de::Unused> = match &compacted {
        None => unused,
        Some(_) => unused
            .into_iter()
            .filter_map(|u| {
                as_written(&root, &u.path).map(|path| de::Unused {
                    path,
                    offset: u.offset,
                })
            })
            .collect(),
    };
    let mut walk: Vec<(Vec<u64>, Diagnostic)> = unused
        .into_iter()
        .filter(|u| {
            !aliases
                .iter()
                .any(|a| u.path.segs().starts_with(a.segs()) && u.path != *a)
        })
        .map(|u| {
            let pos = src.locate_chars(u.offset);
            (order::walk_position(&u.path), u.warning(pos))
        })
        .collect();
    for a in &aliases {
        let mapping = matches!(root.deepest(a).value, Value::Object(_));
        if mapping && order::struct_at(a) {
            let message = format!(
                "context tree does not match content tree at {a}. Line and column reporting may be inconsistent. Unused keys may not be reported"
            );
            let pos = src.locate_chars(root.deepest(a).start);
            walk.push((
                order::walk_position(&a.key("")),
                Diagnostic::warning(Some(a.clone()), Some(pos), message),
            ));
        }
    }
    // A null where a struct belongs: upstream's position tracking expected a mapping.
    let nulls = if has_nulls { nulls(&root) } else { Vec::new() };
    for (path, node) in nulls {
        if let Some(Seg::Index(i)) = path.segs().last() {
            // A null list item: upstream's walk pairs the items as written with the list
            // decoded without them, so it meets the nulls among the first items only.
            let list = JsonPath::from(path.segs()[..path.segs().len() - 1].to_vec());
            let kept = match &root.deepest(&list).value {
                Value::Array(items) => items.iter().filter(|x| !is_null(x)).count(),
                _ => 0,
            };
            if *i >= kept || !order::struct_list_at(&list) {
                continue;
            }
        } else if !order::single_struct_at(&path) {
            continue;
        }
        let hidden = |p: &JsonPath| path.segs().starts_with(p.segs());
        if !aliases.iter().any(hidden)
            && !walk.iter().any(|(_, d)| {
                d.message.starts_with("unused key") && d.path.as_ref().is_some_and(hidden)
            })
        {
            let message = format!(
                "context tree does not match content tree at {path}. Line and column reporting may be inconsistent. Unused keys may not be reported"
            );
            let pos = src.locate_chars(node.start);
            walk.push((
                order::walk_position(&path.key("")),
                Diagnostic::warning(Some(path), Some(pos), message),
            ));
        }
    }
    walk.sort_by(|a, b| a.0.cmp(&b.0));
    outcome.diagnostics = walk.into_iter().map(|(_, d)| d).collect();

    // The source's own rules.
    let mut checker = Checker::new(spec.ignition);
    check_source(&mut checker, &config, spec);
    let source_findings: Vec<Finding> = checker.issues.into_iter().map(Finding::Source).collect();
    let invalid = any_error(&source_findings);
    outcome
        .diagnostics
        .extend(locate(source_findings, &PathMap::default(), None));
    if invalid {
        outcome.failure = Some("source config is invalid".into());
        return outcome;
    }

    // The translation, the variant's sugar and its checks of the result.
    let files = FilesDir {
        dir: opts.files_dir,
    };
    let set = base::Settings {
        files,
        base: spec.base,
        out_version: spec.ignition,
        allow_gzip: !(spec.family == Family::OpenShift && spec.minor <= 9),
        ahead,
        binary: tags
            .values()
            .any(|t| matches!(t, yaml::TagNote::Named { tag, .. } if tag == "!!binary"))
            .then_some(base::BinaryValues {
                root: decoded,
                tags: &tags,
            }),
    };
    let t = base::translate(&config, set);
    let mut findings: Vec<Finding> = t.issues.into_iter().map(Finding::Source).collect();
    let mut cfg = t.config;
    let mut map = t.map;
    if t.failed {
        outcome.diagnostics.extend(locate(findings, &map, None));
        outcome.failure = Some("source config is invalid".into());
        return outcome;
    }
    fragment::resolve(&mut cfg, &mut map, &config, spec, set, &mut findings);
    let mut machine_config = None;
    match spec.family {
        Family::Fcos => fcos::translate(&config, spec, set, &mut cfg, &mut map, &mut findings),
        Family::OpenShift => {
            let before = findings.len();
            fcos::translate(&config, spec, set, &mut cfg, &mut map, &mut findings);
            if wrapped {
                // Upstream wraps the config after the fcos sugar reported these, without
                // moving their paths under `spec.config`: its map does not find them.
                for f in &mut findings[before..] {
                    if let Finding::Output(i) = f {
                        *f = Finding::Unmapped(i.clone());
                    }
                }
            }
            machine_config = Some(openshift::translate(
                &config,
                spec,
                opts.raw,
                &mut cfg,
                &mut map,
                &mut findings,
            ));
        }
        _ => {}
    }
    let invalid = any_error(&findings);
    outcome
        .diagnostics
        .extend(locate(findings, &map, Some(&cfg)));
    if invalid {
        outcome.failure = Some("source config is invalid".into());
        return outcome;
    }
    if opts.debug {
        let json = legacy::to_json(&cfg, spec.ignition, false);
        let wrapper = match (&machine_config, opts.raw) {
            (Some(mc), false) => Some(Some(mc)),
            (Some(_), true) => Some(None),
            (None, _) => None,
        };
        outcome.translations = Some(debug::translations(&json, &map, &root, wrapper));
    }

    // Fields the variant does not allow.
    let mut filtered = Vec::new();
    match spec.family {
        Family::Flatcar => flatcar::filter(spec, &cfg, &mut filtered),
        Family::R4e | Family::Fiot => r4e::filter(&cfg, &mut filtered),
        Family::OpenShift => openshift::filter(spec, opts.raw, &cfg, &mut filtered),
        Family::Fcos => {}
    }
    let filtered: Vec<Finding> = filtered.into_iter().map(Finding::Output).collect();
    let invalid = any_error(&filtered);
    outcome
        .diagnostics
        .extend(locate(filtered, &map, Some(&cfg)));
    if invalid {
        outcome.failure = Some("source config is invalid".into());
        return outcome;
    }

    // The generated config, by the rules of its Ignition version.
    // The output is rendered meanwhile (the MachineConfig only once the config is in it).
    let plain = machine_config.is_none() || opts.raw;
    let validated =
        || validate::validate(&legacy::as_validated(&cfg, spec.ignition), spec.ignition);
    let render = || {
        (opts.render.filter(|_| plain))
            .map(|pretty| (pretty, legacy::to_json(&cfg, spec.ignition, pretty)))
    };
    let (issues, rendered) = flint_ignition::par::join(cfg.storage.files.len(), validated, render);
    let mut issues = flatcar::allow_oem(spec, issues, &cfg);
    // Butane checks for duplicates before everything else, the MachineConfig's own lists
    // first.
    issues.sort_by_key(|i| i.message != validate::DUPLICATE);
    let mut generated = match (&machine_config, opts.raw) {
        (Some(mc), false) => openshift::duplicates(mc, spec.ignition),
        _ => Vec::new(),
    };
    generated.extend(issues.into_iter().map(Finding::Output));
    let invalid = any_error(&generated);
    outcome
        .diagnostics
        .extend(locate(generated, &map, Some(&cfg)));
    if invalid {
        outcome.failure = Some("config generated was invalid".into());
        return outcome;
    }
    if let (Some(mc), false) = (machine_config.as_mut(), opts.raw) {
        mc.spec.config = cfg.clone();
        outcome.machine_config = machine_config;
    }
    outcome.config = Some(cfg);
    outcome.rendered = rendered;
    outcome.map = map;
    release((root, config, compacted), opts.exiting);
    outcome
}

/// Frees what a translation read and decoded on another core (allocation by allocation,
/// it takes as long as rendering the output), or not at all when the process is `exiting`.
fn release<T: Send + 'static>(done: T, exiting: bool) {
    if exiting {
        std::mem::forget(done);
    } else {
        rayon::spawn(move || drop(done));
    }
}

/// The source rules in upstream's order: the variant's rules on the whole config, the
/// base's fields, then the variant's own sections.
fn check_source(c: &mut Checker, cfg: &bu::Config, spec: &Variant) {
    match spec.family {
        Family::Fcos => fcos::check_config(c, cfg, spec),
        Family::OpenShift => openshift::check_config(c, cfg, spec),
        _ => {}
    }
    base::validate::check(c, cfg, spec.base);
    if spec.fcos_level().is_some() {
        fcos::check_sections(c, cfg, spec);
    }
    if spec.family == Family::OpenShift {
        openshift::check_sections(c, cfg);
    }
}

/// A JSON path from its keys.
pub(crate) fn jpath(parts: &[&'static str]) -> JsonPath {
    parts.iter().fold(JsonPath::root(), |p, k| p.key(*k))
}
