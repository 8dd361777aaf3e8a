//! Every mallctl key the core reads or writes, declared once with its C type.
//!
//! A key read with the wrong width fails only at run time (`EINVAL`), so the type travels with the
//! name: `ctl.get(keys::ARENAS_PAGE)` is a `usize` everywhere. Like tikv's jemalloc-ctl, without
//! its macros: that crate binds the jemalloc it links, not the process's.
//!
//! Keys a caller names at run time (`NativeAllocator.mallctl`) are admitted here too, by
//! [`check_plain_read`]: only those whose read is a plain read of an integer or boolean.

use super::AllocatorError;
use std::ffi::c_char;
use std::marker::PhantomData;

/// A mallctl name and the C type of its value (`()` for a key that only acts, such as a purge);
/// `<i>` in the name stands for an arena or bin index.
pub struct Key<T> {
    pub name: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    const fn new(name: &'static str) -> Key<T> {
        Key {
            name,
            value: PhantomData,
        }
    }
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Key<T> {}

// Build configuration and options, fixed at start.
pub const CONFIG_PROF: Key<bool> = Key::new("config.prof");
pub const CONFIG_STATS: Key<bool> = Key::new("config.stats");
pub const OPT_NARENAS: Key<u32> = Key::new("opt.narenas");
pub const OPT_PROF: Key<bool> = Key::new("opt.prof");
pub const OPT_LG_PROF_SAMPLE: Key<usize> = Key::new("opt.lg_prof_sample");
pub const OPT_TCACHE: Key<bool> = Key::new("opt.tcache");

// Arenas.
pub const ARENAS_NARENAS: Key<u32> = Key::new("arenas.narenas");
pub const ARENAS_PAGE: Key<usize> = Key::new("arenas.page");
pub const ARENAS_DIRTY_DECAY_MS: Key<isize> = Key::new("arenas.dirty_decay_ms");
pub const ARENAS_MUZZY_DECAY_MS: Key<isize> = Key::new("arenas.muzzy_decay_ms");
pub const ARENA_INITIALIZED: Key<bool> = Key::new("arena.<i>.initialized");
pub const ARENA_DIRTY_DECAY_MS: Key<isize> = Key::new("arena.<i>.dirty_decay_ms");
pub const ARENA_MUZZY_DECAY_MS: Key<isize> = Key::new("arena.<i>.muzzy_decay_ms");
pub const ARENA_PURGE: Key<()> = Key::new("arena.<i>.purge");
pub const BACKGROUND_THREAD: Key<bool> = Key::new("background_thread");
pub const THREAD_TCACHE_FLUSH: Key<()> = Key::new("thread.tcache.flush");

// Statistics, refreshed by `epoch`.
pub const STATS_ALLOCATED: Key<usize> = Key::new("stats.allocated");
pub const STATS_ACTIVE: Key<usize> = Key::new("stats.active");
pub const STATS_RESIDENT: Key<usize> = Key::new("stats.resident");
pub const STATS_MAPPED: Key<usize> = Key::new("stats.mapped");
pub const STATS_RETAINED: Key<usize> = Key::new("stats.retained");
pub const STATS_METADATA: Key<usize> = Key::new("stats.metadata");
pub const STATS_ARENA_NTHREADS: Key<u32> = Key::new("stats.arenas.<i>.nthreads");
pub const STATS_ARENA_PDIRTY: Key<usize> = Key::new("stats.arenas.<i>.pdirty");
pub const STATS_ARENA_PMUZZY: Key<usize> = Key::new("stats.arenas.<i>.pmuzzy");
pub const STATS_ARENA_SMALL_ALLOCATED: Key<usize> = Key::new("stats.arenas.<i>.small.allocated");
pub const STATS_ARENA_LARGE_ALLOCATED: Key<usize> = Key::new("stats.arenas.<i>.large.allocated");

// Heap profiling.
pub const PROF_ACTIVE: Key<bool> = Key::new("prof.active");
pub const PROF_LG_SAMPLE: Key<usize> = Key::new("prof.lg_sample");
/// Written with a new `lg_sample`, or run without a value to keep the current one.
pub const PROF_RESET: Key<usize> = Key::new("prof.reset");
pub const PROF_DUMP: Key<*const c_char> = Key::new("prof.dump");
pub const THREAD_PROF_ACTIVE: Key<bool> = Key::new("thread.prof.active");
/// The function that captures a sampled allocation's stack (jemalloc >= 5.3), as an address.
pub const HOOK_PROF_BACKTRACE: Key<usize> = Key::new("experimental.hooks.prof_backtrace");

/// Keys whose read is a pure read of an integer or boolean, with `<i>` for any index. jemalloc
/// answers a read of some keys by acting (`arenas.create` makes an arena, `tcache.create` a
/// cache) and of others with a pointer (`version`, string options), which a length check cannot
/// tell from an integer; so callers that pass a key by name get only these.
const PLAIN_NAMESPACES: [&str; 3] = ["config.", "opt.", "stats."];
const STRING_KEYS: [&str; 12] = [
    "config.malloc_conf",
    "opt.dss",
    "opt.junk",
    "opt.metadata_thp",
    "opt.percpu_arena",
    "opt.prof_prefix",
    "opt.stats_print_opts",
    "opt.stats_interval_opts",
    "opt.thp",
    "opt.zero_realloc",
    "opt.malloc_conf",
    "stats.arenas.<i>.dss",
];
const PLAIN_KEYS: [&str; 31] = [
    "epoch",
    "background_thread",
    "max_background_threads",
    "prof.active",
    "prof.thread_active_init",
    "prof.gdump",
    "prof.interval",
    "prof.lg_sample",
    "arenas.narenas",
    "arenas.dirty_decay_ms",
    "arenas.muzzy_decay_ms",
    "arenas.quantum",
    "arenas.page",
    "arenas.tcache_max",
    "arenas.nbins",
    "arenas.nhbins",
    "arenas.nlextents",
    "arenas.bin.<i>.size",
    "arenas.bin.<i>.nregs",
    "arenas.bin.<i>.slab_size",
    "arenas.bin.<i>.nshards",
    "arenas.lextent.<i>.size",
    "arena.<i>.initialized",
    "arena.<i>.dirty_decay_ms",
    "arena.<i>.muzzy_decay_ms",
    "arena.<i>.retain_grow_limit",
    "thread.arena",
    "thread.allocated",
    "thread.deallocated",
    "thread.tcache.enabled",
    "thread.prof.active",
];

/// Admits `key` for [`super::Mallctl::read_integer`], or says why not and what can be read.
pub fn check_plain_read(key: &str) -> Result<(), AllocatorError> {
    let pattern: Vec<&str> = key
        .split('.')
        .map(|part| {
            if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                "<i>"
            } else {
                part
            }
        })
        .collect();
    let pattern = pattern.join(".");
    let plain = PLAIN_KEYS.contains(&pattern.as_str())
        || (PLAIN_NAMESPACES.iter().any(|ns| pattern.starts_with(ns))
            && !STRING_KEYS.contains(&pattern.as_str())
            && !pattern.ends_with(".reset"));
    if plain {
        return Ok(());
    }
    let reason = if pattern == "version" || STRING_KEYS.contains(&pattern.as_str()) {
        "its value is a string, not an integer".to_owned()
    } else {
        "reading it is not a plain read of an integer or boolean (for some keys jemalloc acts on \
         a read: arenas.create makes an arena, tcache.create a cache; others return a pointer)"
            .to_owned()
    };
    Err(AllocatorError::NotPlainRead {
        key: key.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_integer_and_boolean_reads_are_admitted() {
        for key in [
            "opt.narenas",
            "config.prof",
            "stats.allocated",
            "stats.arenas.4096.pdirty",
            "arenas.bin.3.size",
            "arena.0.dirty_decay_ms",
            "prof.active",
            "epoch",
        ] {
            assert!(check_plain_read(key).is_ok(), "{key}");
        }
        for (key, why) in [
            ("version", "string"),
            ("opt.dss", "string"),
            ("stats.arenas.0.dss", "string"),
            ("arenas.create", "arenas.create makes an arena"),
            ("tcache.create", "not a plain read"),
            ("thread.allocatedp", "not a plain read"),
            ("arena.0.purge", "not a plain read"),
            ("stats.mutexes.reset", "not a plain read"),
            ("experimental.utilization.query", "not a plain read"),
        ] {
            let err = check_plain_read(key).unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(why), "{key}: {err}");
        }
    }
}
