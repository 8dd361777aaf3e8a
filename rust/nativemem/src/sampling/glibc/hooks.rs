//! The functions the rewritten imports point at: each calls the real allocator function, then,
//! for the rare sampled allocation, records its block; a free looks its block up once.
//! `dlopen` and `dlclose` rewrite the imports of what they loaded and refresh the unwinder,
//! after the loader has let go of its lock.
//!
//! Nothing here allocates through a hooked import or takes a lock, except the `dlopen`/`dlclose`
//! follow-up, which runs after the real call returned, outside the loader.

use super::{record, tables, ACTIVE, RECORDING};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The real functions, found with `dlsym(RTLD_DEFAULT)` before any import is rewritten.
pub struct Real {
    pub malloc: AtomicUsize,
    pub calloc: AtomicUsize,
    pub realloc: AtomicUsize,
    pub reallocarray: AtomicUsize,
    pub free: AtomicUsize,
    pub posix_memalign: AtomicUsize,
    pub aligned_alloc: AtomicUsize,
    pub memalign: AtomicUsize,
    pub valloc: AtomicUsize,
    pub pvalloc: AtomicUsize,
    pub dlopen: AtomicUsize,
    pub dlclose: AtomicUsize,
}

pub static REAL: Real = Real {
    malloc: AtomicUsize::new(0),
    calloc: AtomicUsize::new(0),
    realloc: AtomicUsize::new(0),
    reallocarray: AtomicUsize::new(0),
    free: AtomicUsize::new(0),
    posix_memalign: AtomicUsize::new(0),
    aligned_alloc: AtomicUsize::new(0),
    memalign: AtomicUsize::new(0),
    valloc: AtomicUsize::new(0),
    pvalloc: AtomicUsize::new(0),
    dlopen: AtomicUsize::new(0),
    dlclose: AtomicUsize::new(0),
};

/// Each import: its name, where its real function is kept, and our hook. In the order an
/// object's entries are rewritten (and the reverse of their restore): what ends a sample before
/// what starts one. A block sampled through an object's `malloc` is then never handed to its
/// real `realloc` or `free`, which would leave the sample live for a block gone; `free` comes
/// before `realloc`, which does both.
pub fn table() -> [(&'static CStr, &'static AtomicUsize, usize); 12] {
    [
        (c"free", &REAL.free, free as *const () as usize),
        (c"realloc", &REAL.realloc, realloc as *const () as usize),
        (
            c"reallocarray",
            &REAL.reallocarray,
            reallocarray as *const () as usize,
        ),
        (c"malloc", &REAL.malloc, malloc as *const () as usize),
        (c"calloc", &REAL.calloc, calloc as *const () as usize),
        (
            c"posix_memalign",
            &REAL.posix_memalign,
            posix_memalign as *const () as usize,
        ),
        (
            c"aligned_alloc",
            &REAL.aligned_alloc,
            aligned_alloc as *const () as usize,
        ),
        (c"memalign", &REAL.memalign, memalign as *const () as usize),
        (c"valloc", &REAL.valloc, valloc as *const () as usize),
        (c"pvalloc", &REAL.pvalloc, pvalloc as *const () as usize),
        (c"dlopen", &REAL.dlopen, dlopen as *const () as usize),
        (c"dlclose", &REAL.dlclose, dlclose as *const () as usize),
    ]
}

/// Finds every real function; false when one of the four every allocator has is missing.
pub fn resolve() -> bool {
    for (name, real, _) in table() {
        if real.load(Ordering::Acquire) == 0 {
            // SAFETY: dlsym with a NUL-terminated name.
            let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as usize;
            real.store(address, Ordering::Release);
        }
    }
    [&REAL.malloc, &REAL.calloc, &REAL.realloc, &REAL.free]
        .iter()
        .all(|r| r.load(Ordering::Acquire) != 0)
}

macro_rules! real {
    ($field:ident: $ty:ty) => {
        std::mem::transmute::<usize, $ty>(REAL.$field.load(Ordering::Relaxed))
    };
}

#[inline]
fn allocated(block: *mut c_void, size: usize) {
    if !block.is_null() && RECORDING.load(Ordering::Relaxed) && super::sampler::take(size) {
        record(block as usize, size);
    }
}

#[inline]
fn freed(block: *mut c_void) {
    if !block.is_null() {
        if let Some(tables) = tables() {
            tables.live.remove(block as usize);
        }
    }
}

unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    let block = real!(malloc: unsafe extern "C" fn(usize) -> *mut c_void)(size);
    allocated(block, size);
    block
}

unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    let block = real!(calloc: unsafe extern "C" fn(usize, usize) -> *mut c_void)(count, size);
    allocated(block, count.saturating_mul(size));
    block
}

/// As jemalloc samples it: the old block's sample (if any) ends, the new block is an
/// allocation of its own, sampled by the same byte count.
unsafe extern "C" fn realloc(old: *mut c_void, size: usize) -> *mut c_void {
    let sampled = ended(old);
    let block = real!(realloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void)(old, size);
    reallocated(old, sampled, block, size)
}

unsafe extern "C" fn reallocarray(old: *mut c_void, count: usize, size: usize) -> *mut c_void {
    let sampled = ended(old);
    let block = real!(reallocarray: unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void)(
        old, count, size,
    );
    reallocated(old, sampled, block, count.saturating_mul(size))
}

/// The sample of a block about to be reallocated, taken out of the live heap.
#[inline]
fn ended(old: *mut c_void) -> Option<super::live::Block> {
    if old.is_null() {
        return None;
    }
    tables().and_then(|t| t.live.remove(old as usize))
}

/// After a realloc: a failed one leaves the old block, and its sample, in place.
#[inline]
fn reallocated(
    old: *mut c_void,
    sampled: Option<super::live::Block>,
    block: *mut c_void,
    bytes: usize,
) -> *mut c_void {
    if block.is_null() && bytes != 0 {
        if let (Some(sample), Some(tables)) = (sampled, tables()) {
            tables.live.insert(old as usize, sample);
        }
        return block;
    }
    allocated(block, bytes);
    block
}

unsafe extern "C" fn free(block: *mut c_void) {
    freed(block);
    real!(free: unsafe extern "C" fn(*mut c_void))(block);
}

unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    let rc = real!(posix_memalign: unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> c_int)(
        out, align, size,
    );
    if rc == 0 && !out.is_null() {
        allocated(*out, size);
    }
    rc
}

unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    let block =
        real!(aligned_alloc: unsafe extern "C" fn(usize, usize) -> *mut c_void)(align, size);
    allocated(block, size);
    block
}

unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    let block = real!(memalign: unsafe extern "C" fn(usize, usize) -> *mut c_void)(align, size);
    allocated(block, size);
    block
}

unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    let block = real!(valloc: unsafe extern "C" fn(usize) -> *mut c_void)(size);
    allocated(block, size);
    block
}

unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    let block = real!(pvalloc: unsafe extern "C" fn(usize) -> *mut c_void)(size);
    // pvalloc rounds the size up to whole pages.
    let page = libc::sysconf(libc::_SC_PAGESIZE).max(1) as usize;
    allocated(block, size.div_ceil(page).max(1) * page);
    block
}

/// Note: glibc's `dlopen` searches the caller's `DT_RPATH`; called from here, a library that
/// loads a bare name through its own `RPATH` is searched without it (as under async-profiler).
unsafe extern "C" fn dlopen(name: *const c_char, flags: c_int) -> *mut c_void {
    let handle =
        real!(dlopen: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void)(name, flags);
    if !handle.is_null() && ACTIVE.load(Ordering::Acquire) {
        super::after_load();
    }
    handle
}

unsafe extern "C" fn dlclose(handle: *mut c_void) -> c_int {
    let rc = real!(dlclose: unsafe extern "C" fn(*mut c_void) -> c_int)(handle);
    if ACTIVE.load(Ordering::Acquire) {
        super::after_unload();
    }
    rc
}
