//! Heap profiling through the process's jemalloc: switch sampling on and off, set the sample
//! interval, and write jeprof-compatible dumps with what offline symbolisation needs.
//!
//! Works with any jemalloc that serves `malloc` and was started with `opt.prof` on: the
//! preload allocator (profiling ready by default) or a distribution's `libjemalloc.so.2` with
//! `MALLOC_CONF=prof:true,prof_active:false`.

mod dump;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod glibc;
pub mod java_frames;
mod maps;
mod symbols;

pub use dump::{dump, DumpRequest, DumpedProfile};

use crate::allocator::{keys, AllocatorError, Mallctl, ProcessAllocator};
use crate::files::FileError;
use serde::Serialize;
use std::path::PathBuf;

/// The option string that makes a jemalloc profiling-ready without sampling yet.
pub const READY_CONF: &str = "prof:true,prof_active:false";

/// Errors from profiling. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum SamplingError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    BadPath(String),
    /// The dump's path or directory, as every file nativemem creates is checked.
    #[error(transparent)]
    File(#[from] FileError),
    #[error("cannot write the heap profile {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "jemalloc could not write the heap profile {path} (prof.dump failed: {source}); check free \
         space and that the directory is writable"
    )]
    Dump {
        path: PathBuf,
        #[source]
        source: AllocatorError,
    },
    #[error("the heap profile {path} is not a jemalloc heap_v2 dump: {reason}")]
    NotAProfile { path: PathBuf, reason: String },
    #[error(transparent)]
    Allocator(#[from] AllocatorError),
}

/// What profiling can do in this process right now.
#[derive(Debug, Clone, Serialize)]
pub struct SamplingStatus {
    /// Compiled in (`config.prof`) and switched on at start (`opt.prof`).
    pub available: bool,
    /// Why not, with the settings that fix it (empty when available).
    pub unavailable_reason: String,
    /// Sampling right now (`prof.active`).
    pub active: bool,
    /// Sampling enabled for the calling thread (`thread.prof.active`).
    pub thread_active: bool,
    /// Average bytes between samples (`2^prof.lg_sample`); 0 when unavailable.
    pub sample_interval_bytes: u64,
}

/// The process's jemalloc, if it can profile; otherwise the reason with the fix.
pub fn profiler() -> Result<&'static Mallctl, SamplingError> {
    let allocator = ProcessAllocator::get();
    let Some(ctl) = allocator.jemalloc() else {
        return Err(SamplingError::Unavailable(format!(
            "heap profiles need jemalloc, but glibc serves malloc in this process ({}). Start the \
             JVM with the preload allocator: run 'java -jar nativemem.jar env --dir /opt/nativemem' \
             and set LD_PRELOAD=/opt/nativemem/libnativemem_jemalloc.so (profiling ready by \
             default), or use Debian's jemalloc: LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
             MALLOC_CONF={READY_CONF}",
            allocator.malloc_object()
        )));
    };
    let object = allocator.malloc_object();
    if !ctl.get(keys::CONFIG_PROF).unwrap_or(false) {
        return Err(SamplingError::Unavailable(format!(
            "the jemalloc serving malloc ({object}) was built without profiling (config.prof is \
             false). Use one built with --enable-prof: run 'java -jar nativemem.jar env --dir \
             /opt/nativemem' and set LD_PRELOAD=/opt/nativemem/libnativemem_jemalloc.so, or \
             LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF={READY_CONF}"
        )));
    }
    if !ctl.get(keys::OPT_PROF)? {
        return Err(SamplingError::Unavailable(format!(
            "jemalloc ({object}) can profile but was started without it (opt.prof is false), and \
             it cannot be switched on in a running process. Restart the JVM with \
             LD_PRELOAD={object} MALLOC_CONF={READY_CONF} (a MALLOC_CONF you already have: append \
             ,{READY_CONF})"
        )));
    }
    Ok(ctl)
}

/// The current state; never fails for lack of jemalloc (that is `available: false`).
pub fn status() -> Result<SamplingStatus, SamplingError> {
    let ctl = match profiler() {
        Ok(ctl) => ctl,
        Err(SamplingError::Unavailable(reason)) => {
            return Ok(SamplingStatus {
                available: false,
                unavailable_reason: reason,
                active: false,
                thread_active: false,
                sample_interval_bytes: 0,
            })
        }
        Err(e) => return Err(e),
    };
    Ok(SamplingStatus {
        available: true,
        unavailable_reason: String::new(),
        active: ctl.get(keys::PROF_ACTIVE)?,
        thread_active: ctl.get(keys::THREAD_PROF_ACTIVE)?,
        sample_interval_bytes: sample_interval(ctl)?,
    })
}

/// Starts or stops sampling for the whole process (`prof.active`).
pub fn set_active(active: bool) -> Result<(), SamplingError> {
    Ok(profiler()?.set(keys::PROF_ACTIVE, active)?)
}

/// Starts or stops sampling for the calling thread (`thread.prof.active`).
pub fn set_thread_active(active: bool) -> Result<(), SamplingError> {
    Ok(profiler()?.set(keys::THREAD_PROF_ACTIVE, active)?)
}

/// Discards all samples (`prof.reset`); with `interval_bytes`, also sets the sample interval to
/// the nearest power of two. Returns the interval in effect afterwards.
pub fn reset(interval_bytes: Option<u64>) -> Result<u64, SamplingError> {
    let ctl = profiler()?;
    match interval_bytes {
        Some(bytes) => ctl.set(keys::PROF_RESET, nearest_lg(bytes))?,
        None => ctl.run(keys::PROF_RESET.name)?,
    }
    sample_interval(ctl)
}

fn sample_interval(ctl: &Mallctl) -> Result<u64, SamplingError> {
    let lg = ctl.get(keys::PROF_LG_SAMPLE)?;
    Ok(1u64.checked_shl(lg as u32).unwrap_or(u64::MAX))
}

/// `log2` of the power of two nearest to `bytes` (ties round up), at least 0, at most 62.
pub fn nearest_lg(bytes: u64) -> usize {
    if bytes <= 1 {
        return 0;
    }
    let floor = 63 - bytes.leading_zeros() as usize;
    let half = 1u64 << floor >> 1;
    let lg = if bytes - (1u64 << floor) >= half.max(1) && floor > 0 {
        floor + 1
    } else {
        floor
    };
    lg.min(62)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_round_to_the_nearest_power_of_two() {
        assert_eq!(nearest_lg(0), 0);
        assert_eq!(nearest_lg(1), 0);
        assert_eq!(nearest_lg(2), 1);
        assert_eq!(nearest_lg(3), 2);
        assert_eq!(nearest_lg(512 * 1024), 19);
        assert_eq!(nearest_lg(700 * 1024), 19);
        assert_eq!(nearest_lg(800 * 1024), 20);
        assert_eq!(nearest_lg(u64::MAX), 62);
    }

    #[test]
    fn glibc_process_reports_unavailable_with_the_fix() {
        if std::env::var("LD_PRELOAD")
            .unwrap_or_default()
            .contains("jemalloc")
        {
            return;
        }
        let status = status().unwrap();
        assert!(!status.available);
        assert!(
            status.unavailable_reason.contains("LD_PRELOAD=")
                && status.unavailable_reason.contains(READY_CONF),
            "{}",
            status.unavailable_reason
        );
        assert!(matches!(
            set_active(true),
            Err(SamplingError::Unavailable(_))
        ));
    }
}
