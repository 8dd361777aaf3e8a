//! A JVMTI environment in which every method has a method id: its ClassLoad event
//! keeps `AsyncGetCallTrace` working (it answers -1 without one) and its ClassPrepare event asks
//! for every new class's methods, which makes their ids ([`Jvmti::make_method_ids`]); the classes
//! loaded before are asked once ([`make_method_ids_of_loaded_classes`]). For Java frames in heap
//! profiles (`sampling::java_frames`), whose frames are named later, at dump time, through the
//! same environment.

use super::jvmti::{ignore_class_load, Jvmti};
use jvmti_bindings::sys::jni::{jclass, JNIEnv, JavaVM};
use jvmti_bindings::sys::jvmti::{
    jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks, JVMTI_EVENT_CLASS_LOAD,
    JVMTI_EVENT_CLASS_PREPARE,
};

/// A new JVMTI environment with line numbers and source file names, method ids made for every
/// class loaded from now on (ClassPrepare) and for those already loaded.
///
/// # Safety
/// `vm` must be the process's JavaVM and the calling thread attached to it.
pub unsafe fn open(vm: *mut JavaVM) -> Result<Jvmti, String> {
    let jvmti = Jvmti::new(vm)?;
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_get_line_numbers(true);
    caps.set_can_get_source_file_name(true);
    // Without them frames keep their method and bytecode index, only lines are missing.
    let add = jvmti
        .functions()
        .AddCapabilities
        .ok_or("no AddCapabilities")?;
    let _ = add(jvmti.env(), &caps);
    let mut callbacks = jvmtiEventCallbacks::default();
    callbacks.ClassLoad = Some(ignore_class_load);
    callbacks.ClassPrepare = Some(on_class_prepare);
    jvmti.enable_events(
        &callbacks,
        &[JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE],
    )?;
    Ok(jvmti)
}

/// Makes method ids for every class loaded so far.
///
/// # Safety
/// `jni` must be the calling thread's JNIEnv.
pub unsafe fn make_method_ids_of_loaded_classes(jvmti: Jvmti, jni: *mut JNIEnv) {
    jvmti.for_each_loaded_class(jni, |class| jvmti.make_method_ids(class));
}

unsafe extern "system" fn on_class_prepare(
    jvmti: *mut jvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jclass,
    class: jclass,
) {
    Jvmti::from_env(jvmti).make_method_ids(class);
}
