//! Rules Butane checks on the source before translating: choices that exclude each other,
//! mount-unit requirements, trees, and modes written in decimal.

use super::mode::{DECIMAL_MODE, looks_decimal};
use super::types as bu;
use crate::ignition::validate::Checker;
use crate::tree::JsonPath;

/// Of fields that exclude each other, the last one set (in `order`) is reported.
fn only_one(c: &mut Checker, path: &JsonPath, names: &str, order: &[(&str, bool)]) {
    let set: Vec<&str> = order.iter().filter(|(_, s)| *s).map(|(n, _)| *n).collect();
    if set.len() > 1 {
        c.error(
            path.key(set[set.len() - 1]),
            format!("only one of the following can be set: {names}"),
        );
    }
}

pub fn resource(c: &mut Checker, r: &bu::Resource, path: &JsonPath) {
    only_one(
        c,
        path,
        "inline, local, source",
        &[
            ("local", r.local.is_some()),
            ("inline", r.inline.is_some()),
            ("source", r.source.is_some()),
        ],
    );
}

pub fn check(c: &mut Checker, cfg: &bu::Config) {
    let root = JsonPath::root();
    let ig = root.key("ignition");
    for (i, r) in cfg.ignition.config.merge.iter().enumerate() {
        resource(c, r, &ig.key("config").key("merge").index(i));
    }
    resource(
        c,
        &cfg.ignition.config.replace,
        &ig.key("config").key("replace"),
    );
    for (i, r) in cfg
        .ignition
        .security
        .tls
        .certificate_authorities
        .iter()
        .enumerate()
    {
        resource(
            c,
            r,
            &ig.key("security")
                .key("tls")
                .key("certificate_authorities")
                .index(i),
        );
    }

    let st = root.key("storage");
    for (i, f) in cfg.storage.files.iter().enumerate() {
        let p = st.key("files").index(i);
        resource(c, &f.contents, &p.key("contents"));
        for (j, a) in f.append.iter().enumerate() {
            resource(c, a, &p.key("append").index(j));
        }
        if let Some(m) = f.mode
            && looks_decimal(m, false)
        {
            c.warning(p.key("mode"), DECIMAL_MODE);
        }
    }
    for (i, d) in cfg.storage.directories.iter().enumerate() {
        if let Some(m) = d.mode
            && looks_decimal(m, true)
        {
            c.warning(st.key("directories").index(i).key("mode"), DECIMAL_MODE);
        }
    }
    for (i, l) in cfg.storage.luks.iter().enumerate() {
        resource(c, &l.key_file, &st.key("luks").index(i).key("key_file"));
    }
    for (i, f) in cfg.storage.filesystems.iter().enumerate() {
        if f.with_mount_unit != Some(true) {
            continue;
        }
        let p = st.key("filesystems").index(i);
        let format = f.format.as_deref().unwrap_or("");
        if format.is_empty() {
            c.error(
                p.key("format"),
                "format is required if with_mount_unit is true",
            );
        } else if format != "swap" && f.path.as_deref().is_none_or(str::is_empty) {
            c.error(
                p.key("path"),
                "path is required if with_mount_unit is true and format is not swap",
            );
        }
    }
    for (i, t) in cfg.storage.trees.iter().enumerate() {
        if t.local.as_deref().is_none_or(str::is_empty) {
            c.error(st.key("trees").index(i), "local is required");
        }
    }

    let units = root.key("systemd").key("units");
    for (i, u) in cfg.systemd.units.iter().enumerate() {
        let p = units.index(i);
        only_one(
            c,
            &p,
            "contents, contents_local",
            &[
                ("contents", u.contents.is_some()),
                ("contents_local", u.contents_local.is_some()),
            ],
        );
        for (j, d) in u.dropins.iter().enumerate() {
            only_one(
                c,
                &p.key("dropins").index(j),
                "contents, contents_local",
                &[
                    ("contents", d.contents.is_some()),
                    ("contents_local", d.contents_local.is_some()),
                ],
            );
        }
    }
}
