//! What the hook needs from the JVM, found once on a Java thread when Java frames are turned on:
//! `AsyncGetCallTrace` (exported by libjvm) and a JVMTI environment of our own whose ClassLoad
//! and ClassPrepare events keep `AsyncGetCallTrace` working (it answers -1 without ClassLoad) and
//! give every method a method id (it reports a frame whose method has none as a null method).
//! Frames are named later, at dump time, through the same environment.

use super::table::Frame;
use jvmti_bindings::sys::jni::{jclass, jint, jmethodID, JNIEnv, JavaVM, JNI_VERSION_1_6};
use jvmti_bindings::sys::jvmti::{
    jvmtiCapabilities, jvmtiEnv, jvmtiError, jvmtiEventCallbacks, jvmtiLineNumberEntry,
    JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE, JVMTI_VERSION_1_2,
};
use serde::Serialize;
use std::ffi::{c_char, c_void, CStr};

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

/// Our JVMTI environment, as an address (raw pointers are not `Send`).
#[derive(Clone, Copy)]
pub struct Jvmti(usize);

impl Jvmti {
    fn env(self) -> *mut jvmtiEnv {
        self.0 as *mut jvmtiEnv
    }

    /// A new JVMTI environment with line numbers and source file names, method ids made for
    /// every class loaded from now on (ClassPrepare) and for those already loaded.
    ///
    /// # Safety
    /// `vm` must be the process's JavaVM and the calling thread attached to it.
    pub unsafe fn open(vm: *mut JavaVM) -> Result<Jvmti, String> {
        let mut out: *mut c_void = std::ptr::null_mut();
        let rc = ((**vm).GetEnv)(vm, &mut out, JVMTI_VERSION_1_2);
        if rc != 0 || out.is_null() {
            return Err(format!(
                "the JVM offers no JVMTI environment (GetEnv: {rc})"
            ));
        }
        let jvmti = Jvmti(out as usize);
        let env = jvmti.env();
        let f = &*(*env).functions;
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
    pub unsafe fn make_method_ids_of_loaded_classes(self, jni: *mut JNIEnv) {
        let env = self.env();
        let f = &*(*env).functions;
        let (Some(loaded), Some(deallocate)) = (f.GetLoadedClasses, f.Deallocate) else {
            return;
        };
        let mut count: jint = 0;
        let mut classes: *mut jclass = std::ptr::null_mut();
        if loaded(env, &mut count, &mut classes) != jvmtiError::NONE || classes.is_null() {
            return;
        }
        for i in 0..count.max(0) as usize {
            let class = *classes.add(i);
            make_method_ids(env, class);
            ((**jni).DeleteLocalRef)(jni, class);
        }
        deallocate(env, classes as *mut u8);
    }

    /// What a frame's method is, or why it cannot be told (a method of an unloaded class: the
    /// JVM answers `INVALID_METHODID` for its stale id rather than reading freed memory).
    ///
    /// # Safety
    /// `jni` must be the calling thread's JNIEnv.
    pub unsafe fn describe(self, jni: *mut JNIEnv, frame: Frame) -> Result<JavaMethod, String> {
        let env = self.env();
        let f = &*(*env).functions;
        let method = frame.method as usize as jmethodID;
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut signature: *mut c_char = std::ptr::null_mut();
        check(
            "GetMethodName",
            (f.GetMethodName.ok_or("no GetMethodName")?)(
                env,
                method,
                &mut name,
                &mut signature,
                std::ptr::null_mut(),
            ),
        )?;
        let method_name = take_string(env, name);
        let method_signature = take_string(env, signature);
        let mut class: jclass = std::ptr::null_mut();
        check(
            "GetMethodDeclaringClass",
            (f.GetMethodDeclaringClass
                .ok_or("no GetMethodDeclaringClass")?)(env, method, &mut class),
        )?;
        let mut class_signature: *mut c_char = std::ptr::null_mut();
        let rc = (f.GetClassSignature.ok_or("no GetClassSignature")?)(
            env,
            class,
            &mut class_signature,
            std::ptr::null_mut(),
        );
        let class_signature = (rc == jvmtiError::NONE).then(|| take_string(env, class_signature));
        let mut source: *mut c_char = std::ptr::null_mut();
        let source_file = match f.GetSourceFileName {
            Some(get) if get(env, class, &mut source) == jvmtiError::NONE => {
                Some(take_string(env, source))
            }
            _ => None,
        };
        ((**jni).DeleteLocalRef)(jni, class);
        Ok(JavaMethod {
            class: class_signature
                .map(|s| class_name(&s))
                .unwrap_or_else(|| "?".into()),
            method: method_name,
            signature: method_signature,
            source_file,
            line: line_of(env, method, frame.bci),
        })
    }
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

fn check(what: &str, rc: jvmtiError) -> Result<(), String> {
    if rc == jvmtiError::NONE {
        Ok(())
    } else {
        Err(format!("JVMTI {what} failed: {rc:?}"))
    }
}

/// Copies a JVMTI-allocated string and gives its memory back.
unsafe fn take_string(env: *mut jvmtiEnv, text: *mut c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    let owned = CStr::from_ptr(text).to_string_lossy().into_owned();
    if let Some(deallocate) = (*(*env).functions).Deallocate {
        deallocate(env, text as *mut u8);
    }
    owned
}

/// `Ljava/util/zip/Inflater;` → `java.util.zip.Inflater`.
pub fn class_name(signature: &str) -> String {
    signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(signature)
        .replace('/', ".")
}

/// The source line of `bci`: the last entry of the line number table that starts at or before it.
unsafe fn line_of(env: *mut jvmtiEnv, method: jmethodID, bci: i32) -> Option<u32> {
    if bci < 0 {
        return None;
    }
    let f = &*(*env).functions;
    let mut count: jint = 0;
    let mut table: *mut jvmtiLineNumberEntry = std::ptr::null_mut();
    if (f.GetLineNumberTable?)(env, method, &mut count, &mut table) != jvmtiError::NONE
        || table.is_null()
    {
        return None;
    }
    let entries = std::slice::from_raw_parts(table, count.max(0) as usize);
    let line = entries
        .iter()
        .filter(|e| e.start_location <= i64::from(bci))
        .max_by_key(|e| e.start_location)
        .map(|e| e.line_number as u32);
    if let Some(deallocate) = f.Deallocate {
        deallocate(env, table as *mut u8);
    }
    line
}

/// GetClassMethods makes the method ids AsyncGetCallTrace reports; the list itself is not kept.
unsafe fn make_method_ids(env: *mut jvmtiEnv, class: jclass) {
    let f = &*(*env).functions;
    let (Some(methods_of), Some(deallocate)) = (f.GetClassMethods, f.Deallocate) else {
        return;
    };
    let mut count: jint = 0;
    let mut methods: *mut jmethodID = std::ptr::null_mut();
    if methods_of(env, class, &mut count, &mut methods) == jvmtiError::NONE && !methods.is_null() {
        deallocate(env, methods as *mut u8);
    }
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
    make_method_ids(jvmti, class);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_signatures_read_as_source() {
        assert_eq!(
            class_name("Ljava/util/zip/Inflater;"),
            "java.util.zip.Inflater"
        );
        assert_eq!(class_name("[I"), "[I");
    }
}
