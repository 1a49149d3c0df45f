//! What a file is to hold: pieces (a fetched resource, appended fragments, the file's own
//! current bytes) one after another. Written and compared against the disk a chunk at a
//! time, so a large spooled resource never has to fit in memory.

use crate::fetch::blob::Blob;
use std::fs::File;
use std::io::Read;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Content(pub Vec<Blob>);

impl From<Vec<u8>> for Content {
    fn from(v: Vec<u8>) -> Content {
        let mut c = Content::default();
        c.push(v.into());
        c
    }
}

impl Content {
    pub(crate) fn push(&mut self, b: Blob) {
        if !b.is_empty() {
            self.0.push(b);
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.0.iter().map(Blob::len).sum()
    }

    /// All of it in memory (for a small file the plan reads, an account database).
    pub(crate) fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        let mut v = Vec::new();
        for b in &self.0 {
            v.extend(b.to_vec()?);
        }
        Ok(v)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the pieces to `out`.
    pub(crate) fn write_to(&self, out: &mut File) -> std::io::Result<()> {
        self.0.iter().try_for_each(|b| b.write_to(out))
    }

    /// Whether the regular file at `path`, of `size` bytes as just observed, holds exactly
    /// these bytes. (The size given spares a look at the file: thousands of unchanged files
    /// are compared on every run.)
    pub(crate) fn same_as_file(&self, path: &Path, size: u64) -> std::io::Result<bool> {
        use std::os::unix::fs::OpenOptionsExt;
        if size != self.len() {
            return Ok(false);
        }
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        self.matches_from(&mut f)
    }

    /// Whether the file at `path` ends with these bytes.
    pub(crate) fn ends_file(&self, path: &Path) -> std::io::Result<bool> {
        use std::io::{Seek, SeekFrom};
        let mut f = File::open(path)?;
        let (have, want) = (f.metadata()?.len(), self.len());
        if have < want {
            return Ok(false);
        }
        f.seek(SeekFrom::Start(have - want))?;
        self.matches_from(&mut f)
    }

    /// Whether `f` reads as these bytes from its position on (as many as there are).
    fn matches_from(&self, f: &mut File) -> std::io::Result<bool> {
        let mut buf = vec![0u8; (1 << 16).min(self.len() as usize)];
        let mut same = true;
        for b in &self.0 {
            b.each_chunk(|chunk| {
                for part in chunk.chunks(buf.len().max(1)) {
                    let got = &mut buf[..part.len()];
                    match f.read_exact(got) {
                        Ok(()) if got == part => {}
                        Ok(()) => same = false,
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => same = false,
                        Err(e) => return Err(e),
                    }
                    if !same {
                        return Ok(false);
                    }
                }
                Ok(true)
            })?;
            if !same {
                break;
            }
        }
        Ok(same)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_and_writes_pieces() {
        let dir = std::env::temp_dir().join(format!("flint-content-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"hello world").unwrap();
        let mut c = Content::from(b"hello".to_vec());
        c.push(b" world".to_vec().into());
        c.push(Vec::new().into());
        assert_eq!(c.len(), 11);
        assert!(c.same_as_file(&p, 11).unwrap());
        assert!(
            !Content::from(b"hello worle".to_vec())
                .same_as_file(&p, 11)
                .unwrap()
        );
        assert!(
            !Content::from(b"hello".to_vec())
                .same_as_file(&p, 11)
                .unwrap()
        );
        assert!(Content::from(b"world".to_vec()).ends_file(&p).unwrap());
        assert!(!Content::from(b"worl".to_vec()).ends_file(&p).unwrap());
        // Sizes that differ are not read at all.
        assert!(
            !Content::default()
                .same_as_file(&dir.join("none"), 3)
                .unwrap()
        );
        std::os::unix::fs::symlink("f", dir.join("link")).unwrap();
        assert!(c.same_as_file(&dir.join("link"), 11).is_err());
        let mut out = File::create(dir.join("g")).unwrap();
        c.write_to(&mut out).unwrap();
        assert_eq!(std::fs::read(dir.join("g")).unwrap(), b"hello world");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
