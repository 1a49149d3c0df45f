//! Local files: paths relative to `--files-dir`, never outside it.

use flint_ignition::validate::paths::clean;
use std::path::{Path, PathBuf};

pub const NO_FILES_DIR: &str =
    "local file paths are relative to a files directory that must be specified with -d/--files-dir";
pub const TRAVERSAL: &str = "local file path traverses outside the files directory";

/// The files directory the config may read from.
#[derive(Debug, Clone, Copy)]
pub struct FilesDir<'a> {
    pub dir: Option<&'a Path>,
}

/// Go's rendering of an OS error: `open files/x: no such file or directory`.
pub fn go_io_error(op: &str, path: &Path, e: &std::io::Error) -> String {
    // A name holding a NUL never reaches the kernel in Rust; Go's system call refuses it.
    if e.raw_os_error().is_none() && e.kind() == std::io::ErrorKind::InvalidInput {
        return format!("{op} {}: invalid argument", path.display());
    }
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    let text = match chars.next() {
        Some(c) => c.to_lowercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    };
    format!("{op} {}: {text}", path.display())
}

impl FilesDir<'_> {
    /// Resolves `local` below the files directory, lexically, as upstream does.
    pub fn resolve(&self, local: &str) -> Result<PathBuf, String> {
        let Some(dir) = self.dir else {
            return Err(NO_FILES_DIR.into());
        };
        let dir_text = dir.to_string_lossy();
        let joined = clean(&format!("{dir_text}/{local}"));
        let base = clean(&dir_text);
        let inside = if base == "." {
            !(joined == ".." || joined.starts_with("../") || joined.starts_with('/'))
        } else {
            // Upstream looks for the directory's path and a slash at the start: below `/`
            // that is `//`, which no path holds, so `-d /` lets no file but `/` itself in.
            joined == base
                || (base != "/" && flint_ignition::validate::paths::is_below(&joined, &base))
        };
        if !inside {
            return Err(TRAVERSAL.into());
        }
        Ok(PathBuf::from(joined))
    }

    /// Reads the file `local` names.
    pub fn read(&self, local: &str) -> Result<Vec<u8>, String> {
        let path = self.resolve(local)?;
        // Opening a directory succeeds and reading it fails, as Go reports it.
        std::fs::read(&path).map_err(|e| {
            let op = if path.is_dir() { "read" } else { "open" };
            go_io_error(op, &path, &e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confines_to_the_files_dir() {
        let d = FilesDir {
            dir: Some(Path::new("files")),
        };
        assert_eq!(d.resolve("a/b").unwrap(), PathBuf::from("files/a/b"));
        assert_eq!(d.resolve("a/../b").unwrap(), PathBuf::from("files/b"));
        assert_eq!(d.resolve("../in.bu").unwrap_err(), TRAVERSAL);
        assert_eq!(d.resolve("../").unwrap_err(), TRAVERSAL);
        assert_eq!(
            d.resolve("/etc/passwd").unwrap(),
            PathBuf::from("files/etc/passwd")
        );
        assert_eq!(d.resolve(".").unwrap(), PathBuf::from("files"));
        let none = FilesDir { dir: None };
        assert_eq!(none.resolve("x").unwrap_err(), NO_FILES_DIR);
        let e = d.read("does-not-exist").unwrap_err();
        assert_eq!(e, "open files/does-not-exist: no such file or directory");
        let abs = FilesDir {
            dir: Some(Path::new("/srv/files/")),
        };
        assert_eq!(abs.resolve("x").unwrap(), PathBuf::from("/srv/files/x"));
        assert_eq!(abs.resolve("../x").unwrap_err(), TRAVERSAL);
        let root = FilesDir {
            dir: Some(Path::new("/")),
        };
        assert_eq!(root.resolve("etc/hostname").unwrap_err(), TRAVERSAL);
        assert_eq!(root.resolve(".").unwrap(), PathBuf::from("/"));
    }
}
