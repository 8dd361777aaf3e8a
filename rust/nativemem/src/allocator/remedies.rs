//! Actions that give memory back at run time, each reporting resident bytes before and after.

use super::keys;
use super::stats::ARENAS_ALL;
use super::{glibc, AllocatorError, ProcessAllocator};
use crate::process;
use serde::Serialize;

/// The largest decay time jemalloc accepts: `NSTIME_SEC_MAX` seconds, in milliseconds.
pub const MAX_DECAY_MS: i64 = 18_446_744_072_000;

/// What one remedy changed.
#[derive(Debug, Clone, Serialize)]
pub struct RemedyOutcome {
    pub remedy: &'static str,
    /// `jemalloc` or `glibc`: whose memory was acted on.
    pub allocator: &'static str,
    /// jemalloc's `stats.resident` before and after; absent on glibc, which does not count it.
    pub allocator_resident_before_bytes: Option<u64>,
    pub allocator_resident_after_bytes: Option<u64>,
    /// The process's RSS before and after (`/proc/self/status`).
    pub rss_before_bytes: u64,
    pub rss_after_bytes: u64,
    /// One line for people: what was done.
    pub detail: String,
}

/// Purges every unused dirty page of every arena now (`arena.<ALL>.purge`).
pub fn purge() -> Result<RemedyOutcome, AllocatorError> {
    on_jemalloc("purge", |ctl| {
        ctl.act_at(keys::ARENA_PURGE, ARENAS_ALL)?;
        Ok("purged unused dirty pages of all arenas".into())
    })
}

/// Sets dirty and muzzy decay times for every existing arena and as the default for new ones.
/// `-1` disables purging, `0` purges at once.
pub fn set_decay(dirty_ms: i64, muzzy_ms: i64) -> Result<RemedyOutcome, AllocatorError> {
    for (name, value) in [("dirty_decay_ms", dirty_ms), ("muzzy_decay_ms", muzzy_ms)] {
        if !(-1..=MAX_DECAY_MS).contains(&value) {
            return Err(AllocatorError::OutOfRange {
                setting: name,
                value,
                range: format!("-1 (never purge) to {MAX_DECAY_MS}"),
            });
        }
    }
    on_jemalloc("set_decay", |ctl| {
        ctl.set(keys::ARENAS_DIRTY_DECAY_MS, dirty_ms as isize)?;
        ctl.set(keys::ARENAS_MUZZY_DECAY_MS, muzzy_ms as isize)?;
        let narenas = ctl.get(keys::ARENAS_NARENAS)?;
        let mut changed = 0;
        for i in 0..narenas as usize {
            if !ctl.get_at(keys::ARENA_INITIALIZED, i)? {
                continue;
            }
            ctl.set_at(keys::ARENA_DIRTY_DECAY_MS, i, dirty_ms as isize)?;
            ctl.set_at(keys::ARENA_MUZZY_DECAY_MS, i, muzzy_ms as isize)?;
            changed += 1;
        }
        Ok(format!(
            "dirty_decay_ms={dirty_ms} muzzy_decay_ms={muzzy_ms} for {changed} arenas and new ones"
        ))
    })
}

/// Starts jemalloc's background purging threads (`background_thread=true`).
pub fn enable_background_threads() -> Result<RemedyOutcome, AllocatorError> {
    on_jemalloc("enable_background_threads", |ctl| {
        ctl.set(keys::BACKGROUND_THREAD, true)?;
        Ok("background purging threads enabled".into())
    })
}

/// Returns the calling thread's cached objects to their arenas (`thread.tcache.flush`).
pub fn flush_thread_cache() -> Result<RemedyOutcome, AllocatorError> {
    on_jemalloc("flush_thread_cache", |ctl| {
        ctl.act(keys::THREAD_TCACHE_FLUSH)?;
        Ok("flushed the calling thread's tcache".into())
    })
}

/// glibc's `malloc_trim(0)`.
pub fn trim() -> Result<RemedyOutcome, AllocatorError> {
    if ProcessAllocator::get().jemalloc().is_some() {
        return Err(AllocatorError::NeedsGlibc { remedy: "trim" });
    }
    let rss_before = rss()?;
    let released = glibc::trim();
    Ok(RemedyOutcome {
        remedy: "trim",
        allocator: "glibc",
        allocator_resident_before_bytes: None,
        allocator_resident_after_bytes: None,
        rss_before_bytes: rss_before,
        rss_after_bytes: rss()?,
        detail: if released {
            "malloc_trim(0) released memory".into()
        } else {
            "malloc_trim(0) found nothing to release".into()
        },
    })
}

fn on_jemalloc(
    remedy: &'static str,
    act: impl FnOnce(&super::Mallctl) -> Result<String, AllocatorError>,
) -> Result<RemedyOutcome, AllocatorError> {
    let ctl = ProcessAllocator::get()
        .jemalloc()
        .ok_or(AllocatorError::NeedsJemalloc { remedy })?;
    let resident = || -> Result<u64, AllocatorError> {
        ctl.advance_epoch()?;
        Ok(ctl.get(keys::STATS_RESIDENT)? as u64)
    };
    let (resident_before, rss_before) = (resident()?, rss()?);
    let detail = act(ctl)?;
    Ok(RemedyOutcome {
        remedy,
        allocator: "jemalloc",
        allocator_resident_before_bytes: Some(resident_before),
        allocator_resident_after_bytes: Some(resident()?),
        rss_before_bytes: rss_before,
        rss_after_bytes: rss()?,
        detail,
    })
}

fn rss() -> Result<u64, AllocatorError> {
    process::memory()
        .map(|m| m.rss_bytes)
        .map_err(|e| AllocatorError::Process(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_out_of_range_is_refused_before_touching_the_allocator() {
        for (dirty, muzzy) in [
            (-2, 0),
            (0, -5),
            (MAX_DECAY_MS + 1, 0),
            (i64::MIN, i64::MAX),
        ] {
            let e = set_decay(dirty, muzzy).unwrap_err();
            assert!(matches!(e, AllocatorError::OutOfRange { .. }), "{e}");
            assert!(e.to_string().contains("-1 (never purge)"), "{e}");
        }
    }

    #[test]
    fn jemalloc_remedies_on_glibc_say_so_and_trim_works() {
        if ProcessAllocator::get().jemalloc().is_some() {
            return; // the test binary runs under glibc unless LD_PRELOAD says otherwise
        }
        let e = purge().unwrap_err();
        assert!(e.to_string().contains("glibc"), "{e}");
        let outcome = trim().unwrap();
        assert_eq!(outcome.allocator, "glibc");
        assert!(outcome.rss_after_bytes > 0);
    }
}
