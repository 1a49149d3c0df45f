//! The gzip of any input through zlib-rs, at the sizes and with the header of
//! [`gzip_best`](crate::gzip_best).

/// [`gzip_best`](crate::gzip_best) through zlib-rs, for any size.
pub fn gzip_zlib(data: &[u8]) -> Vec<u8> {
    use std::cell::RefCell;
    use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Status};
    thread_local! {
        // One deflater per window size, reset between inputs: setting one up allocates and
        // clears a few hundred KiB, which dominated translating thousands of small files.
        static DEFLATERS: RefCell<[Option<Deflate>; 7]> = const { RefCell::new([const { None }; 7]) };
    }
    // A window no larger than the input compresses it the same and is cheaper to reset.
    let bits = (usize::BITS - data.len().max(1).leading_zeros()).clamp(9, 15) as u8;
    let mut out: Vec<u8> = Vec::with_capacity(data.len() / 2 + 64);
    DEFLATERS.with_borrow_mut(|cache| {
        // zlib's own gzip wrapper (window bits + 16): it checksums the input as it reads it,
        // instead of a second pass over it. `mem_level` sizes only the buffer of symbols
        // (1 << (mem_level + 6) of them; the hash table is fixed): up to 13 window bits it
        // holds twice the input and never fills before the end, and from 14 bits it is the
        // default's; so the blocks, and the bytes, are those of the default level 8, while
        // each block's start of a small input clears a few KiB instead of 48.
        let d = cache[usize::from(bits - 9)].get_or_insert_with(|| {
            Deflate::new_with_config(DeflateConfig {
                level: 9,
                window_bits: i32::from(bits) + 16,
                mem_level: (i32::from(bits) - 5).min(8),
                ..DeflateConfig::default()
            })
        });
        d.reset();
        loop {
            let consumed = d.total_in() as usize;
            let before = d.total_out();
            out.reserve(data.len() / 2 + 64);
            // Compressing into memory has no failure mode but a full buffer, handled by
            // looping with more room.
            let status = d.compress_uninit(
                &data[consumed..],
                out.spare_capacity_mut(),
                DeflateFlush::Finish,
            );
            let written = (d.total_out() - before) as usize;
            // SAFETY: the deflater initialised the `written` bytes after the old length.
            unsafe { out.set_len(out.len() + written) };
            match status {
                Ok(Status::StreamEnd) => break,
                Ok(_) => continue,
                Err(e) => unreachable!("in-memory deflate failed: {e:?}"),
            }
        }
    });
    // zlib writes its own OS code; Go writes "unknown".
    out[9] = 0xff;
    out
}
