//! `AsyncGetCallTrace`, the walker async-profiler uses: found in the libjvm that implements the
//! JavaVM, and its frame and trace structures. It reads a thread's frames in place, without
//! entering the VM, so the heap profile's hooks call it inside `malloc`
//! (`sampling::java_frames`) and the stack walkers after their first walks ([`super::stack_walk`]).
//! It answers only while some JVMTI environment has the ClassLoad event on, and reports a frame
//! whose method has no method id yet as a null method.

use jvmti_bindings::sys::jni::{jint, jmethodID, JNIEnv, JavaVM, JNI_VERSION_1_6};
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
