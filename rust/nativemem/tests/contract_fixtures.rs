//! The JSON contract with the Java side: one golden fixture per snapshot the JNI layer returns,
//! serialized from the very types the exports serialize, with every optional field present.
//! `dev.nativemem.ContractFixturesTest` parses each with its Java class and fails when a key is
//! read on one side and not written on the other. A field renamed here changes the fixture, and
//! this test fails until the fixtures are rewritten (`NATIVEMEM_WRITE_FIXTURES=1 cargo test -p
//! nativemem --test contract_fixtures`), after which the Java test names the Java side to change.

use nativemem::allocator::{
    AllocatorInfo, AllocatorStats, ArenaStats, GlibcStats, JemallocConfig, JemallocStats,
    RemedyOutcome,
};
use nativemem::handles::{
    KindReport, OpenHandle, Report, Retainer, SiteReport, Summary as HandleSummary, ZombieCache,
};
use nativemem::native_view::{AllocatorSummary, ContainerCpuView, NativeView, SnapshotView};
use nativemem::process::{ContainerMemory, ProcessMemory, ResidentRanges};
use nativemem::profile::report::{ProcessTotal, Report as ProfileReport, Site};
use nativemem::profile::Summary;
use nativemem::sampling::{DumpedProfile, SamplingStatus};
use std::path::PathBuf;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../java/nativemem/src/test/resources/dev/nativemem/contract")
}

fn jemalloc_config() -> JemallocConfig {
    JemallocConfig {
        config_prof: true,
        config_stats: true,
        opt_narenas: 8,
        arenas_narenas: 9,
        opt_prof: Some(true),
        prof_active: Some(false),
        lg_prof_sample: Some(19),
        background_thread: true,
        dirty_decay_ms: 1000,
        muzzy_decay_ms: 0,
        tcache: true,
        page_bytes: 4096,
    }
}

fn process_memory() -> ProcessMemory {
    ProcessMemory {
        rss_bytes: 300 << 20,
        rss_anon_bytes: 250 << 20,
        rss_file_bytes: 40 << 20,
        rss_shmem_bytes: 10 << 20,
        peak_rss_bytes: 320 << 20,
        virtual_bytes: 4 << 30,
        threads: 31,
    }
}

fn jemalloc_stats() -> JemallocStats {
    JemallocStats {
        allocated_bytes: 80 << 20,
        active_bytes: 90 << 20,
        resident_bytes: 110 << 20,
        mapped_bytes: 120 << 20,
        retained_bytes: 30 << 20,
        metadata_bytes: 4 << 20,
        dirty_bytes: 12 << 20,
        muzzy_bytes: 0,
        fragmentation: 0.111,
        arenas: vec![ArenaStats {
            index: 0,
            threads: 3,
            dirty_pages: 3072,
            muzzy_pages: 0,
            small_allocated_bytes: 30 << 20,
            large_allocated_bytes: 50 << 20,
        }],
    }
}

fn glibc_stats() -> GlibcStats {
    GlibcStats {
        arena_bytes: 70 << 20,
        mmap_bytes: 20 << 20,
        allocated_bytes: 80 << 20,
        in_use_bytes: 60 << 20,
        free_bytes: 10 << 20,
        releasable_bytes: 1 << 20,
        arena_count: Some(4),
        malloc_arena_max: Some("2".into()),
    }
}

fn native_view() -> NativeView {
    NativeView {
        process: process_memory(),
        container_memory: Some(ContainerMemory {
            cgroup_version: "v2",
            cgroup: "/app.slice/app.service".into(),
            limit_bytes: Some(1 << 30),
            limit_cgroup: Some("/app.slice".into()),
            usage_bytes: 400 << 20,
            anon_bytes: Some(260 << 20),
            file_bytes: Some(120 << 20),
            oom_events: Some(0),
            oom_kill_events: Some(0),
            failcnt: Some(0),
        }),
        container_cpus: ContainerCpuView {
            affinity: 8,
            cgroup_version: Some("v2"),
            quota_millicpus: Some(2000),
            effective: 2,
        },
        allocator: AllocatorSummary {
            kind: "jemalloc",
            allocated_bytes: 80 << 20,
            footprint_bytes: 110 << 20,
            resident_bytes: Some(110 << 20),
            dirty_bytes: Some(12 << 20),
        },
    }
}

fn handle_report() -> Report {
    let stack = "org.rocksdb.ColumnFamilyOptions.<init>(ColumnFamilyOptions.java:43)\n\
                 \tat com.example.Compactor.compact(Compactor.java:88)";
    Report {
        kinds: vec![
            KindReport {
                kind: "ColumnFamilyOptions".into(),
                created: 5,
                closed: 2,
                transferred: 1,
                open: 1,
                pooled: 0,
                leaked: 1,
            },
            KindReport {
                kind: "Inflater".into(),
                created: 2,
                closed: 0,
                transferred: 0,
                open: 0,
                pooled: 2,
                leaked: 0,
            },
        ],
        sites: vec![
            SiteReport {
                site_id: 7,
                kind: "ColumnFamilyOptions".into(),
                open: 1,
                pooled: 0,
                leaked: 1,
                freed_by_finalizer: 1,
                last_freed_by_finalizer_epoch_ms: Some(1_764_500_000_000),
                stack: stack.into(),
            },
            // Nothing freed by a finalizer: the key is null, not left out.
            SiteReport {
                site_id: 9,
                kind: "Inflater".into(),
                open: 0,
                pooled: 2,
                leaked: 0,
                freed_by_finalizer: 0,
                last_freed_by_finalizer_epoch_ms: None,
                stack: "(pooled by java.util.zip.ZipFile)".into(),
            },
        ],
        zombie_caches: vec![ZombieCache {
            cache_id: 3,
            cache_kind: "LRUCache".into(),
            capacity_bytes: 64 << 20,
            cache_site_id: 2,
            cache_site: "com.example.Backend.open(Backend.java:12)".into(),
            retainers: vec![Retainer {
                handle_id: 4,
                kind: "ColumnFamilyOptions".into(),
                state: "leaked".into(),
                site_id: 7,
                site: stack.into(),
            }],
        }],
        oldest_open: vec![OpenHandle {
            handle_id: 4,
            kind: "ColumnFamilyOptions".into(),
            address: 0x7f00_0000_1000,
            site_id: 7,
            thread: "compaction-1".into(),
            created_epoch_ms: 1_764_400_000_000,
            capacity_bytes: Some(64 << 20),
        }],
        open_cache_capacity_bytes: 0,
        zombie_cache_capacity_bytes: 64 << 20,
        sites_kept: 12,
        sites_dropped: 0,
        tracker_memory_bytes: 40_960,
    }
}

fn profile_site(name: &str) -> Site {
    Site {
        name: name.into(),
        flat_bytes: 48 << 20,
        flat_objects: 12,
        cumulative_bytes: 64 << 20,
        cumulative_objects: 16,
        flat_share: 0.75,
        cumulative_share: 1.0,
        processes: 37,
    }
}

/// Every fixture: file name and the JSON the matching export returns.
fn profile_summary() -> Summary {
    Summary {
        sample_interval_bytes: 524_288,
        sampled_bytes: 3 << 20,
        sampled_objects: 6,
        in_use_bytes: 64 << 20,
        in_use_objects: 16,
        stack_count: 2,
        mapping_count: 40,
        dump_time_ms: Some(1_764_500_000_000),
        warnings: vec!["libgone.so: not found; its frames stay addresses".into()],
    }
}

fn fixtures() -> Vec<(&'static str, String)> {
    fn json<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string_pretty(value).expect("fixture serializes") + "\n"
    }
    vec![
        (
            "allocator-jemalloc.json",
            json(&AllocatorInfo {
                kind: "jemalloc",
                version: "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c".into(),
                malloc_object: "/opt/nativemem/libnativemem_jemalloc.so".into(),
                jemalloc: Some(jemalloc_config()),
            }),
        ),
        (
            "allocator-glibc.json",
            json(&AllocatorInfo {
                kind: "glibc",
                version: "2.36".into(),
                malloc_object: "/lib/x86_64-linux-gnu/libc.so.6".into(),
                jemalloc: None,
            }),
        ),
        ("process-memory.json", json(&process_memory())),
        (
            "allocator-stats-jemalloc.json",
            json(&AllocatorStats::Jemalloc(jemalloc_stats())),
        ),
        (
            "allocator-stats-glibc.json",
            json(&AllocatorStats::Glibc(glibc_stats())),
        ),
        ("native-view.json", json(&native_view())),
        (
            "resident-ranges.json",
            json(&ResidentRanges {
                resident_bytes: vec![Some(64 << 20), None],
            }),
        ),
        (
            "memory-snapshot.json",
            json(&SnapshotView {
                native_view: native_view(),
                stats: AllocatorStats::Jemalloc(jemalloc_stats()),
                resident_bytes: vec![Some(64 << 20), Some(8 << 20), None],
            }),
        ),
        (
            "remedy.json",
            json(&RemedyOutcome {
                remedy: "purge",
                allocator: "jemalloc",
                allocator_resident_before_bytes: Some(110 << 20),
                allocator_resident_after_bytes: Some(98 << 20),
                rss_before_bytes: 300 << 20,
                rss_after_bytes: 288 << 20,
                detail: "purged unused dirty pages of all arenas".into(),
            }),
        ),
        ("handle-report.json", json(&handle_report())),
        ("handle-summary.json", {
            let report = handle_report();
            json(&HandleSummary {
                kinds: report.kinds,
                open_cache_capacity_bytes: report.open_cache_capacity_bytes,
                zombie_cache_capacity_bytes: report.zombie_cache_capacity_bytes,
            })
        }),
        (
            "sampling-status.json",
            json(&SamplingStatus {
                engine: "import-rewriting".into(),
                engine_reason: "/lib/x86_64-linux-gnu/libc.so.6 serves malloc and cannot profile, \
                    so the allocation imports of every loaded library are rewritten"
                    .into(),
                available: true,
                unavailable_reason: String::new(),
                active: true,
                thread_active: true,
                sample_interval_bytes: 524_288,
                live_samples: 3_000,
                live_sampled_bytes: 21 << 20,
                dropped_samples: 0,
                hooked_entries: 412,
                table_reserved_bytes: 52 << 20,
                table_resident_bytes: 1 << 20,
            }),
        ),
        (
            "dumped-profile.json",
            json(&DumpedProfile {
                path: "/var/tmp/app.heap".into(),
                symbols_dir: "/var/tmp/app.heap.symbols".into(),
                summary: profile_summary(),
            }),
        ),
        ("profile-summary.json", json(&profile_summary())),
        (
            "profile-report.json",
            json(&ProfileReport {
                difference: true,
                total_bytes: 64 << 20,
                total_objects: 16,
                sample_interval_bytes: 524_288,
                stack_count: 2,
                process_count: 40,
                base_process_count: 38,
                top_flat: vec![profile_site("rocksdb::BlockFetcher::ReadBlockContents")],
                top_cumulative: vec![profile_site("rocksdb::Table::Get")],
                processes: vec![ProcessTotal {
                    dump: "/var/incidents/tm-7/profile.heap".into(),
                    pid: Some(4242),
                    host: Some("taskmanager-7".into()),
                    time_ms: Some(1_764_500_000_000),
                    total_bytes: 96 << 20,
                    top_site_bytes: 40 << 20,
                    top_site_share: 0.4,
                }],
                warnings: vec!["libgone.so: not found; its frames stay addresses".into()],
            }),
        ),
    ]
}

#[test]
fn golden_fixtures_match_the_types_the_exports_serialize() {
    let dir = fixtures_dir();
    let write = std::env::var_os("NATIVEMEM_WRITE_FIXTURES").is_some();
    let mut stale = Vec::new();
    for (name, json) in fixtures() {
        let path = dir.join(name);
        if write {
            std::fs::create_dir_all(&dir).expect("fixtures directory");
            std::fs::write(&path, &json).expect("fixture written");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(json.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "the JSON the native library returns changed for {stale:?} (in {}): rewrite them with \
         NATIVEMEM_WRITE_FIXTURES=1 cargo test -p nativemem --test contract_fixtures, then make \
         dev.nativemem.ContractFixturesTest pass by changing the Java class that reads each",
        dir.display()
    );
}
