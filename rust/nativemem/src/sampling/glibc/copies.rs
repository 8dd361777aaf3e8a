//! Another copy of nativemem's library in this process, whose own engine rewrote the imports.
//!
//! A JVM can map nativemem's library twice: the application's copy, and the one an attach
//! command loads in a class loader of its own. Each copy has its own state; a second engine
//! started on top of the first would take every rewritten entry from the first one's hooks
//! (recording them as the "original") and call the real allocator directly, so the first
//! engine's profile silently loses most allocations and frees.
//!
//! How another engine is recognised: by what the entries we would rewrite point at now, read in
//! the same walk a rewrite does. An entry of an allocation import normally points at the
//! allocator (libc, or a preloaded one), or at our own hooks (a restart after a restore that
//! could not write every entry back). One that points into a loaded object which exports
//! nativemem's JNI entry point (`Java_dev_nativemem_internal_NativeBridge_version`, which every
//! version has: the loader asks it first) and is not this copy is another copy's hook. The object
//! is placed with `dladdr` and its export checked with `dlsym` on a `RTLD_NOLOAD` handle: no path
//! or file name is trusted (the copies are extracted under names of their own), and an object
//! that merely wraps `malloc` (a preloaded allocator, a leak checker) is not taken for nativemem.
//! Both calls happen after the walk, outside the loader's list lock, through the real `dlopen`
//! and `dlclose` (the other engine hooks ours too).

use super::hooks;
use super::imports::{Import, Skip};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::Ordering;

/// The symbol every copy of nativemem's library exports.
const MARKER: &CStr = c"Java_dev_nativemem_internal_NativeBridge_version";

/// Another copy of nativemem's library whose hooks hold this process's allocation imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnotherCopy {
    /// Its file, as the loader names it.
    pub path: String,
}

impl AnotherCopy {
    /// Why this copy's engine does not start, and what to do instead. (An attach command's copy
    /// is the second one even from the application's own jar: attach commands run in a class
    /// loader of their own unless the agent was loaded at the JVM's start.)
    pub fn refusal(&self) -> String {
        format!(
            "another copy of nativemem ({}) already profiles this process's heap: the allocation \
             imports point at its hooks, and a second engine on top of them would break its \
             profile. Use that copy's profiler (the application's NativeMemory.profiling()); \
             attach commands share the application's copy when the JVM is started with \
             -javaagent:nativemem.jar",
            self.path
        )
    }
}

/// The other copy whose hooks some of `imports`' entries hold now, if any; `own` is an address in
/// this copy. [`hooks::resolve`] must have run (the real `dlopen` and `dlclose` are called).
pub fn another_copy(imports: &[Import], skip: &Skip, own: usize) -> Option<AnotherCopy> {
    let own_base = object_of(own).map(|(base, _)| base);
    let mut looked_at: Vec<usize> = Vec::new();
    for target in super::imports::targets(imports, skip) {
        let Some((base, path)) = object_of(target) else {
            continue;
        };
        if Some(base) == own_base || looked_at.contains(&base) {
            continue;
        }
        looked_at.push(base);
        if exports_marker(base, &path) {
            return Some(AnotherCopy {
                path: path.to_string_lossy().into_owned(),
            });
        }
    }
    None
}

/// The load base and file name of the object that holds `address`.
fn object_of(address: usize) -> Option<(usize, CString)> {
    // SAFETY: dladdr only fills `info` for an address in a loaded object; the name it gives lives
    // as long as the object, and is copied at once.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(address as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some((
            info.dli_fbase as usize,
            CStr::from_ptr(info.dli_fname).to_owned(),
        ))
    }
}

/// Whether the object loaded at `base` from `path` exports [`MARKER`] itself (not through one of
/// its dependencies).
fn exports_marker(base: usize, path: &CStr) -> bool {
    let open = hooks::REAL.dlopen.load(Ordering::Acquire);
    let close = hooks::REAL.dlclose.load(Ordering::Acquire);
    if open == 0 || close == 0 || path.is_empty() {
        return false;
    }
    // SAFETY: the real dlopen and dlclose, found by dlsym; RTLD_NOLOAD only takes another
    // reference to an object already loaded, given back by the dlclose.
    unsafe {
        let open: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
            std::mem::transmute(open);
        let close: unsafe extern "C" fn(*mut c_void) -> c_int = std::mem::transmute(close);
        let handle = open(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return false;
        }
        let symbol = libc::dlsym(handle, MARKER.as_ptr()) as usize;
        let found = symbol != 0 && object_of(symbol).is_some_and(|(at, _)| at == base);
        close(handle);
        found
    }
}
