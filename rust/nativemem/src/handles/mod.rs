//! Registry of native handles (RocksDB objects, zlib streams, application resources): what is
//! open, what was closed, transferred or leaked, and where each was created.
//!
//! The Java side (agent hooks and `NativeHandles.track`) reports events; this module keeps the
//! books. Memory is bounded: each open handle costs one [`registry::Record`] (about 80 bytes plus
//! its hash-map slot), creation stacks are interned once per distinct stack within
//! [`registry::MAX_SITE_BYTES`] (when full, sites whose handles all ended without a leak are
//! evicted; what still finds no room is counted as dropped), and records kept after their
//! handle ended (closed caches, leaked options that still retain a cache) are capped too.
//! Creation sites are keyed by the creating thread's stack as the JVM reports it ([`site_keys`]),
//! so a known stack is not walked in Java again.

mod interner;
mod registry;
mod report;
pub(crate) mod site_keys;

pub use registry::{End, HandleRegistry, MAX_SITE_BYTES, MAX_STACK_BYTES};
pub use report::{KindReport, OpenHandle, Report, Retainer, SiteReport, Summary, ZombieCache};

use std::sync::OnceLock;

/// The process-wide registry.
pub fn registry() -> &'static HandleRegistry {
    static REGISTRY: OnceLock<HandleRegistry> = OnceLock::new();
    REGISTRY.get_or_init(HandleRegistry::new)
}
