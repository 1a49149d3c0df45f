//! Fetching every resource the final config refers to, before anything is touched: file
//! contents and appended fragments, LUKS key files. Each distinct resource is fetched once;
//! independent fetches run concurrently.

use crate::fetch::blob::{Blob, Finish};
use crate::fetch::{Fetcher, url::redact};
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
        });
    }

    fn push(&mut self, r: FetchedResource) {
        self.index.insert(r.path.clone(), self.items.len());
        self.items.push(r);
    }

    pub fn total_bytes(&self) -> u64 {
        self.items.iter().map(|r| r.data.len()).sum()
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
    // References (merge, replace, CAs) were fetched while the config was acquired.
    (config.resources())
        .filter(|(p, r)| !p.is_reference() && r.source.as_deref().is_some_and(|s| !s.is_empty()))
        .map(|(p, r)| (p.path(), r))
        .collect()
}

/// Identity of a download: the same source asked with the same headers gives the same
/// bytes (each entry then decompresses and verifies them its own way).
fn fetch_key(r: &Resource) -> String {
    let headers: Vec<String> = r
        .http_headers
        .iter()
        .map(|h| format!("{}={}", h.name, h.value.as_deref().unwrap_or("")))
        .collect();
    format!(
        "{}\n{}",
        r.source.as_deref().unwrap_or(""),
        headers.join("\n")
    )
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

/// Fetches all resources of `config`; the first failure (in config order) is returned.
pub(crate) fn fetch_all(config: &Config, fetcher: &Fetcher) -> Result<Fetched, FetchError> {
    let list = resources(config);
    // Each distinct download once, with the distinct ways its entries finish it.
    let mut groups: Vec<(&Resource, Vec<Finish>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for (_, r) in list.iter().filter(|(_, r)| !is_data(r)) {
        let g = *group_of.entry(fetch_key(r)).or_insert_with(|| {
            groups.push((r, Vec::new()));
            groups.len() - 1
        });
        let f = finish_of(r);
        if !groups[g].1.contains(&f) {
            groups[g].1.push(f);
        }
    }
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
    let results = results.into_inner().expect("workers are done");
    // Inline data is decoded (and checked) on every core: a config of inline files is
    // megabytes of it.
    let mut inline: Vec<Option<Result<Blob, String>>> = {
        use rayon::prelude::*;
        list.par_iter()
            .map(|(_, r)| is_data(r).then(|| fetcher.fetch_blob(r)))
            .collect()
    };
    let mut fetched = Fetched::default();
    for (k, (p, r)) in list.into_iter().enumerate() {
        let done = if let Some(done) = inline[k].take() {
            done
        } else {
            let g = group_of[&fetch_key(r)];
            let f = finish_of(r);
            let way = groups[g].1.iter().position(|x| *x == f).expect("listed");
            match results[g].as_ref().expect("every group fetched") {
                Ok(ways) => ways[way].clone(),
                Err(e) => Err(e.clone()),
            }
        };
        match done {
            Ok(data) => fetched.push(FetchedResource { path: p, data }),
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
