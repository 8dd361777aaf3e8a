//! The books: one record per open handle, counters per kind, leaks per creation site.

use super::interner::Interner;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Memory for creation stacks, at most. Sites whose handles all ended without a leak are evicted
/// once the table holds more than [`SWEEP_ABOVE_BYTES`]; stacks that still find no room are counted
/// in `sites_dropped`.
pub const MAX_SITE_BYTES: usize = 16 << 20;
/// Above this, new stacks sweep the table of sites nothing uses any more (every [`SWEEP_EVERY`]
/// stacks): the table grows with the sites that matter (open, pooled, leaked handles), not with
/// every stack seen since the start.
pub const SWEEP_ABOVE_BYTES: usize = 2 << 20;
/// Longest creation stack kept, in bytes (longer ones are cut).
pub const MAX_STACK_BYTES: usize = 8192;
const MAX_KIND_BYTES: usize = 256 << 10;
const MAX_THREAD_BYTES: usize = 512 << 10;
/// New stacks interned between two sweeps of the site table, at least: a table full of live
/// sites is not rescanned for every new stack.
const SWEEP_EVERY: u32 = 64;
/// Ended handles kept because they still matter: closed or leaked caches, leaked retainers.
const MAX_KEPT_AFTER_END: usize = 10_000;

/// Handle ids are sequential and never chosen by a caller: a multiplicative hash spreads them
/// well and costs a fraction of SipHash on the create/close path.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(super) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Wall-clock milliseconds from the kernel's coarse clock: a few milliseconds of resolution is
/// plenty for "when was this created", and it costs a fraction of the precise clock per handle.
fn coarse_now_ms() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut now) };
    if rc != 0 {
        return 0;
    }
    (now.tv_sec as u64) * 1000 + (now.tv_nsec as u64) / 1_000_000
}

/// How a handle stopped owning its native memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Closed by its owner.
    Closed,
    /// Ownership passed on to native code or another object.
    Transferred,
    /// Garbage-collected while still owning native memory.
    Leaked,
    /// Leaked, and its native memory freed by a finalizer (rocksdbjni before 7): it retains
    /// nothing any more.
    Finalized,
}

impl End {
    pub fn from_code(code: i32) -> Option<End> {
        match code {
            0 => Some(End::Closed),
            1 => Some(End::Transferred),
            2 => Some(End::Leaked),
            3 => Some(End::Finalized),
            _ => None,
        }
    }

    pub(super) fn word(self) -> &'static str {
        match self {
            End::Closed => "closed",
            End::Transferred => "transferred",
            End::Leaked => "leaked",
            End::Finalized => "leaked (freed by the finalizer)",
        }
    }
}

/// One tracked handle.
#[derive(Debug, Clone)]
pub struct Record {
    pub(super) kind: u32,
    pub(super) address: u64,
    pub(super) site: u32,
    pub(super) thread: u32,
    pub(super) created_ms: u64,
    /// Set for caches: their capacity.
    pub(super) capacity_bytes: Option<u64>,
    /// Caches this handle keeps alive natively (options with a block-based table config).
    pub(super) retains: Vec<u64>,
    /// Set once the handle ended but the record is kept.
    pub(super) end: Option<End>,
    /// Resting in a pool (an `Inflater` in a zip file's cache): open, but nobody's to close.
    pub(super) pooled: bool,
}

#[derive(Debug, Default, Clone)]
pub(super) struct Counters {
    pub(super) created: u64,
    pub(super) closed: u64,
    pub(super) transferred: u64,
    pub(super) leaked: u64,
}

#[derive(Debug)]
pub(super) struct Books {
    pub(super) next_id: u64,
    pub(super) kinds: Interner,
    pub(super) sites: Interner,
    pub(super) threads: Interner,
    pub(super) counters: Vec<Counters>,
    pub(super) open: IdMap<Record>,
    /// Ended handles still relevant to zombie caches.
    pub(super) kept: IdMap<Record>,
    pub(super) leaks_by_site: HashMap<(u32, u32), u64>,
    /// Leaked handles a finalizer freed later, per (kind, site): count, last time (ms).
    pub(super) finalized_by_site: HashMap<(u32, u32), (u64, u64)>,
    /// Open handles counted without a record, per (kind, site): see [`HandleRegistry::counted`].
    pub(super) open_unrecorded: HashMap<(u32, u32), u64>,
    /// Of those, the ones resting in a pool, per (kind, counted site, pool site): what the pool
    /// holds now, read from the pool itself (see [`HandleRegistry::counted_pooled`]).
    pub(super) pooled_unrecorded: HashMap<(u32, u32, u32), u64>,
    /// The last sites interned: a sweep keeps them, whatever their handles (a site is interned
    /// just before the handle that uses it is created).
    pub(super) sites_recently_used: VecDeque<u32>,
    pub(super) interns_since_sweep: u32,
}

/// Thread-safe registry; every method is short and never calls back into Java.
#[derive(Debug)]
pub struct HandleRegistry {
    books: Mutex<Books>,
    /// Bumped when sites are evicted: their ids may then name other stacks.
    site_generation: AtomicU64,
}

impl Default for HandleRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl HandleRegistry {
    pub fn new() -> Self {
        HandleRegistry {
            books: Mutex::new(Books {
                next_id: 1,
                kinds: Interner::new("(other kinds)", MAX_KIND_BYTES, 256),
                sites: Interner::new(
                    "(site not recorded: table of creation sites full)",
                    MAX_SITE_BYTES,
                    MAX_STACK_BYTES,
                ),
                threads: Interner::new("(other threads)", MAX_THREAD_BYTES, 256),
                counters: Vec::new(),
                open: IdMap::default(),
                kept: IdMap::default(),
                leaks_by_site: HashMap::new(),
                finalized_by_site: HashMap::new(),
                open_unrecorded: HashMap::new(),
                pooled_unrecorded: HashMap::new(),
                sites_recently_used: VecDeque::with_capacity(SWEEP_EVERY as usize),
                interns_since_sweep: 0,
            }),
            site_generation: AtomicU64::new(0),
        }
    }

    pub(super) fn books(&self) -> MutexGuard<'_, Books> {
        // A panic while holding the lock leaves consistent-enough counters: keep going.
        self.books
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn intern_kind(&self, kind: &str) -> u32 {
        self.books().kinds.intern(kind)
    }

    /// Interns a creation stack. When the table is full, or holds more than
    /// [`SWEEP_ABOVE_BYTES`], first evicts the sites no open, pooled, leaked or kept handle uses
    /// (notes, whose text starts with `(`, stay: callers keep their ids).
    pub fn intern_site(&self, stack: &str) -> u32 {
        let mut books = self.books();
        if books.sites.find(stack).is_none()
            && (!books.sites.has_room_for(stack) || books.sites.bytes() > SWEEP_ABOVE_BYTES)
            && books.interns_since_sweep >= SWEEP_EVERY
            && books.sweep_sites() > 0
        {
            self.site_generation.fetch_add(1, Ordering::Release);
        }
        books.interns_since_sweep = books.interns_since_sweep.saturating_add(1);
        let id = books.sites.intern(stack);
        if books.sites_recently_used.len() == SWEEP_EVERY as usize {
            books.sites_recently_used.pop_front();
        }
        books.sites_recently_used.push_back(id);
        id
    }

    /// Changes whenever site ids were freed: a cache of site ids made before is stale.
    pub fn site_generation(&self) -> u64 {
        self.site_generation.load(Ordering::Acquire)
    }

    pub fn intern_thread(&self, name: &str) -> u32 {
        self.books().threads.intern(name)
    }

    pub fn site_text(&self, site: u32) -> String {
        self.books().sites.text(site).to_string()
    }

    /// Records a new open handle and returns its id.
    pub fn created(&self, kind: u32, address: u64, site: u32, thread: u32) -> u64 {
        let created_ms = coarse_now_ms();
        let mut books = self.books();
        let id = books.next_id;
        books.next_id += 1;
        books.counter(kind).created += 1;
        books.open.insert(
            id,
            Record {
                kind,
                address,
                site,
                thread,
                created_ms,
                capacity_bytes: None,
                retains: Vec::new(),
                end: None,
                pooled: false,
            },
        );
        id
    }

    /// Ends an open handle; false if it was not open (unknown or already ended).
    pub fn ended(&self, id: u64, how: End) -> bool {
        let mut books = self.books();
        let Some(mut record) = books.open.remove(&id) else {
            return false;
        };
        let counters = books.counter(record.kind);
        match how {
            End::Closed => counters.closed += 1,
            End::Transferred => counters.transferred += 1,
            End::Leaked | End::Finalized => counters.leaked += 1,
        }
        if matches!(how, End::Leaked | End::Finalized) {
            *books
                .leaks_by_site
                .entry((record.kind, record.site))
                .or_insert(0) += 1;
        }
        if how == End::Finalized {
            books.count_finalized(record.kind, record.site);
        }
        let is_cache = record.capacity_bytes.is_some();
        let retains_a_cache = how == End::Leaked && !record.retains.is_empty();
        if is_cache || retains_a_cache {
            record.end = Some(how);
            if books.kept.len() < MAX_KEPT_AFTER_END {
                books.kept.insert(id, record);
            }
        }
        true
    }

    /// Adds handles counted without a record of their own (zlib streams at level `counts`, the
    /// unsampled ones at `sampled`): `created` new ones, of which `closed` and `leaked` already
    /// ended, all attributed to `site`. Callers send each end only after its creation, so the
    /// open count never goes below zero; if it would, it stops at zero.
    pub fn counted(&self, kind: u32, site: u32, created: u64, closed: u64, leaked: u64) {
        let mut books = self.books();
        let counters = books.counter(kind);
        counters.created += created;
        counters.closed += closed;
        counters.leaked += leaked;
        let open = books.open_unrecorded.entry((kind, site)).or_insert(0);
        *open = (*open + created).saturating_sub(closed + leaked);
        if leaked > 0 {
            *books.leaks_by_site.entry((kind, site)).or_insert(0) += leaked;
        }
    }

    /// `pooled` of the handles counted open at `site` rest in the pool whose note is `pool_site`
    /// now (an Inflater in Spring Boot's nested-jar cache: the pool's own contents, read at each
    /// report, whatever the level). The figure replaces the previous one for that pool; the report
    /// lists them pooled, never more than are counted open at `site`.
    pub fn counted_pooled(&self, kind: u32, site: u32, pool_site: u32, pooled: u64) {
        let mut books = self.books();
        if pooled == 0 {
            books.pooled_unrecorded.remove(&(kind, site, pool_site));
        } else {
            books
                .pooled_unrecorded
                .insert((kind, site, pool_site), pooled);
        }
    }

    /// An open handle changed hands: handed to a pool (`pooled`, `site` names the pool) or out of
    /// one to a new borrower, now attributed to `site` and `thread`.
    pub fn reassign(&self, id: u64, site: u32, thread: u32, pooled: bool) {
        if let Some(record) = self.books().open.get_mut(&id) {
            record.site = site;
            record.thread = thread;
            record.pooled = pooled;
        }
    }

    /// A reader dropped its stream unclosed and a cleaner handed the stream's Inflater to a pool
    /// (Spring Boot's loader does): a leak at the reader's site, counted before the pool takes the
    /// handle over. The handle stays alive, pooled, so the kind's counters do not count it leaked.
    pub fn leaked_into_pool(&self, id: u64) {
        let mut books = self.books();
        if let Some(record) = books.open.get(&id) {
            let key = (record.kind, record.site);
            *books.leaks_by_site.entry(key).or_insert(0) += 1;
        }
    }

    /// A handle reported leaked was then freed by a finalizer (`id` leaked, of `kind` at `site`):
    /// what it retained is released.
    pub fn finalized(&self, id: u64, kind: u32, site: u32) {
        let mut books = self.books();
        books.count_finalized(kind, site);
        if let Some(record) = books.kept.get_mut(&id) {
            if record.end == Some(End::Leaked) {
                record.end = Some(End::Finalized);
                record.retains.clear();
            }
        }
        if books
            .kept
            .get(&id)
            .is_some_and(|r| r.capacity_bytes.is_none())
        {
            books.kept.remove(&id);
        }
    }

    /// Marks an open handle as a cache of `bytes` capacity.
    pub fn set_capacity(&self, id: u64, bytes: u64) {
        if let Some(record) = self.books().open.get_mut(&id) {
            record.capacity_bytes = Some(bytes);
        }
    }

    /// `holder`'s native table configuration now references `cache` (and nothing else).
    pub fn retain(&self, holder: u64, cache: u64) {
        if let Some(record) = self.books().open.get_mut(&holder) {
            record.retains = vec![cache];
        }
    }

    /// `target` was copied natively from `source` and retains what `source` retains.
    pub fn inherit(&self, target: u64, source: u64) {
        let mut books = self.books();
        let retains = match books.open.get(&source).or_else(|| books.kept.get(&source)) {
            Some(record) if !record.retains.is_empty() => record.retains.clone(),
            _ => return,
        };
        if let Some(record) = books.open.get_mut(&target) {
            record.retains = retains;
        }
    }

    /// Open (pooled ones excluded, as the report counts them) and leaked handles of every kind:
    /// what a per-second watch reads, without building a report.
    pub fn totals(&self) -> (u64, u64) {
        let books = self.books();
        let recorded = books.open.values().filter(|r| !r.pooled).count() as u64;
        let unrecorded: u64 =
            books.open_unrecorded.values().sum::<u64>() - books.unrecorded_pooled();
        let leaked = books.counters.iter().map(|c| c.leaked).sum();
        (recorded + unrecorded, leaked)
    }
}

impl Books {
    /// Handles counted open that rest in a pool, per (kind, counted site, pool site): the pools'
    /// figures, each capped by what is counted open at its site.
    pub(super) fn unrecorded_pooled_by(&self) -> Vec<((u32, u32, u32), u64)> {
        let mut left: HashMap<(u32, u32), u64> = HashMap::new();
        let mut keys: Vec<_> = self.pooled_unrecorded.iter().collect();
        keys.sort_unstable();
        keys.into_iter()
            .filter_map(|(&(kind, site, pool), &n)| {
                let open = left.entry((kind, site)).or_insert_with(|| {
                    self.open_unrecorded
                        .get(&(kind, site))
                        .copied()
                        .unwrap_or(0)
                });
                let moved = n.min(*open);
                *open -= moved;
                (moved > 0).then_some(((kind, site, pool), moved))
            })
            .collect()
    }

    fn unrecorded_pooled(&self) -> u64 {
        self.unrecorded_pooled_by().iter().map(|(_, n)| n).sum()
    }

    fn count_finalized(&mut self, kind: u32, site: u32) {
        let now = coarse_now_ms();
        let entry = self.finalized_by_site.entry((kind, site)).or_insert((0, 0));
        entry.0 += 1;
        entry.1 = now;
    }

    /// Evicts the sites nothing uses any more; returns how many.
    fn sweep_sites(&mut self) -> usize {
        let mut live: HashSet<u32> = self.sites_recently_used.iter().copied().collect();
        live.extend(self.open.values().chain(self.kept.values()).map(|r| r.site));
        live.extend(self.leaks_by_site.keys().map(|&(_, site)| site));
        live.extend(self.finalized_by_site.keys().map(|&(_, site)| site));
        live.extend(
            self.open_unrecorded
                .iter()
                .filter(|(_, &n)| n > 0)
                .map(|(&(_, site), _)| site),
        );
        let unused: Vec<u32> = self
            .sites
            .ids()
            .filter(|id| !live.contains(id) && !self.sites.text(*id).starts_with('('))
            .collect();
        for id in &unused {
            self.sites.evict(*id);
        }
        self.interns_since_sweep = 0;
        unused.len()
    }

    /// What the books hold in memory, about: records, tables and interned texts.
    pub(super) fn memory_bytes(&self) -> u64 {
        let record = std::mem::size_of::<Record>() + std::mem::size_of::<u64>() + 1;
        let counted = std::mem::size_of::<((u32, u32), (u64, u64))>() + 1;
        let retained: usize = self
            .open
            .values()
            .chain(self.kept.values())
            .map(|r| r.retains.capacity() * 8)
            .sum();
        let bytes = (self.open.capacity() + self.kept.capacity()) * record
            + retained
            + (self.leaks_by_site.capacity()
                + self.finalized_by_site.capacity()
                + self.open_unrecorded.capacity())
                * counted
            + self.counters.capacity() * std::mem::size_of::<Counters>()
            + self.sites.bytes()
            + self.kinds.bytes()
            + self.threads.bytes();
        bytes as u64
    }

    fn counter(&mut self, kind: u32) -> &mut Counters {
        let index = kind as usize;
        if self.counters.len() <= index {
            self.counters.resize(index + 1, Counters::default());
        }
        &mut self.counters[index]
    }

    pub(super) fn is_options(&self, kind: u32) -> bool {
        self.kinds.text(kind).ends_with("Options")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::KindReport;

    fn new_handle(r: &HandleRegistry, kind: &str, stack: &str) -> u64 {
        let kind = r.intern_kind(kind);
        let site = r.intern_site(stack);
        let thread = r.intern_thread("main");
        r.created(kind, 0x1000, site, thread)
    }

    #[test]
    fn counts_per_kind_and_leaks_per_site() {
        let r = HandleRegistry::new();
        let a = new_handle(&r, "ColumnFamilyOptions", "at A.line(A.java:1)");
        let b = new_handle(&r, "ColumnFamilyOptions", "at A.line(A.java:1)");
        let c = new_handle(&r, "ColumnFamilyOptions", "at B.line(B.java:2)");
        let d = new_handle(&r, "Snapshot", "at C.line(C.java:3)");
        assert!(r.ended(a, End::Closed));
        assert!(!r.ended(a, End::Closed), "a second end is ignored");
        assert!(r.ended(b, End::Leaked));
        assert!(r.ended(d, End::Transferred));
        let report = r.report();
        let cfo = report
            .kinds
            .iter()
            .find(|k| k.kind == "ColumnFamilyOptions")
            .unwrap();
        assert_eq!(
            (cfo.created, cfo.closed, cfo.leaked, cfo.open),
            (3, 1, 1, 1)
        );
        let snap = report.kinds.iter().find(|k| k.kind == "Snapshot").unwrap();
        assert_eq!((snap.transferred, snap.open, snap.leaked), (1, 0, 0));
        let leak_site = report.sites.iter().find(|s| s.leaked == 1).unwrap();
        assert_eq!(leak_site.stack, "at A.line(A.java:1)");
        assert!(r.ended(c, End::Closed));
        assert_eq!(report.oldest_open.len(), 1);
    }

    /// Java binds every key of a site, so one no finalizer freed still writes when one last did.
    #[test]
    fn every_key_of_a_site_is_written() {
        let r = HandleRegistry::new();
        let a = new_handle(&r, "ColumnFamilyOptions", "at A.line(A.java:1)");
        r.ended(a, End::Leaked);
        let site = serde_json::to_value(&r.report().sites[0]).unwrap();
        for key in ["pooled", "freed_by_finalizer"] {
            assert_eq!(site[key], 0, "{key}");
        }
        let last = site.get("last_freed_by_finalizer_epoch_ms");
        assert_eq!(last, Some(&serde_json::Value::Null));
    }

    #[test]
    fn totals_match_the_report() {
        let r = HandleRegistry::new();
        let a = new_handle(&r, "Inflater", "at A.read(A.java:1)");
        let b = new_handle(&r, "Inflater", "at A.read(A.java:1)");
        new_handle(&r, "Statistics", "at B.open(B.java:2)");
        r.ended(a, End::Leaked);
        r.reassign(b, r.intern_site("(pooled by zip)"), 0, true);
        let kind = r.intern_kind("Inflater");
        let site = r.intern_site("at C.c(C.java:3)");
        r.counted(kind, site, 5, 2, 1);
        let report = r.report();
        let open: u64 = report.kinds.iter().map(|k| k.open).sum();
        let leaked: u64 = report.kinds.iter().map(|k| k.leaked).sum();
        assert_eq!(r.totals(), (open, leaked));
        assert_eq!(
            r.totals(),
            (1 + 2, 2),
            "one recorded + two counted open; two leaked"
        );
    }

    #[test]
    fn the_summary_is_the_reports_kinds_and_capacities() {
        let r = HandleRegistry::new();
        let cache = new_handle(&r, "LRUCache", "cache site");
        r.set_capacity(cache, 64 << 20);
        let opts = new_handle(&r, "ColumnFamilyOptions", "options site");
        r.retain(opts, cache);
        let open = new_handle(&r, "LRUCache", "open cache site");
        r.set_capacity(open, 8 << 20);
        r.ended(cache, End::Closed);
        let leaked = new_handle(&r, "Inflater", "at A.read(A.java:1)");
        r.ended(leaked, End::Leaked);
        let pooled = new_handle(&r, "Inflater", "at A.read(A.java:1)");
        r.reassign(pooled, r.intern_site("(pooled by zip)"), 0, true);
        let summary = r.summary();
        let report = r.report();
        assert_eq!(summary.open_cache_capacity_bytes, 8 << 20);
        assert_eq!(summary.zombie_cache_capacity_bytes, 64 << 20);
        assert_eq!(
            (
                summary.open_cache_capacity_bytes,
                summary.zombie_cache_capacity_bytes
            ),
            (
                report.open_cache_capacity_bytes,
                report.zombie_cache_capacity_bytes
            )
        );
        let counts = |kinds: &[KindReport]| -> Vec<(String, u64, u64, u64, u64, u64, u64)> {
            kinds
                .iter()
                .map(|k| {
                    let c = (
                        k.created,
                        k.closed,
                        k.transferred,
                        k.open,
                        k.pooled,
                        k.leaked,
                    );
                    (k.kind.clone(), c.0, c.1, c.2, c.3, c.4, c.5)
                })
                .collect()
        };
        assert_eq!(counts(&summary.kinds), counts(&report.kinds));
        let inflater = summary.kinds.iter().find(|k| k.kind == "Inflater").unwrap();
        assert_eq!((inflater.leaked, inflater.pooled, inflater.open), (1, 1, 0));
    }

    #[test]
    fn zombie_cache_needs_closed_cache_and_live_or_leaked_options() {
        let r = HandleRegistry::new();
        let cache = new_handle(&r, "LRUCache", "cache site");
        r.set_capacity(cache, 64 << 20);
        let opts = new_handle(&r, "ColumnFamilyOptions", "options site");
        r.retain(opts, cache);
        let copy = new_handle(&r, "ColumnFamilyOptions", "copy site");
        r.inherit(copy, opts);
        let before = r.report();
        assert!(before.zombie_caches.is_empty(), "cache still open");
        assert_eq!(before.open_cache_capacity_bytes, 64 << 20);
        r.ended(cache, End::Closed);
        r.ended(opts, End::Closed);
        let report = r.report();
        assert_eq!(report.open_cache_capacity_bytes, 0);
        assert_eq!(report.zombie_cache_capacity_bytes, 64 << 20);
        let zombies = report.zombie_caches;
        assert_eq!(zombies.len(), 1);
        assert_eq!(zombies[0].capacity_bytes, 64 << 20);
        assert_eq!(zombies[0].retainers.len(), 1);
        assert_eq!(zombies[0].retainers[0].site, "copy site");
        assert_eq!(zombies[0].retainers[0].state, "open");
        r.ended(copy, End::Leaked);
        let zombies = r.report().zombie_caches;
        assert_eq!(zombies[0].retainers[0].state, "leaked");
    }

    #[test]
    fn record_size_is_what_the_docs_state() {
        // docs/handles.md and handles/mod.rs state "about 80 bytes" per open handle, plus its map slot.
        assert!(
            std::mem::size_of::<Record>() <= 80,
            "{}",
            std::mem::size_of::<Record>()
        );
    }

    #[test]
    fn settled_cache_forgotten() {
        let r = HandleRegistry::new();
        let cache = new_handle(&r, "LRUCache", "cache site");
        r.set_capacity(cache, 1);
        let opts = new_handle(&r, "Options", "o");
        r.retain(opts, cache);
        r.ended(cache, End::Closed);
        r.ended(opts, End::Closed);
        assert!(r.report().zombie_caches.is_empty());
        assert!(r.books().kept.is_empty());
    }

    #[test]
    fn counted_handles_join_recorded_ones() {
        let r = HandleRegistry::new();
        let kind = r.intern_kind("Inflater");
        let unrecorded = r.intern_site("(creation stack not recorded: level=counts)");
        let recorded = new_handle(&r, "Inflater", "at A.line(A.java:1)");
        r.counted(kind, unrecorded, 10, 6, 1);
        r.counted(kind, unrecorded, 0, 1, 1);
        let report = r.report();
        let inflater = &report.kinds[0];
        assert_eq!(
            (
                inflater.created,
                inflater.closed,
                inflater.leaked,
                inflater.open
            ),
            (11, 7, 2, 2),
            "one recorded open handle plus 10 - 7 - 2 counted ones"
        );
        let site = report
            .sites
            .iter()
            .find(|s| s.site_id == unrecorded)
            .unwrap();
        assert_eq!((site.open, site.leaked), (1, 2));
        assert!(r.ended(recorded, End::Closed));
        r.counted(kind, unrecorded, 0, 5, 0);
        let pooled = new_handle(&r, "Inflater", "at A.first(A.java:1)");
        r.reassign(pooled, r.intern_site("at B.second(B.java:2)"), 0, false);
        r.ended(pooled, End::Leaked);
        assert!(r
            .report()
            .sites
            .iter()
            .any(|s| s.leaked == 1 && s.stack == "at B.second(B.java:2)"));
        let report = r.report();
        assert_eq!(
            report.kinds[0].open, 0,
            "an open count never goes below zero"
        );
    }

    #[test]
    fn pooled_handles_are_counted_apart_at_their_pool() {
        let r = HandleRegistry::new();
        let borrower = r.intern_site("at App.read(App.java:7)");
        let pool = r.intern_site("(pooled by java.util.zip.ZipFile)");
        let a = new_handle(&r, "Inflater", "at App.read(App.java:7)");
        let b = new_handle(&r, "Inflater", "at App.read(App.java:7)");
        r.reassign(a, pool, 0, true);
        let report = r.report();
        assert_eq!((report.kinds[0].open, report.kinds[0].pooled), (1, 1));
        let at_pool = report.sites.iter().find(|s| s.site_id == pool).unwrap();
        assert_eq!((at_pool.open, at_pool.pooled), (0, 1));
        let at_borrower = report.sites.iter().find(|s| s.site_id == borrower).unwrap();
        assert_eq!((at_borrower.open, at_borrower.pooled), (1, 0));
        assert!(report.oldest_open.iter().all(|o| o.handle_id == b));
        r.reassign(a, borrower, 0, false);
        assert_eq!(r.report().kinds[0].open, 2);
    }

    #[test]
    fn counted_handles_resting_in_a_pool_are_pooled_not_open() {
        let r = HandleRegistry::new();
        let kind = r.intern_kind("Inflater");
        let unsampled =
            r.intern_site("(creation stack not sampled: level=sampled records 1 in 10)");
        let pool =
            r.intern_site("(pooled by org.springframework.boot.loader.jar.NestedJarFileResources)");
        r.counted(kind, unsampled, 170, 0, 0);
        r.counted_pooled(kind, unsampled, pool, 165);
        let report = r.report();
        assert_eq!((report.kinds[0].open, report.kinds[0].pooled), (5, 165));
        let at_pool = report.sites.iter().find(|s| s.site_id == pool).unwrap();
        assert_eq!((at_pool.open, at_pool.pooled), (0, 165));
        let at_site = report
            .sites
            .iter()
            .find(|s| s.site_id == unsampled)
            .unwrap();
        assert_eq!((at_site.open, at_site.pooled), (5, 0));
        assert_eq!(r.totals(), (5, 0), "the watch's open count is the report's");
        // The pool's figure replaces the previous one; never more pooled than counted open.
        r.counted(kind, unsampled, 0, 160, 0);
        r.counted_pooled(kind, unsampled, pool, 20);
        let report = r.report();
        assert_eq!((report.kinds[0].open, report.kinds[0].pooled), (0, 10));
        r.counted_pooled(kind, unsampled, pool, 0);
        assert_eq!(r.report().kinds[0].pooled, 0);
        assert_eq!(r.totals(), (10, 0));
    }

    #[test]
    fn a_stream_leaked_into_a_pool_is_a_leak_at_the_readers_site_and_pooled() {
        let r = HandleRegistry::default();
        let a = new_handle(&r, "Inflater", "at App.read(App.java:7)");
        let reader = r.report().sites[0].site_id;
        let pool =
            r.intern_site("(pooled by org.springframework.boot.loader.jar.NestedJarFileResources)");
        r.leaked_into_pool(a);
        r.reassign(a, pool, 0, true);
        let report = r.report();
        let at = |site: u32| report.sites.iter().find(|s| s.site_id == site).unwrap();
        assert_eq!(
            (at(reader).leaked, at(reader).open, at(reader).pooled),
            (1, 0, 0)
        );
        assert_eq!((at(pool).leaked, at(pool).pooled), (0, 1));
        // Alive in the pool: the kind counts it pooled, not leaked (created = ended + open + pooled).
        assert_eq!((report.kinds[0].leaked, report.kinds[0].pooled), (0, 1));
    }

    #[test]
    fn finalizer_releases_what_a_leaked_retainer_held() {
        let r = HandleRegistry::new();
        let cache = new_handle(&r, "LRUCache", "cache site");
        r.set_capacity(cache, 8 << 20);
        let opts = new_handle(&r, "ColumnFamilyOptions", "options site");
        r.retain(opts, cache);
        r.ended(cache, End::Closed);
        r.ended(opts, End::Leaked);
        assert_eq!(r.report().zombie_cache_capacity_bytes, 8 << 20);
        let (kind, site) = (
            r.intern_kind("ColumnFamilyOptions"),
            r.intern_site("options site"),
        );
        r.finalized(opts, kind, site);
        let report = r.report();
        assert_eq!(
            report.zombie_cache_capacity_bytes, 0,
            "freed natively: no zombie"
        );
        let leak = report.sites.iter().find(|s| s.site_id == site).unwrap();
        assert_eq!((leak.leaked, leak.freed_by_finalizer), (1, 1));
        assert!(leak.last_freed_by_finalizer_epoch_ms.is_some());
        assert!(r.books().kept.is_empty(), "nothing left to keep");
        // Freed by the finalizer before the collector's report reached us: one step.
        let direct = new_handle(&r, "ColumnFamilyOptions", "options site");
        r.ended(direct, End::Finalized);
        let leak = r
            .report()
            .sites
            .into_iter()
            .find(|s| s.site_id == site)
            .unwrap();
        assert_eq!((leak.leaked, leak.freed_by_finalizer), (2, 2));
        assert_eq!(r.report().kinds.iter().map(|k| k.leaked).sum::<u64>(), 2);
    }

    #[test]
    fn full_site_table_evicts_sites_whose_handles_all_closed() {
        let r = HandleRegistry::new();
        let stack = |i: usize| format!("at T.test{i}(T.java:{i})\n{}", "x".repeat(8000));
        let per_site = 8000 + 64;
        let fits = MAX_SITE_BYTES / per_site;
        let leaked = new_handle(&r, "Statistics", &stack(0));
        r.ended(leaked, End::Leaked);
        let open = new_handle(&r, "Statistics", &stack(1));
        for i in 2..(3 * fits) {
            let id = new_handle(&r, "Statistics", &stack(i));
            r.ended(id, End::Closed);
        }
        let last = new_handle(&r, "Statistics", &stack(3 * fits));
        let report = r.report();
        assert!(report.sites_kept as usize <= fits, "{}", report.sites_kept);
        let text_of = |site: u32| r.site_text(site);
        let leaked_site = report.sites.iter().find(|s| s.leaked == 1).unwrap();
        assert_eq!(leaked_site.stack, stack(0));
        let open_sites: Vec<String> = report
            .sites
            .iter()
            .filter(|s| s.open == 1)
            .map(|s| text_of(s.site_id))
            .collect();
        assert!(
            open_sites.contains(&stack(1)),
            "an open handle keeps its site"
        );
        assert!(open_sites.contains(&stack(3 * fits)));
        assert!(report.tracker_memory_bytes >= (report.sites_kept as usize * per_site) as u64);
        assert!(report.tracker_memory_bytes < 2 * MAX_SITE_BYTES as u64);
        assert!(r.site_generation() > 0);
        assert!(r.ended(open, End::Closed) && r.ended(last, End::Closed));
    }

    /// Thousands of distinct creation stacks whose handles close again (a web application at
    /// level=full) keep the table near its sweep threshold, not at its cap: what stays is the
    /// stacks of live handles.
    #[test]
    fn stacks_of_closed_handles_do_not_pile_up() {
        let r = HandleRegistry::new();
        let stack = |i: usize| format!("at W.request{i}(W.java:{i})\n{}", "y".repeat(2400));
        let mut live = Vec::new();
        for i in 0..6079 {
            let id = new_handle(&r, "Inflater", &stack(i));
            if i % 33 == 0 {
                live.push((i, id));
            } else {
                r.ended(id, End::Closed);
            }
        }
        let report = r.report();
        let table = SWEEP_ABOVE_BYTES + (SWEEP_EVERY as usize + 1) * (2400 + 100);
        assert!(
            report.tracker_memory_bytes < 2 * table as u64,
            "{} bytes for {} live handles",
            report.tracker_memory_bytes,
            live.len()
        );
        assert_eq!(report.sites_dropped, 0, "nothing had to be dropped");
        for (i, _) in &live {
            assert!(
                report
                    .sites
                    .iter()
                    .any(|s| s.open == 1 && s.stack == stack(*i)),
                "a live handle keeps its site"
            );
        }
    }

    /// The cap advice and docs state where they advise level=full (TrackingOptions.FULL_ADVICE,
    /// TrackerSites' note, docs/handles.md).
    #[test]
    fn the_site_table_cap_is_the_one_advice_states() {
        assert_eq!(
            MAX_SITE_BYTES,
            16 << 20,
            "say the new cap where level=full is advised"
        );
    }

    #[test]
    fn concurrent_events_give_exact_counts() {
        let r = std::sync::Arc::new(HandleRegistry::new());
        let kind = r.intern_kind("Inflater");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for i in 0..10_000u64 {
                        let id = r.created(kind, i, 0, 0);
                        r.ended(id, End::Closed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let report = r.report();
        assert_eq!(report.kinds[0].created, 80_000);
        assert_eq!(report.kinds[0].closed, 80_000);
        assert_eq!(report.kinds[0].open, 0);
    }
}
