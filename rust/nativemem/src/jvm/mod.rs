//! The JVM seen from native code, below every feature that needs it (`handles`, `sampling`,
//! `profile`) and above nothing of the crate: one job per file.
//!
//! - [`jvmti`]: the one JVMTI wrapper (an environment found through the JavaVM; stacks, method
//!   and class names, line tables, events), JVMTI memory given back, local references deleted;
//! - [`async_get_call_trace`]: HotSpot's `AsyncGetCallTrace`, found in libjvm, and its frames;
//! - [`method_ids`]: an environment in which every method has an id (ClassLoad/ClassPrepare →
//!   GetClassMethods), for the Java frames of heap profiles;
//! - [`stack_walk`]: the calling thread's stack as (method id, bytecode index) pairs, by
//!   `GetStackTrace`, then `AsyncGetCallTrace` after 256 walks;
//! - [`class_prepare`]: the agent's ClassPrepare watch, which hands it the classes it instruments;
//! - [`boot_class`]: the agent's one class defined in the bootstrap class loader;
//! - [`frame_addresses`]: the synthetic addresses Java frames have in heap profiles, written by
//!   `sampling` and read by `profile`.

pub mod async_get_call_trace;
pub mod boot_class;
pub mod class_prepare;
pub mod frame_addresses;
pub mod jvmti;
pub mod method_ids;
pub mod stack_walk;

/// What the JVM refused or a JNI call failed with, for the agent's exports.
#[derive(Debug, thiserror::Error)]
pub enum JvmError {
    #[error("JNI call failed: {0}")]
    Jni(#[from] jni::errors::Error),
    /// The JVM cannot do what was asked (no JVMTI, a second class-prepare watch).
    #[error("{0}")]
    Refused(String),
}
