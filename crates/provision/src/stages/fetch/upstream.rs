//! The fetch stage as upstream's `ignition` runs it, one stage a process
//! ([`Options::state_file`] set). The stages `fetch` and `fetch-offline` always fetch the
//! user config from the platform chain and leave it in the cache as upstream does: the user
//! config alone (its references resolved, no base configs), in Go's `encoding/json` form,
//! mode 0640; other programs read that file (Flatcar's units test for it, scripts read it
//! with jq). Every other stage reads the cache and merges the system's base configs under it
//! again, as upstream's do. The state file records what was fetched, and carries the files a
//! platform handed over to the files stage.

use super::{Wanted, check_final, combine, empty_config, fail, fetch_resources, find, render_user};
use crate::acquire::{Budget, Source};
use crate::fetch::Fetcher;
use crate::stage::{Acquired, Options, StageError};
use crate::state::{State, go_io_error, url_path};
use std::path::Path;
use std::time::Instant;

/// The fetch stages: the user config fetched, cached and recorded in `state`.
pub(super) fn fetch(
    opts: &Options,
    state: &mut State,
    wanted: Wanted,
) -> Result<Acquired, StageError> {
    let start = Instant::now();
    let budget = Budget::from_env();
    let mut notes = Vec::new();
    state.fetched("base", "system", false);
    let found = find(opts, Fetcher::with(opts.fetch.clone()), &budget, &mut notes)?;
    if found.user_provided {
        state.fetched("user", found.provider, false);
    }
    let user = render_user(found.user, &found.fetcher, &budget)?;
    for src in budget.referenced() {
        state.fetched("user", &url_path(&src), true);
    }
    let cached = match &user {
        Some(u) => flint_ignition::types::to_encoding_json(u),
        None => flint_ignition::types::to_encoding_json(&empty_config()),
    };
    if !found.files.is_empty() {
        state.provider_output_files = Some(found.files.clone());
    }
    let (config, fetcher) = combine([found.base, user], found.files, &found.fetcher, &budget)?;
    check_final(&config)?;
    // Cached before the resources are fetched: a fetch-offline stage whose config is local
    // but whose files need the network leaves the cache and asks for the network, as
    // upstream's does; the later stages fetch them.
    if let Some(cache) = &opts.cache {
        write_cache(cache, &cached)?;
    }
    let fetched = fetch_resources(&config, &fetcher, wanted, &mut notes)?;
    notes.extend(fetcher.take_notes());
    Ok(Acquired {
        config,
        fetched,
        fetcher,
        origin: found.origin,
        took: start.elapsed(),
        user_provided: found.user_provided,
        platform: found.platform,
        notes,
    })
}

/// Any other stage: the user config the fetch stages cached, the system's base configs
/// under it, the platform's files from `state`.
pub(super) fn from_cache(
    opts: &Options,
    state: &mut State,
    cache: &Path,
    wanted: Wanted,
) -> Result<Acquired, StageError> {
    let start = Instant::now();
    let budget = Budget::from_env();
    let mut notes = Vec::new();
    state.fetched("base", "system", false);
    let platform = match &opts.source {
        Source::Platform(name) => crate::platform::get(name),
        _ => None,
    };
    let base = crate::acquire::system_base(
        &opts.places.system,
        platform.map_or("", |p| p.name()),
        &mut notes,
    )
    .map_err(|e| fail(e.path, e.message))?;
    let bytes = std::fs::read(cache).map_err(|e| {
        fail(
            None,
            format!("failed to acquire config: {}", go_io_error(cache, &e)),
        )
    })?;
    // Upstream reads its cache without checking it; flint checks what it reads (the final
    // config is checked again below).
    let user = flint_ignition::parse(&bytes)
        .map_err(|d| fail(None, format!("failed to parse cached config: {d}")))?
        .config;
    let mut fetcher = Fetcher::with(opts.fetch.clone());
    wanted.prime(&fetcher);
    if let Some(p) = platform {
        fetcher.credentials = p.credentials();
    }
    let files = state.provider_output_files.clone().unwrap_or_default();
    let (config, fetcher) = combine([base, Some(user)], files, &fetcher, &budget)?;
    check_final(&config)?;
    let fetched = fetch_resources(&config, &fetcher, wanted, &mut notes)?;
    notes.extend(fetcher.take_notes());
    Ok(Acquired {
        config,
        fetched,
        fetcher,
        origin: format!("cache {}", cache.display()),
        took: start.elapsed(),
        user_provided: state.user_config_provided(),
        platform,
        notes,
    })
}

/// Writes the cache whole (a reader never sees half of it), 0640, as upstream does.
fn write_cache(cache: &Path, json: &[u8]) -> Result<(), StageError> {
    if let Some(dir) = cache.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    crate::write::write_atomic(cache, json, 0o640).map_err(|e| {
        let message = format!("failed to write cached config: {}", go_io_error(cache, &e));
        fail(None, message)
    })
}
