//! The agent's way to its classes without a transformer that sees every class load: a JVMTI
//! ClassPrepare watch that hands the classes the agent instruments to
//! `dev.nativemem.agent.PreparedClasses#prepared` as they are prepared (before any of their code
//! runs), and the definition of the agent's one boot-loader class, whose bytes no application
//! class loader can find.

use super::BridgeError;
use crate::jvmti::{check, Jvmti};
use jni::objects::{
    GlobalRef, JByteArray, JClass, JObject, JObjectArray, JStaticMethodID, JString,
};
use jni::signature::{Primitive, ReturnType};
use jni::sys::{jobject, jobjectArray, jvalue};
use jni::JNIEnv;
use jvmti_bindings::sys::jni::{jclass, jint, jthread, JNIEnv as RawEnv};
use jvmti_bindings::sys::jvmti::{
    jvmtiEnv, jvmtiEventCallbacks, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE,
};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The one watch of this JVM: who is told, and of which classes.
struct Watch {
    receiver: GlobalRef,
    prepared: JStaticMethodID,
    /// JVM signature prefixes (`Lorg/rocksdb/`) of the classes the receiver wants.
    prefixes: Vec<String>,
    jvmti: Jvmti,
}

static WATCH: OnceLock<Watch> = OnceLock::new();

impl Watch {
    fn wants(&self, signature: &str) -> bool {
        self.prefixes.iter().any(|p| signature.starts_with(p))
    }
}

export! {
    /// Starts telling `receiver.prepared(Class)` of every class whose JVM signature starts with
    /// one of `prefixes` once it is prepared, on the preparing thread; returns the wanted classes
    /// already prepared (those not yet prepared are told when they are). Once per JVM.
    fn agentWatchPrepared(
        env,
        receiver: JClass<'l>,
        prefixes: JObjectArray<'l>,
    ) -> jobjectArray {
        if WATCH.get().is_some() {
            return Err(BridgeError::InvalidArgument(
                "the class-prepare watch is already on in this JVM; it is started once, by the \
                 agent"
                    .into(),
            ));
        }
        let mut wanted = Vec::new();
        for i in 0..env.get_array_length(&prefixes)? {
            let prefix = JString::from(env.get_object_array_element(&prefixes, i)?);
            wanted.push(super::exports::from_java(env, &prefix, "a signature prefix")?);
        }
        let prepared = env.get_static_method_id(&receiver, "prepared", "(Ljava/lang/Class;)V")?;
        let vm = env.get_java_vm()?.get_java_vm_pointer();
        // SAFETY: `vm` is this process's JavaVM.
        let jvmti = unsafe { Jvmti::new(vm.cast()) }.map_err(BridgeError::InvalidArgument)?;
        let watch = Watch {
            receiver: env.new_global_ref(&receiver)?,
            prepared,
            prefixes: wanted,
            jvmti,
        };
        if WATCH.set(watch).is_err() {
            return Err(BridgeError::InvalidArgument(
                "the class-prepare watch is already on in this JVM".into(),
            ));
        }
        let watch = WATCH.get().ok_or_else(|| BridgeError::InvalidArgument("no watch".into()))?;
        // SAFETY: the environment is new and ours; the callbacks live as long as the process.
        unsafe { enable(jvmti) }.map_err(BridgeError::InvalidArgument)?;
        // Enabled first, then listed: a class prepared in between is both told and listed
        // (the receiver takes a class twice without harm); none is missed.
        let found: RefCell<Vec<JObject>> = RefCell::new(Vec::new());
        let raw: *mut RawEnv = env.get_raw().cast();
        // SAFETY: `raw` is this thread's JNIEnv; each class reference lives until `each` returns.
        unsafe {
            jvmti.for_each_loaded_class(raw, |class| {
                let wanted = jvmti
                    .class_signature(class)
                    .is_some_and(|signature| watch.wants(&signature));
                if wanted && jvmti.is_prepared(class) {
                    let local = ((**raw).NewLocalRef)(raw, class);
                    if !local.is_null() {
                        found.borrow_mut().push(JObject::from_raw(local.cast()));
                    }
                }
            });
        }
        let found = found.into_inner();
        let array = env.new_object_array(found.len() as i32, "java/lang/Class", JObject::null())?;
        for (i, class) in found.into_iter().enumerate() {
            env.set_object_array_element(&array, i as i32, &class)?;
            env.delete_local_ref(class)?;
        }
        Ok(array.into_raw())
    }
}

export! {
    /// Defines the class `name` (`dev/nativemem/boot/ZipBridge`) from `bytes` in the bootstrap
    /// class loader, where every class loader finds it and none can find a copy of its own.
    fn agentDefineBootClass(env, name: JString<'l>, bytes: JByteArray<'l>) -> jobject {
        let name = super::exports::from_java(env, &name, "the class name")?;
        if bytes.is_null() {
            return Err(BridgeError::InvalidArgument("the class bytes must not be null".into()));
        }
        let bytes = env.convert_byte_array(&bytes)?;
        Ok(env.define_class(name, &JObject::null(), &bytes)?.into_raw())
    }
}

/// Sets the ClassPrepare callback of `jvmti` and turns the event on.
///
/// # Safety
/// `jvmti` must be a live environment of this JVM.
unsafe fn enable(jvmti: Jvmti) -> Result<(), String> {
    let f = jvmti.functions();
    let mut callbacks = jvmtiEventCallbacks::default();
    callbacks.ClassPrepare = Some(on_class_prepare);
    check(
        "SetEventCallbacks",
        (f.SetEventCallbacks.ok_or("no SetEventCallbacks")?)(
            jvmti.env(),
            &callbacks,
            std::mem::size_of::<jvmtiEventCallbacks>() as jint,
        ),
    )?;
    check(
        "SetEventNotificationMode",
        (f.SetEventNotificationMode
            .ok_or("no SetEventNotificationMode")?)(
            jvmti.env(),
            JVMTI_ENABLE,
            JVMTI_EVENT_CLASS_PREPARE,
            std::ptr::null_mut(),
        ),
    )
}

/// Every class prepared in the JVM passes here: its signature is read and compared with the
/// wanted prefixes; only a wanted one calls into Java. Nothing is thrown back into the loading
/// thread: an exception of the receiver (which catches its own) is cleared.
unsafe extern "system" fn on_class_prepare(
    _jvmti: *mut jvmtiEnv,
    jni: *mut RawEnv,
    _thread: jthread,
    class: jclass,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(watch) = WATCH.get() else {
            return;
        };
        if !watch
            .jvmti
            .class_signature(class)
            .is_some_and(|signature| watch.wants(&signature))
        {
            return;
        }
        let Ok(mut env) = JNIEnv::from_raw(jni.cast()) else {
            return;
        };
        let receiver = <&JClass>::from(watch.receiver.as_obj());
        let argument = jvalue { l: class.cast() };
        let _ = env.call_static_method_unchecked(
            receiver,
            watch.prepared,
            ReturnType::Primitive(Primitive::Void),
            &[argument],
        );
        if env.exception_check().unwrap_or(false) {
            let _ = env.exception_clear();
        }
    }));
}
