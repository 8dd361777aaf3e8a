//! The allocator that serves this process's `malloc`.
//!
//! A JNI library that carried its own jemalloc would see a private heap whose numbers describe
//! nothing. So this crate links no allocator: it asks the dynamic linker for the process's
//! `mallctl` and believes it only when `malloc` lives in the same object.

mod binding;
mod glibc;
pub mod mallctl;

pub use binding::{Binding, ProcessAllocator};
pub use mallctl::Mallctl;

use serde::Serialize;

/// Errors from the allocator layer. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum AllocatorError {
    #[error(
        "glibc malloc serves this process, so there is no mallctl to read '{key}'; start the JVM \
         with jemalloc preloaded (LD_PRELOAD=/path/to/libjemalloc.so.2, or the allocator that \
         'java -jar nativemem.jar env' extracts)"
    )]
    NotJemalloc { key: String },
    #[error("mallctl key '{key}' is not known to this jemalloc {version} (ENOENT); check the spelling against 'man jemalloc'")]
    UnknownKey { key: String, version: String },
    #[error("mallctl '{key}' failed: {reason} (errno {errno})")]
    Mallctl {
        key: String,
        errno: i32,
        reason: &'static str,
    },
    #[error("mallctl key '{0}' contains a NUL byte")]
    BadKey(String),
}

/// Which allocator serves `malloc`, and from which object.
#[derive(Debug, Clone, Serialize)]
pub struct AllocatorInfo {
    /// `jemalloc` or `glibc`.
    pub kind: &'static str,
    pub version: String,
    /// The shared object (or executable) that defines `malloc`.
    pub malloc_object: String,
}

/// Describes the allocator of this process.
pub fn describe() -> AllocatorInfo {
    let allocator = ProcessAllocator::get();
    match allocator.jemalloc() {
        Some(ctl) => AllocatorInfo {
            kind: "jemalloc",
            version: ctl
                .read_string("version")
                .unwrap_or_else(|e| format!("unknown ({e})")),
            malloc_object: allocator.malloc_object().to_owned(),
        },
        None => AllocatorInfo {
            kind: "glibc",
            version: glibc::version(),
            malloc_object: allocator.malloc_object().to_owned(),
        },
    }
}
