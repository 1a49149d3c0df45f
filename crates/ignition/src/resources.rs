//! Every resource of a config (something with a `source` to fetch), with where it stands:
//! the one walk over the model that validation filters, fetching and parsing share.

use crate::types::{Config, File, Resource};
use flint_go::tree::JsonPath;

/// Where a resource stands in a config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// `ignition.config.merge.N`
    Merge(usize),
    /// `ignition.config.replace`
    Replace,
    /// `ignition.security.tls.certificateAuthorities.N`
    CertificateAuthority(usize),
    /// `storage.files.N.contents`
    FileContents(usize),
    /// `storage.files.N.append.M`
    FileAppend(usize, usize),
    /// `storage.luks.N.keyFile`
    LuksKeyFile(usize),
}

impl Place {
    /// The JSON path of the resource: `$.storage.files.3.contents`.
    pub fn path(self) -> JsonPath {
        self.path_in(&JsonPath::root())
    }

    /// The path of the resource in a config that stands at `config` in a larger document.
    pub fn path_in(self, config: &JsonPath) -> JsonPath {
        let at = |keys: &[&'static str]| keys.iter().fold(config.clone(), |p, k| p.key(*k));
        match self {
            Place::Merge(i) => at(&["ignition", "config", "merge"]).index(i),
            Place::Replace => at(&["ignition", "config", "replace"]),
            Place::CertificateAuthority(i) => {
                at(&["ignition", "security", "tls", "certificateAuthorities"]).index(i)
            }
            Place::FileContents(i) => at(&["storage", "files"]).index(i).key("contents"),
            Place::FileAppend(i, j) => at(&["storage", "files"]).index(i).key("append").index(j),
            Place::LuksKeyFile(i) => at(&["storage", "luks"]).index(i).key("keyFile"),
        }
    }

    /// A reference of the `ignition` section (a config to merge or replace with, a
    /// certificate authority): what 3.0 called a config or CA reference, fetched while the
    /// config is acquired rather than by the stages that write.
    pub fn is_reference(self) -> bool {
        matches!(
            self,
            Place::Merge(_) | Place::Replace | Place::CertificateAuthority(_)
        )
    }
}

/// The walk, once for shared and once for mutable access (`$iter` is `iter` or `iter_mut`,
/// `$m` nothing or `mut`). Order: the `ignition` section's references (merge, replace,
/// certificate authorities), then each file's contents and appended fragments (the order
/// Ignition fetches them in), then LUKS key files.
macro_rules! walk {
    ($config:expr, $iter:ident $(, $m:tt)?) => {{
        let Config {
            ignition, storage, ..
        } = $config;
        let merge = (ignition.config.merge.$iter().enumerate()).map(|(i, r)| (Place::Merge(i), r));
        let replace = std::iter::once((Place::Replace, &$($m)? ignition.config.replace));
        let cas = (ignition.security.tls.certificate_authorities.$iter().enumerate())
            .map(|(i, r)| (Place::CertificateAuthority(i), r));
        let files = storage.files.$iter().enumerate().flat_map(|(i, f)| {
            let File {
                contents, append, ..
            } = f;
            std::iter::once((Place::FileContents(i), contents)).chain(
                (append.$iter().enumerate()).map(move |(j, a)| (Place::FileAppend(i, j), a)),
            )
        });
        let luks = (storage.luks.$iter().enumerate())
            .map(|(i, l)| (Place::LuksKeyFile(i), &$($m)? l.key_file));
        merge.chain(replace).chain(cas).chain(files).chain(luks)
    }};
}

impl Config {
    /// Every resource of the config with its place, whether it names a source or not.
    pub fn resources(&self) -> impl Iterator<Item = (Place, &Resource)> {
        walk!(self, iter)
    }

    /// [`Config::resources`], to change them.
    pub fn resources_mut(&mut self) -> impl Iterator<Item = (Place, &mut Resource)> {
        walk!(self, iter_mut, mut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_with_its_path() {
        let mut c = Config::default();
        c.ignition.config.merge.push(Resource::default());
        c.ignition.security.tls.certificate_authorities = vec![Resource::default(); 2];
        c.storage.files = vec![File::default(), File::default()];
        c.storage.files[1].append = vec![Resource::default(); 2];
        c.storage.luks.push(Default::default());
        let paths: Vec<String> = c.resources().map(|(p, _)| p.path().to_string()).collect();
        assert_eq!(
            paths,
            [
                "$.ignition.config.merge.0",
                "$.ignition.config.replace",
                "$.ignition.security.tls.certificateAuthorities.0",
                "$.ignition.security.tls.certificateAuthorities.1",
                "$.storage.files.0.contents",
                "$.storage.files.1.contents",
                "$.storage.files.1.append.0",
                "$.storage.files.1.append.1",
                "$.storage.luks.0.keyFile",
            ]
        );
        for (p, r) in c.resources_mut() {
            r.source = Some(p.path().to_string());
        }
        assert_eq!(
            c.storage.files[1].append[1].source.as_deref(),
            Some("$.storage.files.1.append.1")
        );
        let refs = c.resources().filter(|(p, _)| p.is_reference()).count();
        assert_eq!(refs, 4);
        let at = JsonPath::root().key("x").index(2);
        assert_eq!(
            Place::LuksKeyFile(1).path_in(&at).to_string(),
            "$.x.2.storage.luks.1.keyFile"
        );
    }
}
