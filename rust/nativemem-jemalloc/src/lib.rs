//! `libnativemem_jemalloc.so`: jemalloc for `LD_PRELOAD` into a JVM, ready to profile and sized
//! for the container it runs in.
//!
//! - [`exports`]: the unprefixed malloc family and `mallctl*`, each a thin wrapper with its own
//!   frame over the prefixed jemalloc linked into this library;
//! - [`conf`]: the options jemalloc starts with, decided at the first call, before jemalloc
//!   initialises, without allocating: profiling ready but inactive, `narenas` from the
//!   container's CPU count, decay, then the user's `MALLOC_CONF`.

mod conf;
mod exports;

#[cfg(test)]
mod tests;
