//! jemalloc's statistics, refreshed by advancing `epoch` first.

use super::keys::{self, Key};
use super::mallctl::Mallctl;
use super::AllocatorError;
use serde::Serialize;

/// The `<i>` that addresses all arenas at once (`MALLCTL_ARENAS_ALL` in jemalloc.h, 5.x).
pub const ARENAS_ALL: usize = 4096;

/// Process-wide jemalloc statistics, in bytes.
#[derive(Debug, Clone, Serialize)]
pub struct JemallocStats {
    /// `stats.allocated`: bytes the application holds.
    pub allocated_bytes: u64,
    /// `stats.active`: bytes in pages that hold application data (≥ allocated).
    pub active_bytes: u64,
    /// `stats.resident`: bytes in physically resident pages jemalloc maps, metadata included.
    pub resident_bytes: u64,
    /// `stats.mapped`: bytes in extents jemalloc has mapped and not retained.
    pub mapped_bytes: u64,
    /// `stats.retained`: virtual memory kept for reuse, not resident.
    pub retained_bytes: u64,
    /// `stats.metadata`: jemalloc's own bookkeeping.
    pub metadata_bytes: u64,
    /// Unused dirty pages over all arenas, in bytes: resident memory returned by `purge`.
    pub dirty_bytes: u64,
    /// Unused muzzy pages over all arenas, in bytes (`MADV_FREE`d; the kernel may reclaim them).
    pub muzzy_bytes: u64,
    /// `(active − allocated) / active`: the share of active pages not holding data.
    pub fragmentation: f64,
    pub arenas: Vec<ArenaStats>,
}

/// One initialized arena.
#[derive(Debug, Clone, Serialize)]
pub struct ArenaStats {
    pub index: u32,
    /// Threads bound to this arena now.
    pub threads: u32,
    pub dirty_pages: u64,
    pub muzzy_pages: u64,
    pub small_allocated_bytes: u64,
    pub large_allocated_bytes: u64,
}

impl JemallocStats {
    /// Advances `epoch`, then reads the refreshed statistics.
    pub fn read(ctl: &Mallctl) -> Result<JemallocStats, AllocatorError> {
        ctl.advance_epoch()?;
        let size = |key: Key<usize>| ctl.get(key).map(|v| v as u64);
        let narenas = ctl.get(keys::ARENAS_NARENAS)?;
        let mut arenas = Vec::with_capacity(narenas as usize);
        for i in 0..narenas as usize {
            if !ctl.get_at(keys::ARENA_INITIALIZED, i)? {
                continue;
            }
            let arena_size = |key: Key<usize>| ctl.get_at(key, i).map(|v| v as u64);
            arenas.push(ArenaStats {
                index: i as u32,
                threads: ctl.get_at(keys::STATS_ARENA_NTHREADS, i)?,
                dirty_pages: arena_size(keys::STATS_ARENA_PDIRTY)?,
                muzzy_pages: arena_size(keys::STATS_ARENA_PMUZZY)?,
                small_allocated_bytes: arena_size(keys::STATS_ARENA_SMALL_ALLOCATED)?,
                large_allocated_bytes: arena_size(keys::STATS_ARENA_LARGE_ALLOCATED)?,
            });
        }
        let allocated = size(keys::STATS_ALLOCATED)?;
        let active = size(keys::STATS_ACTIVE)?;
        Ok(JemallocStats {
            allocated_bytes: allocated,
            active_bytes: active,
            resident_bytes: size(keys::STATS_RESIDENT)?,
            mapped_bytes: size(keys::STATS_MAPPED)?,
            retained_bytes: size(keys::STATS_RETAINED)?,
            metadata_bytes: size(keys::STATS_METADATA)?,
            dirty_bytes: all_arenas_bytes(ctl, keys::STATS_ARENA_PDIRTY)?,
            muzzy_bytes: all_arenas_bytes(ctl, keys::STATS_ARENA_PMUZZY)?,
            fragmentation: fragmentation(allocated, active),
            arenas,
        })
    }
}

/// A page count summed over all arenas (`stats.arenas.<MALLCTL_ARENAS_ALL>.pdirty`, ...), in
/// bytes; the statistics must be fresh (`epoch`).
pub fn all_arenas_bytes(ctl: &Mallctl, pages: Key<usize>) -> Result<u64, AllocatorError> {
    let page = ctl.get(keys::ARENAS_PAGE)? as u64;
    Ok(ctl.get_at(pages, ARENAS_ALL)? as u64 * page)
}

/// `(active − allocated) / active`, 0 when nothing is active.
pub fn fragmentation(allocated: u64, active: u64) -> f64 {
    if active == 0 {
        0.0
    } else {
        active.saturating_sub(allocated) as f64 / active as f64
    }
}

#[cfg(test)]
mod tests {
    use super::fragmentation;

    #[test]
    fn fragmentation_is_the_unused_share_of_active_pages() {
        assert_eq!(fragmentation(0, 0), 0.0);
        assert_eq!(fragmentation(75, 100), 0.25);
        // Thread caches can make allocated briefly exceed active; never negative.
        assert_eq!(fragmentation(120, 100), 0.0);
    }
}
