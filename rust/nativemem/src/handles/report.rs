//! What the registry says, as plain data that serializes to the JSON Java reads.

use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Report {
    pub kinds: Vec<KindReport>,
    pub sites: Vec<SiteReport>,
    pub zombie_caches: Vec<ZombieCache>,
    pub oldest_open: Vec<OpenHandle>,
    /// Capacity of the caches whose Java object is open.
    pub open_cache_capacity_bytes: u64,
    /// Capacity of the zombie caches: closed in Java, alive natively.
    pub zombie_cache_capacity_bytes: u64,
    pub sites_interned: u64,
    pub sites_dropped: u64,
    pub ended_records_dropped: u64,
    /// What the registry holds in memory, about (records, tables, interned stacks).
    pub memory_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct KindReport {
    pub kind: String,
    pub created: u64,
    pub closed: u64,
    pub transferred: u64,
    /// Open and owned by their user (pooled ones are not counted here).
    pub open: u64,
    /// Open, resting in a pool (an `Inflater` in a zip file's cache).
    pub pooled: u64,
    pub leaked: u64,
}

/// Open, pooled and leaked handles of one kind created at one site (for pooled ones, the site
/// names the pool).
#[derive(Debug, Serialize)]
pub struct SiteReport {
    pub site_id: u32,
    pub kind: String,
    pub open: u64,
    pub pooled: u64,
    pub leaked: u64,
    /// Of the leaked ones, those a finalizer freed later.
    pub freed_by_finalizer: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_freed_by_finalizer_epoch_ms: Option<u64>,
    pub stack: String,
}

#[derive(Debug, Serialize)]
pub struct OpenHandle {
    pub handle_id: u64,
    pub kind: String,
    pub address: u64,
    pub site_id: u32,
    pub thread: String,
    pub created_epoch_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
}

/// A cache closed in Java that an options object still keeps alive natively.
#[derive(Debug, Serialize)]
pub struct ZombieCache {
    pub cache_id: u64,
    pub cache_kind: String,
    pub capacity_bytes: u64,
    pub cache_site_id: u32,
    pub cache_site: String,
    pub retainers: Vec<Retainer>,
}

#[derive(Debug, Serialize)]
pub struct Retainer {
    pub handle_id: u64,
    pub kind: String,
    /// "open" or "leaked".
    pub state: String,
    pub site_id: u32,
    pub site: String,
}
