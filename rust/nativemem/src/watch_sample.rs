//! One sample of the memory watch: the figures it reads every second, as plain numbers.
//! Built from the same readers as the breakdown (cgroup, `/proc/self/status`, the allocator's
//! totals) plus PSI and the handle registry's totals; no JSON, so the Java side reads it into a
//! preallocated array without garbage.

use crate::handles::registry;
use crate::native_view::{self, NativeViewError};
use crate::process;

/// Slots of the sample array, in order; -1 is "unknown" in every slot.
pub const LIMIT: usize = 0;
pub const USAGE: usize = 1;
pub const RSS: usize = 2;
pub const ALLOCATOR_ALLOCATED: usize = 3;
pub const ALLOCATOR_RESIDENT: usize = 4;
pub const OOM: usize = 5;
pub const OOM_KILL: usize = 6;
/// PSI `some avg10`, in hundredths of a percent.
pub const PSI_SOME_AVG10: usize = 7;
pub const HANDLES_OPEN: usize = 8;
pub const HANDLES_LEAKED: usize = 9;
pub const SLOTS: usize = 10;

pub const UNKNOWN: i64 = -1;

fn known(value: Option<u64>) -> i64 {
    value.map_or(UNKNOWN, |v| i64::try_from(v).unwrap_or(i64::MAX))
}

/// Reads one sample. The allocator's resident figure is jemalloc's `stats.resident`, or on glibc
/// what it holds from the system (`arena + hblkhd`), its closest figure.
pub fn read() -> Result<[i64; SLOTS], NativeViewError> {
    let mut sample = [UNKNOWN; SLOTS];
    let own = process::memory()?;
    sample[RSS] = known(Some(own.rss_bytes));
    if let Some(cgroup) = process::container_memory() {
        sample[LIMIT] = known(cgroup.limit_bytes);
        sample[USAGE] = known(Some(cgroup.usage_bytes));
        sample[OOM] = known(cgroup.oom_events);
        sample[OOM_KILL] = known(cgroup.oom_kill_events);
    }
    sample[PSI_SOME_AVG10] =
        process::memory_pressure().map_or(UNKNOWN, |p| (p * 100.0).round() as i64);
    let allocator = native_view::allocator_summary()?;
    sample[ALLOCATOR_ALLOCATED] = known(Some(allocator.allocated_bytes));
    sample[ALLOCATOR_RESIDENT] = known(Some(allocator.footprint_bytes));
    let (open, leaked) = registry().totals();
    sample[HANDLES_OPEN] = known(Some(open));
    sample[HANDLES_LEAKED] = known(Some(leaked));
    Ok(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_agrees_with_the_breakdown_readers() {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as i64;
        let resident = || -> i64 {
            let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
            let pages: i64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
            pages * page
        };
        // Other test threads allocate and free meanwhile: the sample's RSS lies between the
        // kernel's figures just before and just after it, within 4 MiB, on one of a few tries.
        let mut tries = Vec::new();
        let mut sample = read().unwrap();
        for _ in 0..8 {
            let before = resident();
            sample = read().unwrap();
            let after = resident();
            tries.push((before, sample[RSS], after));
            if (before.min(after) - (4 << 20)..=before.max(after) + (4 << 20))
                .contains(&sample[RSS])
            {
                break;
            }
        }
        let (before, rss, after) = *tries.last().unwrap();
        assert!(
            (before.min(after) - (4 << 20)..=before.max(after) + (4 << 20)).contains(&rss),
            "{tries:?} {sample:?}"
        );
        assert!(sample[ALLOCATOR_ALLOCATED] > 0 && sample[ALLOCATOR_RESIDENT] > 0);
        match process::container_memory() {
            Some(c) => assert_eq!(sample[LIMIT], known(c.limit_bytes)),
            None => assert_eq!((sample[LIMIT], sample[USAGE]), (UNKNOWN, UNKNOWN)),
        }
        assert!(sample[HANDLES_OPEN] >= 0 && sample[HANDLES_LEAKED] >= 0);
    }
}
