//! The agent's way to its classes without a transformer that sees every class load: a JVMTI
//! ClassPrepare watch that hands the classes the agent instruments to a receiver's static
//! `prepared(Class)` (`dev.nativemem.agent.PreparedClasses#prepared`) as they are prepared, before
//! any of their code runs. One watch per JVM, with an environment of its own.

use super::jvmti::Jvmti;
use super::JvmError;
use jni::objects::{GlobalRef, JClass, JObject, JStaticMethodID};
use jni::signature::{Primitive, ReturnType};
use jni::sys::jvalue;
use jni::JNIEnv;
use jvmti_bindings::sys::jni::{jclass, jthread, JNIEnv as RawEnv};
use jvmti_bindings::sys::jvmti::{jvmtiEnv, jvmtiEventCallbacks, JVMTI_EVENT_CLASS_PREPARE};
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

/// Ok while no watch was started in this JVM.
pub fn not_started() -> Result<(), JvmError> {
    match WATCH.get() {
        Some(_) => Err(JvmError::Refused(
            "the class-prepare watch is already on in this JVM; it is started once, by the agent"
                .into(),
        )),
        None => Ok(()),
    }
}

/// Starts telling `receiver.prepared(Class)` of every class whose JVM signature starts with one
/// of `prefixes` once it is prepared, on the preparing thread; returns the wanted classes already
/// prepared, as local references (those not yet prepared are told when they are).
pub fn start<'l>(
    env: &mut JNIEnv<'l>,
    receiver: &JClass<'l>,
    prefixes: Vec<String>,
) -> Result<Vec<JObject<'l>>, JvmError> {
    let prepared = env.get_static_method_id(receiver, "prepared", "(Ljava/lang/Class;)V")?;
    let vm = env.get_java_vm()?.get_java_vm_pointer();
    // SAFETY: `vm` is this process's JavaVM.
    let jvmti = unsafe { Jvmti::new(vm.cast()) }.map_err(JvmError::Refused)?;
    let watch = Watch {
        receiver: env.new_global_ref(receiver)?,
        prepared,
        prefixes,
        jvmti,
    };
    if WATCH.set(watch).is_err() {
        return Err(JvmError::Refused(
            "the class-prepare watch is already on in this JVM".into(),
        ));
    }
    let watch = WATCH
        .get()
        .ok_or_else(|| JvmError::Refused("no watch".into()))?;
    let mut callbacks = jvmtiEventCallbacks::default();
    callbacks.ClassPrepare = Some(on_class_prepare);
    // SAFETY: the environment is new and ours; the callbacks live as long as the process.
    unsafe { jvmti.enable_events(&callbacks, &[JVMTI_EVENT_CLASS_PREPARE]) }
        .map_err(JvmError::Refused)?;
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
    Ok(found.into_inner())
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
