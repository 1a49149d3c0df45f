//! `systemd.quadlets` (base 0.8-experimental): Podman quadlet files and their drop-ins,
//! written under `/etc/containers/systemd` (rootful) or `/etc/containers/systemd/users`; a
//! template instance (`web@1.container`) becomes a link to its template (`web@.container`).

use super::Translator;
use super::types as bu;
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use flint_ignition::validate::Checker;
use flint_ignition::validate::paths::clean;

const BAD_EXTENSION: &str = "unsupported file extension for quadlet: must be one of .container, .volume, .network, .kube, .image, .build, .pod, or .artifact";
const INSTANCE_CONTENTS: &str = "template instances cannot have contents or contents_local";
const EXISTS: &str = "matching filesystem node has existing contents or different type";
const EXTENSIONS: &[&str] = &[
    ".container",
    ".volume",
    ".network",
    ".kube",
    ".image",
    ".build",
    ".pod",
    ".artifact",
];

/// For a template instance (`foo@1.container`), its template's name (`foo@.container`).
fn template_of(name: &str) -> Option<String> {
    let at = name.find('@')?;
    let dot = name.rfind('.')?;
    if at + 1 == dot {
        return None;
    }
    Some(format!("{}@.{}", &name[..at], &name[dot + 1..]))
}

fn destination(rootful: bool, name: &str) -> String {
    let base = if rootful {
        "/etc/containers/systemd"
    } else {
        "/etc/containers/systemd/users"
    };
    clean(&format!("{base}/{name}"))
}

pub(super) fn check(c: &mut Checker, q: &bu::Quadlet, at: &JsonPath) {
    if !EXTENSIONS.iter().any(|e| q.name.ends_with(e)) {
        c.error(at.key("name"), BAD_EXTENSION);
        return;
    }
    if template_of(&q.name).is_some() {
        if q.contents.is_some() {
            c.error(at.key("contents"), INSTANCE_CONTENTS);
        }
        if q.contents_local.is_some() {
            c.error(at.key("contents_local"), INSTANCE_CONTENTS);
        }
    } else if q.contents.is_some() && q.contents_local.is_some() {
        c.error(
            at.key("contents_local"),
            "only one of the following can be set: contents, contents_local",
        );
    }
}

fn taken(cfg: &ig::Config, path: &str) -> bool {
    cfg.storage.files.iter().any(|f| f.path == path)
        || cfg.storage.directories.iter().any(|d| d.path == path)
        || cfg.storage.links.iter().any(|l| l.path == path)
}

/// Adds a file at `dest` with the quadlet's (or drop-in's) contents.
fn add_file(
    t: &mut Translator<'_>,
    cfg: &mut ig::Config,
    contents: &Option<String>,
    local: &Option<String>,
    dest: String,
    at: &JsonPath,
) {
    if taken(cfg, &dest) {
        t.error(at.clone(), EXISTS);
        return;
    }
    let files_out = JsonPath::root().key("storage").key("files");
    let k = cfg.storage.files.len();
    cfg.storage.files.push(ig::File {
        path: dest,
        ..Default::default()
    });
    t.map.add(files_out.index(k), at.clone());
    t.map
        .add_exact(files_out.index(k).key("path"), at.key("name"));
    let mut data = Vec::new();
    let mut from = at.clone();
    if let Some(l) = local.as_deref().filter(|l| !l.is_empty()) {
        from = at.key("contents_local");
        match t.set.files.read(l) {
            Ok(b) => data = b,
            Err(e) => {
                t.error(from, e);
                return;
            }
        }
    }
    if let Some(text) = contents.as_deref().filter(|s| !s.is_empty()) {
        from = at.key("contents");
        data = text.as_bytes().to_vec();
    }
    let (url, compression) = t.data_url(&data, None);
    let file = &mut cfg.storage.files[k];
    file.contents.source = Some(url);
    file.contents.compression = compression;
    file.mode = Some(0o644);
    t.map.add_exact(
        files_out.index(k).key("contents").key("source"),
        from.clone(),
    );
    t.map.add_exact(files_out.index(k).key("contents"), from);
    t.map.add_exact(
        files_out.index(k).key("contents").key("compression"),
        at.clone(),
    );
}

pub(super) fn apply(t: &mut Translator<'_>, src: &bu::Config, cfg: &mut ig::Config) {
    let quadlets = JsonPath::root().key("systemd").key("quadlets");
    let links_out = JsonPath::root().key("storage").key("links");
    for (i, q) in src.systemd.quadlets.iter().enumerate() {
        let at = quadlets.index(i);
        let dest = destination(q.rootful, &q.name);
        match template_of(&q.name) {
            Some(template) => {
                if taken(cfg, &dest) {
                    t.error(at.clone(), EXISTS);
                } else {
                    let k = cfg.storage.links.len();
                    cfg.storage.links.push(ig::Link {
                        path: dest.clone(),
                        target: Some(template),
                        ..Default::default()
                    });
                    if k == 0 {
                        t.map.add_exact(links_out.clone(), at.clone());
                    }
                    t.map.add_exact(links_out.index(k), at.clone());
                    t.map
                        .add_exact(links_out.index(k).key("path"), at.key("name"));
                }
            }
            None => add_file(t, cfg, &q.contents, &q.contents_local, dest.clone(), &at),
        }
        for (j, d) in q.dropins.iter().enumerate() {
            let dest = format!("{dest}.d/{}", d.name);
            let at = at.key("dropins").index(j);
            add_file(t, cfg, &d.contents, &d.contents_local, dest, &at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_templates_and_destinations() {
        assert_eq!(
            template_of("web@1.container").as_deref(),
            Some("web@.container")
        );
        assert_eq!(template_of("web@.container"), None);
        assert_eq!(template_of("web.container"), None);
        assert_eq!(
            destination(true, "a/../web.container"),
            "/etc/containers/systemd/web.container"
        );
        assert_eq!(
            destination(false, "web.container"),
            "/etc/containers/systemd/users/web.container"
        );
    }
}
