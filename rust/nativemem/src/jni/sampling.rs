//! JNI exports for heap profiling (`NativeBridge.sampling*`, `NativeBridge.dumpProfileJson`).

use super::exports::{from_java, json_to_java};
use super::BridgeError;
use crate::sampling::{self, java_frames, DumpRequest};
use jni::objects::JString;
use jni::sys::{jboolean, jlong, jstring, JNI_FALSE};
use jni::JNIEnv;
use std::path::PathBuf;

fn optional_path(env: &mut JNIEnv, value: &JString) -> Result<Option<PathBuf>, BridgeError> {
    if value.is_null() {
        return Ok(None);
    }
    let text: String = env.get_string(value)?.into();
    Ok((!text.is_empty()).then(|| PathBuf::from(text)))
}

export! {
    fn samplingStatusJson(env) -> jstring {
        json_to_java(env, &sampling::status()?)
    }
}

export! {
    fn samplingSetActive(_, active: jboolean) {
        Ok(sampling::set_active(active != JNI_FALSE)?)
    }
}

export! {
    fn samplingSetThreadActive(_, active: jboolean) {
        Ok(sampling::set_thread_active(active != JNI_FALSE)?)
    }
}

export! {
    /// `intervalBytes` <= 0 keeps the interval; returns the interval in effect.
    fn samplingReset(_, interval_bytes: jlong) -> jlong {
        let interval = (interval_bytes > 0).then_some(interval_bytes as u64);
        Ok(sampling::reset(interval)? as jlong)
    }
}

export! {
    fn dumpProfileJson(
        env,
        target: JString<'l>,
        save_from: JString<'l>,
        perf_map: JString<'l>,
    ) -> jstring {
        // An empty path is not a missing one: the dump's own check says what to pass.
        let target = PathBuf::from(from_java(env, &target, "the heap profile path")?);
        let request = DumpRequest {
            target,
            save_from: optional_path(env, &save_from)?
                .map(|lines| {
                    lines
                        .to_string_lossy()
                        .lines()
                        .filter(|l| !l.is_empty())
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            perf_map: optional_path(env, &perf_map)?,
        };
        json_to_java(env, &sampling::dump(&request)?)
    }
}

export! {
    /// Turns Java frames in heap profiles on or off; returns their status.
    fn samplingJavaFramesJson(env, on: jboolean) -> jstring {
        let vm = env.get_java_vm()?.get_java_vm_pointer();
        // SAFETY: the JavaVM of this JNI call, on a thread attached to it.
        let status = unsafe { java_frames::set_enabled(vm.cast(), on != JNI_FALSE)? };
        json_to_java(env, &status)
    }
}

export! {
    /// The status of Java frames in heap profiles, changing nothing.
    fn samplingJavaFramesStatusJson(env) -> jstring {
        json_to_java(env, &java_frames::status())
    }
}
