//! The only code that touches the OS below the file level: block devices, partition tables,
//! BLKPG, device aliases, the storage tools, mounts.

pub(crate) mod beneath;
pub mod blockdev;
pub(crate) mod devices;
pub mod gpt;
pub(crate) mod mount;
pub(crate) mod probe;
pub(crate) mod tool;

/// Fills `buf` from the kernel's random source (getrandom(2), waiting for entropy at boot).
pub fn random_bytes(buf: &mut [u8]) {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the pointer and length describe the unfilled rest of `buf`.
        let n = unsafe {
            libc::getrandom(
                buf[done..].as_mut_ptr() as *mut libc::c_void,
                buf.len() - done,
                0,
            )
        };
        if n > 0 {
            done += n as usize;
        }
    }
}
