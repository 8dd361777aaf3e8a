//! Heap profiling: switch sampling on and off, set the sample interval, and write
//! jeprof-compatible dumps with what offline symbolisation needs.
//!
//! Two engines, chosen per process ([`engine`]): the process's jemalloc when it can profile
//! (it serves `malloc` and was started with `opt.prof` on: the preload allocator, or a
//! distribution's `libjemalloc.so.2` with `MALLOC_CONF=prof:true,prof_active:false`); else, on
//! Linux x86-64 and aarch64, the import-rewriting engine ([`glibc`]), which needs nothing at the
//! JVM's start.

mod dump;
#[cfg(import_rewriting)]
pub mod glibc;
pub mod java_frames;
pub(crate) mod kept;
mod maps;
mod symbols;

pub use dump::{DumpRequest, DumpedProfile};

use crate::allocator::{keys, AllocatorError, Mallctl, ProcessAllocator};
use crate::files::FileError;
use serde::Serialize;
use std::path::PathBuf;

/// The option string that makes a jemalloc profiling-ready without sampling yet.
pub const READY_CONF: &str = "prof:true,prof_active:false";

/// Errors from profiling. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum SamplingError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    BadPath(String),
    /// The dump's path or directory, as every file nativemem creates is checked.
    #[error(transparent)]
    File(#[from] FileError),
    #[error("cannot write the heap profile {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "jemalloc could not write the heap profile {path} (prof.dump failed: {source}); check free \
         space and that the directory is writable"
    )]
    Dump {
        path: PathBuf,
        #[source]
        source: AllocatorError,
    },
    #[error("the heap profile {path} is not a jemalloc heap_v2 dump: {reason}")]
    NotAProfile { path: PathBuf, reason: String },
    #[error(transparent)]
    Allocator(#[from] AllocatorError),
}

/// What profiling can do in this process right now.
#[derive(Debug, Clone, Serialize)]
pub struct SamplingStatus {
    /// The engine that profiles this process: [`JEMALLOC_ENGINE`] or `glibc::ENGINE`; empty
    /// when none can.
    pub engine: String,
    /// Why that engine, and what it does not see (empty when none can).
    pub engine_reason: String,
    /// Compiled in (`config.prof`) and switched on at start (`opt.prof`).
    pub available: bool,
    /// Why not, with the settings that fix it (empty when available).
    pub unavailable_reason: String,
    /// Sampling right now (`prof.active`).
    pub active: bool,
    /// Sampling enabled for the calling thread (`thread.prof.active`).
    pub thread_active: bool,
    /// Average bytes between samples (`2^prof.lg_sample`); 0 when unavailable.
    pub sample_interval_bytes: u64,
    /// The import-rewriting engine's own figures (all 0 under jemalloc, which keeps its own):
    /// sampled blocks live now and their bytes as sampled, samples its full table dropped,
    /// import entries pointing at its hooks, and the memory its tables reserve and use.
    pub live_samples: u64,
    pub live_sampled_bytes: u64,
    pub dropped_samples: u64,
    pub hooked_entries: u64,
    pub table_reserved_bytes: u64,
    pub table_resident_bytes: u64,
}

impl SamplingStatus {
    /// The import-rewriting engine's figures, or zeroes; the other fields are the caller's.
    fn engine_figures(
        #[cfg(import_rewriting)] figures: Option<&glibc::GlibcProfilerStatus>,
        #[cfg(not(import_rewriting))] figures: Option<&()>,
    ) -> SamplingStatus {
        let status = SamplingStatus {
            engine: String::new(),
            engine_reason: String::new(),
            available: false,
            unavailable_reason: String::new(),
            active: false,
            thread_active: false,
            sample_interval_bytes: 0,
            live_samples: 0,
            live_sampled_bytes: 0,
            dropped_samples: 0,
            hooked_entries: 0,
            table_reserved_bytes: 0,
            table_resident_bytes: 0,
        };
        #[cfg(import_rewriting)]
        let status = match figures {
            Some(f) => SamplingStatus {
                live_samples: f.live_samples,
                live_sampled_bytes: f.live_sampled_bytes,
                dropped_samples: f.dropped_samples,
                hooked_entries: f.hooked_entries,
                table_reserved_bytes: f.table_reserved_bytes,
                table_resident_bytes: f.table_resident_bytes,
                ..status
            },
            None => status,
        };
        #[cfg(not(import_rewriting))]
        let _ = figures;
        status
    }
}

/// The name of the engine that profiles through the process's jemalloc.
pub const JEMALLOC_ENGINE: &str = "jemalloc";

/// The engine that profiles this process.
#[derive(Clone, Copy)]
pub enum Engine {
    Jemalloc(&'static Mallctl),
    /// Import rewriting (`glibc`): any allocator, started at run time.
    #[cfg(import_rewriting)]
    Imports,
}

/// The engine for this process, and why: jemalloc when it can profile, else import
/// rewriting where it is built; otherwise the reason with the fix.
pub fn engine() -> Result<(Engine, String), SamplingError> {
    match profiler() {
        Ok(ctl) => Ok((
            Engine::Jemalloc(ctl),
            format!(
                "jemalloc serves malloc ({}) and can profile: its own sampler records every \
                 allocation, libc's included",
                ProcessAllocator::get().malloc_object()
            ),
        )),
        #[cfg(import_rewriting)]
        Err(SamplingError::Unavailable(why_not_jemalloc)) => {
            let allocator = ProcessAllocator::get();
            let mut reason = format!(
                "{} serves malloc and cannot profile, so the allocation imports of every loaded \
                 library are rewritten (nothing needed at the JVM's start); what libc allocates \
                 inside itself (fopen's buffer, strdup) is not seen: for that, start the JVM with \
                 the LD_PRELOAD that '{ENV_COMMAND}' prints",
                allocator.malloc_object()
            );
            // A jemalloc that could profile if restarted says how.
            if allocator.jemalloc().is_some() {
                reason.push_str(&format!(". jemalloc's own sampler: {why_not_jemalloc}"));
            }
            Ok((Engine::Imports, reason))
        }
        Err(e) => Err(e),
    }
}

/// The command that extracts the preload allocator and prints its LD_PRELOAD line, as the reasons
/// below name it; the Java side puts the path of the jar it runs from in its place.
pub const ENV_COMMAND: &str = "java -jar nativemem.jar env";

/// Debian's and Ubuntu's jemalloc on this architecture, as the reasons below name it.
#[cfg(not(target_arch = "aarch64"))]
const DEBIAN_JEMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
#[cfg(target_arch = "aarch64")]
const DEBIAN_JEMALLOC: &str = "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2";

/// Where the import-rewriting engine is absent, the reasons say so: glibc's malloc cannot be
/// profiled there without restarting under jemalloc.
#[cfg(import_rewriting)]
const NO_IMPORT_REWRITING: &str = "";
#[cfg(not(import_rewriting))]
const NO_IMPORT_REWRITING: &str = " (on this architecture nativemem has no import-rewriting \
     engine, which profiles glibc's malloc without a restart on Linux x86-64 and aarch64 only)";

/// The process's jemalloc, if it can profile; otherwise the reason with the fix.
pub fn profiler() -> Result<&'static Mallctl, SamplingError> {
    let allocator = ProcessAllocator::get();
    let Some(ctl) = allocator.jemalloc() else {
        return Err(SamplingError::Unavailable(format!(
            "heap profiles need jemalloc, but glibc serves malloc in this process \
             ({}){NO_IMPORT_REWRITING}. Start the JVM with the preload allocator: run \
             '{ENV_COMMAND}' and set the LD_PRELOAD it prints (profiling ready by default), or \
             use Debian's jemalloc: LD_PRELOAD={DEBIAN_JEMALLOC} MALLOC_CONF={READY_CONF}",
            allocator.malloc_object()
        )));
    };
    let object = allocator.malloc_object();
    if !ctl.get(keys::CONFIG_PROF).unwrap_or(false) {
        return Err(SamplingError::Unavailable(format!(
            "the jemalloc serving malloc ({object}) was built without profiling (config.prof is \
             false). Use one built with --enable-prof: run '{ENV_COMMAND}' and set the LD_PRELOAD it \
             prints, or LD_PRELOAD={DEBIAN_JEMALLOC} MALLOC_CONF={READY_CONF}"
        )));
    }
    if !ctl.get(keys::OPT_PROF)? {
        return Err(SamplingError::Unavailable(format!(
            "jemalloc ({object}) can profile but was started without it (opt.prof is false), and \
             it cannot be switched on in a running process. Restart the JVM with \
             LD_PRELOAD={object} MALLOC_CONF={READY_CONF} (a MALLOC_CONF you already have: append \
             ,{READY_CONF})"
        )));
    }
    Ok(ctl)
}

/// The current state; never fails for lack of an engine (that is `available: false`).
pub fn status() -> Result<SamplingStatus, SamplingError> {
    let (engine, reason) = match engine() {
        Ok(found) => found,
        Err(SamplingError::Unavailable(reason)) => {
            return Ok(SamplingStatus {
                engine: String::new(),
                engine_reason: String::new(),
                available: false,
                unavailable_reason: reason,
                active: false,
                thread_active: false,
                sample_interval_bytes: 0,
                ..SamplingStatus::engine_figures(None)
            })
        }
        Err(e) => return Err(e),
    };
    match engine {
        Engine::Jemalloc(ctl) => Ok(SamplingStatus {
            engine: JEMALLOC_ENGINE.into(),
            engine_reason: reason,
            available: true,
            unavailable_reason: String::new(),
            active: ctl.get(keys::PROF_ACTIVE)?,
            thread_active: ctl.get(keys::THREAD_PROF_ACTIVE)?,
            sample_interval_bytes: sample_interval(ctl)?,
            ..SamplingStatus::engine_figures(None)
        }),
        #[cfg(import_rewriting)]
        Engine::Imports => {
            let figures = glibc::status();
            // Stopped here while another copy of nativemem's library profiles the process:
            // this copy's engine would refuse to start, so it is not "ready".
            if let Some(reason) = (!figures.active).then(glibc::why_not_startable).flatten() {
                return Ok(SamplingStatus {
                    unavailable_reason: reason,
                    ..SamplingStatus::engine_figures(Some(&figures))
                });
            }
            Ok(SamplingStatus {
                engine: glibc::ENGINE.into(),
                engine_reason: reason,
                available: true,
                unavailable_reason: String::new(),
                active: figures.active,
                // Every thread is sampled: the engine has no per-thread switch.
                thread_active: figures.active,
                sample_interval_bytes: figures.sample_interval_bytes,
                ..SamplingStatus::engine_figures(Some(&figures))
            })
        }
    }
}

/// Starts or stops sampling for the whole process (`prof.active`, or the import hooks).
pub fn set_active(active: bool) -> Result<(), SamplingError> {
    match engine()?.0 {
        Engine::Jemalloc(ctl) => Ok(ctl.set(keys::PROF_ACTIVE, active)?),
        #[cfg(import_rewriting)]
        Engine::Imports => {
            if active {
                glibc::start(glibc::interval())?;
            } else {
                glibc::stop();
            }
            Ok(())
        }
    }
}

/// Starts or stops sampling for the calling thread (`thread.prof.active`).
pub fn set_thread_active(active: bool) -> Result<(), SamplingError> {
    match engine()?.0 {
        Engine::Jemalloc(ctl) => Ok(ctl.set(keys::THREAD_PROF_ACTIVE, active)?),
        #[cfg(import_rewriting)]
        Engine::Imports => Err(SamplingError::Unavailable(format!(
            "the {} engine samples every thread; switching one thread needs the jemalloc \
             engine (start the JVM with the LD_PRELOAD that '{ENV_COMMAND}' prints)",
            glibc::ENGINE
        ))),
    }
}

/// Discards all samples (`prof.reset`); with `interval_bytes`, also sets the sample interval
/// (jemalloc: to the nearest power of two). Returns the interval in effect afterwards.
pub fn reset(interval_bytes: Option<u64>) -> Result<u64, SamplingError> {
    match engine()?.0 {
        Engine::Jemalloc(ctl) => {
            match interval_bytes {
                Some(bytes) => ctl.set(keys::PROF_RESET, nearest_lg(bytes))?,
                None => ctl.run(keys::PROF_RESET.name)?,
            }
            sample_interval(ctl)
        }
        #[cfg(import_rewriting)]
        Engine::Imports => Ok(glibc::reset(interval_bytes)?.sample_interval_bytes),
    }
}

/// Dumps the heap profile of this process's engine to `request.target` with its sidecar.
pub fn dump(request: &DumpRequest) -> Result<DumpedProfile, SamplingError> {
    dump::dump_from(request, || match engine()?.0 {
        Engine::Jemalloc(ctl) => Ok(dump::Source::Jemalloc(ctl)),
        #[cfg(import_rewriting)]
        Engine::Imports => Ok(dump::Source::Imports),
    })
}

fn sample_interval(ctl: &Mallctl) -> Result<u64, SamplingError> {
    let lg = ctl.get(keys::PROF_LG_SAMPLE)?;
    Ok(1u64.checked_shl(lg as u32).unwrap_or(u64::MAX))
}

/// `log2` of the power of two nearest to `bytes` (ties round up), at least 0, at most 62.
pub fn nearest_lg(bytes: u64) -> usize {
    if bytes <= 1 {
        return 0;
    }
    let floor = 63 - bytes.leading_zeros() as usize;
    let half = 1u64 << floor >> 1;
    let lg = if bytes - (1u64 << floor) >= half.max(1) && floor > 0 {
        floor + 1
    } else {
        floor
    };
    lg.min(62)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jemalloc preloaded into the test run serves malloc: the glibc tests have nothing to see.
    fn under_preloaded_jemalloc() -> bool {
        std::env::var("LD_PRELOAD")
            .unwrap_or_default()
            .contains("jemalloc")
    }

    #[test]
    fn intervals_round_to_the_nearest_power_of_two() {
        assert_eq!(nearest_lg(0), 0);
        assert_eq!(nearest_lg(1), 0);
        assert_eq!(nearest_lg(2), 1);
        assert_eq!(nearest_lg(3), 2);
        assert_eq!(nearest_lg(512 * 1024), 19);
        assert_eq!(nearest_lg(700 * 1024), 19);
        assert_eq!(nearest_lg(800 * 1024), 20);
        assert_eq!(nearest_lg(u64::MAX), 62);
    }

    #[test]
    #[cfg(not(import_rewriting))]
    fn glibc_process_is_told_that_import_rewriting_is_absent_here() {
        if under_preloaded_jemalloc() {
            return;
        }
        let status = status().unwrap();
        assert!(!status.available, "{status:?}");
        for said in [
            "no import-rewriting engine",
            "Linux x86-64 and aarch64 only",
            ENV_COMMAND,
            DEBIAN_JEMALLOC,
        ] {
            assert!(
                status.unavailable_reason.contains(said),
                "{said}: {}",
                status.unavailable_reason
            );
        }
    }

    #[test]
    #[cfg(import_rewriting)]
    fn glibc_process_is_profiled_by_import_rewriting_and_says_what_it_misses() {
        if under_preloaded_jemalloc() {
            return;
        }
        let status = status().unwrap();
        assert!(status.available, "{status:?}");
        assert_eq!(status.engine, glibc::ENGINE);
        assert!(
            status.engine_reason.contains("fopen") && status.engine_reason.contains(ENV_COMMAND),
            "{}",
            status.engine_reason
        );
        // Per-thread switching is jemalloc's alone, and the error says so (the engine is not
        // started here: its own tests take turns with it).
        assert!(matches!(
            set_thread_active(false),
            Err(SamplingError::Unavailable(reason)) if reason.contains("every thread")
        ));
    }
}
