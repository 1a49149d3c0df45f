//! Data URLs encoded ahead of need. Encoding embedded contents (gzip at best compression,
//! to see whether it is shorter) is most of a large translation's work, and it depends on
//! nothing but the bytes: so the contents of every `inline` key are handed to another
//! thread while the YAML is still being read, and the translation later takes the encoded
//! URL instead of encoding it itself. What the translation gets is the same either way;
//! only when the work is done changes.

use flint_ignition::dataurl;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

/// A data URL and the `compression` to write with it, as [`dataurl::encode`] gives them
/// when the user set no compression.
type Encoded = (String, Option<String>);

/// Where the URL of one content goes.
#[derive(Debug, Default)]
pub struct Slot {
    /// Someone (the worker or the translation) has started on it: the worker passes by.
    claimed: AtomicBool,
    url: OnceLock<Encoded>,
}

impl Slot {
    /// The URL, encoded here unless someone else is encoding it (then it is waited for).
    fn encode(&self, data: &[u8]) -> &Encoded {
        self.claimed.store(true, Ordering::Relaxed);
        self.url.get_or_init(|| dataurl::encode(data, None))
    }

    /// Encodes the URL unless someone has started on it: the worker's part.
    fn encode_unclaimed(&self, data: &[u8]) {
        if !self.claimed.swap(true, Ordering::Relaxed) {
            self.url.get_or_init(|| dataurl::encode(data, None));
        }
    }
}

/// A digest of `data`: its length, first and last bytes. Contents are looked up twice each,
/// and hashing all of their bytes showed in the profile of a large translation.
fn digest(data: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    let edge = data.len().min(16);
    let ends = (data.len(), &data[..edge], &data[data.len() - edge..]);
    foldhash::fast::FixedState::with_seed(0).hash_one(ends)
}

/// What the worker is handed: contents, and where their URL goes.
pub(crate) type Job = (Arc<[u8]>, Arc<Slot>);

/// Contents shorter than this are encoded where they are needed: the hand-over would cost
/// more than it saves.
const MIN_LEN: usize = 64;

/// Jobs are handed over this many at a time: the worker, waiting for work, would otherwise
/// be woken (a system call on the reading thread) for every content.
const BATCH: usize = 32;

/// Contents handed over so far, by their bytes, each with the place its URL goes. Whoever
/// needs a URL first (the worker or the translation) encodes it; a second one waits for it.
#[derive(Debug, Default)]
pub struct Ahead {
    inner: Mutex<Inner>,
    /// The whole document has been read: the translation is about to ask for the URLs.
    read: AtomicBool,
}

#[derive(Debug, Default)]
struct Inner {
    /// By the [`digest`] of the contents; contents with the same digest are told apart by
    /// their bytes.
    slots: HashMap<u64, SmallVec<[Job; 1]>, foldhash::fast::RandomState>,
    /// Jobs not handed over yet.
    batch: Vec<Job>,
}

impl Ahead {
    /// Hands `data` over to be encoded on the worker that `tx` feeds.
    pub fn submit(&self, tx: &Sender<Vec<Job>>, data: &str) {
        if data.len() < MIN_LEN {
            return;
        }
        let bytes = data.as_bytes();
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let same = inner.slots.entry(digest(bytes)).or_default();
        if same.iter().any(|(d, _)| **d == *bytes) {
            return;
        }
        let (data, slot): Job = (Arc::from(bytes), Arc::default());
        same.push((data.clone(), slot.clone()));
        inner.batch.push((data, slot));
        if inner.batch.len() == BATCH {
            // The worker gone (it never goes before the sender) only means no head start.
            let _ = tx.send(std::mem::take(&mut inner.batch));
        }
    }

    /// Tells the worker that the document is read, with what is left to hand over.
    pub fn read_done(&self, tx: Sender<Vec<Job>>) {
        let batch = std::mem::take(&mut self.inner.lock().unwrap_or_else(|e| e.into_inner()).batch);
        self.read.store(true, Ordering::Relaxed);
        let _ = tx.send(batch);
    }

    /// The URL for `data` with no compression set by the user, if it was handed over. It
    /// is given once (and its memory with it): the same contents asked for again are
    /// encoded in place.
    pub fn take(&self, data: &[u8]) -> Option<Encoded> {
        let slot = {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let Entry::Occupied(mut same) = inner.slots.entry(digest(data)) else {
                return None;
            };
            let i = same.get().iter().position(|(d, _)| **d == *data)?;
            let (_, slot) = same.get_mut().swap_remove(i);
            if same.get().is_empty() {
                same.remove();
            }
            slot
        };
        slot.encode(data);
        Some(match Arc::try_unwrap(slot) {
            Ok(done) => done.url.into_inner().expect("initialised above"),
            // The worker still holds it for a moment.
            Err(shared) => shared.url.get().expect("initialised above").clone(),
        })
    }

    /// Encodes what arrives on `rx` until its sender is dropped. While the document is
    /// read, in the order it comes (the order the translation asks for it); once it is
    /// read, what is left from the last: the translation encodes what it reaches first
    /// itself, and the two meet in the middle instead of taking turns at the same end.
    pub fn work(&self, rx: Receiver<Vec<Job>>) {
        let run = |(data, slot): Job| slot.encode_unclaimed(&data);
        while let Ok(batch) = rx.recv() {
            if self.read.load(Ordering::Relaxed) {
                let rest: Vec<Job> = batch.into_iter().chain(rx.iter().flatten()).collect();
                rest.into_iter().rev().for_each(run);
                return;
            }
            batch.into_iter().for_each(run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document large enough to be read with a worker: the output and the findings are
    /// those of the translation on one thread, with repeated contents, contents the user
    /// compressed, short ones, and contents that the worker sees but no file uses.
    #[test]
    fn a_large_document_translates_as_it_does_on_one_thread() {
        use std::fmt::Write as _;
        let mut doc = String::from("variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n");
        for i in 0..600 {
            let body = format!(
                "setting {} = {}\nother = {}\n",
                i % 50,
                i % 7,
                "x".repeat(i % 90)
            );
            let _ = write!(
                doc,
                "    - path: /etc/f{i}\n      contents:\n        inline: |\n          {}\n",
                body.trim_end().replace('\n', "\n          ")
            );
            match i % 5 {
                0 => doc.push_str("        compression: gzip\n"),
                1 => doc.push_str("      append:\n        - inline: short\n"),
                _ => {}
            }
        }
        doc.push_str("systemd:\n  units:\n    - name: a.service\n      contents: |\n");
        doc.push_str(&"        # not an inline key, never handed over\n".repeat(4));
        doc.push_str(
            "x-unused:\n  inline: \"a value no file uses, long enough to be handed over\"\n",
        );
        assert!(doc.len() >= super::super::AHEAD_FROM, "{}", doc.len());
        let opts = super::super::Options {
            render: Some(false),
            ..Default::default()
        };
        let mut with_worker = crate::translate(doc.as_bytes(), opts);
        let read = crate::decode::read(doc.as_bytes(), &mut |_| {});
        let mut alone = crate::pipeline::translate_read(doc.as_bytes(), read, opts, None);
        let (a, b) = (with_worker.render(false), alone.render(false));
        assert!(a.is_some());
        assert_eq!(a, b);
        let messages = |o: &super::super::Outcome| {
            (o.diagnostics.iter().map(|d| d.message.clone())).collect::<Vec<_>>()
        };
        assert_eq!(messages(&with_worker), messages(&alone));
        assert!(!messages(&alone).is_empty(), "the unused key is reported");
    }

    /// Contents of one length with the same ends have the same digest: each still gets
    /// its own URL.
    #[test]
    fn contents_with_the_same_digest_are_told_apart() {
        let ends = "x".repeat(16);
        let texts: Vec<String> = (0..4)
            .map(|i| format!("{ends}{}{ends}", format!("{i}").repeat(40)))
            .collect();
        assert!(
            texts
                .iter()
                .all(|t| digest(t.as_bytes()) == digest(texts[0].as_bytes()))
        );
        let ahead = Ahead::default();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| ahead.work(rx));
            for t in &texts {
                ahead.submit(&tx, t);
            }
            ahead.read_done(tx);
        });
        for t in texts.iter().rev() {
            assert_eq!(
                ahead.take(t.as_bytes()),
                Some(dataurl::encode(t.as_bytes(), None))
            );
        }
        assert!(ahead.inner.lock().unwrap().slots.is_empty());
    }

    #[test]
    fn a_url_encoded_ahead_is_the_one_encoded_in_place() {
        let ahead = Ahead::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let text = "# generated\nlisten = 10.0.0.1:8000\nworkers = 4\n".repeat(4);
        std::thread::scope(|s| {
            s.spawn(|| ahead.work(rx));
            ahead.submit(&tx, &text);
            ahead.submit(&tx, "short");
            ahead.read_done(tx);
        });
        assert_eq!(
            ahead.take(text.as_bytes()),
            Some(dataurl::encode(text.as_bytes(), None))
        );
        // Given once.
        assert_eq!(ahead.take(text.as_bytes()), None);
        assert_eq!(ahead.take(b"short"), None);
        assert_eq!(
            ahead.take(b"never handed over at all, but long enough to be"),
            None
        );
    }
}
