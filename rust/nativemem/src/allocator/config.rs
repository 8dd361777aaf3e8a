//! How the process's jemalloc is configured: build options, start-up options, run-time state.

use super::keys::{self, Key};
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
        let config_prof = ctl.get(keys::CONFIG_PROF)?;
        let prof_key = |key: Key<bool>| -> Result<Option<bool>, AllocatorError> {
            if config_prof {
                ctl.get(key).map(Some)
            } else {
                Ok(None)
            }
        };
        Ok(JemallocConfig {
            config_prof,
            config_stats: ctl.get(keys::CONFIG_STATS)?,
            opt_narenas: ctl.get(keys::OPT_NARENAS)?,
            arenas_narenas: ctl.get(keys::ARENAS_NARENAS)?,
            opt_prof: prof_key(keys::OPT_PROF)?,
            prof_active: prof_key(keys::PROF_ACTIVE)?,
            lg_prof_sample: if config_prof {
                Some(ctl.get(keys::OPT_LG_PROF_SAMPLE)? as u64)
            } else {
                None
            },
            background_thread: ctl.get(keys::BACKGROUND_THREAD)?,
            dirty_decay_ms: ctl.get(keys::ARENAS_DIRTY_DECAY_MS)? as i64,
            muzzy_decay_ms: ctl.get(keys::ARENAS_MUZZY_DECAY_MS)? as i64,
            tcache: ctl.get(keys::OPT_TCACHE)?,
            page_bytes: ctl.get(keys::ARENAS_PAGE)? as u64,
        })
    }
}
