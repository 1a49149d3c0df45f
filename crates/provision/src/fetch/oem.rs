//! `oem://` URLs (Flatcar's Ignition patches 0012–0015) and the OEM partition itself.
//!
//! `oem:///PATH` names the file PATH of the OEM partition. Flatcar's Ignition reads it from
//! the initramfs's lookaside directory `/oem` (`IGNITION_OEM_LOOKASIDE_DIR`), which Flatcar's
//! initramfs fills before Ignition runs. flint reads it there too and, when it is not there,
//! from the filesystem labelled `OEM` itself, mounted read-only for the read, as Ignition did
//! before OEM URLs were dropped upstream: `flint apply` then works on a machine whose
//! initramfs mounts nothing at `/oem`.
//!
//! The path is taken as Go's `net/url` gives it (host, query and fragment ignored,
//! percent-escapes decoded) and cleaned lexically at the root, so `oem:///../x` is `/x` of
//! the partition. A symbolic link in the lookaside directory is followed, as upstream; one on
//! the mounted partition may not lead out of it.

use crate::system::beneath::{Dir, Refused, private_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The label of Flatcar's OEM partition's filesystem.
pub(crate) const LABEL: &str = "OEM";

/// Where OEM files are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oem {
    /// The lookaside directory (`IGNITION_OEM_LOOKASIDE_DIR`, default `/oem`).
    pub lookaside: PathBuf,
    /// The filesystem label of the OEM partition (`FLINT_OEM_LABEL`, a test hook; `OEM`).
    pub label: String,
}

impl Default for Oem {
    fn default() -> Self {
        Oem {
            lookaside: "/oem".into(),
            label: LABEL.into(),
        }
    }
}

impl Oem {
    /// From `IGNITION_OEM_LOOKASIDE_DIR` (Flatcar's Ignition's variable) and
    /// `FLINT_OEM_LABEL`.
    pub fn from_env() -> Oem {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let d = Oem::default();
        Oem {
            lookaside: var("IGNITION_OEM_LOOKASIDE_DIR")
                .map(PathBuf::from)
                .unwrap_or(d.lookaside),
            label: var("FLINT_OEM_LABEL").unwrap_or(d.label),
        }
    }

    /// The OEM partition's filesystem.
    pub fn partition(&self) -> Partition {
        Partition {
            label: self.label.clone(),
        }
    }

    /// The file `url` (an `oem:` URL) names, at most `limit` bytes.
    pub fn get(&self, url: &str, limit: u64) -> Result<Vec<u8>, String> {
        let rel = path_of(url)?;
        let shown = format!("/{}", rel.display());
        match read_limited(&self.lookaside.join(&rel), limit) {
            Ok(b) => return Ok(b),
            Err(Missing::No(e)) => return Err(format!("reading OEM file {shown}: {e}")),
            Err(Missing::Yes) => {}
        }
        let part = self.partition();
        let dev = part
            .device(crate::system::devices::timeout())
            .map_err(|e| {
                format!(
                    "OEM file {shown} is not in {} and {e}",
                    self.lookaside.display()
                )
            })?;
        part.with_mounted(&dev, false, |dir| match dir.read(&rel, limit) {
            Ok(b) => Ok(b),
            Err(Refused::Missing) => Err(format!(
                "OEM file {shown} not found (neither in {} nor on the OEM partition {})",
                self.lookaside.display(),
                dev.display()
            )),
            Err(Refused::Escapes) => Err(format!(
                "OEM file {shown}: a symbolic link on the OEM partition leads outside it"
            )),
            Err(Refused::Io(e)) => Err(format!("reading OEM file {shown}: {e}")),
        })
    }
}

/// The path inside the OEM partition that `url` names, relative and cleaned.
pub(crate) fn path_of(url: &str) -> Result<PathBuf, String> {
    let (scheme, rest) = url.split_once(':').ok_or("not a URL")?;
    if !scheme.eq_ignore_ascii_case("oem") {
        return Err(format!("not an oem URL: scheme {scheme:?}"));
    }
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    // oem://HOST/PATH: the host is ignored, as upstream (which only reads the path).
    let path = match rest.strip_prefix("//") {
        Some(after) => after.find('/').map_or("", |i| &after[i..]),
        None => rest,
    };
    let path = unescape(path)?;
    if !path.starts_with('/') {
        return Err(format!("oem path is not absolute: {path:?}"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Ok(parts.iter().collect())
}

/// Go's path unescaping: `%XX` decoded, a malformed escape refused.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    format!(
                        "invalid URL escape {:?}",
                        String::from_utf8_lossy(&b[i..(i + 3).min(b.len())])
                    )
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the oem path is not UTF-8".into())
}

enum Missing {
    Yes,
    No(String),
}

fn read_limited(p: &Path, limit: u64) -> Result<Vec<u8>, Missing> {
    use std::io::Read;
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Missing::Yes),
        Err(e) => return Err(Missing::No(e.to_string())),
    };
    let meta = f.metadata().map_err(|e| Missing::No(e.to_string()))?;
    if meta.is_dir() {
        return Err(Missing::No("is a directory".into()));
    }
    let mut out = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| Missing::No(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(Missing::No(format!(
            "larger than the {limit}-byte resource limit"
        )));
    }
    Ok(out)
}

/// The OEM partition: the filesystem labelled [`LABEL`], mounted only while it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub label: String,
}

impl Partition {
    /// The device holding it, waiting up to `wait` for it to appear.
    pub fn device(&self, wait: Duration) -> Result<PathBuf, String> {
        let alias = format!("/dev/disk/by-label/{}", self.label);
        crate::system::devices::resolve(&alias, wait)
            .map_err(|_| format!("there is no OEM partition ({alias} did not appear)"))
    }

    /// Mounts `dev` (read-write with `write`, else read-only) on a private directory made
    /// fresh for it, runs `body` on the mounted filesystem (held open: every path below it
    /// is opened beneath it, see [`Dir`]), unmounts. The directory is mounted on through
    /// the handle it was opened with, so nothing put at its path since is mounted on.
    pub fn with_mounted<T>(
        &self,
        dev: &Path,
        write: bool,
        body: impl FnOnce(&Dir) -> Result<T, String>,
    ) -> Result<T, String> {
        let kind = match crate::system::probe::probe(dev) {
            Ok(Some(f)) if !f.kind.is_empty() => f.kind,
            Ok(_) => {
                return Err(format!(
                    "no filesystem on the OEM partition {}",
                    dev.display()
                ));
            }
            Err(e) => return Err(e.to_string()),
        };
        let dir = private_dir(&std::env::temp_dir(), "flint-oem")
            .map_err(|e| format!("making a directory to mount the OEM partition on: {e}"))?;
        let r = mount_and_run(dev, &dir, &kind, write, body);
        let _ = std::fs::remove_dir(&dir);
        r
    }
}

/// [`Partition::with_mounted`] once its directory is made.
fn mount_and_run<T>(
    dev: &Path,
    dir: &Path,
    kind: &str,
    write: bool,
    body: impl FnOnce(&Dir) -> Result<T, String>,
) -> Result<T, String> {
    use crate::system::mount;
    let opts: Vec<String> = if write {
        vec!["nodev".into()]
    } else {
        vec!["ro".into(), "nodev".into()]
    };
    let failed = |e: &dyn std::fmt::Display| {
        format!(
            "mounting the OEM partition {} ({kind}){}: {e}",
            dev.display(),
            if write { "" } else { " read-only" }
        )
    };
    let handle = mount::open_beneath(dir, &[], false).map_err(|e| failed(&format!("{e:?}")))?;
    let below = Dir::open(dir)
        .and_then(|d| d.device())
        .map_err(|e| failed(&e))?;
    mount::mount_on(dev, &handle, kind, &opts).map_err(|e| failed(&e))?;
    // The filesystem now at the directory, held open for the body; it must be the one just
    // mounted (another device than the directory's own).
    let top = Dir::open(dir).and_then(|d| Ok((d.device()? != below).then_some(d)));
    let r = match top {
        Ok(Some(top)) => body(&top),
        Ok(None) => Err(failed(&"the mount did not take place on its directory")),
        Err(e) => Err(failed(&e)),
    };
    if let Err(e) = mount::umount_patiently(dir) {
        mount::release(dir);
        return Err(format!("unmounting the OEM partition: {e}"));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_flatcar_reads_them() {
        let p = |u: &str| path_of(u).map(|p| p.display().to_string());
        assert_eq!(p("oem:///config.ign").unwrap(), "config.ign");
        assert_eq!(p("oem:///sub/../sub/./f.txt").unwrap(), "sub/f.txt");
        assert_eq!(p("OEM:///a").unwrap(), "a");
        assert_eq!(p("oem://host/a/b").unwrap(), "a/b");
        assert_eq!(p("oem:///a?x=1#frag").unwrap(), "a");
        assert_eq!(p("oem:/a").unwrap(), "a");
        assert_eq!(p("oem:///a%20b").unwrap(), "a b");
        assert_eq!(p("oem:///../../../etc/hostname").unwrap(), "etc/hostname");
        assert_eq!(p("oem:///").unwrap(), "");
        assert!(p("oem:sub/f").unwrap_err().contains("not absolute"));
        assert!(p("oem://host").unwrap_err().contains("not absolute"));
        assert!(p("oem:///a%zz").unwrap_err().contains("invalid URL escape"));
        assert!(p("http://x/a").is_err());
    }

    #[test]
    fn reads_the_lookaside_directory() {
        let t = std::env::temp_dir().join(format!("flint-oem-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(t.join("sub/dir")).unwrap();
        std::fs::write(t.join("sub/f"), b"oem data").unwrap();
        let oem = Oem {
            lookaside: t.clone(),
            label: format!("flint-none-{}", std::process::id()),
        };
        assert_eq!(oem.get("oem:///sub/f", 100).unwrap(), b"oem data");
        assert!(oem.get("oem:///sub/f", 3).unwrap_err().contains("limit"));
        assert!(
            oem.get("oem:///sub/dir", 100)
                .unwrap_err()
                .contains("is a directory")
        );
        std::fs::remove_dir_all(&t).unwrap();
    }
}
