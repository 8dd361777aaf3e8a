//! The one wrapper over JVMTI: an environment found through the JavaVM, and the few calls the
//! core makes on it (the calling thread's stack as method ids and bytecode indexes; a method's
//! name, class, source file and line), each giving back the memory JVMTI allocated and deleting
//! the local references it made.
//!
//! Every environment of the core is made here: the stack walkers' ([`super::stack_walk`], for the
//! handle registry's creation-site keys), the one whose methods all have ids
//! ([`super::method_ids`], for Java frames in heap profiles) and the class-prepare watch's
//! ([`super::class_prepare`]), each with its own capabilities and events.

use jvmti_bindings::sys::jni::{jclass, jint, jmethodID, JNIEnv, JavaVM};
use jvmti_bindings::sys::jvmti::{
    jvmtiEnv, jvmtiError, jvmtiEvent, jvmtiEventCallbacks, jvmtiFrameInfo, jvmtiInterface_1_,
    jvmtiLineNumberEntry, JVMTI_CLASS_STATUS_PREPARED, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD,
    JVMTI_VERSION_1_2,
};
use std::ffi::{c_char, c_void, CStr};

/// A JVMTI environment, as an address (raw pointers are neither `Send` nor `Sync`).
#[derive(Clone, Copy, Debug)]
pub struct Jvmti(usize);

/// A frame of the calling thread as JVMTI reports it: its method and bytecode index.
pub type FrameInfo = jvmtiFrameInfo;

/// An empty frame, to fill a buffer for [`Jvmti::current_stack`].
pub const NO_FRAME: FrameInfo = jvmtiFrameInfo {
    method: std::ptr::null_mut(),
    location: 0,
};

impl Jvmti {
    /// A new JVMTI environment of `vm` (each call gets its own, with its own capabilities and
    /// events).
    ///
    /// # Safety
    /// `vm` must be the process's JavaVM.
    pub unsafe fn new(vm: *mut JavaVM) -> Result<Jvmti, String> {
        let mut out: *mut c_void = std::ptr::null_mut();
        let rc = ((**vm).GetEnv)(vm, &mut out, JVMTI_VERSION_1_2);
        if rc != 0 || out.is_null() {
            return Err(format!(
                "the JVM offers no JVMTI environment (GetEnv: {rc})"
            ));
        }
        Ok(Jvmti(out as usize))
    }

    /// The environment a JVMTI event callback was given.
    pub fn from_env(env: *mut jvmtiEnv) -> Jvmti {
        Jvmti(env as usize)
    }

    /// The raw environment, for calls this wrapper does not make (capabilities, events).
    pub fn env(self) -> *mut jvmtiEnv {
        self.0 as *mut jvmtiEnv
    }

    /// The environment's function table.
    ///
    /// # Safety
    /// The environment must be live (JVMTI environments live as long as the JVM here).
    pub unsafe fn functions(self) -> &'static jvmtiInterface_1_ {
        &*(*self.env()).functions
    }

    /// The calling thread's top frames, written into `frames`; None if JVMTI cannot read them.
    ///
    /// # Safety
    /// The calling thread must be a Java thread.
    pub unsafe fn current_stack(self, frames: &mut [FrameInfo]) -> Option<&[FrameInfo]> {
        let get_stack_trace = self.functions().GetStackTrace?;
        let mut count: jint = 0;
        // A null thread is the current one; the buffer holds `frames.len()` entries.
        let rc = get_stack_trace(
            self.env(),
            std::ptr::null_mut(),
            0,
            frames.len() as jint,
            frames.as_mut_ptr(),
            &mut count,
        );
        (rc == jvmtiError::NONE).then(|| &frames[..(count.max(0) as usize).min(frames.len())])
    }

    /// The JVM signature of the class declaring `method` (`Ljava/util/zip/Inflater;`) and, when
    /// `with_source` is set, the name of its source file.
    ///
    /// # Safety
    /// `jni` must be the calling thread's JNIEnv; `method` a method id the JVM gave.
    pub unsafe fn declaring_class(
        self,
        jni: *mut JNIEnv,
        method: jmethodID,
        with_source: bool,
    ) -> Result<(Option<String>, Option<String>), String> {
        let f = self.functions();
        let mut class: jclass = std::ptr::null_mut();
        check(
            "GetMethodDeclaringClass",
            (f.GetMethodDeclaringClass
                .ok_or("no GetMethodDeclaringClass")?)(self.env(), method, &mut class),
        )?;
        let mut signature: *mut c_char = std::ptr::null_mut();
        let rc = (f.GetClassSignature.ok_or("no GetClassSignature")?)(
            self.env(),
            class,
            &mut signature,
            std::ptr::null_mut(),
        );
        let signature =
            (rc == jvmtiError::NONE && !signature.is_null()).then(|| self.take_string(signature));
        let mut source: *mut c_char = std::ptr::null_mut();
        let source = match f.GetSourceFileName {
            Some(get) if with_source && get(self.env(), class, &mut source) == jvmtiError::NONE => {
                Some(self.take_string(source))
            }
            _ => None,
        };
        ((**jni).DeleteLocalRef)(jni, class);
        Ok((signature, source))
    }

    /// A method's name and JVM descriptor (`(IZ)J`).
    ///
    /// # Safety
    /// `method` must be a method id the JVM gave.
    pub unsafe fn method_name(self, method: jmethodID) -> Result<(String, String), String> {
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut signature: *mut c_char = std::ptr::null_mut();
        check(
            "GetMethodName",
            (self.functions().GetMethodName.ok_or("no GetMethodName")?)(
                self.env(),
                method,
                &mut name,
                &mut signature,
                std::ptr::null_mut(),
            ),
        )?;
        Ok((self.take_string(name), self.take_string(signature)))
    }

    /// The source line of `bci`: the last entry of the line number table that starts at or
    /// before it.
    ///
    /// # Safety
    /// `method` must be a method id the JVM gave.
    pub unsafe fn line_of(self, method: jmethodID, bci: i32) -> Option<u32> {
        if bci < 0 {
            return None;
        }
        let f = self.functions();
        let mut count: jint = 0;
        let mut table: *mut jvmtiLineNumberEntry = std::ptr::null_mut();
        if (f.GetLineNumberTable?)(self.env(), method, &mut count, &mut table) != jvmtiError::NONE
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
        self.deallocate(table as *mut u8);
        line
    }

    /// The classes loaded so far, each a local reference given to `each` and then deleted.
    ///
    /// # Safety
    /// `jni` must be the calling thread's JNIEnv.
    pub unsafe fn for_each_loaded_class(self, jni: *mut JNIEnv, each: impl Fn(jclass)) {
        let Some(loaded) = self.functions().GetLoadedClasses else {
            return;
        };
        let mut count: jint = 0;
        let mut classes: *mut jclass = std::ptr::null_mut();
        if loaded(self.env(), &mut count, &mut classes) != jvmtiError::NONE || classes.is_null() {
            return;
        }
        for i in 0..count.max(0) as usize {
            let class = *classes.add(i);
            each(class);
            ((**jni).DeleteLocalRef)(jni, class);
        }
        self.deallocate(classes as *mut u8);
    }

    /// Asks for the methods of `class`, which makes the method ids AsyncGetCallTrace reports;
    /// the list itself is not kept.
    ///
    /// # Safety
    /// `class` must be a live reference to a class.
    pub unsafe fn make_method_ids(self, class: jclass) {
        let Some(methods_of) = self.functions().GetClassMethods else {
            return;
        };
        let mut count: jint = 0;
        let mut methods: *mut jmethodID = std::ptr::null_mut();
        if methods_of(self.env(), class, &mut count, &mut methods) == jvmtiError::NONE
            && !methods.is_null()
        {
            self.deallocate(methods as *mut u8);
        }
    }

    /// Turns on this environment's ClassLoad event, with a callback that does nothing: HotSpot's
    /// `AsyncGetCallTrace` answers only while some environment has it on. Replaces the
    /// environment's callbacks (this one has no others).
    ///
    /// # Safety
    /// The environment must be live.
    pub unsafe fn enable_class_load_events(self) -> Result<(), String> {
        let mut callbacks = jvmtiEventCallbacks::default();
        callbacks.ClassLoad = Some(ignore_class_load);
        self.enable_events(&callbacks, &[JVMTI_EVENT_CLASS_LOAD])
    }

    /// Sets the environment's callbacks to `callbacks` (replacing any it had) and turns `events`
    /// on, for every thread.
    ///
    /// # Safety
    /// The environment must be live; the callbacks must stay valid for the life of the process.
    pub unsafe fn enable_events(
        self,
        callbacks: &jvmtiEventCallbacks,
        events: &[jvmtiEvent],
    ) -> Result<(), String> {
        let f = self.functions();
        check(
            "SetEventCallbacks",
            (f.SetEventCallbacks.ok_or("no SetEventCallbacks")?)(
                self.env(),
                callbacks,
                std::mem::size_of::<jvmtiEventCallbacks>() as jint,
            ),
        )?;
        let set_mode = f
            .SetEventNotificationMode
            .ok_or("no SetEventNotificationMode")?;
        for &event in events {
            check(
                "SetEventNotificationMode",
                set_mode(self.env(), JVMTI_ENABLE, event, std::ptr::null_mut()),
            )?;
        }
        Ok(())
    }

    /// A class's JVM signature (`Lorg/rocksdb/Options;`), or None if JVMTI cannot tell it.
    ///
    /// # Safety
    /// `class` must be a live reference to a class.
    pub unsafe fn class_signature(self, class: jclass) -> Option<String> {
        let get = self.functions().GetClassSignature?;
        let mut signature: *mut c_char = std::ptr::null_mut();
        let rc = get(self.env(), class, &mut signature, std::ptr::null_mut());
        (rc == jvmtiError::NONE && !signature.is_null()).then(|| self.take_string(signature))
    }

    /// Whether `class` is prepared (linked): its ClassPrepare event, if enabled, was sent.
    ///
    /// # Safety
    /// `class` must be a live reference to a class.
    pub unsafe fn is_prepared(self, class: jclass) -> bool {
        let Some(get) = self.functions().GetClassStatus else {
            return false;
        };
        let mut status: jint = 0;
        get(self.env(), class, &mut status) == jvmtiError::NONE
            && status & JVMTI_CLASS_STATUS_PREPARED != 0
    }

    /// Copies a JVMTI-allocated string and gives its memory back.
    unsafe fn take_string(self, text: *mut c_char) -> String {
        if text.is_null() {
            return String::new();
        }
        let owned = CStr::from_ptr(text).to_string_lossy().into_owned();
        self.deallocate(text as *mut u8);
        owned
    }

    unsafe fn deallocate(self, memory: *mut u8) {
        if let Some(deallocate) = self.functions().Deallocate {
            deallocate(self.env(), memory);
        }
    }
}

/// A ClassLoad callback that does nothing: the event only has to be on (for `AsyncGetCallTrace`).
pub(super) unsafe extern "system" fn ignore_class_load(
    _jvmti: *mut jvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jclass,
    _class: jclass,
) {
}

/// `Ok` for `JVMTI_ERROR_NONE`, else a message naming the call.
fn check(what: &str, rc: jvmtiError) -> Result<(), String> {
    if rc == jvmtiError::NONE {
        Ok(())
    } else {
        Err(format!("JVMTI {what} failed: {rc:?}"))
    }
}

/// `Ljava/util/zip/Inflater;` → `java.util.zip.Inflater`.
pub fn class_name(signature: &str) -> String {
    signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(signature)
        .replace('/', ".")
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
