//! Fetched bytes that may be larger than memory: a resource is hashed and decompressed while
//! it arrives, and kept in memory only while it is small. Past [`MEMORY_LIMIT`] it moves to
//! an unnamed file in the spool directory (`O_TMPFILE`, or a file unlinked at once), so a
//! crashed run leaves nothing behind and a 2 GiB download costs a few hundred KiB of memory.

use sha2::Digest;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest resource kept in memory; anything larger goes to the spool directory.
pub(crate) const MEMORY_LIMIT: usize = 1 << 20;

/// Default spool directory: on disk on an installed system, the initramfs' own root in
/// the initramfs (not `/run`, which systemd caps at a fifth of the memory).
pub(crate) const DEFAULT_SPOOL: &str = "/var/tmp";

/// The bytes of a fetched resource.
#[derive(Debug, Clone)]
pub enum Blob {
    /// Held as the vector it arrived in: made into a slice, it would be copied whole.
    Memory(Arc<Vec<u8>>),
    /// An unnamed file holding `len` bytes, read at offsets (it may be shared).
    Spooled { file: Arc<File>, len: u64 },
}

impl PartialEq for Blob {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Blob::Memory(a), Blob::Memory(b)) => a == b,
            (Blob::Spooled { file: a, .. }, Blob::Spooled { file: b, .. }) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl From<Vec<u8>> for Blob {
    fn from(v: Vec<u8>) -> Blob {
        Blob::Memory(Arc::new(v))
    }
}

/// Bytes read at a time from a spooled blob or a file being compared.
const CHUNK: usize = 1 << 16;

impl Blob {
    pub fn len(&self) -> u64 {
        match self {
            Blob::Memory(b) => b.len() as u64,
            Blob::Spooled { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole blob in memory (for the small things that need it: keys, certificates).
    pub fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len() as usize);
        self.each_chunk(|c| {
            out.extend_from_slice(c);
            Ok(true)
        })?;
        Ok(out)
    }

    /// Calls `f` with the blob's bytes in order, a chunk at a time, until it returns false.
    pub fn each_chunk(
        &self,
        mut f: impl FnMut(&[u8]) -> std::io::Result<bool>,
    ) -> std::io::Result<()> {
        match self {
            Blob::Memory(b) => {
                f(b)?;
            }
            Blob::Spooled { file, len } => {
                let mut buf = vec![0u8; CHUNK.min(*len as usize)];
                let mut at = 0u64;
                while at < *len {
                    let want = ((*len - at) as usize).min(buf.len());
                    file.read_exact_at(&mut buf[..want], at)?;
                    at += want as u64;
                    if !f(&buf[..want])? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes the blob to `out` (from a spooled blob without passing through memory where
    /// the kernel can copy between the files).
    pub fn write_to(&self, out: &mut File) -> std::io::Result<()> {
        if let Blob::Spooled { file, len } = self
            && copy_range(file, *len, out)?
        {
            return Ok(());
        }
        self.each_chunk(|c| out.write_all(c).map(|_| true))
    }
}

/// Copies `len` bytes from the start of `from` to `out`'s position in the kernel; false
/// (nothing copied) when the file systems do not support it.
fn copy_range(from: &File, len: u64, out: &mut File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut off: libc::loff_t = 0;
    while (off as u64) < len {
        let left = (len - off as u64).min(1 << 30) as usize;
        // SAFETY: both descriptors are open files owned by the callers; `off` outlives the
        // call; a null output offset means "the file's position".
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off,
                out.as_raw_fd(),
                std::ptr::null_mut(),
                left,
                0,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) if off == 0 => {
                    Ok(false)
                }
                _ => Err(e),
            };
        }
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "spool file shorter than recorded",
            ));
        }
    }
    Ok(true)
}

/// Where large resources are spooled.
#[derive(Debug, Clone)]
pub struct Spool {
    pub dir: PathBuf,
}

impl Default for Spool {
    fn default() -> Self {
        Spool {
            dir: PathBuf::from(DEFAULT_SPOOL),
        }
    }
}

impl Spool {
    /// From `FLINT_SPOOL_DIR`, else [`DEFAULT_SPOOL`], else the temporary directory.
    pub fn from_env() -> Spool {
        let dir = std::env::var_os("FLINT_SPOOL_DIR")
            .map(PathBuf::from)
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| {
                let d = Path::new(DEFAULT_SPOOL);
                if d.is_dir() {
                    d.to_path_buf()
                } else {
                    std::env::temp_dir()
                }
            });
        Spool { dir }
    }

    /// A new unnamed file in the spool directory.
    fn file(&self) -> std::io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        raise_open_files_limit();
        let unnamed = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE)
            .open(&self.dir);
        match unnamed {
            Ok(f) => Ok(f),
            // File systems without O_TMPFILE: a named file, unlinked at once.
            Err(_) => {
                let path = self.dir.join(format!(
                    ".flint-spool-{}-{}",
                    std::process::id(),
                    uuid::Uuid::new_v4().simple()
                ));
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)?;
                std::fs::remove_file(&path)?;
                Ok(f)
            }
        }
    }
}

/// Many large resources each hold a descriptor: allow as many as the hard limit permits.
fn raise_open_files_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: plain system calls on a local struct.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
                l.rlim_cur = l.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &l);
            }
        }
    });
}

/// A `verification.hash` being computed while the data arrives.
enum Hasher {
    Sha256(sha2::Sha256),
    Sha512(sha2::Sha512),
}

/// Takes decompressed bytes: counts them against the limit, hashes them, keeps them in
/// memory or in the spool.
pub(crate) struct Intake<'a> {
    spool: &'a Spool,
    limit: u64,
    len: u64,
    memory: Vec<u8>,
    file: Option<File>,
    /// The expected hash, with the function hashing the data, or why the hash is unusable
    /// (reported once the data is there, as the fetch comes first).
    hash: Option<Result<(String, String, Hasher), String>>,
}

impl<'a> Intake<'a> {
    /// `hash` is the `verification.hash` (`sha512-<hex>` or `sha256-<hex>`).
    pub(crate) fn new(spool: &'a Spool, limit: u64, hash: Option<&str>) -> Intake<'a> {
        let hash = hash.map(|h| {
            let (function, want) = h.split_once('-').ok_or("malformed hash specifier")?;
            let hasher = match function {
                "sha512" => Hasher::Sha512(sha2::Sha512::new()),
                "sha256" => Hasher::Sha256(sha2::Sha256::new()),
                _ => return Err(format!("unrecognized hash function {function:?}")),
            };
            Ok((function.to_string(), want.to_string(), hasher))
        });
        Intake {
            spool,
            limit,
            len: 0,
            memory: Vec::new(),
            file: None,
            hash,
        }
    }

    /// The blob, once its hash (if any) is checked.
    pub(crate) fn finish(mut self) -> Result<Blob, String> {
        if let Some(h) = self.hash.take() {
            let (function, want, hasher) = h?;
            let got = super::hex(&match hasher {
                Hasher::Sha256(h) => h.finalize().to_vec(),
                Hasher::Sha512(h) => h.finalize().to_vec(),
            });
            if !got.eq_ignore_ascii_case(&want) {
                return Err(format!("{function} mismatch: expected {want}, got {got}"));
            }
        }
        Ok(match self.file {
            Some(file) => Blob::Spooled {
                file: Arc::new(file),
                len: self.len,
            },
            None => Blob::Memory(Arc::new(std::mem::take(&mut self.memory))),
        })
    }
}

/// The error an intake reports when the data outgrows the limit; its text is the message.
fn too_large(limit: u64) -> std::io::Error {
    std::io::Error::other(format!("decompresses to more than the {limit}-byte limit"))
}

impl Write for Intake<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.len + buf.len() as u64 > self.limit {
            return Err(too_large(self.limit));
        }
        self.len += buf.len() as u64;
        match &mut self.hash {
            Some(Ok((_, _, Hasher::Sha256(h)))) => h.update(buf),
            Some(Ok((_, _, Hasher::Sha512(h)))) => h.update(buf),
            _ => {}
        }
        if self.file.is_none() && self.memory.len() + buf.len() > MEMORY_LIMIT {
            let mut f = self.spool.file().map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("spooling to {}: {e}", self.spool.dir.display()),
                )
            })?;
            f.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(f);
        }
        match &mut self.file {
            Some(f) => f.write_all(buf)?,
            None => self.memory.extend_from_slice(buf),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Receives a resource's bytes as served, a chunk at a time; `restart` forgets what came
/// before (a download that broke off is tried again from the start).
pub trait BodySink {
    fn restart(&mut self);
    fn put(&mut self, chunk: &[u8]) -> Result<(), String>;
}

/// Bytes as served → gunzip when the resource says so → [`Intake`].
pub(crate) struct ResourceSink<'a> {
    /// The source, credentials removed, that errors about the data name.
    source: String,
    spool: &'a Spool,
    limit: u64,
    gzip: bool,
    hash: Option<&'a str>,
    chain: Chain<'a>,
}

enum Chain<'a> {
    Plain(Box<Intake<'a>>),
    Gzip(Box<flate2::write::MultiGzDecoder<Intake<'a>>>),
}

impl<'a> ResourceSink<'a> {
    pub(crate) fn new(
        source: &str,
        spool: &'a Spool,
        limit: u64,
        gzip: bool,
        hash: Option<&'a str>,
    ) -> Self {
        ResourceSink {
            source: super::url::redact(source),
            spool,
            limit,
            gzip,
            hash,
            chain: Self::chain(spool, limit, gzip, hash),
        }
    }

    fn chain(spool: &'a Spool, limit: u64, gzip: bool, hash: Option<&'a str>) -> Chain<'a> {
        let intake = Intake::new(spool, limit, hash);
        if gzip {
            Chain::Gzip(Box::new(flate2::write::MultiGzDecoder::new(intake)))
        } else {
            Chain::Plain(Box::new(intake))
        }
    }

    /// The resource, decompressed and verified.
    pub(crate) fn finish(self) -> Result<Blob, String> {
        let source = self.source;
        let intake = match self.chain {
            Chain::Plain(i) => *i,
            Chain::Gzip(d) => d
                .finish()
                .map_err(|e| format!("{source}: {}", gzip_error(&e)))?,
        };
        intake.finish().map_err(|e| format!("{source}: {e}"))
    }
}

/// Limit errors keep their own text; anything else the decoder says is corrupt data.
fn gzip_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    if text.starts_with("decompresses to more than") || text.starts_with("spooling to") {
        text
    } else {
        format!("corrupt gzip data: {e}")
    }
}

impl BodySink for ResourceSink<'_> {
    fn restart(&mut self) {
        self.chain = Self::chain(self.spool, self.limit, self.gzip, self.hash);
    }

    fn put(&mut self, chunk: &[u8]) -> Result<(), String> {
        match &mut self.chain {
            Chain::Plain(i) => i.write_all(chunk).map_err(|e| e.to_string()),
            Chain::Gzip(d) => d.write_all(chunk).map_err(|e| gzip_error(&e)),
        }
        .map_err(|e| format!("{}: {e}", self.source))
    }
}

/// One way of finishing a download: gunzip or not, and the hash to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Finish<'a> {
    pub gzip: bool,
    pub hash: Option<&'a str>,
}

/// One download fed to each of several [`ResourceSink`]s. A sink that fails (corrupt gzip
/// for one entry) stops taking data; the download goes on while any still takes it.
pub(crate) struct Fan<'a> {
    sinks: Vec<Result<ResourceSink<'a>, String>>,
}

impl<'a> Fan<'a> {
    pub(crate) fn new(source: &str, spool: &'a Spool, limit: u64, finishes: &[Finish<'a>]) -> Self {
        Fan {
            sinks: finishes
                .iter()
                .map(|f| Ok(ResourceSink::new(source, spool, limit, f.gzip, f.hash)))
                .collect(),
        }
    }

    /// Each way's blob or error, in the order of the finishes.
    pub(crate) fn finish(self) -> Vec<Result<Blob, String>> {
        self.sinks
            .into_iter()
            .map(|s| s.and_then(ResourceSink::finish))
            .collect()
    }
}

impl BodySink for Fan<'_> {
    fn restart(&mut self) {
        for s in self.sinks.iter_mut().flatten() {
            s.restart();
        }
    }

    fn put(&mut self, chunk: &[u8]) -> Result<(), String> {
        let mut last = None;
        for slot in &mut self.sinks {
            if let Ok(s) = slot
                && let Err(e) = s.put(chunk)
            {
                *slot = Err(e);
            }
            if let Err(e) = slot {
                last = Some(e.clone());
            }
        }
        match last {
            Some(e) if self.sinks.iter().all(Result::is_err) => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spool() -> (Spool, PathBuf) {
        let dir = std::env::temp_dir().join(format!("flint-blob-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        (Spool { dir: dir.clone() }, dir)
    }

    #[test]
    fn small_stays_in_memory_large_spools_without_a_name() {
        let (s, dir) = spool();
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, false, None);
        sink.put(b"hello").unwrap();
        assert_eq!(
            sink.finish().unwrap(),
            Blob::Memory(Arc::new(b"hello".to_vec()))
        );
        let big: Vec<u8> = (0..3 * MEMORY_LIMIT).map(|i| (i % 251) as u8).collect();
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, false, None);
        for c in big.chunks(4000) {
            sink.put(c).unwrap();
        }
        let b = sink.finish().unwrap();
        assert!(matches!(b, Blob::Spooled { .. }));
        assert_eq!(b.len(), big.len() as u64);
        assert_eq!(b.to_vec().unwrap(), big);
        // Nothing named is left in the spool directory.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let out_path = dir.join("out");
        let mut out = File::create(&out_path).unwrap();
        out.write_all(b"x").unwrap();
        b.write_to(&mut out).unwrap();
        drop(out);
        let written = std::fs::read(&out_path).unwrap();
        assert_eq!(&written[1..], &big[..]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn gunzips_hashes_and_limits_while_streaming() {
        let (s, dir) = spool();
        let data = "line of text\n".repeat(200_000).into_bytes();
        let gz = flint_ignition::dataurl::gzip_best(&data);
        let sum = super::super::hex(&sha2::Sha512::digest(&data));
        let hash = format!("sha512-{sum}");
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, true, Some(&hash));
        for c in gz.chunks(1000) {
            sink.put(c).unwrap();
        }
        let b = sink.finish().unwrap();
        assert_eq!(b.to_vec().unwrap(), data);

        // A restart forgets what came before.
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, true, Some(&hash));
        sink.put(&gz[..500]).unwrap();
        sink.restart();
        sink.put(&gz).unwrap();
        assert!(sink.finish().is_ok());

        let bad = format!("sha512-{}", "0".repeat(128));
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, true, Some(&bad));
        sink.put(&gz).unwrap();
        assert!(sink.finish().unwrap_err().contains("sha512 mismatch"));

        let mut sink = ResourceSink::new("data:", &s, 1000, true, None);
        let e = sink.put(&gz).unwrap_err();
        assert!(e.contains("1000-byte limit"), "{e}");

        let mut sink = ResourceSink::new("data:", &s, 1 << 30, true, None);
        let e = sink
            .put(b"not gzip at all")
            .and_then(|_| sink.finish().map(|_| ()))
            .unwrap_err();
        assert!(e.contains("corrupt gzip"), "{e}");

        // Cut short: the stream never ends.
        let mut sink = ResourceSink::new("data:", &s, 1 << 30, true, None);
        sink.put(&gz[..gz.len() / 2]).unwrap();
        assert!(sink.finish().unwrap_err().contains("corrupt gzip"));

        let mut sink = ResourceSink::new("data:", &s, 1 << 30, false, Some("md5-00"));
        sink.put(b"x").unwrap();
        assert!(
            sink.finish()
                .unwrap_err()
                .contains("unrecognized hash function")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
