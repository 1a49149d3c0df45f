//! What the fetch stage fetched, kept for the later stages of the same boot when they run
//! as processes of their own: small resources whole, up to a budget ([`budget_from_env`]),
//! and for every resource the SHA-512 of its verified bytes. A later stage uses a kept
//! resource without downloading it again, and checks one it must download again against
//! the hash of the first download, so that what it writes is what was verified before any
//! disk was touched.
//!
//! The store is a directory in the run state (tmpfs in an initramfs): an index and one file
//! per kept resource. Resources are named by an identity the caller gives (the source, the
//! headers, how the bytes are finished). The index is stamped with the boot and the config
//! ([`stamp`]): a store left by another boot, or by a run of another config sharing the
//! state directory, is no store.

use crate::fetch::blob::{Blob, MEMORY_LIMIT};
use crate::write::write_atomic;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default budget: a few config files and keys fit many times over, and an initramfs'
/// /run (a fifth of the memory by default) does not miss it.
pub(crate) const DEFAULT_BUDGET: u64 = 64 << 20;

/// The budget in bytes: `FLINT_KEEP_BYTES`, else [`DEFAULT_BUDGET`]; 0 keeps nothing (but
/// the hashes).
pub(crate) fn budget_from_env() -> u64 {
    std::env::var("FLINT_KEEP_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_BUDGET)
}

const INDEX: &str = "index.json";

/// What a store's resources belong to: the downloads of the config (their identities, in
/// order; not the config itself, which the fetch stage renders for the cache), as a SHA-256
/// in hex.
pub(crate) fn stamp(ids: impl Iterator<Item = String>) -> String {
    let mut h = sha2::Sha256::new();
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\0");
    }
    crate::fetch::hex(&h.finalize())
}

/// This boot: the kernel's boot id (empty where there is none).
fn boot() -> String {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    id.trim().to_string()
}

/// The index as written: the boot and the stamp, each resource by key, and the
/// certificate authorities the fetch stage fetched (PEM text, by the fetcher's key): those
/// are fetched before the config is whole, and serve any config of the same boot.
#[derive(Serialize, Deserialize)]
struct Index {
    boot: String,
    stamp: String,
    entries: BTreeMap<String, Entry>,
    cas: BTreeMap<String, String>,
}

/// The certificate authorities a fetch stage of this boot kept in `dir` (none when it
/// kept none, or the store is of another boot or unreadable).
pub(crate) fn cas(dir: &Path) -> Vec<(String, Vec<u8>)> {
    match read_index(dir) {
        Ok(Some(i)) => (i.cas.into_iter())
            .map(|(k, v)| (k, v.into_bytes()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The index in `dir` when it is of this boot; `None` when there is none, or one of
/// another boot, or one that does not parse (the store is only a cache).
fn read_index(dir: &Path) -> std::io::Result<Option<Index>> {
    let bytes = match std::fs::read(dir.join(INDEX)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let index = serde_json::from_slice::<Index>(&bytes).ok();
    Ok(index.filter(|i| i.boot == boot()))
}

/// What is known of one resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    len: u64,
    sha512: String,
    /// Whether its bytes are in the store (the file named by the entry's key).
    kept: bool,
}

/// The store as read back by a later stage.
#[derive(Debug, Default)]
pub(crate) struct Keep {
    dir: PathBuf,
    entries: BTreeMap<String, Entry>,
}

/// A resource fetched again whose bytes are not those of the first download.
#[derive(Debug)]
pub(crate) struct Changed {
    pub then: String,
    pub now: String,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "changed since the fetch stage verified it: sha512-{} then, sha512-{} now",
            self.then, self.now
        )
    }
}

/// The file name of a resource of identity `id`.
fn key(id: &str) -> String {
    crate::fetch::hex(&sha2::Sha256::digest(id.as_bytes()))
}

/// The SHA-512 of a blob's bytes, in hex.
fn sha512(b: &Blob) -> std::io::Result<String> {
    let mut h = sha2::Sha512::new();
    b.each_chunk(|c| {
        h.update(c);
        Ok(true)
    })?;
    Ok(crate::fetch::hex(&h.finalize()))
}

/// What a fetch stage leaves: the stamp of its config, its downloads (identity, verified
/// bytes), the certificate authorities it fetched (key, bytes).
pub(crate) struct Fetched<I> {
    pub stamp: String,
    pub items: I,
    pub cas: Vec<(String, Vec<u8>)>,
}

/// Replaces the store in `dir` with one of this boot holding what `f` gives: each
/// download's hash (an identity given twice is kept once), and its bytes while `budget`
/// lasts, in order; the certificate authorities that are text. Returns how many resources
/// and bytes were kept. With nothing to keep, no store is left.
pub(crate) fn save<'a, I: IntoIterator<Item = (&'a str, &'a Blob)>>(
    dir: &Path,
    f: Fetched<I>,
    budget: u64,
) -> std::io::Result<(usize, u64)> {
    use std::os::unix::fs::DirBuilderExt;
    // The store is of one boot's config: what an earlier run kept goes.
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut items = f.items.into_iter().peekable();
    let cas: BTreeMap<String, String> = (f.cas.into_iter())
        .filter_map(|(k, v)| Some((k, String::from_utf8(v).ok()?)))
        .collect();
    // Nothing downloaded, nothing to keep: no store is made.
    if items.peek().is_none() && cas.is_empty() {
        return Ok((0, 0));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let (mut left, mut count, mut bytes) = (budget, 0, 0);
    let mut entries = BTreeMap::new();
    for (id, blob) in items {
        let k = key(id);
        if entries.contains_key(&k) {
            continue;
        }
        let len = blob.len();
        let kept = len <= left;
        if kept {
            let mut f = open_new(&dir.join(&k))?;
            blob.write_to(&mut f)?;
            left -= len;
            count += 1;
            bytes += len;
        }
        let sha512 = sha512(blob)?;
        entries.insert(k, Entry { len, sha512, kept });
    }
    let index = Index {
        boot: boot(),
        stamp: f.stamp,
        entries,
        cas,
    };
    let json = serde_json::to_vec(&index).map_err(std::io::Error::other)?;
    // The index last: a store without one is no store (see `load`).
    write_atomic(&dir.join(INDEX), &json, 0o600)?;
    Ok((count, bytes))
}

fn open_new(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

impl Keep {
    /// The store in `dir`; none (an empty store) when the fetch stage left none, or left
    /// one of another boot or with another stamp than `stamp` (or one unreadable: it is
    /// only a cache).
    pub(crate) fn load(dir: &Path, stamp: &str) -> std::io::Result<Keep> {
        Ok(match read_index(dir)? {
            Some(index) if index.stamp == stamp => Keep {
                dir: dir.to_path_buf(),
                entries: index.entries,
            },
            _ => Keep::default(),
        })
    }

    /// Whether a fetch stage left the store (it may hold nothing).
    pub(crate) fn exists(&self) -> bool {
        !self.dir.as_os_str().is_empty()
    }

    /// The kept bytes of the resource `id`, checked against the hash taken when they were
    /// kept (the store is in a writable directory); `None` when they were not kept.
    pub(crate) fn get(&self, id: &str) -> Option<Result<Blob, String>> {
        let k = key(id);
        let e = self.entries.get(&k).filter(|e| e.kept)?;
        let path = self.dir.join(&k);
        let read = || -> std::io::Result<Blob> {
            let f = std::fs::File::open(&path)?;
            let len = f.metadata()?.len();
            let blob = if len as usize <= MEMORY_LIMIT {
                Blob::from(std::fs::read(&path)?)
            } else {
                Blob::Spooled {
                    file: std::sync::Arc::new(f),
                    len,
                }
            };
            Ok(blob)
        };
        Some(match read() {
            Ok(b) => match sha512(&b) {
                Ok(h) if h == e.sha512 && b.len() == e.len => Ok(b),
                Ok(h) => Err(format!(
                    "the copy kept in {} changed: sha512-{} then, sha512-{h} now",
                    path.display(),
                    e.sha512
                )),
                Err(err) => Err(format!("reading {}: {err}", path.display())),
            },
            Err(err) => Err(format!("reading {}: {err}", path.display())),
        })
    }

    /// Checks bytes of `id` fetched again against the first download, when there was one.
    pub(crate) fn check(&self, id: &str, b: &Blob) -> Result<(), String> {
        let Some(e) = self.entries.get(&key(id)) else {
            return Ok(());
        };
        let now = sha512(b).map_err(|e| format!("hashing the fetched bytes: {e}"))?;
        if now != e.sha512 {
            return Err(Changed {
                then: e.sha512.clone(),
                now,
            }
            .to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flint-keep-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn of<'a, I: IntoIterator<Item = (&'a str, &'a Blob)>>(
        stamp: &str,
        items: I,
        cas: Vec<(String, Vec<u8>)>,
    ) -> Fetched<I> {
        Fetched {
            stamp: stamp.into(),
            items,
            cas,
        }
    }

    #[test]
    fn keeps_within_the_budget_and_checks_the_rest() {
        let dir = tmp("budget");
        let small = Blob::from(b"small".to_vec());
        let large = Blob::from(vec![7u8; 100]);
        let items = [("a", &small), ("b", &large), ("a", &small)];
        let (n, bytes) = save(&dir, of("s1", items, vec![]), 50).unwrap();
        assert_eq!((n, bytes), (1, 5));
        // Another boot's or config's store is none.
        assert!(!Keep::load(&dir, "s2").unwrap().exists());
        let k = Keep::load(&dir, "s1").unwrap();
        assert_eq!(k.get("a").unwrap().unwrap().to_vec().unwrap(), b"small");
        assert!(k.get("b").is_none() && k.get("c").is_none());
        assert!(k.check("b", &large).is_ok());
        let e = k.check("b", &Blob::from(vec![8u8; 100])).unwrap_err();
        assert!(e.starts_with("changed since the fetch stage verified it: sha512-"));
        // Unknown resources are not checked.
        assert!(k.check("c", &small).is_ok());
        // A kept copy that changed is refused.
        std::fs::write(dir.join(key("a")), b"other").unwrap();
        assert!(k.get("a").unwrap().unwrap_err().contains("changed"));
        // A save replaces the store.
        let ca = ("k".to_string(), b"PEM".to_vec());
        save(&dir, of("s1", [("c", &small)], vec![ca.clone()]), 0).unwrap();
        assert_eq!(cas(&dir), [ca]);
        let k = Keep::load(&dir, "s1").unwrap();
        assert!(k.get("a").is_none() && k.get("c").is_none());
        assert!(k.check("a", &large).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(Keep::load(&dir, "s1").unwrap().get("c").is_none());
        // An index that does not parse is no store either.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(INDEX), b"{").unwrap();
        assert!(!Keep::load(&dir, "s1").unwrap().exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
