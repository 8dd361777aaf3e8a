//! Zeroed memory for the engine's tables, mapped once and kept for the life of the process: a
//! hook still running after a stop may read it. Pages cost memory only once touched; a reset
//! gives them back (`MADV_DONTNEED` reads as zeroes again).

use std::sync::atomic::{AtomicU64, AtomicUsize};

/// A mapping of `len` zeroed bytes.
pub struct Region {
    base: usize,
    len: usize,
}

impl Region {
    /// Maps `len` bytes; None when the kernel refuses (the engine then does not start).
    pub fn map(len: usize) -> Option<Region> {
        // SAFETY: a fresh anonymous private mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        // Small pages: a table touched sparsely (addresses hash all over it) stays small.
        // SAFETY: advice on our own fresh mapping.
        unsafe { libc::madvise(base, len, libc::MADV_NOHUGEPAGE) };
        Some(Region {
            base: base as usize,
            len,
        })
    }

    /// Every byte back to zero, the pages given back.
    pub fn reset(&self) {
        // SAFETY: the range is our own mapping; readers of atomics in it see zeroes after.
        unsafe {
            libc::madvise(
                self.base as *mut libc::c_void,
                self.len,
                libc::MADV_DONTNEED,
            );
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Resident bytes of the mapping (what the tables cost now), from `mincore`.
    pub fn resident_bytes(&self) -> u64 {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
        let pages = self.len.div_ceil(page);
        let mut vec = vec![0u8; pages];
        // SAFETY: `vec` has one byte per page of our own mapping.
        let ok = unsafe {
            libc::mincore(
                self.base as *mut libc::c_void,
                self.len,
                vec.as_mut_ptr().cast(),
            )
        } == 0;
        if !ok {
            return 0;
        }
        vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64
    }

    /// The region as `count` atomics of 8 bytes.
    pub fn u64s(&self) -> &'static [AtomicU64] {
        // SAFETY: the mapping is never unmapped, zero is a valid AtomicU64, and all access
        // goes through atomics.
        unsafe { std::slice::from_raw_parts(self.base as *const AtomicU64, self.len / 8) }
    }

    pub fn usizes(&self) -> &'static [AtomicUsize] {
        // SAFETY: as for `u64s`.
        unsafe { std::slice::from_raw_parts(self.base as *const AtomicUsize, self.len / 8) }
    }
}
