//! Fetching every resource the final config refers to, before anything is touched: file
//! contents and appended fragments, LUKS key files. Each distinct resource is fetched once;
//! independent fetches run concurrently.

use crate::fetch::{Fetcher, url::redact};
use crate::ignition::types::{Config, Resource};
use crate::tree::JsonPath;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A fetch's bytes, or why there are none.
type Outcome = Result<Arc<Vec<u8>>, String>;

/// Fetches run at most this many at a time.
const WORKERS: usize = 8;

/// A resource fetched for the entry at `path`.
#[derive(Debug, Clone)]
pub struct FetchedResource {
    pub path: JsonPath,
    pub url: String,
    pub data: Arc<Vec<u8>>,
}

/// Everything fetched, by the JSON path of the resource in the config.
#[derive(Debug, Default, Clone)]
pub struct Fetched {
    pub items: Vec<FetchedResource>,
    index: HashMap<JsonPath, usize>,
}

impl Fetched {
    pub fn get(&self, path: &JsonPath) -> Option<&Arc<Vec<u8>>> {
        self.index.get(path).map(|&i| &self.items[i].data)
    }

    /// Adds bytes the run made itself (generated LUKS keys) under the path of a config entry.
    pub fn add(&mut self, path: JsonPath, url: &str, data: Vec<u8>) {
        self.push(FetchedResource {
            path,
            url: url.into(),
            data: Arc::new(data),
        });
    }

    fn push(&mut self, r: FetchedResource) {
        self.index.insert(r.path.clone(), self.items.len());
        self.items.push(r);
    }

    pub fn total_bytes(&self) -> u64 {
        self.items.iter().map(|r| r.data.len() as u64).sum()
    }
}

/// A failed fetch: which entry, which URL (credentials removed), what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchError {
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
pub fn resources(config: &Config) -> Vec<(JsonPath, &Resource)> {
    let mut out = Vec::new();
    let files = JsonPath::root().key("storage").key("files");
    for (i, f) in config.storage.files.iter().enumerate() {
        out.push((files.index(i).key("contents"), &f.contents));
        for (j, a) in f.append.iter().enumerate() {
            out.push((files.index(i).key("append").index(j), a));
        }
    }
    let luks = JsonPath::root().key("storage").key("luks");
    for (i, l) in config.storage.luks.iter().enumerate() {
        out.push((luks.index(i).key("keyFile"), &l.key_file));
    }
    out.retain(|(_, r)| r.source.as_deref().is_some_and(|s| !s.is_empty()));
    out
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

/// Fetches all resources of `config`; the first failure (in config order) is returned.
pub fn fetch_all(config: &Config, fetcher: &Fetcher) -> Result<Fetched, FetchError> {
    let list = resources(config);
    let mut unique: Vec<(String, &Resource, JsonPath)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (p, r) in &list {
        let k = fetch_key(r);
        if seen.insert(k.clone()) {
            unique.push((k, r, p.clone()));
        }
    }
    let results: Mutex<HashMap<String, Outcome>> = Mutex::new(HashMap::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..WORKERS.min(unique.len()) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().expect("no worker panics holding it");
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some((k, r, _)) = unique.get(i) else {
                        break;
                    };
                    let res = fetcher.fetch_raw(r).map(Arc::new);
                    results
                        .lock()
                        .expect("no worker panics holding it")
                        .insert(k.clone(), res);
                }
            });
        }
    });
    let results = results.into_inner().expect("workers are done");
    let mut fetched = Fetched::default();
    for (p, r) in list {
        let url = redact(r.source.as_deref().unwrap_or(""));
        let done = results[&fetch_key(r)]
            .clone()
            .and_then(|raw| fetcher.finish(r, Arc::unwrap_or_clone(raw)));
        match done {
            Ok(data) => fetched.push(FetchedResource {
                path: p,
                url,
                data: Arc::new(data),
            }),
            Err(message) => {
                return Err(FetchError {
                    path: p,
                    url,
                    message,
                });
            }
        }
    }
    Ok(fetched)
}
