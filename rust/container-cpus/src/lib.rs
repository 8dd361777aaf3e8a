//! The number of CPUs a container grants this process, computed as the JVM computes it: the CPU
//! affinity count, capped by `ceil(quota / period)` of the lowest CPU quota from this process's
//! cgroup up to the root of its hierarchy (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` and
//! `cpu.cfs_period_us`).
//!
//! The cgroup lookup under it, [`cgroup_dir`], serves any controller: the core finds its memory
//! cgroup with it too, so `/proc/self/cgroup` and `/proc/self/mountinfo` are parsed in one place.
//!
//! `no_std` and allocation-free on purpose: the preload allocator sizes its arenas with this before
//! its own heap exists, so it reads files with `open`/`read` into stack buffers.
#![no_std]

#[cfg(test)]
extern crate std;

mod cgroup;
mod text;

pub use cgroup::{cgroup_dir, cgroup_dir_of, CgroupDir, CgroupVersion, CpuQuota, Mounts};

/// What bounds this process's parallelism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerCpus {
    /// CPUs in this process's affinity mask (`sched_getaffinity`).
    pub affinity: u32,
    /// The cgroup version whose CPU controller was read, if any.
    pub cgroup: Option<CgroupVersion>,
    /// The lowest CPU quota up the hierarchy, if one is set.
    pub quota: Option<CpuQuota>,
    /// `min(affinity, ceil(quota))`, never below 1: what the JVM reports as available processors.
    pub effective: u32,
}

/// Reads this process's CPU limits from the real `/proc` and `/sys/fs/cgroup`.
pub fn detect() -> ContainerCpus {
    detect_under(b"", affinity_count())
}

/// Reads the limits under `root` (a fixture tree holding `proc/self/cgroup`,
/// `proc/self/mountinfo` and the cgroup files; empty for the real system), with a given
/// affinity count.
pub fn detect_under(root: &[u8], affinity: u32) -> ContainerCpus {
    let affinity = affinity.max(1);
    let (cgroup, quota) = match cgroup::lowest_quota(root) {
        Some((version, quota)) => (Some(version), quota),
        None => (None, None),
    };
    let effective = match quota {
        Some(q) => affinity.min(q.ceil_cpus()).max(1),
        None => affinity,
    };
    ContainerCpus {
        affinity,
        cgroup,
        quota,
        effective,
    }
}

/// CPUs this process may run on.
pub fn affinity_count() -> u32 {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        if libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let n = libc::sysconf(libc::_SC_NPROCESSORS_ONLN);
            return if n > 0 { n as u32 } else { 1 };
        }
        libc::CPU_COUNT(&set) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_system_agrees_with_nproc_when_no_quota() {
        let cpus = detect();
        assert!(cpus.effective >= 1 && cpus.effective <= cpus.affinity);
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as u32;
        assert!(cpus.affinity <= online);
        if cpus.quota.is_none() {
            assert_eq!(cpus.effective, cpus.affinity);
        }
    }
}
