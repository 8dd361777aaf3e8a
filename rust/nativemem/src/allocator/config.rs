//! How the process's jemalloc is configured: build options, start-up options, run-time state.

use super::mallctl::Mallctl;
use super::AllocatorError;
use serde::Serialize;

/// jemalloc's configuration as `mallctl` reports it. Options that need a build feature the
/// library lacks (`--enable-prof`) are `None`.
#[derive(Debug, Clone, Serialize)]
pub struct JemallocConfig {
    /// `config.prof`: heap profiling compiled in.
    pub config_prof: bool,
    /// `config.stats`: statistics compiled in; without it every `stats.*` key is absent.
    pub config_stats: bool,
    /// `opt.narenas`: the arena limit chosen at start (4 × CPUs unless configured).
    pub opt_narenas: u32,
    /// `arenas.narenas`: arenas that exist now, including the huge-allocation arena.
    pub arenas_narenas: u32,
    /// `opt.prof`: profiling enabled at start (it cannot be switched on later).
    pub opt_prof: Option<bool>,
    /// `prof.active`: sampling on now.
    pub prof_active: Option<bool>,
    /// `opt.lg_prof_sample`: log2 of the mean bytes between samples.
    pub lg_prof_sample: Option<u64>,
    /// `background_thread`: purging threads on now.
    pub background_thread: bool,
    /// `arenas.dirty_decay_ms`: decay time for new arenas; -1 means dirty pages are never purged.
    pub dirty_decay_ms: i64,
    /// `arenas.muzzy_decay_ms`: as above for muzzy pages.
    pub muzzy_decay_ms: i64,
    /// `opt.tcache`: thread caches enabled.
    pub tcache: bool,
    /// `arenas.page`: page size in bytes.
    pub page_bytes: u64,
}

impl JemallocConfig {
    /// Reads the configuration; `config.*`, `opt.*` and `arenas.*` keys need no epoch.
    pub fn read(ctl: &Mallctl) -> Result<JemallocConfig, AllocatorError> {
        let config_prof: bool = ctl.read("config.prof")?;
        let prof_key = |key: &str| -> Result<Option<bool>, AllocatorError> {
            if config_prof {
                ctl.read::<bool>(key).map(Some)
            } else {
                Ok(None)
            }
        };
        Ok(JemallocConfig {
            config_prof,
            config_stats: ctl.read("config.stats")?,
            opt_narenas: ctl.read("opt.narenas")?,
            arenas_narenas: ctl.read("arenas.narenas")?,
            opt_prof: prof_key("opt.prof")?,
            prof_active: prof_key("prof.active")?,
            lg_prof_sample: if config_prof {
                Some(ctl.read::<usize>("opt.lg_prof_sample")? as u64)
            } else {
                None
            },
            background_thread: ctl.read("background_thread")?,
            dirty_decay_ms: ctl.read::<isize>("arenas.dirty_decay_ms")? as i64,
            muzzy_decay_ms: ctl.read::<isize>("arenas.muzzy_decay_ms")? as i64,
            tcache: ctl.read("opt.tcache")?,
            page_bytes: ctl.read::<usize>("arenas.page")? as u64,
        })
    }
}
