//! Upstream's state file (`ignition --state-file`, /run/ignition/state): what one stage run
//! leaves for the next, each stage being a process of its own. Read at the start of a run
//! (missing: empty), written after a stage that succeeded, in upstream's form (Go's
//! `json.Marshal` and a newline, 0600 in a 0700 directory), so that upstream's tools and
//! flint read each other's.
//!
//! flint keeps here what upstream's format holds: the configs fetched (for the result record),
//! the mount points the mount stage made (for the files stage), the files a platform handed
//! over. Generated LUKS keys and the partitions flint made stay in flint's state directory
//! beside the file: upstream's format holds keys as text, flint's are random bytes.

use flint_ignition::types::File;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The state, field for field as upstream's; `None` is Go's nil (written `null`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct State {
    pub fetched_configs: Option<Vec<FetchedConfig>>,
    /// Upstream's generated LUKS keys, by their path in the root; flint's are elsewhere
    /// (see the module's comment), and these are kept as they were read.
    pub luks_persist_key_files: Option<BTreeMap<String, String>>,
    /// Directories the mount stage created, as paths in the root.
    pub notated_directories: Option<Vec<String>>,
    /// Files a platform handed over with the config, for the files stage.
    pub provider_output_files: Option<Vec<File>>,
    pub luks_persist_volume_key_files: Option<BTreeMap<String, String>>,
}

/// A config a fetch stage read: `kind` `base` or `user`; `source` the provider (`system`,
/// `cmdline`, a platform), or for a referenced config its URL's path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FetchedConfig {
    pub kind: String,
    pub source: String,
    pub referenced: bool,
}

impl State {
    /// The state in `path`; a missing file is an empty state. The error is upstream's
    /// wording (`reading state file: …`, `parsing state file: …`).
    pub fn load(path: &Path) -> Result<State, String> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::default()),
            Err(e) => return Err(format!("reading state file: {}", go_io_error(path, &e))),
        };
        // Go's syntax messages first (`invalid character 'g' looking for beginning of
        // value`), as Go's decoder checks the syntax before it decodes.
        if let Err(e) = flint_go::json::parse(&bytes) {
            return Err(format!("parsing state file: {}", e.message));
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("parsing state file: {e}"))
    }

    /// Writes the state to `path` as upstream does: its directory made (0700), the file
    /// replaced whole (0600).
    pub(crate) fn save(&self, path: &Path) -> Result<(), String> {
        let mut json = flint_ignition::types::to_encoding_json(self);
        json.push(b'\n');
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| format!("creating directory for state file: {e}"))?;
        }
        crate::write::write_atomic(path, &json, 0o600)
            .map_err(|e| format!("writing state file: {}", go_io_error(path, &e)))
    }

    /// Records a config a fetch stage read.
    pub(crate) fn fetched(&mut self, kind: &str, source: &str, referenced: bool) {
        self.fetched_configs
            .get_or_insert_with(Vec::new)
            .push(FetchedConfig {
                kind: kind.into(),
                source: source.into(),
                referenced,
            });
    }

    /// Whether a user config was fetched (not only base configs): the result record says so.
    pub(crate) fn user_config_provided(&self) -> bool {
        (self.fetched_configs.iter().flatten()).any(|c| c.kind == "user")
    }
}

/// Where flint keeps what upstream's state file cannot hold: `flint/` beside the file
/// (/run/ignition/flint for /run/ignition/state).
pub fn flint_dir(state_file: &Path) -> PathBuf {
    let dir = state_file.parent().filter(|d| !d.as_os_str().is_empty());
    dir.unwrap_or(Path::new(".")).join("flint")
}

/// The path of `url` as Go's `url.Parse` gives it (upstream records a referenced config by
/// it): empty for an opaque URL (`data:,…`), unescaped, without the query or fragment.
pub(crate) fn url_path(url: &str) -> String {
    let rest = url.split(['#', '?']).next().unwrap_or("");
    let after_scheme = match rest.split_once(':') {
        Some((scheme, r)) if is_scheme(scheme) => r,
        _ => rest,
    };
    let path = match after_scheme.strip_prefix("//") {
        Some(r) => r.find('/').map_or("", |i| &r[i..]),
        // `scheme:opaque` has no path; `scheme:/p` has.
        None if after_scheme.starts_with('/') || !rest.contains(':') => after_scheme,
        None => "",
    };
    percent_decode(path)
}

fn is_scheme(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An I/O error on `path` worded as Go's `*PathError` (`open /x: no such file or
/// directory`), for messages upstream's users know.
pub fn go_io_error(path: &Path, e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => {
            let t = std::io::Error::from_raw_os_error(code).to_string();
            let t = t.split(" (os error").next().unwrap_or("").to_string();
            let mut c = t.chars();
            c.next()
                .map(|f| f.to_lowercase().chain(c).collect())
                .unwrap_or_default()
        }
        None => e.to_string(),
    };
    format!("open {}: {text}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_upstreams_form() {
        // As upstream's fetch-offline stage leaves it.
        let text = r#"{"fetchedConfigs":[{"kind":"base","source":"system","referenced":false},{"kind":"user","source":"file","referenced":false}],"luksPersistKeyFiles":null,"notatedDirectories":null,"providerOutputFiles":null,"luksPersistVolumeKeyFiles":null}"#;
        let t = std::env::temp_dir().join(format!("flint-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        let path = t.join("run/state");
        assert_eq!(State::load(&path).unwrap(), State::default());
        let mut s = State::default();
        s.fetched("base", "system", false);
        s.fetched("user", "file", false);
        assert!(s.user_config_provided());
        s.save(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{text}\n"));
        assert_eq!(State::load(&path).unwrap(), s);
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(&t.join("run"))), (0o600, 0o700));
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(
            State::load(&path).unwrap_err(),
            "parsing state file: invalid character 'g' looking for beginning of value"
        );
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn url_paths_as_go_parses_them() {
        assert_eq!(url_path("data:,%7B%7D"), "");
        assert_eq!(url_path("http://h:8/a/b%20c.ign?x=1#f"), "/a/b c.ign");
        assert_eq!(url_path("s3://bucket/key"), "/key");
        assert_eq!(url_path("oem:///user.ign"), "/user.ign");
        assert_eq!(url_path("http://h"), "");
    }

    #[test]
    fn io_errors_in_gos_words() {
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            go_io_error(Path::new("/x"), &e),
            "open /x: no such file or directory"
        );
        assert_eq!(
            flint_dir(Path::new("/run/ignition/state")),
            Path::new("/run/ignition/flint")
        );
    }
}
