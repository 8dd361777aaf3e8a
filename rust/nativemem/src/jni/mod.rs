//! JNI exports for `dev.nativemem.internal.NativeBridge`: arguments in, `Result` out.
//!
//! Every export is declared with [`export!`], which names its symbol and runs its body through
//! [`guard`]: a panic is caught and becomes a Java exception, and every error type maps to the Java
//! exception a caller would act on.

/// Declares `NativeBridge.<name>` as the JNI symbol
/// `Java_dev_nativemem_internal_NativeBridge_<name>`: `env` is the call's `&mut JNIEnv<'l>`, the
/// body returns `Result<return type, BridgeError>`, and an error or a panic becomes a pending Java
/// exception (see [`guard`]). The symbol is spelled by `export_name = concat!(..)`, so no crate
/// that pastes identifiers is needed.
///
/// ```ignore
/// export! {
///     /// What the export answers.
///     fn version(env) -> jstring {
///         to_java(env, crate::VERSION)
///     }
/// }
/// ```
macro_rules! export {
    (
        $(#[$attr:meta])*
        fn $name:ident($env:pat_param $(, $arg:ident: $type:ty)* $(,)?) -> $ret:ty $body:block
    ) => {
        $(#[$attr])*
        #[export_name = concat!("Java_dev_nativemem_internal_NativeBridge_", stringify!($name))]
        #[allow(non_snake_case)]
        pub extern "system" fn $name<'l>(
            mut env: ::jni::JNIEnv<'l>,
            _class: ::jni::objects::JClass<'l>,
            $($arg: $type),*
        ) -> $ret {
            $crate::jni::guard(
                &mut env,
                |$env: &mut ::jni::JNIEnv<'l>| -> Result<$ret, $crate::jni::BridgeError> { $body },
            )
        }
    };
    (
        $(#[$attr:meta])*
        fn $name:ident($env:pat_param $(, $arg:ident: $type:ty)* $(,)?) $body:block
    ) => {
        export! {
            $(#[$attr])*
            fn $name($env $(, $arg: $type)*) -> () $body
        }
    };
}

mod agent_classes;
mod attach;
mod exports;
mod handles;
mod jobs;
mod memory;
mod profile;

use crate::allocator::AllocatorError;
use crate::attach::AttachError;
use crate::diagnostic_commands::DiagnosticCommandError;
use crate::files::FileError;
use crate::jobs::watch_directory::WatchDirectoryError;
use crate::jvm::JvmError;
use crate::process::ProcessError;
use crate::profile::ProfileError;
use crate::sampling::SamplingError;
use jni::JNIEnv;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Every error that can cross into Java.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Allocator(#[from] AllocatorError),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("JNI call failed: {0}")]
    Jni(#[from] jni::errors::Error),
    #[error("{0}")]
    InvalidArgument(String),
    #[error("cannot encode result as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Attach(#[from] AttachError),
    #[error(transparent)]
    DiagnosticCommand(#[from] DiagnosticCommandError),
    #[error(transparent)]
    Jvm(#[from] JvmError),
    #[error(transparent)]
    WatchDirectory(#[from] WatchDirectoryError),
}

const BASE_EXCEPTION: &str = "dev/nativemem/base/NativeMemoryException";

impl BridgeError {
    /// The Java exception class for this error.
    fn java_class(&self) -> &'static str {
        match self {
            BridgeError::InvalidArgument(_)
            | BridgeError::Allocator(AllocatorError::NotPlainRead { .. }) => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Sampling(
                SamplingError::BadPath(_)
                | SamplingError::File(FileError::BadPath(_) | FileError::Exists { .. }),
            ) => "java/lang/IllegalArgumentException",
            BridgeError::File(FileError::BadPath(_))
            | BridgeError::WatchDirectory(WatchDirectoryError::File(FileError::BadPath(_))) => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Profile(error) if error.is_bad_input() => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Attach(AttachError::RequestTooLong(_)) => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Attach(_) => "java/lang/IllegalStateException",
            BridgeError::Jvm(JvmError::Refused(_)) => "java/lang/IllegalArgumentException",
            _ => BASE_EXCEPTION,
        }
    }
}

/// What an export returns to the JVM beside a pending exception, which the JVM ignores.
pub(crate) trait Fallback {
    const FALLBACK: Self;
}

impl Fallback for () {
    const FALLBACK: Self = ();
}

impl Fallback for jni::sys::jobject {
    const FALLBACK: Self = std::ptr::null_mut();
}

macro_rules! zero_fallback {
    ($($type:ty),*) => {
        $(impl Fallback for $type {
            const FALLBACK: Self = 0;
        })*
    };
}
zero_fallback!(jni::sys::jboolean, jni::sys::jint, jni::sys::jlong);

/// Runs `body` for a JNI export. Errors and panics become Java exceptions and a fallback value is
/// returned to the JVM, which ignores it while an exception is pending.
pub(crate) fn guard<'local, T: Fallback>(
    env: &mut JNIEnv<'local>,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<T, BridgeError>,
) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env)));
    let (class, message) = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => (error.java_class(), error.to_string()),
        Err(payload) => (BASE_EXCEPTION, panic_message(payload.as_ref())),
    };
    // An exception raised by a JNI call inside `body` is already pending: keep that one.
    if !env.exception_check().unwrap_or(true) {
        let _ = env.throw_new(class, message);
    }
    T::FALLBACK
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    format!(
        "internal error in libnativemem {}: {detail}. The JVM is unharmed; please report this \
         message with the output of 'java -jar nativemem.jar stats --json'",
        crate::VERSION
    )
}
