//! What the registry says, as plain data that serializes to the JSON Java reads, and how the
//! books are aggregated into it: the full report (kinds, sites, zombie caches, oldest open
//! handles) and the small summary the memory breakdown shows (kinds and cache capacities).
//!
//! Ids link the registry's own tables (a site, a handle, a cache) and are not sent to Java.

use super::registry::{Books, End, HandleRegistry, Record};
use serde::Serialize;
use std::collections::HashMap;

/// Oldest open handles listed individually in a report.
const MAX_LISTED_OPEN: usize = 50;

#[derive(Debug, Serialize)]
pub struct Report {
    pub kinds: Vec<KindReport>,
    pub sites: Vec<SiteReport>,
    pub zombie_caches: Vec<ZombieCache>,
    pub oldest_open: Vec<OpenHandle>,
    /// Capacity of the caches whose Java object is open.
    pub open_cache_capacity_bytes: u64,
    /// Capacity of the zombie caches: closed in Java, alive natively.
    pub zombie_cache_capacity_bytes: u64,
    /// Creation stacks kept in the site table.
    pub sites_kept: u64,
    pub sites_dropped: u64,
    /// What the registry holds in memory, about (records, tables, interned stacks); the Java
    /// side adds its own part.
    pub tracker_memory_bytes: u64,
}

/// Counts per kind and cache capacities: what the memory breakdown shows of the registry.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub kinds: Vec<KindReport>,
    /// Capacity of the caches whose Java object is open.
    pub open_cache_capacity_bytes: u64,
    /// Capacity of the zombie caches: closed in Java, alive natively.
    pub zombie_cache_capacity_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct KindReport {
    pub kind: String,
    pub created: u64,
    pub closed: u64,
    pub transferred: u64,
    /// Open and owned by their user (pooled ones are not counted here).
    pub open: u64,
    /// Open, resting in a pool (an `Inflater` in a zip file's cache).
    pub pooled: u64,
    pub leaked: u64,
}

/// Open, pooled and leaked handles of one kind created at one site (for pooled ones, the site
/// names the pool).
#[derive(Debug, Serialize)]
pub struct SiteReport {
    #[serde(skip_serializing)]
    pub site_id: u32,
    pub kind: String,
    pub open: u64,
    pub pooled: u64,
    pub leaked: u64,
    /// Of the leaked ones, those a finalizer freed later.
    pub freed_by_finalizer: u64,
    /// When a finalizer last freed one of them; null when none was (always written: Java binds
    /// every key).
    pub last_freed_by_finalizer_epoch_ms: Option<u64>,
    pub stack: String,
}

#[derive(Debug, Serialize)]
pub struct OpenHandle {
    #[serde(skip_serializing)]
    pub handle_id: u64,
    pub kind: String,
    pub address: u64,
    #[serde(skip_serializing)]
    pub site_id: u32,
    pub thread: String,
    pub created_epoch_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
}

/// A cache closed in Java that an options object still keeps alive natively.
#[derive(Debug, Serialize)]
pub struct ZombieCache {
    #[serde(skip_serializing)]
    pub cache_id: u64,
    pub cache_kind: String,
    pub capacity_bytes: u64,
    #[serde(skip_serializing)]
    pub cache_site_id: u32,
    pub cache_site: String,
    pub retainers: Vec<Retainer>,
}

#[derive(Debug, Serialize)]
pub struct Retainer {
    #[serde(skip_serializing)]
    pub handle_id: u64,
    pub kind: String,
    /// "open" or "leaked".
    pub state: String,
    #[serde(skip_serializing)]
    pub site_id: u32,
    pub site: String,
}

impl HandleRegistry {
    /// Everything the registry knows, for the handle report; closed caches nothing retains any
    /// more are forgotten on the way.
    pub fn report(&self) -> Report {
        let mut books = self.books();
        let zombies = books.zombie_caches();
        books.forget_settled_caches(&zombies);
        books.report(zombies)
    }

    /// Counts per kind and cache capacities: what the memory breakdown shows, without sites,
    /// stacks or open handles listed.
    pub fn summary(&self) -> Summary {
        self.books().summary()
    }
}

#[derive(Default)]
struct OpenCounts {
    open_by: HashMap<(u32, u32), u64>,
    open_per_kind: HashMap<u32, u64>,
    pooled_by: HashMap<(u32, u32), u64>,
    pooled_per_kind: HashMap<u32, u64>,
}

impl Books {
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
        let open = self.open_counts();
        let kinds = self.kind_reports(&open);
        let OpenCounts {
            open_by, pooled_by, ..
        } = open;
        let mut keys: Vec<(u32, u32)> = open_by
            .keys()
            .chain(pooled_by.keys())
            .chain(self.leaks_by_site.keys())
            .copied()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut sites: Vec<SiteReport> = keys
            .into_iter()
            .map(|(kind, site)| {
                let finalized = self.finalized_by_site.get(&(kind, site));
                SiteReport {
                    site_id: site,
                    kind: self.kinds.text(kind).to_string(),
                    open: open_by.get(&(kind, site)).copied().unwrap_or(0),
                    pooled: pooled_by.get(&(kind, site)).copied().unwrap_or(0),
                    leaked: self.leaks_by_site.get(&(kind, site)).copied().unwrap_or(0),
                    freed_by_finalizer: finalized.map(|f| f.0).unwrap_or(0),
                    last_freed_by_finalizer_epoch_ms: finalized.map(|f| f.1),
                    stack: self.sites.text(site).to_string(),
                }
            })
            .collect();
        sites.sort_by(|a, b| {
            (b.leaked + b.open + b.pooled)
                .cmp(&(a.leaked + a.open + a.pooled))
                .then(a.kind.cmp(&b.kind))
                .then(a.site_id.cmp(&b.site_id))
        });
        let mut oldest: Vec<(&u64, &Record)> =
            self.open.iter().filter(|(_, r)| !r.pooled).collect();
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
        let open_cache_capacity_bytes = self.open_cache_capacity_bytes();
        let zombie_cache_capacity_bytes = zombie_caches.iter().map(|z| z.capacity_bytes).sum();
        Report {
            kinds,
            sites,
            zombie_caches,
            oldest_open,
            open_cache_capacity_bytes,
            zombie_cache_capacity_bytes,
            sites_kept: self.sites.kept() as u64,
            sites_dropped: self.sites.dropped(),
            tracker_memory_bytes: self.memory_bytes(),
        }
    }

    /// The summary: no site text, stack or listed handle is copied out.
    fn summary(&self) -> Summary {
        Summary {
            kinds: self.kind_reports(&self.open_counts()),
            open_cache_capacity_bytes: self.open_cache_capacity_bytes(),
            zombie_cache_capacity_bytes: self
                .zombie_caches()
                .iter()
                .map(|z| z.capacity_bytes)
                .sum(),
        }
    }

    fn open_cache_capacity_bytes(&self) -> u64 {
        self.open.values().filter_map(|r| r.capacity_bytes).sum()
    }

    /// Open and pooled handles, by (kind, site) and per kind.
    fn open_counts(&self) -> OpenCounts {
        let mut counts = OpenCounts::default();
        for record in self.open.values() {
            let (by_site, per_kind) = if record.pooled {
                (&mut counts.pooled_by, &mut counts.pooled_per_kind)
            } else {
                (&mut counts.open_by, &mut counts.open_per_kind)
            };
            *by_site.entry((record.kind, record.site)).or_insert(0) += 1;
            *per_kind.entry(record.kind).or_insert(0) += 1;
        }
        let mut open_unrecorded = self.open_unrecorded.clone();
        for ((kind, site, pool), pooled) in self.unrecorded_pooled_by() {
            if let Some(open) = open_unrecorded.get_mut(&(kind, site)) {
                *open -= pooled;
            }
            *counts.pooled_by.entry((kind, pool)).or_insert(0) += pooled;
            *counts.pooled_per_kind.entry(kind).or_insert(0) += pooled;
        }
        for (&(kind, site), &open) in open_unrecorded.iter().filter(|(_, &n)| n > 0) {
            *counts.open_by.entry((kind, site)).or_insert(0) += open;
            *counts.open_per_kind.entry(kind).or_insert(0) += open;
        }
        counts
    }

    fn kind_reports(&self, open: &OpenCounts) -> Vec<KindReport> {
        self.counters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.created > 0)
            .map(|(kind, c)| KindReport {
                kind: self.kinds.text(kind as u32).to_string(),
                created: c.created,
                closed: c.closed,
                transferred: c.transferred,
                open: open.open_per_kind.get(&(kind as u32)).copied().unwrap_or(0),
                pooled: open
                    .pooled_per_kind
                    .get(&(kind as u32))
                    .copied()
                    .unwrap_or(0),
                leaked: c.leaked,
            })
            .collect()
    }
}
