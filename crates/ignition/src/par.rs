//! Work on many entries spread over the cores, only where there are enough of them: handing
//! work to the thread pool costs a wake-up (and, the first time, starting the pool), which a
//! few entries do not pay back. Results come in the entries' order whatever the thread count.

use rayon::prelude::*;

/// The number of entries from which the work is spread over the cores.
pub const FROM: usize = 64;

/// `f` of each entry with its index, collected in order (into a list, or a pair of lists).
pub fn map_indexed<T, R, C>(items: &[T], f: impl Fn((usize, &T)) -> R + Sync + Send) -> C
where
    T: Sync,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R>,
{
    if items.len() >= FROM {
        items.par_iter().enumerate().map(f).collect()
    } else {
        items.iter().enumerate().map(f).collect()
    }
}

/// `a` and `b`, at once when the work is on `entries` entries from [`FROM`].
pub fn join<RA: Send, RB: Send>(
    entries: usize,
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    if entries >= FROM {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}
