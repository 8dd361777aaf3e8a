//! The unprefixed entry points this library exports.
//!
//! Each wrapper keeps its own stack frame: the result passes through `black_box`, so the call
//! into jemalloc is never a tail call. Without that, jemalloc's backtrace would start inside
//! its own code and profilers that strip allocator frames would attribute every byte to it.

use crate::conf;
use core::ffi::{c_char, c_int, c_void};
use core::hint::black_box;
use tikv_jemalloc_sys as je;

#[no_mangle]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    conf::ensure();
    black_box(je::malloc(size))
}

#[no_mangle]
pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    conf::ensure();
    black_box(je::calloc(count, size))
}

#[no_mangle]
pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    conf::ensure();
    black_box(je::realloc(ptr, size))
}

#[no_mangle]
pub unsafe extern "C" fn free(ptr: *mut c_void) {
    je::free(ptr);
    // Used after the call, so the call cannot become a jump.
    black_box(ptr);
}

#[no_mangle]
pub unsafe extern "C" fn posix_memalign(
    out: *mut *mut c_void,
    alignment: usize,
    size: usize,
) -> c_int {
    conf::ensure();
    black_box(je::posix_memalign(out, alignment, size))
}

#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(alignment: usize, size: usize) -> *mut c_void {
    conf::ensure();
    black_box(je::aligned_alloc(alignment, size))
}

extern "C" {
    fn _rjem_memalign(alignment: usize, size: usize) -> *mut c_void;
    fn _rjem_valloc(size: usize) -> *mut c_void;
}

#[no_mangle]
pub unsafe extern "C" fn memalign(alignment: usize, size: usize) -> *mut c_void {
    conf::ensure();
    black_box(_rjem_memalign(alignment, size))
}

#[no_mangle]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    conf::ensure();
    black_box(_rjem_valloc(size))
}

#[no_mangle]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    conf::ensure();
    // jemalloc 5.3.0 has no pvalloc: page-aligned, size rounded up to whole pages, as glibc's;
    // the kernel's page (4, 16 or 64 KiB on aarch64), not an assumed 4 KiB.
    let page = match libc::sysconf(libc::_SC_PAGESIZE) {
        n if n > 0 => n as usize,
        _ => 4096,
    };
    black_box(_rjem_memalign(page, size.max(1).div_ceil(page) * page))
}

#[no_mangle]
pub unsafe extern "C" fn malloc_usable_size(ptr: *const c_void) -> usize {
    black_box(je::malloc_usable_size(ptr))
}

#[no_mangle]
pub unsafe extern "C" fn mallctl(
    name: *const c_char,
    oldp: *mut c_void,
    oldlenp: *mut usize,
    newp: *mut c_void,
    newlen: usize,
) -> c_int {
    conf::ensure();
    black_box(je::mallctl(name, oldp, oldlenp, newp, newlen))
}

#[no_mangle]
pub unsafe extern "C" fn mallctlnametomib(
    name: *const c_char,
    mibp: *mut usize,
    miblenp: *mut usize,
) -> c_int {
    conf::ensure();
    black_box(je::mallctlnametomib(name, mibp, miblenp))
}

#[no_mangle]
pub unsafe extern "C" fn mallctlbymib(
    mib: *const usize,
    miblen: usize,
    oldp: *mut c_void,
    oldlenp: *mut usize,
    newp: *mut c_void,
    newlen: usize,
) -> c_int {
    conf::ensure();
    black_box(je::mallctlbymib(mib, miblen, oldp, oldlenp, newp, newlen))
}

#[no_mangle]
pub unsafe extern "C" fn malloc_stats_print(
    write_cb: Option<unsafe extern "C" fn(*mut c_void, *const c_char)>,
    cbopaque: *mut c_void,
    opts: *const c_char,
) {
    conf::ensure();
    je::malloc_stats_print(write_cb, cbopaque, opts);
    black_box(opts);
}
