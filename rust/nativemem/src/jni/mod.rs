//! JNI exports for `dev.nativemem.internal.NativeBridge`: arguments in, `Result` out.
//!
//! Every export runs through [`guard`]: a panic is caught and becomes a Java exception, and every
//! error type maps to the Java exception a caller would act on.

mod attach;
mod exports;
mod files;
mod handles;
mod memory;
mod profile;
mod sampling;
mod stack_keys;

use crate::allocator::AllocatorError;
use crate::attach::AttachError;
use crate::files::FileError;
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
}

const BASE_EXCEPTION: &str = "dev/nativemem/NativeMemoryException";

impl BridgeError {
    /// The Java exception class for this error.
    fn java_class(&self) -> &'static str {
        match self {
            BridgeError::Allocator(
                AllocatorError::NotJemalloc { .. } | AllocatorError::NeedsJemalloc { .. },
            ) => "dev/nativemem/AllocatorUnavailableException",
            BridgeError::InvalidArgument(_)
            | BridgeError::Allocator(AllocatorError::NotPlainRead { .. }) => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Sampling(SamplingError::Unavailable(_)) => {
                "dev/nativemem/ProfilingUnavailableException"
            }
            BridgeError::Sampling(
                SamplingError::BadPath(_)
                | SamplingError::File(FileError::BadPath(_) | FileError::Exists { .. }),
            ) => "java/lang/IllegalArgumentException",
            BridgeError::File(FileError::BadPath(_)) => "java/lang/IllegalArgumentException",
            BridgeError::Profile(error) if error.is_bad_input() => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Attach(AttachError::RequestTooLong(_)) => {
                "java/lang/IllegalArgumentException"
            }
            BridgeError::Attach(_) => "java/lang/IllegalStateException",
            _ => BASE_EXCEPTION,
        }
    }
}

/// Runs `body` for a JNI export. Errors and panics become Java exceptions and `fallback` is
/// returned to the JVM, which ignores it while an exception is pending.
pub(crate) fn guard<'local, T>(
    env: &mut JNIEnv<'local>,
    fallback: T,
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
    fallback
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
