//! glibc's malloc, the fallback when no jemalloc serves the process.

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
