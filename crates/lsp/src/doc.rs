//! An open document: its text, what kind of config it is, and which spec it names.

use crate::text::Text;
use flint_butane::{Family, REGISTRY, Variant};
use flint_ignition::Version;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Butane,
    Ignition,
}

#[derive(Debug)]
pub(crate) struct Doc {
    /// The path of a `file:` document (where `local:` files are looked for by default).
    pub(crate) path: Option<PathBuf>,
    pub(crate) text: Text,
    /// The data URLs of its contents, from its earlier translations.
    pub(crate) memo: flint_butane::Memo,
}

/// The spec a document is written in, as far as it says: the schema to complete and
/// explain against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spec {
    Butane(&'static Variant),
    Ignition(Version),
}

impl Spec {
    pub(crate) fn schema_name(self) -> String {
        match self {
            Spec::Butane(v) => v.schema_name(),
            Spec::Ignition(v) => format!("ignition-{v}"),
        }
    }

    pub(crate) fn kind(self) -> Kind {
        match self {
            Spec::Butane(_) => Kind::Butane,
            Spec::Ignition(_) => Kind::Ignition,
        }
    }
}

impl Doc {
    pub(crate) fn new(uri: &str, text: String) -> Doc {
        Doc {
            path: file_path(uri),
            text: Text::new(text),
            memo: Default::default(),
        }
    }

    /// Butane or Ignition, from the file name when it tells (`.bu`, `.ign`), else from
    /// the content (a `variant` key; an `ignition` object); `None` for anything else.
    pub(crate) fn kind(&self) -> Option<Kind> {
        let ext = self
            .path
            .as_deref()
            .and_then(Path::extension)
            .and_then(|e| e.to_str());
        match ext {
            Some("bu") => return Some(Kind::Butane),
            Some("ign") => return Some(Kind::Ignition),
            _ => {}
        }
        let text = self.text.as_str();
        let json = text.trim_start().starts_with('{');
        if json && text.contains("\"ignition\"") && !matches!(ext, Some("yaml" | "yml")) {
            return Some(Kind::Ignition);
        }
        let butane = top_level_value(text, "variant").is_some();
        (butane && !matches!(ext, Some("json"))).then_some(Kind::Butane)
    }

    /// The spec the document names; an unknown or missing version gives the newest stable
    /// spec of its variant (or of Ignition) so that help still comes.
    pub(crate) fn spec(&self) -> Option<Spec> {
        let text = self.text.as_str();
        match self.kind()? {
            Kind::Butane => {
                let variant = top_level_value(text, "variant")?;
                let version = top_level_value(text, "version").unwrap_or_default();
                flint_butane::lookup(&variant, &version)
                    .or_else(|| newest(&variant))
                    .map(Spec::Butane)
            }
            Kind::Ignition => Some(Spec::Ignition(
                ignition_version(text)
                    .and_then(|v| Version::parse(&v).ok())
                    .unwrap_or_else(newest_ignition),
            )),
        }
    }

    /// The directory `local:` references are read from: the client's setting (relative to
    /// the document's folder when relative), else the document's folder.
    pub(crate) fn files_dir(&self, setting: Option<&Path>) -> Option<PathBuf> {
        let folder = self.path.as_deref().and_then(Path::parent);
        match (setting, folder) {
            (Some(s), _) if s.is_absolute() => Some(s.to_path_buf()),
            (Some(s), Some(f)) => Some(f.join(s)),
            (None, Some(f)) => Some(f.to_path_buf()),
            (Some(s), None) => Some(s.to_path_buf()),
            (None, None) => None,
        }
    }
}

/// The newest stable version of Butane variant `name`.
pub(crate) fn newest(name: &str) -> Option<&'static Variant> {
    REGISTRY.iter().rfind(|v| v.name == name && !v.experimental)
}

/// The newest stable Ignition spec.
pub(crate) fn newest_ignition() -> Version {
    let stable = Version::ALL.iter().rev();
    stable
        .copied()
        .find(|v| !v.to_string().contains("experimental"))
        .unwrap_or(Version::NEWEST)
}

/// Every version of the family of `spec`, oldest first.
pub(crate) fn family_versions(spec: Spec) -> Vec<Spec> {
    match spec {
        Spec::Butane(v) => {
            let family: Family = v.family;
            REGISTRY
                .iter()
                .filter(|x| x.family == family && x.name == v.name)
                .map(Spec::Butane)
                .collect()
        }
        Spec::Ignition(_) => Version::ALL.iter().copied().map(Spec::Ignition).collect(),
    }
}

/// The plain value of a top-level YAML key (`variant: fcos`), quotes removed.
pub(crate) fn top_level_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| key_value(l, key))
}

/// The line (zero-based) of top-level YAML key `key`, and its plain value.
pub(crate) fn top_level_line(text: &Text, key: &str) -> Option<(usize, String)> {
    (0..text.line_count()).find_map(|n| Some((n, key_value(text.line(n), key)?)))
}

/// The value of `line` when it is the top-level key `key`, quotes and comment removed.
fn key_value(line: &str, key: &str) -> Option<String> {
    let rest = line.strip_prefix(key)?.trim_start();
    let v = rest.strip_prefix(':')?;
    let v = v.split(" #").next().unwrap_or_default().trim();
    Some(v.trim_matches(|c| c == '"' || c == '\'').to_string())
}

/// `ignition.version` of a JSON config, found without parsing it (it may be half-typed).
fn ignition_version(text: &str) -> Option<String> {
    let after = &text[text.find("\"ignition\"")?..];
    let after = &after[after.find("\"version\"")? + 9..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let v = after.strip_prefix('"')?;
    Some(v[..v.find('"')?].to_string())
}

/// The local path of a `file:` URI (percent escapes decoded).
pub(crate) fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host's paths are files here.
    let path = &rest[rest.find('/')?..];
    let out = flint_ignition::dataurl::percent_decode(path);
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// The `file:` URI of `path` (what the protocol names files by).
pub(crate) fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_specs() {
        let bu = Doc::new(
            "file:///w/a.yaml",
            "variant: flatcar\nversion: 1.1.0\n".into(),
        );
        assert_eq!(bu.kind(), Some(Kind::Butane));
        assert_eq!(bu.spec().unwrap().schema_name(), "butane-flatcar-1.1.0");
        let unknown = Doc::new("file:///w/a.bu", "variant: fcos\nversion: 9\n".into());
        assert_eq!(unknown.spec().unwrap().schema_name(), "butane-fcos-1.7.0");
        let ign = Doc::new(
            "file:///w/c.json",
            "{\"ignition\": {\"version\": \"3.2.0\"}}".into(),
        );
        assert_eq!(ign.spec().unwrap().schema_name(), "ignition-3.2.0");
        let other = Doc::new("file:///w/k8s.yaml", "kind: Pod\n".into());
        assert_eq!(other.kind(), None);
    }

    #[test]
    fn file_uris_round_trip() {
        let p = Path::new("/tmp/a b/ü.bu");
        assert_eq!(file_uri(p), "file:///tmp/a%20b/%C3%BC.bu");
        assert_eq!(file_path(&file_uri(p)).unwrap(), p);
        assert_eq!(file_path("untitled:1"), None);
    }
}
