//! Exports for allocator statistics, remedies and the native side of the memory breakdown.

use super::exports::{json_to_java, to_java};
use super::BridgeError;
use crate::allocator::{self, remedies, AllocatorError, RemedyOutcome};
use crate::native_view::{self, NativeViewError};
use crate::process;
use crate::watch_sample;
use jni::objects::JLongArray;
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;

impl From<NativeViewError> for BridgeError {
    fn from(e: NativeViewError) -> Self {
        match e {
            NativeViewError::Process(e) => e.into(),
            NativeViewError::Allocator(e) => e.into(),
        }
    }
}

/// A remedy's outcome as JSON; settings out of range become `IllegalArgumentException`.
fn remedy(
    env: &mut JNIEnv,
    act: impl FnOnce() -> Result<RemedyOutcome, AllocatorError>,
) -> Result<jstring, BridgeError> {
    match act() {
        Err(e @ AllocatorError::OutOfRange { .. }) => {
            Err(BridgeError::InvalidArgument(e.to_string()))
        }
        other => json_to_java(env, &other?),
    }
}

export! {
    fn allocatorStatsJson(env) -> jstring {
        json_to_java(env, &allocator::stats()?)
    }
}

export! {
    fn rawAllocatorStats(env) -> jstring {
        let (_format, text) = allocator::raw_stats()?;
        to_java(env, &text)
    }
}

export! {
    fn nativeViewJson(env) -> jstring {
        json_to_java(env, &native_view::read()?)
    }
}

export! {
    /// The memory cgroup of process `pid` as `container_memory` in `nativeViewJson` (JSON
    /// `null` when none is seen): what `attach` answers from outside.
    fn containerMemoryOfJson(env, pid: jint) -> jstring {
        let pid = u32::try_from(pid)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| BridgeError::InvalidArgument(format!("bad pid {pid}")))?;
        json_to_java(env, &process::container_memory_of(pid))
    }
}

/// `[start, end)` pairs of addresses from a flat Java array (at most 1024 pairs).
fn range_pairs(env: &mut JNIEnv, ranges: &JLongArray) -> Result<Vec<(u64, u64)>, BridgeError> {
    if ranges.is_null() {
        return Err(BridgeError::InvalidArgument("ranges is null".into()));
    }
    let length = env.get_array_length(ranges)?;
    if length % 2 != 0 || length > 2 * 1024 {
        return Err(BridgeError::InvalidArgument(format!(
            "ranges must be at most 1024 start/end pairs, got {length} values"
        )));
    }
    let mut flat = vec![0; length as usize];
    env.get_long_array_region(ranges, 0, &mut flat)?;
    Ok(flat
        .chunks_exact(2)
        .map(|pair| (pair[0] as u64, pair[1] as u64))
        .collect())
}

export! {
    /// Resident bytes in `[start, end)` pairs of addresses (a flat array), by `mincore`.
    fn residentRangesJson(env, ranges: JLongArray<'l>) -> jstring {
        let pairs = range_pairs(env, &ranges)?;
        json_to_java(env, &process::resident_in(&pairs))
    }
}

export! {
    /// The native parts of one memory snapshot in one call: the native view, the allocator's
    /// statistics of the same refresh, and the resident bytes of `ranges` (as above).
    fn memorySnapshotJson(env, ranges: JLongArray<'l>) -> jstring {
        let pairs = range_pairs(env, &ranges)?;
        json_to_java(env, &native_view::snapshot(&pairs)?)
    }
}

export! {
    fn purgeJson(env) -> jstring {
        remedy(env, remedies::purge)
    }
}

export! {
    fn setDecayJson(env, dirty_ms: jlong, muzzy_ms: jlong) -> jstring {
        remedy(env, || remedies::set_decay(dirty_ms, muzzy_ms))
    }
}

export! {
    fn enableBackgroundThreadsJson(env) -> jstring {
        remedy(env, remedies::enable_background_threads)
    }
}

export! {
    fn flushThreadCacheJson(env) -> jstring {
        remedy(env, remedies::flush_thread_cache)
    }
}

export! {
    fn trimJson(env) -> jstring {
        remedy(env, remedies::trim)
    }
}

export! {
    /// One sample of the memory watch into `out` (at least `watch_sample::SLOTS` longs, -1 where
    /// unknown): no JSON and no Java object, so a sample every second makes no garbage.
    fn watchSample(env, out: JLongArray<'l>) {
        if out.is_null() || (env.get_array_length(&out)? as usize) < watch_sample::SLOTS {
            return Err(BridgeError::InvalidArgument(format!(
                "out must hold at least {} longs",
                watch_sample::SLOTS
            )));
        }
        let sample = watch_sample::read()?;
        env.set_long_array_region(&out, 0, &sample)?;
        Ok(())
    }
}
