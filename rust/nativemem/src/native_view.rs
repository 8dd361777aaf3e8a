//! The native side of the memory breakdown: kernel, cgroup and allocator views in one read.
//! The JVM side (heap, pools, NMT) is added in Java, where those numbers live.

use crate::allocator::{
    self, all_arenas_bytes, glibc, keys, AllocatorError, AllocatorStats, ProcessAllocator,
};
use crate::process::{self, ContainerMemory, ProcessError, ProcessMemory};
use serde::Serialize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Everything the breakdown needs from outside the JVM.
#[derive(Debug, Clone, Serialize)]
pub struct NativeView {
    pub process: ProcessMemory,
    /// `None` when no memory cgroup is mounted for this process.
    pub container_memory: Option<ContainerMemory>,
    pub container_cpus: ContainerCpuView,
    pub allocator: AllocatorSummary,
}

/// The container CPU count as the JVM computes it (see the `container-cpus` crate).
#[derive(Debug, Clone, Serialize)]
pub struct ContainerCpuView {
    pub affinity: u32,
    /// `v1`, `v2`, or `None` without a CPU controller.
    pub cgroup_version: Option<&'static str>,
    /// The lowest CPU quota up the hierarchy, in thousandths of a CPU.
    pub quota_millicpus: Option<u64>,
    pub effective: u32,
}

/// The allocator's totals, cheap enough to read on every breakdown.
#[derive(Debug, Clone, Serialize)]
pub struct AllocatorSummary {
    /// `jemalloc` or `glibc`.
    pub kind: &'static str,
    pub allocated_bytes: u64,
    /// What the allocator holds from the system for that: jemalloc `stats.resident` (allocated
    /// plus fragmentation, dirty pages, metadata); glibc `arena + hblkhd` (free chunks included).
    pub footprint_bytes: u64,
    /// jemalloc `stats.resident`; glibc does not count it.
    pub resident_bytes: Option<u64>,
    /// Unused dirty pages jemalloc holds, in bytes.
    pub dirty_bytes: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum NativeViewError {
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Allocator(#[from] AllocatorError),
}

pub fn read() -> Result<NativeView, NativeViewError> {
    view(allocator_summary()?)
}

/// The native parts of one memory snapshot (`MemorySnapshot` on the Java side), read in one call:
/// the breakdown's native view, the allocator's statistics, and the resident bytes of the JVM's
/// ranges. The view's allocator totals are taken from those statistics, so one epoch (jemalloc) or
/// one `mallinfo2` (glibc) serves both and they agree.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotView {
    pub native_view: NativeView,
    pub stats: AllocatorStats,
    /// Per `[start, end)` range asked about, as [`process::resident_in`] counts them.
    pub resident_bytes: Vec<Option<u64>>,
}

/// Reads a [`SnapshotView`], counting the resident pages of `ranges`.
pub fn snapshot(ranges: &[(u64, u64)]) -> Result<SnapshotView, NativeViewError> {
    let stats = allocator::stats()?;
    Ok(SnapshotView {
        native_view: view(summary_of(&stats))?,
        stats,
        // No range (a JVM without diagnostic commands): no map to open.
        resident_bytes: if ranges.is_empty() {
            Vec::new()
        } else {
            process::resident_in(ranges).resident_bytes
        },
    })
}

fn view(allocator: AllocatorSummary) -> Result<NativeView, NativeViewError> {
    Ok(NativeView {
        process: process::memory()?,
        container_memory: process::container_memory(),
        container_cpus: cpus(),
        allocator,
    })
}

/// The totals [`allocator_summary`] reads, taken from statistics read with the same refresh.
pub fn summary_of(stats: &AllocatorStats) -> AllocatorSummary {
    match stats {
        AllocatorStats::Jemalloc(j) => AllocatorSummary {
            kind: "jemalloc",
            allocated_bytes: j.allocated_bytes,
            footprint_bytes: j.resident_bytes,
            resident_bytes: Some(j.resident_bytes),
            dirty_bytes: Some(j.dirty_bytes),
        },
        AllocatorStats::Glibc(g) => AllocatorSummary {
            kind: "glibc",
            allocated_bytes: g.allocated_bytes,
            footprint_bytes: g.arena_bytes + g.mmap_bytes,
            resident_bytes: None,
            dirty_bytes: None,
        },
    }
}

/// Re-read at most every 20 ms, as the JVM caches its container CPU count.
fn cpus() -> ContainerCpuView {
    static CACHED: Mutex<Option<(Instant, container_cpus::ContainerCpus)>> = Mutex::new(None);
    let mut cached = CACHED.lock().unwrap_or_else(|p| p.into_inner());
    let cpus = match *cached {
        Some((at, cpus)) if at.elapsed() < Duration::from_millis(20) => cpus,
        _ => {
            let cpus = container_cpus::detect();
            *cached = Some((Instant::now(), cpus));
            cpus
        }
    };
    ContainerCpuView {
        affinity: cpus.affinity,
        cgroup_version: cpus.cgroup.map(|v| match v {
            container_cpus::CgroupVersion::V1 => "v1",
            container_cpus::CgroupVersion::V2 => "v2",
        }),
        quota_millicpus: cpus.quota.map(|q| q.millicpus()),
        effective: cpus.effective,
    }
}

/// The allocator's totals (jemalloc after an epoch advance, or glibc's `mallinfo2`).
pub fn allocator_summary() -> Result<AllocatorSummary, AllocatorError> {
    match ProcessAllocator::get().jemalloc() {
        Some(ctl) => {
            ctl.advance_epoch()?;
            let dirty_bytes = all_arenas_bytes(ctl, keys::STATS_ARENA_PDIRTY)?;
            let resident = ctl.get(keys::STATS_RESIDENT)? as u64;
            Ok(AllocatorSummary {
                kind: "jemalloc",
                allocated_bytes: ctl.get(keys::STATS_ALLOCATED)? as u64,
                footprint_bytes: resident,
                resident_bytes: Some(resident),
                dirty_bytes: Some(dirty_bytes),
            })
        }
        None => {
            let (allocated, footprint) = glibc::allocated_and_footprint();
            Ok(AllocatorSummary {
                kind: "glibc",
                allocated_bytes: allocated,
                footprint_bytes: footprint,
                resident_bytes: None,
                dirty_bytes: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_counts_its_ranges_and_takes_the_allocator_totals_from_its_statistics() {
        // A page of our own, touched: resident. The range ends at the page's end, aligned.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let buffer = vec![1u8; 4 * page];
        let start = (buffer.as_ptr() as usize).next_multiple_of(page) as u64;
        let snapshot = snapshot(&[(start, start + page as u64)]).unwrap();
        assert_eq!(snapshot.resident_bytes, vec![Some(page as u64)]);
        let view = &snapshot.native_view.allocator;
        match &snapshot.stats {
            AllocatorStats::Jemalloc(j) => {
                assert_eq!(view.kind, "jemalloc");
                assert_eq!(view.allocated_bytes, j.allocated_bytes);
                assert_eq!(view.footprint_bytes, j.resident_bytes);
                assert_eq!(view.dirty_bytes, Some(j.dirty_bytes));
            }
            AllocatorStats::Glibc(g) => {
                assert_eq!(view.kind, "glibc");
                assert_eq!(view.allocated_bytes, g.allocated_bytes);
                assert_eq!(view.footprint_bytes, g.arena_bytes + g.mmap_bytes);
                assert_eq!((view.resident_bytes, view.dirty_bytes), (None, None));
            }
        }
        // What a separate read of the view says, within what other test threads allocate.
        let alone = read().unwrap().allocator;
        assert_eq!(alone.kind, view.kind);
        assert!(
            alone.allocated_bytes.abs_diff(view.allocated_bytes) < 64 << 20,
            "{alone:?} vs {view:?}"
        );
        assert!(snapshot.native_view.process.rss_bytes > 0);
        drop(buffer);
    }
}
