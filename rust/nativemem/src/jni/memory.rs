//! Exports for allocator statistics, remedies and the native side of the memory breakdown.

use super::exports::{json_to_java, to_java};
use super::{guard, BridgeError};
use crate::allocator::{self, remedies, AllocatorError, RemedyOutcome};
use crate::native_view::{self, NativeViewError};
use crate::process;
use crate::watch_sample;
use jni::objects::{JClass, JLongArray};
use jni::sys::{jlong, jstring};
use jni::JNIEnv;
use serde::Serialize;

impl From<NativeViewError> for BridgeError {
    fn from(e: NativeViewError) -> Self {
        match e {
            NativeViewError::Process(e) => e.into(),
            NativeViewError::Allocator(e) => e.into(),
        }
    }
}

/// Runs `read` and returns its result as JSON text.
fn json<'l, T: Serialize>(
    env: &mut JNIEnv<'l>,
    read: impl FnOnce() -> Result<T, BridgeError>,
) -> jstring {
    guard(env, std::ptr::null_mut(), |env| json_to_java(env, &read()?))
}

/// A remedy's outcome as JSON; settings out of range become `IllegalArgumentException`.
fn remedy<'l>(
    env: &mut JNIEnv<'l>,
    act: impl FnOnce() -> Result<RemedyOutcome, AllocatorError>,
) -> jstring {
    json(env, || match act() {
        Err(e @ AllocatorError::OutOfRange { .. }) => {
            Err(BridgeError::InvalidArgument(e.to_string()))
        }
        other => Ok(other?),
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_allocatorStatsJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    json(&mut env, || Ok(allocator::stats()?))
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_rawAllocatorStats<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let (_format, text) = allocator::raw_stats()?;
        to_java(env, &text)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_nativeViewJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    json(&mut env, || Ok(native_view::read()?))
}

/// Resident bytes in `[start, end)` pairs of addresses (a flat array), by `mincore`.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_residentRangesJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    ranges: JLongArray<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        if ranges.is_null() {
            return Err(BridgeError::InvalidArgument("ranges is null".into()));
        }
        let length = env.get_array_length(&ranges)?;
        if length % 2 != 0 || length > 2 * 1024 {
            return Err(BridgeError::InvalidArgument(format!(
                "ranges must be at most 1024 start/end pairs, got {length} values"
            )));
        }
        let mut flat = vec![0; length as usize];
        env.get_long_array_region(&ranges, 0, &mut flat)?;
        let pairs: Vec<(u64, u64)> = flat
            .chunks_exact(2)
            .map(|pair| (pair[0] as u64, pair[1] as u64))
            .collect();
        json_to_java(env, &process::resident_in(&pairs))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_purgeJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    remedy(&mut env, remedies::purge)
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_setDecayJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dirty_ms: jlong,
    muzzy_ms: jlong,
) -> jstring {
    remedy(&mut env, || remedies::set_decay(dirty_ms, muzzy_ms))
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_enableBackgroundThreadsJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    remedy(&mut env, remedies::enable_background_threads)
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_flushThreadCacheJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    remedy(&mut env, remedies::flush_thread_cache)
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_trimJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    remedy(&mut env, remedies::trim)
}

/// One sample of the memory watch into `out` (at least `watch_sample::SLOTS` longs, -1 where
/// unknown): no JSON and no Java object, so a sample every second makes no garbage.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_watchSample<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    out: JLongArray<'l>,
) {
    guard(&mut env, (), |env| {
        if out.is_null() || (env.get_array_length(&out)? as usize) < watch_sample::SLOTS {
            return Err(BridgeError::InvalidArgument(format!(
                "out must hold at least {} longs",
                watch_sample::SLOTS
            )));
        }
        let sample = watch_sample::read()?;
        env.set_long_array_region(&out, 0, &sample)?;
        Ok(())
    })
}
