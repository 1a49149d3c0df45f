//! Encoded contents remembered between translations of the same document. An editor
//! translates a document again after every change, and a change touches one file of
//! thousands: the data URLs of the others (gzip at best compression, most of the work) are
//! taken from the previous translation. What a translation gives is the same with or
//! without a memo.

use flint_ignition::dataurl;
use std::collections::HashMap;
use std::sync::Mutex;

type Encoded = (String, Option<String>);

/// The data URLs of the contents met in the last translations, by the exact bytes.
#[derive(Debug, Default)]
pub struct Memo {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The URL of each content, with the sweep it was last used in.
    urls: HashMap<Box<[u8]>, (Encoded, u64)>,
    sweep: u64,
}

impl Memo {
    /// [`dataurl::encode`] of `data` with no compression asked for, from memory when seen.
    pub(crate) fn encode(&self, data: &[u8]) -> Encoded {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let sweep = inner.sweep;
        if let Some((url, used)) = inner.urls.get_mut(data) {
            *used = sweep;
            return url.clone();
        }
        drop(inner);
        let url = dataurl::encode(data, None);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.urls.insert(data.into(), (url.clone(), sweep));
        url
    }

    /// Forgets what the translations since the last sweep did not use (contents that were
    /// edited away), so that the memo stays the size of one document.
    pub fn sweep(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let sweep = inner.sweep;
        inner.urls.retain(|_, (_, used)| *used == sweep);
        inner.sweep += 1;
    }

    /// How many contents are remembered.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.urls.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_what_is_used_and_forgets_the_rest() {
        let m = Memo::default();
        let a = "# settings\n".repeat(20);
        assert_eq!(m.encode(a.as_bytes()), dataurl::encode(a.as_bytes(), None));
        m.encode(b"b");
        m.sweep();
        assert_eq!(m.len(), 2);
        // Only `a` is used before the next sweep: `b` is forgotten.
        assert_eq!(m.encode(a.as_bytes()), dataurl::encode(a.as_bytes(), None));
        m.sweep();
        assert_eq!(m.len(), 1);
    }
}
