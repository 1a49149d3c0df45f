//! Fetching every resource the final config refers to, before anything is touched: file
//! contents and appended fragments, LUKS key files. Each distinct resource is fetched once;
//! independent fetches run concurrently. A stage run on its own asks only for what it needs
//! ([`Needed`]), and takes what the fetch stage kept ([`crate::keep`]) instead of fetching it
//! again.

use crate::fetch::blob::{Blob, Finish};
use crate::fetch::{Fetcher, download_key, resource_key, url::redact};
use crate::keep::Keep;
use flint_go::tree::JsonPath;
use flint_ignition::types::{Config, Resource};
use std::collections::HashMap;
use std::sync::Mutex;

/// A download's error, or the result of each way its entries finish it.
type Outcomes = Result<Vec<Result<Blob, String>>, String>;

/// Fetches run at most this many at a time.
const WORKERS: usize = 8;

/// A resource fetched for the entry at `path` (its URL is in the config: a copy here would
/// double the memory of a config full of `data:` URLs).
#[derive(Debug, Clone)]
pub struct FetchedResource {
    pub path: JsonPath,
    pub data: Blob,
    /// What names the download in the keep-store ([`resource_key`]); `None` for bytes no
    /// download gave (`data:` URLs, generated keys).
    pub(crate) id: Option<String>,
}

/// Which resources of a config a stage needs fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Needed {
    /// None: the stage works on the config alone.
    Nothing,
    /// The key files of LUKS volumes.
    LuksKeys,
    /// Every one.
    All,
}

impl Needed {
    fn wants(self, path: &JsonPath) -> bool {
        use flint_go::tree::Seg;
        match self {
            Needed::Nothing => false,
            Needed::All => true,
            Needed::LuksKeys => matches!(
                path.segs(),
                [Seg::Key(a), Seg::Key(b), ..] if a == "storage" && b == "luks"
            ),
        }
    }
}

/// Everything fetched, by the JSON path of the resource in the config.
#[derive(Debug, Default, Clone)]
pub struct Fetched {
    pub items: Vec<FetchedResource>,
    index: HashMap<JsonPath, usize>,
}

impl Fetched {
    pub fn get(&self, path: &JsonPath) -> Option<&Blob> {
        self.index.get(path).map(|&i| &self.items[i].data)
    }

    /// Adds bytes the run made itself (generated LUKS keys) under the path of a config entry.
    pub fn add(&mut self, path: JsonPath, data: Vec<u8>) {
        self.push(FetchedResource {
            path,
            data: data.into(),
            id: None,
        });
    }

    fn push(&mut self, r: FetchedResource) {
        self.index.insert(r.path.clone(), self.items.len());
        self.items.push(r);
    }

    pub fn total_bytes(&self) -> u64 {
        self.items.iter().map(|r| r.data.len()).sum()
    }

    /// The downloaded resources, by identity, for the keep-store.
    pub(crate) fn downloads(&self) -> impl Iterator<Item = (&str, &Blob)> {
        (self.items.iter()).filter_map(|r| Some((r.id.as_deref()?, &r.data)))
    }
}

/// A failed fetch: which entry, which URL (credentials removed), what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FetchError {
    pub path: JsonPath,
    pub url: String,
    pub message: String,
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: fetching {}: {}", self.path, self.url, self.message)
    }
}

/// The resources of `config` that name a source, with their paths.
pub(crate) fn resources(config: &Config) -> Vec<(JsonPath, &Resource)> {
    listed(config).map(|(p, r)| (p.path(), r)).collect()
}

/// The resources of `config` fetched in the files' time: references (merge, replace, CAs)
/// were fetched while the config was acquired.
fn listed(config: &Config) -> impl Iterator<Item = (flint_ignition::resources::Place, &Resource)> {
    (config.resources())
        .filter(|(p, r)| !p.is_reference() && r.source.as_deref().is_some_and(|s| !s.is_empty()))
}

/// The identities of the downloads `config` asks for, in config order: what a keep-store
/// is stamped with ([`crate::keep::stamp`]).
pub(crate) fn identities(config: &Config) -> impl Iterator<Item = String> + '_ {
    listed(config)
        .filter(|(_, r)| !is_data(r))
        .map(|(_, r)| resource_key(r))
}

fn finish_of(r: &Resource) -> Finish<'_> {
    Finish {
        gzip: r.compression.as_deref() == Some("gzip"),
        hash: r.verification.hash.as_deref(),
    }
}

/// `data:` URLs need no download: decoded where they are used, not shared.
fn is_data(r: &Resource) -> bool {
    r.source
        .as_deref()
        .is_some_and(|s| s.len() >= 5 && s[..5].eq_ignore_ascii_case("data:"))
}

/// Fetches the resources of `config` that `need` names; those `keep` holds are taken from
/// it, those it knows the hash of are checked against it. The first failure (in config
/// order) is returned.
pub(crate) fn fetch_all(
    config: &Config,
    fetcher: &Fetcher,
    need: Needed,
    keep: Option<&Keep>,
) -> Result<Fetched, FetchError> {
    let list: Vec<_> = (resources(config).into_iter())
        .filter(|(p, _)| need.wants(p))
        .collect();
    // What the keep-store holds is not downloaded again.
    let mut done: Vec<Option<Result<Blob, String>>> = (list.iter())
        .map(|(_, r)| keep.filter(|_| !is_data(r))?.get(&resource_key(r)))
        .collect();
    let pending = (list.iter().zip(&done))
        .filter(|((_, r), d)| d.is_none() && !is_data(r))
        .map(|((_, r), _)| *r);
    let (groups, group_of) = group(pending);
    let results = download(&groups, fetcher);
    // Inline data is decoded (and checked) on every core: a config of inline files is
    // megabytes of it.
    {
        use rayon::prelude::*;
        (list.par_iter().zip(done.par_iter_mut()))
            .filter(|((_, r), _)| is_data(r))
            .for_each(|((_, r), d)| *d = Some(fetcher.fetch_blob(r)));
    }
    let mut fetched = Fetched::default();
    for ((p, r), done) in list.into_iter().zip(done) {
        let mut id = None;
        let done = done.unwrap_or_else(|| {
            let key = resource_key(r);
            let g = group_of[&download_key(r)];
            let f = finish_of(r);
            let way = groups[g].1.iter().position(|x| *x == f).expect("listed");
            let got = match results[g].as_ref().expect("every group fetched") {
                Ok(ways) => ways[way].clone(),
                Err(e) => Err(e.clone()),
            };
            // Fetched again: it must be what the fetch stage verified.
            let got = got.and_then(|b| match keep {
                Some(k) => k.check(&key, &b).map(|_| b),
                None => Ok(b),
            });
            id = Some(key);
            got
        });
        match done {
            Ok(data) => fetched.push(FetchedResource { path: p, data, id }),
            Err(message) => {
                return Err(FetchError {
                    path: p,
                    url: redact(r.source.as_deref().unwrap_or("")),
                    message,
                });
            }
        }
    }
    Ok(fetched)
}

/// A download, with the distinct ways its entries finish it.
type Group<'a> = (&'a Resource, Vec<Finish<'a>>);

/// Each distinct download of `list` once, and the group of each download key.
fn group<'a>(list: impl Iterator<Item = &'a Resource>) -> (Vec<Group<'a>>, HashMap<String, usize>) {
    let mut groups: Vec<(&Resource, Vec<Finish>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for r in list {
        let g = *group_of.entry(download_key(r)).or_insert_with(|| {
            groups.push((r, Vec::new()));
            groups.len() - 1
        });
        let f = finish_of(r);
        if !groups[g].1.contains(&f) {
            groups[g].1.push(f);
        }
    }
    (groups, group_of)
}

/// Downloads each group, [`WORKERS`] at a time.
fn download(groups: &[Group], fetcher: &Fetcher) -> Vec<Option<Outcomes>> {
    let results: Mutex<Vec<Option<Outcomes>>> = Mutex::new(vec![None; groups.len()]);
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..WORKERS.min(groups.len()) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().expect("no worker panics holding it");
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some((r, finishes)) = groups.get(i) else {
                        break;
                    };
                    let res = fetcher.fetch_blobs(r, finishes);
                    results.lock().expect("no worker panics holding it")[i] = Some(res);
                }
            });
        }
    });
    results.into_inner().expect("workers are done")
}
