//! JNI exports for heap profiling (`NativeBridge.sampling*`, `NativeBridge.dumpProfileJson`).

use super::exports::{from_java, json_to_java};
use super::BridgeError;
use crate::jobs::heap_dump::{self, HeapDumpRequest};
use crate::sampling::{self, java_frames};
use jni::objects::JString;
use jni::sys::{jboolean, jlong, jstring, JNI_FALSE};

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
    /// One heap-profile dump: the request's JSON in ([`HeapDumpRequest`]), the dump in place and
    /// its summary out.
    fn dumpProfileJson(env, request: JString<'l>) -> jstring {
        let request = from_java(env, &request, "the dump request")?;
        let request: HeapDumpRequest = serde_json::from_str(&request)
            .map_err(|e| BridgeError::InvalidArgument(format!("a dump request: {e}")))?;
        json_to_java(env, &heap_dump::run(&request)?)
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
