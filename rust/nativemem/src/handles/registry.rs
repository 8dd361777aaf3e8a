//! The books: one record per open handle, counters per kind, leaks per creation site.

use super::interner::Interner;
use super::report::{KindReport, OpenHandle, Report, Retainer, SiteReport, ZombieCache};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard};

/// Distinct creation stacks kept; later stacks are counted in `sites_dropped`.
pub const MAX_SITES: usize = 4096;
/// Longest creation stack kept, in bytes (longer ones are cut).
pub const MAX_STACK_BYTES: usize = 8192;
const MAX_KINDS: usize = 512;
const MAX_THREADS: usize = 1024;
/// Ended handles kept because they still matter: closed or leaked caches, leaked retainers.
const MAX_KEPT_AFTER_END: usize = 10_000;
/// Oldest open handles listed individually in a report.
const MAX_LISTED_OPEN: usize = 50;

/// Handle ids are sequential and never chosen by a caller: a multiplicative hash spreads them
/// well and costs a fraction of SipHash on the create/close path.
#[derive(Default)]
struct IdHasher(u64);

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

type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

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
}

impl End {
    pub fn from_code(code: i32) -> Option<End> {
        match code {
            0 => Some(End::Closed),
            1 => Some(End::Transferred),
            2 => Some(End::Leaked),
            _ => None,
        }
    }

    fn word(self) -> &'static str {
        match self {
            End::Closed => "closed",
            End::Transferred => "transferred",
            End::Leaked => "leaked",
        }
    }
}

/// One tracked handle.
#[derive(Debug, Clone)]
pub struct Record {
    kind: u32,
    address: u64,
    site: u32,
    thread: u32,
    created_ms: u64,
    /// Set for caches: their capacity.
    capacity_bytes: Option<u64>,
    /// Caches this handle keeps alive natively (options with a block-based table config).
    retains: Vec<u64>,
    /// Set once the handle ended but the record is kept.
    end: Option<End>,
}

#[derive(Debug, Default, Clone)]
struct Counters {
    created: u64,
    closed: u64,
    transferred: u64,
    leaked: u64,
}

#[derive(Debug)]
struct Books {
    next_id: u64,
    kinds: Interner,
    sites: Interner,
    threads: Interner,
    counters: Vec<Counters>,
    open: IdMap<Record>,
    /// Ended handles still relevant to zombie caches.
    kept: IdMap<Record>,
    kept_dropped: u64,
    leaks_by_site: HashMap<(u32, u32), u64>,
    /// Open handles counted without a record, per (kind, site): see [`HandleRegistry::counted`].
    open_unrecorded: HashMap<(u32, u32), u64>,
}

/// Thread-safe registry; every method is short and never calls back into Java.
#[derive(Debug)]
pub struct HandleRegistry {
    books: Mutex<Books>,
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
                kinds: Interner::new("(other kinds)", MAX_KINDS, 256),
                sites: Interner::new(
                    "(site not recorded: table of creation sites full)",
                    MAX_SITES,
                    MAX_STACK_BYTES,
                ),
                threads: Interner::new("(other threads)", MAX_THREADS, 256),
                counters: Vec::new(),
                open: IdMap::default(),
                kept: IdMap::default(),
                kept_dropped: 0,
                leaks_by_site: HashMap::new(),
                open_unrecorded: HashMap::new(),
            }),
        }
    }

    fn books(&self) -> MutexGuard<'_, Books> {
        // A panic while holding the lock leaves consistent-enough counters: keep going.
        self.books
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn intern_kind(&self, kind: &str) -> u32 {
        self.books().kinds.intern(kind)
    }

    /// Interns a creation stack; the empty stack is "not recorded".
    pub fn intern_site(&self, stack: &str) -> u32 {
        self.books().sites.intern(stack)
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
            End::Leaked => counters.leaked += 1,
        }
        if how == End::Leaked {
            *books
                .leaks_by_site
                .entry((record.kind, record.site))
                .or_insert(0) += 1;
        }
        let is_cache = record.capacity_bytes.is_some();
        let retains_a_cache = how == End::Leaked && !record.retains.is_empty();
        if is_cache || retains_a_cache {
            record.end = Some(how);
            if books.kept.len() < MAX_KEPT_AFTER_END {
                books.kept.insert(id, record);
            } else {
                books.kept_dropped += 1;
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

    /// An open handle changed hands (a pooled zlib stream handed out again): it is now
    /// attributed to `site` and `thread`.
    pub fn reassign(&self, id: u64, site: u32, thread: u32) {
        if let Some(record) = self.books().open.get_mut(&id) {
            record.site = site;
            record.thread = thread;
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

    pub fn report(&self) -> Report {
        let mut books = self.books();
        let zombies = books.zombie_caches();
        books.forget_settled_caches(&zombies);
        books.report(zombies)
    }
}

impl Books {
    fn counter(&mut self, kind: u32) -> &mut Counters {
        let index = kind as usize;
        if self.counters.len() <= index {
            self.counters.resize(index + 1, Counters::default());
        }
        &mut self.counters[index]
    }

    fn is_options(&self, kind: u32) -> bool {
        self.kinds.text(kind).ends_with("Options")
    }

    /// Caches whose Java object is closed while an open or leaked options object retains them.
    fn zombie_caches(&self) -> Vec<ZombieCache> {
        let mut zombies: Vec<ZombieCache> = Vec::new();
        let mut by_cache: HashMap<u64, usize> = HashMap::new();
        let retainers = self
            .open
            .iter()
            .chain(self.kept.iter().filter(|(_, r)| r.end == Some(End::Leaked)))
            .filter(|(_, r)| !r.retains.is_empty() && self.is_options(r.kind));
        for (holder_id, holder) in retainers {
            for cache_id in &holder.retains {
                let Some(cache) = self.kept.get(cache_id) else {
                    continue; // still open in Java, or no longer known
                };
                if cache.end != Some(End::Closed) {
                    continue;
                }
                let index = *by_cache.entry(*cache_id).or_insert_with(|| {
                    zombies.push(ZombieCache {
                        cache_id: *cache_id,
                        cache_kind: self.kinds.text(cache.kind).to_string(),
                        capacity_bytes: cache.capacity_bytes.unwrap_or(0),
                        cache_site_id: cache.site,
                        cache_site: self.sites.text(cache.site).to_string(),
                        retainers: Vec::new(),
                    });
                    zombies.len() - 1
                });
                zombies[index].retainers.push(Retainer {
                    handle_id: *holder_id,
                    kind: self.kinds.text(holder.kind).to_string(),
                    state: holder.end.map(End::word).unwrap_or("open").to_string(),
                    site_id: holder.site,
                    site: self.sites.text(holder.site).to_string(),
                });
            }
        }
        zombies.sort_by_key(|z| z.cache_id);
        for zombie in &mut zombies {
            zombie.retainers.sort_by_key(|r| r.handle_id);
        }
        zombies
    }

    /// Closed caches that nothing retains any more are settled: stop keeping them.
    fn forget_settled_caches(&mut self, zombies: &[ZombieCache]) {
        let still_retained: std::collections::HashSet<u64> = self
            .open
            .values()
            .chain(self.kept.values())
            .flat_map(|r| r.retains.iter().copied())
            .chain(zombies.iter().map(|z| z.cache_id))
            .collect();
        self.kept
            .retain(|id, r| r.capacity_bytes.is_none() || still_retained.contains(id));
    }

    fn report(&self, zombie_caches: Vec<ZombieCache>) -> Report {
        let mut open_by: HashMap<(u32, u32), u64> = HashMap::new();
        let mut open_per_kind: HashMap<u32, u64> = HashMap::new();
        for record in self.open.values() {
            *open_by.entry((record.kind, record.site)).or_insert(0) += 1;
            *open_per_kind.entry(record.kind).or_insert(0) += 1;
        }
        for (&(kind, site), &open) in self.open_unrecorded.iter().filter(|(_, &n)| n > 0) {
            *open_by.entry((kind, site)).or_insert(0) += open;
            *open_per_kind.entry(kind).or_insert(0) += open;
        }
        let kinds = self
            .counters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.created > 0)
            .map(|(kind, c)| KindReport {
                kind: self.kinds.text(kind as u32).to_string(),
                created: c.created,
                closed: c.closed,
                transferred: c.transferred,
                open: open_per_kind.get(&(kind as u32)).copied().unwrap_or(0),
                leaked: c.leaked,
            })
            .collect();
        let mut keys: Vec<(u32, u32)> = open_by
            .keys()
            .chain(self.leaks_by_site.keys())
            .copied()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut sites: Vec<SiteReport> = keys
            .into_iter()
            .map(|(kind, site)| SiteReport {
                site_id: site,
                kind: self.kinds.text(kind).to_string(),
                open: open_by.get(&(kind, site)).copied().unwrap_or(0),
                leaked: self.leaks_by_site.get(&(kind, site)).copied().unwrap_or(0),
                stack: self.sites.text(site).to_string(),
            })
            .collect();
        sites.sort_by(|a, b| {
            (b.leaked + b.open)
                .cmp(&(a.leaked + a.open))
                .then(a.kind.cmp(&b.kind))
                .then(a.site_id.cmp(&b.site_id))
        });
        let mut oldest: Vec<(&u64, &Record)> = self.open.iter().collect();
        oldest.sort_by_key(|(id, _)| **id);
        let oldest_open = oldest
            .into_iter()
            .take(MAX_LISTED_OPEN)
            .map(|(id, r)| OpenHandle {
                handle_id: *id,
                kind: self.kinds.text(r.kind).to_string(),
                address: r.address,
                site_id: r.site,
                thread: self.threads.text(r.thread).to_string(),
                created_epoch_ms: r.created_ms,
                capacity_bytes: r.capacity_bytes,
            })
            .collect();
        let open_cache_capacity_bytes = self.open.values().filter_map(|r| r.capacity_bytes).sum();
        let zombie_cache_capacity_bytes = zombie_caches.iter().map(|z| z.capacity_bytes).sum();
        Report {
            kinds,
            sites,
            zombie_caches,
            oldest_open,
            open_cache_capacity_bytes,
            zombie_cache_capacity_bytes,
            sites_interned: self.sites.kept() as u64,
            sites_dropped: self.sites.dropped(),
            ended_records_dropped: self.kept_dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // README and handles/mod.rs state "about 80 bytes" per open handle, plus its map slot.
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
        r.reassign(pooled, r.intern_site("at B.second(B.java:2)"), 0);
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
