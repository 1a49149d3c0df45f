//! The start of the heap on transparent huge pages, for the `butane` command.
//!
//! A large translation allocates a tree, decoded copies and the output in small pieces
//! (about 30 MiB at 10,000 embedded files), and on this kind of machine a page fault per
//! fresh 4 KiB page was a fifth of the whole run: about 9,000 faults. Backing the first
//! part of the heap with 2 MiB pages takes most of them away. Only the first part: huge
//! pages count whole in the resident size, and a heap covered all through ends up with more
//! resident than it uses (measured: 41 MiB instead of 38 at 10,000 files with 64 MiB, 38
//! with 24). glibc offers this only as an environment tunable, read at start-up; the same
//! is done here by hand.

/// How much of the heap is asked to be on huge pages.
pub const HUGE_HEAP: usize = 24 << 20;

/// Extends the heap by about `bytes` now and asks the kernel to back that part with huge
/// pages. Returns the range advised, if any (none where the kernel or the C library does
/// not offer this: then nothing changes). To be called on the main thread (other threads
/// allocate from their own arenas, outside the program break) before much is allocated.
pub fn prefer_huge_pages(bytes: usize) -> Option<std::ops::Range<usize>> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const HUGE: usize = 2 << 20;
        // Below glibc's threshold for allocating with mmap: these come from the heap.
        const STEP: usize = 100 << 10;
        let pad = i32::try_from(bytes).ok()?;
        // SAFETY: malloc, free, mallopt and madvise on the process's own heap; sbrk(0)
        // only reads the program break.
        unsafe {
            // The heap grows by the pad at its next extension (provoked now), and keeps
            // that much when it gives memory back: the advised part stays.
            libc::mallopt(libc::M_TOP_PAD, pad);
            let before = libc::sbrk(0) as usize;
            let mut held = Vec::with_capacity(64);
            while held.len() < 64 && libc::sbrk(0) as usize == before {
                held.push(libc::malloc(STEP));
            }
            // Freed first: glibc then trims the heap back to the pad, and the part advised
            // must be one that stays.
            for p in held {
                libc::free(p);
            }
            let after = libc::sbrk(0) as usize;
            let start = before.next_multiple_of(HUGE);
            let end = after & !(HUGE - 1);
            let advised = end > start
                && libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0;
            advised.then_some(start..end)
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = bytes;
        None
    }
}
