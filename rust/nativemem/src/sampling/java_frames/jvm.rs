//! What the hook needs from the JVM, found once on a Java thread when Java frames are turned on:
//! `AsyncGetCallTrace` (exported by libjvm) and a JVMTI environment of our own whose ClassLoad
//! and ClassPrepare events keep `AsyncGetCallTrace` working (it answers -1 without ClassLoad) and
//! give every method a method id (it reports a frame whose method has none as a null method).
//! Frames are named later, at dump time, through the same environment (`crate::jvmti`).

use super::table::Frame;
use crate::jvmti::{check, class_name, Jvmti};
use jvmti_bindings::sys::jni::{jclass, jint, jmethodID, JNIEnv, JavaVM, JNI_VERSION_1_6};
use jvmti_bindings::sys::jvmti::{
    jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD,
    JVMTI_EVENT_CLASS_PREPARE,
};
use serde::Serialize;
use std::ffi::{c_void, CStr};

/// `ASGCT_CallFrame`: `lineno` is the bytecode index (-3 for a native method).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CallFrame {
    pub lineno: jint,
    pub method_id: jmethodID,
}

/// `ASGCT_CallTrace`.
#[repr(C)]
pub struct CallTrace {
    pub env: *mut JNIEnv,
    pub num_frames: jint,
    pub frames: *mut CallFrame,
}

pub type AsyncGetCallTrace = unsafe extern "C" fn(*mut CallTrace, jint, *mut c_void);

/// The calling thread's JNIEnv if it is attached to `vm`: a thread-local read in HotSpot, no
/// allocation, no lock; a thread the JVM does not know (a native library's own) gets none.
///
/// # Safety
/// `vm` must be the process's JavaVM.
pub unsafe fn current_env(vm: *mut JavaVM) -> Option<*mut JNIEnv> {
    let mut env: *mut c_void = std::ptr::null_mut();
    let rc = ((**vm).GetEnv)(vm, &mut env, JNI_VERSION_1_6);
    (rc == 0 && !env.is_null()).then_some(env as *mut JNIEnv)
}

/// `AsyncGetCallTrace` from the libjvm that implements `vm`.
///
/// # Safety
/// `vm` must be the process's JavaVM.
pub unsafe fn async_get_call_trace(vm: *mut JavaVM) -> Result<AsyncGetCallTrace, String> {
    // The JavaVM's function table points into libjvm: that object, already loaded, exports it.
    let mut info: libc::Dl_info = std::mem::zeroed();
    let in_libjvm = (**vm).GetEnv as *const c_void;
    if libc::dladdr(in_libjvm, &mut info) == 0 || info.dli_fname.is_null() {
        return Err("cannot tell which library implements the JVM (dladdr failed)".into());
    }
    let libjvm = CStr::from_ptr(info.dli_fname).to_owned();
    let handle = libc::dlopen(libjvm.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
    if handle.is_null() {
        return Err(format!("{} is not loaded", libjvm.to_string_lossy()));
    }
    let symbol = libc::dlsym(handle, c"AsyncGetCallTrace".as_ptr());
    libc::dlclose(handle);
    if symbol.is_null() {
        return Err(format!(
            "{} does not export AsyncGetCallTrace (not a HotSpot JVM?)",
            libjvm.to_string_lossy()
        ));
    }
    Ok(std::mem::transmute::<*mut c_void, AsyncGetCallTrace>(
        symbol,
    ))
}

/// A new JVMTI environment with line numbers and source file names, method ids made for every
/// class loaded from now on (ClassPrepare) and for those already loaded.
///
/// # Safety
/// `vm` must be the process's JavaVM and the calling thread attached to it.
pub unsafe fn open(vm: *mut JavaVM) -> Result<Jvmti, String> {
    let jvmti = Jvmti::new(vm)?;
    let env = jvmti.env();
    let f = jvmti.functions();
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_get_line_numbers(true);
    caps.set_can_get_source_file_name(true);
    // Without them frames keep their method and bytecode index, only lines are missing.
    let _ = (f.AddCapabilities.ok_or("no AddCapabilities")?)(env, &caps);
    let mut callbacks = jvmtiEventCallbacks::default();
    callbacks.ClassLoad = Some(on_class_load);
    callbacks.ClassPrepare = Some(on_class_prepare);
    let set_callbacks = f.SetEventCallbacks.ok_or("no SetEventCallbacks")?;
    check(
        "SetEventCallbacks",
        set_callbacks(
            env,
            &callbacks,
            std::mem::size_of::<jvmtiEventCallbacks>() as jint,
        ),
    )?;
    let set_mode = f
        .SetEventNotificationMode
        .ok_or("no SetEventNotificationMode")?;
    for event in [JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE] {
        check(
            "SetEventNotificationMode",
            set_mode(env, JVMTI_ENABLE, event, std::ptr::null_mut()),
        )?;
    }
    Ok(jvmti)
}

/// Makes method ids for every class loaded so far.
///
/// # Safety
/// `jni` must be the calling thread's JNIEnv.
pub unsafe fn make_method_ids_of_loaded_classes(jvmti: Jvmti, jni: *mut JNIEnv) {
    jvmti.for_each_loaded_class(jni, |class| jvmti.make_method_ids(class));
}

/// What a frame's method is, or why it cannot be told (a method of an unloaded class: the JVM
/// answers `INVALID_METHODID` for its stale id rather than reading freed memory).
///
/// # Safety
/// `jni` must be the calling thread's JNIEnv.
pub unsafe fn describe(jvmti: Jvmti, jni: *mut JNIEnv, frame: Frame) -> Result<JavaMethod, String> {
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

unsafe extern "system" fn on_class_load(
    _jvmti: *mut jvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jclass,
    _class: jclass,
) {
}

unsafe extern "system" fn on_class_prepare(
    jvmti: *mut jvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jclass,
    class: jclass,
) {
    Jvmti::from_env(jvmti).make_method_ids(class);
}
