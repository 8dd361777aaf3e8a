//! Heap profiles: a jemalloc `heap_v2` dump → symbolized stacks → text, collapsed stacks, flame
//! graph, pprof, and the difference of two dumps.
//!
//! The pipeline mirrors jeprof so figures agree with it: parse (streaming), unbias each stack's
//! counts (Poisson sampling), symbolize through the dump's own memory map and the sidecar the
//! dump writer saved, strip allocator frames, then render.

pub mod collapsed;
pub mod demangle;
pub mod diff;
pub mod flamegraph;
pub mod mappings;
pub mod output;
pub mod parse;
pub mod pprof;
pub mod report;
pub mod sidecar;
pub mod stacks;
pub mod strip;
pub mod symbolize;
pub mod unbias;

pub use parse::HeapDump;
pub use stacks::Stacks;

use std::path::{Path, PathBuf};

/// Errors from reading, analysing or writing heap profiles. Each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read heap profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is empty: not a heap profile (write one with the 'prof.dump' mallctl)")]
    Empty { path: PathBuf },
    #[error(
        "{path} is not a jemalloc heap_v2 profile (first line: '{first_line}'); pass a file \
         written by the 'prof.dump' mallctl or NativeMemory.dumpProfile()"
    )]
    NotHeapV2 { path: PathBuf, first_line: String },
    #[error("{path}, line {line}: {reason}; the dump is damaged, write a new one")]
    Malformed {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} already exists; choose another file name or delete it first")]
    Exists { path: PathBuf },
    #[error("unknown output format '{0}': use text, collapsed, svg or pprof")]
    UnknownFormat(String),
    #[error("cannot draw the flame graph: {0}")]
    FlameGraph(String),
}

/// A dump read and symbolized: the unit every output is made from.
pub fn analyze(path: &Path) -> Result<(HeapDump, Stacks), ProfileError> {
    let dump = parse::read(path)?;
    let sidecar = sidecar::Sidecar::beside(path);
    let mut symbolizer = symbolize::Symbolizer::new(&dump.mappings, sidecar);
    let stacks = Stacks::from_dump(&dump, &mut symbolizer);
    Ok((dump, stacks))
}
