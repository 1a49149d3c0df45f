//! Rules Butane checks on the source before translating: choices that exclude each other,
//! embedded Ignition configs, mount-unit requirements, trees, quadlets and modes written in
//! decimal. The checks run in upstream's order (each struct's own rule, then its fields in
//! declaration order), which is the order they are reported in.

use super::BaseVersion;
use super::mode::{DECIMAL_MODE, looks_decimal};
use super::quadlets;
use super::types as bu;
use flint_go::tree::JsonPath;
use flint_ignition::validate::Checker;

const TOO_MANY_SOURCES: &str = "only one of the following can be set: inline, local, source";
const TOO_MANY_SYSTEMD_SOURCES: &str =
    "only one of the following can be set: contents, contents_local";

/// A resource may have one source; an inline config of the `ignition` section is checked
/// as an Ignition config.
fn resource(c: &mut Checker, r: &bu::Resource, at: &JsonPath, base: BaseVersion, config: bool) {
    if !base.checks_resource_sources() {
        // Base 0.1 knew only inline and source (and only for file contents).
        if r.inline.is_some() && r.source.is_some() {
            c.error(at.key("inline"), TOO_MANY_SOURCES);
        }
        return;
    }
    let set: Vec<&str> = [
        ("local", r.local.is_some()),
        ("inline", r.inline.is_some()),
        ("source", r.source.is_some()),
    ]
    .into_iter()
    .filter(|(_, s)| *s)
    .map(|(n, _)| n)
    .collect();
    if set.len() > 1 {
        c.error(at.key(set[set.len() - 1]), TOO_MANY_SOURCES);
        return;
    }
    if config && let Some(text) = &r.inline {
        embedded_config(c, text.as_bytes(), &at.key("inline"));
    }
}

/// An inline config of the `ignition` section, checked as upstream checks it: read into the
/// output version's types whatever version it names; checked by that version's rules when
/// it names exactly that version (or none that parses), else skipped with a warning. Its
/// findings keep their paths inside the inline config, and so are placed where those paths
/// lead in the Butane document, as upstream places them (usually its first line).
pub(crate) fn embedded_config(c: &mut Checker, bytes: &[u8], inline: &JsonPath) {
    use flint_ignition::version::{Version, VersionError};
    let parsed = match flint_ignition::parse::parse_as(bytes, c.version) {
        Ok(p) => p,
        Err(d) => {
            c.error(JsonPath::root(), d.message);
            c.error(inline.clone(), "config is not valid");
            return;
        }
    };
    match Version::parse(&parsed.config.ignition.version) {
        Ok(v) if v == c.version => {}
        Err(VersionError::Invalid) => {
            c.error(
                JsonPath::root().key("ignition").key("version"),
                VersionError::Invalid.to_string(),
            );
        }
        _ => return skip_embedded(c, inline),
    }
    let issues = flint_ignition::validate::validate(&parsed.config, c.version);
    c.issues.extend(issues);
    // Unused keys, and the context-tree warning of a `null` config.
    for w in parsed.warnings {
        c.warning(w.path.unwrap_or_else(JsonPath::root), w.message);
    }
}

fn skip_embedded(c: &mut Checker, inline: &JsonPath) {
    let mut at = inline.clone();
    at.pop();
    c.warning(
        at.key("version"),
        "skipping validation for the merge/replace ignition config due to an unkown version",
    );
}

fn systemd_sources(
    c: &mut Checker,
    contents: &Option<String>,
    local: &Option<String>,
    at: &JsonPath,
) {
    if contents.is_some() && local.is_some() {
        c.error(at.key("contents_local"), TOO_MANY_SYSTEMD_SOURCES);
    }
}

/// The base's rules, over every field of `cfg` the base version has.
pub(crate) fn check(c: &mut Checker, cfg: &bu::Config, base: BaseVersion) {
    let root = JsonPath::root();
    let ig = root.key("ignition");
    let ic = ig.key("config");
    for (i, r) in cfg.ignition.config.merge.iter().enumerate() {
        resource(c, &r.as_resource(), &ic.key("merge").index(i), base, true);
    }
    resource(
        c,
        &cfg.ignition.config.replace.as_resource(),
        &ic.key("replace"),
        base,
        true,
    );
    let cas = ig.key("security").key("tls").key("certificate_authorities");
    for (i, r) in cfg
        .ignition
        .security
        .tls
        .certificate_authorities
        .iter()
        .enumerate()
    {
        if base.checks_resource_sources() {
            resource(c, &r.as_resource(), &cas.index(i), base, false);
        }
    }

    let st = root.key("storage");
    for (i, d) in cfg.storage.directories.iter().enumerate() {
        if let Some(m) = d.mode
            && looks_decimal(m, true)
        {
            c.warning(st.key("directories").index(i).key("mode"), DECIMAL_MODE);
        }
    }
    for (i, f) in cfg.storage.files.iter().enumerate() {
        let p = st.key("files").index(i);
        if let Some(m) = f.mode
            && looks_decimal(m, false)
        {
            c.warning(p.key("mode"), DECIMAL_MODE);
        }
        for (j, a) in f.append.iter().enumerate() {
            resource(c, a, &p.key("append").index(j), base, false);
        }
        resource(c, &f.contents, &p.key("contents"), base, false);
    }
    for (i, f) in cfg.storage.filesystems.iter().enumerate() {
        if f.with_mount_unit != Some(true) {
            continue;
        }
        let p = st.key("filesystems").index(i);
        let format = f.format.as_deref().unwrap_or("");
        let no_path = f.path.as_deref().is_none_or(str::is_empty);
        if !base.has_swap_units() {
            // Before swap units, a mount unit needed a path whatever the format.
            if no_path {
                c.error(p.key("path"), MOUNT_NO_PATH);
            }
            if format.is_empty() {
                c.error(p.key("format"), MOUNT_NO_FORMAT);
            }
        } else if format.is_empty() {
            c.error(p.key("format"), MOUNT_NO_FORMAT);
        } else if format != "swap" && no_path {
            c.error(p.key("path"), MOUNT_NO_PATH);
        }
    }
    for (i, l) in cfg.storage.luks.iter().enumerate() {
        resource(
            c,
            &l.key_file,
            &st.key("luks").index(i).key("key_file"),
            base,
            false,
        );
    }
    for (i, t) in cfg.storage.trees.iter().enumerate() {
        if t.local.as_deref().is_none_or(str::is_empty) {
            c.error(st.key("trees").index(i), "local is required");
        }
    }

    let sd = root.key("systemd");
    if base.has_contents_local() {
        for (i, u) in cfg.systemd.units.iter().enumerate() {
            let p = sd.key("units").index(i);
            systemd_sources(c, &u.contents, &u.contents_local, &p);
            for (j, d) in u.dropins.iter().enumerate() {
                systemd_sources(
                    c,
                    &d.contents,
                    &d.contents_local,
                    &p.key("dropins").index(j),
                );
            }
        }
    }
    for (i, q) in cfg.systemd.quadlets.iter().enumerate() {
        let p = sd.key("quadlets").index(i);
        quadlets::check(c, q, &p);
        for (j, d) in q.dropins.iter().enumerate() {
            systemd_sources(
                c,
                &d.contents,
                &d.contents_local,
                &p.key("dropins").index(j),
            );
        }
    }
}

pub(crate) const MOUNT_NO_PATH: &str =
    "path is required if with_mount_unit is true and format is not swap";
pub(crate) const MOUNT_NO_FORMAT: &str = "format is required if with_mount_unit is true";
