//! What every fuzz target shares: a global allocator that measures the heap a call keeps at its
//! peak, so a target can fail an input that makes a parser use more memory than its documented
//! bound (libFuzzer's `-rss_limit_mb` sees only the whole process), and a file in memory for the
//! entry points that read a path.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live now and their peak since [`measure`] began.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// Runs `f` and fails (a libFuzzer crash, with the input saved) when the heap it held at its
/// peak exceeds `per_input_byte` times the input's size plus `fixed` bytes: the documented
/// bound of that parser (SECURITY.md, "Fuzzing").
pub fn within_memory_bound<T>(
    input_bytes: usize,
    per_input_byte: usize,
    fixed: usize,
    f: impl FnOnce() -> T,
) -> T {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = f();
    let used = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    let bound = input_bytes * per_input_byte + fixed;
    if std::env::var_os("NATIVEMEM_FUZZ_HEAP").is_some() {
        // For measuring a corpus (`-runs=0`): the figures SECURITY.md gives.
        eprintln!("heap: {used} bytes for {input_bytes} bytes of input (bound {bound})");
    }
    assert!(
        used <= bound,
        "{used} bytes of heap for a {input_bytes}-byte input: more than the bound of \
         {per_input_byte} x input + {fixed} bytes"
    );
    result
}

/// A fuzz target whose every input must be handled within `per_input_byte` times its size plus
/// `fixed` bytes of heap ([`within_memory_bound`]): the counting allocator, then the body, which
/// sees the input as `$data: &[u8]`.
#[macro_export]
macro_rules! bounded_fuzz_target {
    (per_input_byte: $per:expr, fixed: $fixed:expr, |$data:ident| $body:block) => {
        #[global_allocator]
        static ALLOCATOR: $crate::Counting = $crate::Counting;

        $crate::libfuzzer_sys::fuzz_target!(|$data: &[u8]| {
            $crate::within_memory_bound($data.len(), $per, $fixed, || $body)
        });
    };
}

pub use libfuzzer_sys;

/// A file in memory (`memfd`), rewritten for each input and named by a path, for entry points
/// that open a file the user names.
pub struct MemoryFile {
    file: File,
    path: PathBuf,
}

impl MemoryFile {
    pub fn new(name: &str) -> MemoryFile {
        let name = std::ffi::CString::new(name).expect("no NUL in the name");
        // SAFETY: a NUL-terminated name; the descriptor is owned by the File from here on.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        // SAFETY: a descriptor just created and owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        MemoryFile { file, path }
    }

    /// Makes the file hold exactly `bytes`; returns its path.
    pub fn holding(&mut self, bytes: &[u8]) -> &std::path::Path {
        self.file.set_len(0).expect("truncate the memfd");
        self.file.write_all_at(bytes, 0).expect("write the memfd");
        self.file.flush().expect("flush the memfd");
        &self.path
    }
}
