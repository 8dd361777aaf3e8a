//! `malloc_stats_print` of the process's jemalloc, as JSON text for bug reports.

use super::mallctl::Mallctl;
use super::AllocatorError;
use std::ffi::{c_char, c_void, CStr};

impl Mallctl {
    /// The full statistics report in jemalloc's JSON format (`opts` "J").
    pub fn stats_print_json(&self) -> Result<String, AllocatorError> {
        let print = self.fns.stats_print.ok_or(AllocatorError::NoStatsPrint)?;
        let mut out = String::new();
        // SAFETY: `append` matches jemalloc's write_cb signature; `out` outlives the call, which
        // invokes the callback synchronously on this thread only.
        unsafe {
            print(
                Some(append),
                &mut out as *mut String as *mut c_void,
                c"J".as_ptr(),
            )
        };
        Ok(out)
    }
}

unsafe extern "C" fn append(opaque: *mut c_void, text: *const c_char) {
    if opaque.is_null() || text.is_null() {
        return;
    }
    // SAFETY: `opaque` is the `String` passed above; `text` is NUL-terminated by jemalloc.
    let out = unsafe { &mut *(opaque as *mut String) };
    out.push_str(&unsafe { CStr::from_ptr(text) }.to_string_lossy());
}
