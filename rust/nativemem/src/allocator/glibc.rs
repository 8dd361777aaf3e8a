//! glibc's malloc, the fallback when no jemalloc serves the process.
//!
//! Call these only when glibc serves `malloc`: under a preloaded jemalloc, glibc's functions
//! describe glibc's own idle heap, not the process's.

use super::AllocatorError;
use serde::Serialize;
use std::ffi::CStr;

extern "C" {
    fn gnu_get_libc_version() -> *const libc::c_char;
}

/// glibc's version string, e.g. `2.36`.
pub fn version() -> String {
    // SAFETY: glibc returns a pointer to a static NUL-terminated string.
    unsafe { CStr::from_ptr(gnu_get_libc_version()) }
        .to_string_lossy()
        .into_owned()
}

/// From `mallinfo2`: (allocated, footprint) in bytes. Allocated is `uordblks + hblkhd`, what the
/// application holds; footprint is `arena + hblkhd`, what glibc took from the system for it.
pub fn allocated_and_footprint() -> (u64, u64) {
    // SAFETY: mallinfo2 has no preconditions (glibc ≥ 2.33).
    let info = unsafe { libc::mallinfo2() };
    (
        (info.uordblks + info.hblkhd) as u64,
        (info.arena + info.hblkhd) as u64,
    )
}

/// `mallinfo2` plus what `malloc_info` adds, in bytes.
#[derive(Debug, Clone, Serialize)]
pub struct GlibcStats {
    /// `arena`: bytes obtained from the system by `sbrk` and arena heaps (not mmapped chunks).
    pub arena_bytes: u64,
    /// `hblkhd`: bytes in chunks served directly by `mmap`.
    pub mmap_bytes: u64,
    /// `uordblks + hblkhd`: bytes the application holds.
    pub allocated_bytes: u64,
    /// `uordblks`: bytes held in arena chunks.
    pub in_use_bytes: u64,
    /// `fordblks`: free bytes inside arenas, resident until trimmed or reused.
    pub free_bytes: u64,
    /// `keepcost`: releasable bytes at the top of the main heap.
    pub releasable_bytes: u64,
    /// Arenas counted from `malloc_info` (`<heap nr=...>` elements).
    pub arena_count: Option<u32>,
    /// `MALLOC_ARENA_MAX` from the environment, if set.
    pub malloc_arena_max: Option<String>,
}

impl GlibcStats {
    pub fn read() -> Result<GlibcStats, AllocatorError> {
        // SAFETY: mallinfo2 has no preconditions (glibc ≥ 2.33).
        let info = unsafe { libc::mallinfo2() };
        let arena_count = malloc_info_xml().ok().map(|xml| count_heaps(&xml));
        Ok(GlibcStats {
            arena_bytes: info.arena as u64,
            mmap_bytes: info.hblkhd as u64,
            allocated_bytes: (info.uordblks + info.hblkhd) as u64,
            in_use_bytes: info.uordblks as u64,
            free_bytes: info.fordblks as u64,
            releasable_bytes: info.keepcost as u64,
            arena_count,
            malloc_arena_max: std::env::var("MALLOC_ARENA_MAX").ok(),
        })
    }
}

/// Arenas in a `malloc_info` document: one `<heap nr="N">` element each.
pub fn count_heaps(xml: &str) -> u32 {
    xml.matches("<heap nr=").count() as u32
}

/// glibc's `malloc_info(0, ...)` XML.
pub fn malloc_info_xml() -> Result<String, AllocatorError> {
    let mut buf: *mut libc::c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream owns `buf` until fclose, after which we copy and free it.
    unsafe {
        let stream = libc::open_memstream(&mut buf, &mut len);
        if stream.is_null() {
            return Err(AllocatorError::Glibc {
                call: "open_memstream",
                error: std::io::Error::last_os_error().to_string(),
            });
        }
        let rc = libc::malloc_info(0, stream);
        libc::fclose(stream);
        let text = if buf.is_null() {
            String::new()
        } else {
            let bytes = std::slice::from_raw_parts(buf as *const u8, len);
            String::from_utf8_lossy(bytes).into_owned()
        };
        libc::free(buf as *mut libc::c_void);
        if rc != 0 {
            return Err(AllocatorError::Glibc {
                call: "malloc_info",
                error: std::io::Error::last_os_error().to_string(),
            });
        }
        Ok(text)
    }
}

/// `malloc_trim(0)`: returns free memory at the top of every arena to the system.
/// True when some memory was released.
pub fn trim() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::malloc_trim(0) == 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malloc_info_lists_at_least_the_main_arena() {
        let xml = malloc_info_xml().unwrap();
        assert!(xml.starts_with("<malloc version=\"1\">"), "{xml}");
        assert!(count_heaps(&xml) >= 1);
    }

    #[test]
    fn allocation_moves_allocated_bytes() {
        if super::super::ProcessAllocator::get().jemalloc().is_some() {
            return; // glibc's figures describe its idle heap under a preloaded jemalloc
        }
        // 8 MiB is above the mmap threshold: one chunk of 8 MiB plus a page-rounded header.
        // Only mmapped chunks are compared, but other test threads may map chunks of their own
        // meanwhile (read buffers of 256 KiB are above the threshold too): their bytes can only
        // add, so a few tries are made for one without them.
        // A fixed threshold: glibc otherwise raises it to the size of a freed mapped chunk, and
        // the next tries' 8 MiB would come from an arena instead.
        // SAFETY: mallopt only sets a parameter of glibc's allocator.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10) };
        let mut grown = Vec::new();
        let mut during = GlibcStats::read().unwrap();
        for _ in 0..8 {
            let before = GlibcStats::read().unwrap();
            let block = std::hint::black_box(vec![1u8; 8 << 20]);
            during = GlibcStats::read().unwrap();
            drop(std::hint::black_box(block));
            grown.push(during.mmap_bytes.wrapping_sub(before.mmap_bytes));
            if (8 << 20..(8 << 20) + 8192).contains(grown.last().unwrap()) {
                break;
            }
        }
        assert!(
            (8 << 20..(8 << 20) + 8192).contains(grown.last().unwrap()),
            "grew by {grown:?} in {} tries",
            grown.len()
        );
        assert!(during.allocated_bytes >= during.mmap_bytes);
    }
}
