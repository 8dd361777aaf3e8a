//! Java frames above sampled native allocations: a jemalloc backtrace hook ([`hook`]) appends the
//! allocating Java thread's frames (AsyncGetCallTrace) to the native ones as synthetic addresses
//! ([`table`]); each dump's sidecar names them (`java-frames.json`, resolved through JVMTI on the
//! dumping thread, [`describe`]). What they need of the JVM is in [`crate::jvm`]:
//! `AsyncGetCallTrace` and an environment in which every method has an id. Off until turned on;
//! turning it off puts jemalloc's hook back.

mod hook;
pub mod table;

use super::SamplingError;
use crate::allocator::keys;
use crate::jvm::async_get_call_trace::{async_get_call_trace, current_env};
use crate::jvm::jvmti::{class_name, Jvmti};
use crate::jvm::method_ids;
pub use hook::append_java_frames;
use hook::{backtrace_hook, STATE};
use jvmti_bindings::sys::jni::{jmethodID, JNIEnv, JavaVM};
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Whether Java frames are being recorded, and what happened so far.
#[derive(Debug, Clone, Serialize)]
pub struct JavaFramesStatus {
    pub enabled: bool,
    /// Samples the hook saw while enabled, and those that got Java frames.
    pub samples: u64,
    pub samples_with_java_frames: u64,
    /// Distinct Java frames interned, of [`table::CAPACITY`].
    pub distinct_frames: u64,
}

static SWITCH: Mutex<Option<Jvmti>> = Mutex::new(None);

/// Turns Java frames on or off. `vm` is the process's JavaVM and the caller a thread attached to
/// it (a JNI call).
///
/// # Safety
/// `vm` must be the process's JavaVM and the calling thread attached to it.
pub unsafe fn set_enabled(vm: *mut JavaVM, on: bool) -> Result<JavaFramesStatus, SamplingError> {
    let mut jvmti = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    if on == STATE.enabled.load(Ordering::Acquire) {
        return Ok(status());
    }
    let unavailable = |why: String| {
        SamplingError::Unavailable(format!(
            "Java frames cannot be added to heap profiles here: {why}. Profiles keep their native \
             frames."
        ))
    };
    let ctl = match super::engine()?.0 {
        super::Engine::Jemalloc(ctl) => ctl,
        // The import-rewriting engine asks for Java frames itself, in its hook.
        #[cfg(import_rewriting)]
        super::Engine::Imports => {
            if on {
                prepare(vm, &mut jvmti).map_err(unavailable)?;
                STATE.enabled.store(true, Ordering::Release);
            } else {
                STATE.enabled.store(false, Ordering::Release);
            }
            return Ok(status());
        }
    };
    if !on {
        STATE.enabled.store(false, Ordering::Release);
        let current: usize = ctl.get(keys::HOOK_PROF_BACKTRACE).unwrap_or(0);
        // Someone else's hook installed after ours stays; ours then passes through.
        if current == ours() {
            ctl.set(
                keys::HOOK_PROF_BACKTRACE,
                STATE.previous.load(Ordering::Acquire),
            )?;
        }
        return Ok(status());
    }
    let previous: usize = ctl.get(keys::HOOK_PROF_BACKTRACE).map_err(|e| {
        unavailable(format!(
            "the jemalloc serving malloc has no {} ({e}); it needs jemalloc 5.3 or later",
            keys::HOOK_PROF_BACKTRACE.name
        ))
    })?;
    prepare(vm, &mut jvmti).map_err(unavailable)?;
    if previous != ours() {
        STATE.previous.store(previous, Ordering::Release);
    }
    pin_this_library();
    let (start, end) = own_code();
    STATE.own_code.0.store(start, Ordering::Relaxed);
    STATE.own_code.1.store(end, Ordering::Relaxed);
    STATE.enabled.store(true, Ordering::Release);
    if previous != ours() {
        if let Err(e) = ctl.set(keys::HOOK_PROF_BACKTRACE, ours()) {
            STATE.enabled.store(false, Ordering::Release);
            return Err(unavailable(format!(
                "jemalloc refused the backtrace hook ({e})"
            )));
        }
    }
    Ok(status())
}

/// What recording Java frames needs from the JVM, found once: AsyncGetCallTrace, our JVMTI
/// environment, method ids for the classes loaded so far.
///
/// # Safety
/// `vm` must be the process's JavaVM and the calling thread attached to it.
unsafe fn prepare(vm: *mut JavaVM, jvmti: &mut Option<Jvmti>) -> Result<(), String> {
    let agct = async_get_call_trace(vm)?;
    if jvmti.is_none() {
        *jvmti = Some(method_ids::open(vm)?);
    }
    if let (Some(jvmti), Some(env)) = (*jvmti, current_env(vm)) {
        method_ids::make_method_ids_of_loaded_classes(jvmti, env);
    }
    STATE.vm.store(vm, Ordering::Release);
    STATE.agct.store(agct as usize, Ordering::Release);
    Ok(())
}

/// Our hook's address, as jemalloc stores it.
fn ours() -> usize {
    backtrace_hook as *const () as usize
}

/// The current state.
pub fn status() -> JavaFramesStatus {
    JavaFramesStatus {
        enabled: STATE.enabled.load(Ordering::Acquire),
        samples: STATE.samples.load(Ordering::Relaxed),
        samples_with_java_frames: STATE.samples_with_java.load(Ordering::Relaxed),
        distinct_frames: STATE.frames.entries().count() as u64,
    }
}

/// Keeps this library mapped for the life of the process: jemalloc may call the hook after the
/// class loader that loaded the library is collected, which would otherwise unload it.
fn pin_this_library() {
    // SAFETY: dladdr fills `info` for an address in a loaded object; dlopen with RTLD_NOLOAD only
    // takes another reference to that already-loaded object, and RTLD_NODELETE keeps it.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(ours() as *const libc::c_void, &mut info) != 0 && !info.dli_fname.is_null()
        {
            libc::dlopen(
                info.dli_fname,
                libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            );
        }
    }
}

/// glibc's `dladdr1` flag for the symbol's ELF entry (not in the libc crate).
const RTLD_DL_SYMENT: libc::c_int = 1;

/// The hook's code range, from its symbol's size (0, 0 when the symbol table does not say).
fn own_code() -> (usize, usize) {
    let start = ours();
    // SAFETY: dladdr1 only fills `info` and `symbol` for an address in a loaded object.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let mut symbol: *const libc::Elf64_Sym = std::ptr::null();
        let found = libc::dladdr1(
            start as *const libc::c_void,
            &mut info,
            &mut symbol as *mut *const libc::Elf64_Sym as *mut *mut libc::c_void,
            RTLD_DL_SYMENT,
        );
        if found == 0 || symbol.is_null() || (*symbol).st_size == 0 {
            return (0, 0);
        }
        (start, start + (*symbol).st_size as usize)
    }
}

/// What a frame's method is, or why it cannot be told (a method of an unloaded class: the JVM
/// answers `INVALID_METHODID` for its stale id rather than reading freed memory).
///
/// # Safety
/// `jni` must be the calling thread's JNIEnv.
pub unsafe fn describe(
    jvmti: Jvmti,
    jni: *mut JNIEnv,
    frame: table::Frame,
) -> Result<JavaMethod, String> {
    let method = frame.method as usize as jmethodID;
    let (name, signature) = jvmti.method_name(method)?;
    let (class, source_file) = jvmti.declaring_class(jni, method, true)?;
    Ok(JavaMethod {
        class: class.map(|s| class_name(&s)).unwrap_or_else(|| "?".into()),
        method: name,
        signature,
        source_file,
        line: jvmti.line_of(method, frame.bci),
    })
}

/// A named frame, as the sidecar keeps it.
#[derive(Debug, Clone, Serialize)]
pub struct JavaMethod {
    /// `java.util.zip.Inflater`.
    pub class: String,
    pub method: String,
    /// JVM descriptor, `(IZ)J`.
    pub signature: String,
    pub source_file: Option<String>,
    /// From the line number table; None for a native method or without line numbers.
    pub line: Option<u32>,
}

/// One named synthetic frame in the sidecar.
#[derive(Debug, Serialize)]
pub struct NamedFrame {
    pub index: u32,
    pub bci: i32,
    #[serde(flatten)]
    pub method: Option<JavaMethod>,
    /// Why the method could not be named (its class was unloaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
}

/// The sidecar's names for every frame interned so far; None when Java frames were never on or
/// the calling thread is not a Java thread.
pub fn names() -> Option<serde_json::Value> {
    let jvmti = (*SWITCH.lock().unwrap_or_else(|p| p.into_inner()))?;
    let vm = STATE.vm.load(Ordering::Acquire);
    // SAFETY: `vm` was stored from the JavaVM when Java frames were turned on.
    let env = unsafe { current_env(vm)? };
    let frames: Vec<NamedFrame> = STATE
        .frames
        .entries()
        .map(|(index, frame)| {
            // SAFETY: `env` is this thread's JNIEnv; `jvmti` our environment.
            let described = unsafe { describe(jvmti, env, frame) };
            NamedFrame {
                index,
                bci: frame.bci,
                unresolved: described.as_ref().err().cloned(),
                method: described.ok(),
            }
        })
        .collect();
    Some(serde_json::json!({
        "format": crate::sidecar_layout::JAVA_FRAMES_FORMAT,
        "address_base": format!("0x{:x}", crate::jvm::frame_addresses::ADDRESS_BASE),
        "frames": frames,
    }))
}
