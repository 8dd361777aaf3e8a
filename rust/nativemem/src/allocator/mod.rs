//! The allocator that serves this process's `malloc`.
//!
//! A JNI library that carried its own jemalloc would see a private heap whose numbers describe
//! nothing. So this crate links no allocator: it asks the dynamic linker for the process's
//! `mallctl` and believes it only when `malloc` lives in the same object.

mod binding;
mod config;
pub mod glibc;
pub mod keys;
pub mod mallctl;
pub mod remedies;
mod stats;
mod stats_print;

pub use binding::{Binding, ProcessAllocator};
pub use config::JemallocConfig;
pub use glibc::GlibcStats;
pub use mallctl::Mallctl;
pub use remedies::RemedyOutcome;
pub use stats::{all_arenas_bytes, fragmentation, ArenaStats, JemallocStats, ARENAS_ALL};

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
    #[error(
        "mallctl key '{0}' is malformed: it contains a NUL byte, or an '<i>' where no index is \
         given (write the arena number instead)"
    )]
    BadKey(String),
    #[error(
        "mallctl key '{key}' cannot be read through NativeMemory.mallctl: {reason}; it reads \
         config.*, opt.* and stats.* integers and booleans, epoch, prof.active and the other \
         settings listed in its documentation (NativeMemory.allocator() has the version and \
         options as text)"
    )]
    NotPlainRead { key: String, reason: String },
    #[error(
        "this jemalloc does not export malloc_stats_print next to mallctl; read single keys with \
         mallctl instead"
    )]
    NoStatsPrint,
    #[error("glibc {call} failed: {error}")]
    Glibc { call: &'static str, error: String },
    #[error("{setting} = {value} is out of range: use {range}")]
    OutOfRange {
        setting: &'static str,
        value: i64,
        range: String,
    },
    #[error(
        "'{remedy}' acts on jemalloc, but glibc malloc serves this process; use 'trim' \
         (malloc_trim) on glibc, or start the JVM with jemalloc preloaded \
         (LD_PRELOAD=/path/to/libjemalloc.so.2)"
    )]
    NeedsJemalloc { remedy: &'static str },
    #[error(
        "'{remedy}' is glibc's malloc_trim, but jemalloc serves this process; use 'purge' to \
         return jemalloc's unused dirty pages"
    )]
    NeedsGlibc { remedy: &'static str },
    #[error("cannot read this process's memory: {0}")]
    Process(String),
}

/// Which allocator serves `malloc`, and from which object.
#[derive(Debug, Clone, Serialize)]
pub struct AllocatorInfo {
    /// `jemalloc` or `glibc`.
    pub kind: &'static str,
    pub version: String,
    /// The shared object (or executable) that defines `malloc`.
    pub malloc_object: String,
    /// jemalloc's configuration; absent on glibc.
    pub jemalloc: Option<JemallocConfig>,
}

/// Allocator statistics, tagged by which allocator produced them so glibc figures are never
/// mistaken for jemalloc's.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AllocatorStats {
    Jemalloc(JemallocStats),
    Glibc(GlibcStats),
}

impl AllocatorStats {
    /// Bytes the application holds through `malloc`.
    pub fn allocated_bytes(&self) -> u64 {
        match self {
            AllocatorStats::Jemalloc(s) => s.allocated_bytes,
            AllocatorStats::Glibc(s) => s.allocated_bytes,
        }
    }
}

/// Reads the statistics of the allocator that serves `malloc` (jemalloc after an epoch advance).
pub fn stats() -> Result<AllocatorStats, AllocatorError> {
    match ProcessAllocator::get().jemalloc() {
        Some(ctl) => JemallocStats::read(ctl).map(AllocatorStats::Jemalloc),
        None => GlibcStats::read().map(AllocatorStats::Glibc),
    }
}

/// The allocator's own statistics as it writes them: jemalloc's `malloc_stats_print` JSON or
/// glibc's `malloc_info` XML. Returns `(format, text)` with format `json` or `xml`.
pub fn raw_stats() -> Result<(&'static str, String), AllocatorError> {
    match ProcessAllocator::get().jemalloc() {
        Some(ctl) => Ok(("json", ctl.stats_print_json()?)),
        None => Ok(("xml", glibc::malloc_info_xml()?)),
    }
}

/// Describes the allocator of this process.
pub fn describe() -> Result<AllocatorInfo, AllocatorError> {
    let allocator = ProcessAllocator::get();
    match allocator.jemalloc() {
        Some(ctl) => Ok(AllocatorInfo {
            kind: "jemalloc",
            version: ctl
                .read_string("version")
                .unwrap_or_else(|e| format!("unknown ({e})")),
            malloc_object: allocator.malloc_object().to_owned(),
            jemalloc: Some(JemallocConfig::read(ctl)?),
        }),
        None => Ok(AllocatorInfo {
            kind: "glibc",
            version: glibc::version(),
            malloc_object: allocator.malloc_object().to_owned(),
            jemalloc: None,
        }),
    }
}
