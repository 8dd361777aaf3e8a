//! Finds the process allocator at run time with the dynamic linker.

use super::mallctl::{Mallctl, MallctlFns};
use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

/// How the process allocator was found: the object that defines `malloc`, and jemalloc's entry
/// points when they live in that same object.
pub struct ProcessAllocator {
    malloc_object: String,
    jemalloc: Option<Mallctl>,
}

/// Why a `mallctl` found in the process was or was not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `malloc` and `mallctl` live in one object: that jemalloc serves the process.
    SameObject,
    /// No `mallctl` symbol anywhere in the global scope.
    NoMallctl,
    /// A `mallctl` exists but `malloc` comes from elsewhere; its numbers would describe a
    /// private heap.
    OtherObject,
}

impl ProcessAllocator {
    /// The allocator of this process, found once.
    pub fn get() -> &'static ProcessAllocator {
        static INSTANCE: OnceLock<ProcessAllocator> = OnceLock::new();
        INSTANCE.get_or_init(ProcessAllocator::find)
    }

    fn find() -> ProcessAllocator {
        let malloc = lookup(c"malloc");
        let malloc_object = object_of(malloc).map(|o| o.path).unwrap_or_default();
        let (binding, fns) = bind_jemalloc(malloc);
        debug_assert!(binding != Binding::SameObject || fns.is_some());
        ProcessAllocator {
            malloc_object,
            jemalloc: fns.map(Mallctl::new),
        }
    }

    /// jemalloc's control interface, when jemalloc serves `malloc`.
    pub fn jemalloc(&self) -> Option<&Mallctl> {
        self.jemalloc.as_ref()
    }

    /// Path of the object that defines `malloc` (empty if the linker cannot say).
    pub fn malloc_object(&self) -> &str {
        &self.malloc_object
    }
}

/// Decides whether the global `mallctl` belongs to the allocator behind `malloc`.
pub fn bind_jemalloc(malloc: *mut c_void) -> (Binding, Option<MallctlFns>) {
    let mallctl = lookup(c"mallctl");
    if mallctl.is_null() {
        return (Binding::NoMallctl, None);
    }
    let same = match (object_of(malloc), object_of(mallctl)) {
        (Some(a), Some(b)) => a.base == b.base,
        _ => false,
    };
    if !same {
        return (Binding::OtherObject, None);
    }
    // The MIB entry points are optional: a minimal jemalloc export list may have only mallctl.
    let in_same_object = |name: &CStr| {
        let sym = lookup(name);
        match (object_of(sym), object_of(mallctl)) {
            (Some(a), Some(b)) if a.base == b.base => sym,
            _ => std::ptr::null_mut(),
        }
    };
    let fns = MallctlFns::new(
        mallctl,
        in_same_object(c"mallctlnametomib"),
        in_same_object(c"mallctlbymib"),
        in_same_object(c"malloc_stats_print"),
    );
    (Binding::SameObject, Some(fns))
}

fn lookup(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no preconditions.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

struct LoadedObject {
    base: usize,
    path: String,
}

fn object_of(addr: *mut c_void) -> Option<LoadedObject> {
    if addr.is_null() {
        return None;
    }
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        return None;
    }
    let path = if info.dli_fname.is_null() {
        String::new()
    } else {
        // SAFETY: dli_fname points to a NUL-terminated string owned by the linker.
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    };
    Some(LoadedObject {
        base: info.dli_fbase as usize,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_binary_is_served_by_glibc_unless_preloaded() {
        let preloaded = std::env::var("LD_PRELOAD").unwrap_or_default();
        let allocator = ProcessAllocator::get();
        if preloaded.contains("jemalloc") {
            assert!(allocator.jemalloc().is_some());
        } else {
            // Rust test binaries use the system allocator: glibc.
            assert!(allocator.jemalloc().is_none());
            assert!(
                allocator.malloc_object().contains("libc"),
                "{}",
                allocator.malloc_object()
            );
        }
    }
}
