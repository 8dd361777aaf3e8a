//! nativemem's native core: what the JVM cannot see about its own native memory.
//!
//! Layers, each behind its own error type:
//! - [`allocator`]: the allocator that serves this process's `malloc` (jemalloc via its own
//!   `mallctl`, or glibc), never a private copy;
//! - [`process`]: what the kernel says about this process (`/proc`, its memory cgroup);
//! - [`native_view`]: the kernel, cgroup and allocator views the memory breakdown lines up;
//! - [`watch_sample`]: the memory watch's per-second figures, from the layers above, as numbers;
//! - [`handles`]: registry of native handles (RocksDB, zlib, application resources) and leaks;
//! - [`sampling`]: heap profiles from the process's jemalloc, dumped with their symbols;
//! - [`profile`]: heap profiles (jemalloc dumps) read, symbolized and rendered;
//! - [`sidecar_layout`]: the names and formats inside a dump's symbol sidecar;
//! - [`jvm`]: the JVM seen from native code (JVMTI, AsyncGetCallTrace, the class-prepare watch,
//!   stack walkers, the synthetic addresses of Java frames), below `handles`, `sampling` and
//!   `profile`;
//! - [`attach`]: HotSpot's attach protocol, for `nativemem attach` without `jdk.attach`;
//! - [`diagnostic_commands`]: HotSpot's `jcmd` commands in-process, through its management
//!   interface;
//! - [`files`]: the one file layer: directories opened once (no link of another user followed),
//!   every later step on their descriptors; files for the user private and never replacing;
//!   files others may have planted read with no FIFO, device or link, capped;
//! - [`jobs`]: one module per job the Java side asks for in one call (request in, one answer out);
//! - [`terminal_text`]: untrusted strings made safe for a terminal (control characters shown);
//! - `jni`: thin exports for `dev.nativemem.internal.NativeBridge`, above every layer: each
//!   converts its arguments, calls down and converts the answer; every call runs under
//!   `catch_unwind` and turns errors into Java exceptions.

pub mod allocator;
pub mod attach;
pub mod diagnostic_commands;
pub mod files;
pub mod handles;
mod jni;
pub mod jobs;
pub mod jvm;
pub mod native_view;
pub mod process;
pub mod profile;
pub mod sampling;
pub mod sidecar_layout;
pub mod terminal_text;
pub mod watch_sample;

/// The version of this library; the Java side refuses to run against a different one.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
