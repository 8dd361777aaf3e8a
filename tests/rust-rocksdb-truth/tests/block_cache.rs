//! Bytes our heap profile analysis puts under RocksDB's block-cache fill path agree with
//! RocksDB's own `rocksdb.block-cache-usage`.
//!
//! The test re-runs itself as a child process under Debian's jemalloc with profiling on
//! (`LD_PRELOAD`, as Flink's images do): the child fills a block cache, reads the property, and
//! writes a heap profile through the process's `mallctl`; the parent analyses the dump.

use nativemem::allocator::ProcessAllocator;
use nativemem::profile;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

const JEMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
const CHILD_DIR: &str = "NATIVEMEM_ROCKSDB_TRUTH_DIR";
const KEYS: usize = 24_000;
const VALUE_BYTES: usize = 1_000;

/// Frames of the path that reads a block from a table file and puts it in the block cache.
const CACHE_FILL_FRAMES: &[&str] = &[
    "MaybeReadBlockAndLoadToCache",
    "PutDataBlockToCache",
    "BlockFetcher::ReadBlockContents",
];

#[test]
fn block_cache_bytes_agree_with_rocksdb() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        fill_cache_and_dump(Path::new(&dir));
        return;
    }
    if !Path::new(JEMALLOC).exists() {
        eprintln!("skipped: {JEMALLOC} is missing (apt-get install libjemalloc2)");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rocksdb-truth");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "block_cache_bytes_agree_with_rocksdb",
            "--nocapture",
        ])
        .env(CHILD_DIR, &dir)
        .env("LD_PRELOAD", JEMALLOC)
        .env("MALLOC_CONF", "prof:true,lg_prof_sample:10")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let usage: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("block-cache-usage "))
        .unwrap_or_else(|| panic!("no usage line in:\n{stdout}"))
        .trim()
        .parse()
        .unwrap();

    let (_, stacks) = profile::analyze(&dir.join("cache.heap")).unwrap();
    let labels = stacks.labels();
    let matching: Vec<bool> = labels
        .names
        .iter()
        .map(|name| CACHE_FILL_FRAMES.iter().any(|f| name.contains(f)))
        .collect();
    let under_cache_fill: f64 = stacks
        .samples
        .iter()
        .filter(|s| stacks.frames(&labels, s).any(|label| matching[label]))
        .map(|s| s.bytes)
        .sum();
    let report = profile::report::report(&stacks, 15);
    let ratio = under_cache_fill / usage;
    println!(
        "block cache: rocksdb says {usage:.0} B, the profile {under_cache_fill:.0} B ({ratio:.3})"
    );
    assert!(
        usage > 16.0 * 1024.0 * 1024.0,
        "the cache holds only {usage} bytes: the workload did not fill it"
    );
    assert!(
        (ratio - 1.0).abs() <= 0.10,
        "profile {under_cache_fill:.0} B vs rocksdb.block-cache-usage {usage:.0} B; top sites:\n{}",
        profile::report::render_text(&report, "In use")
    );
}

/// In the child: fill the block cache by reading back a flushed table, report its usage, dump.
fn fill_cache_and_dump(dir: &Path) {
    use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, DB};
    let cache = Cache::new_lru_cache(512 << 20).unwrap();
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&cache);
    table.set_block_size(16 << 10);
    let mut options = Options::default();
    options.create_if_missing(true);
    options.set_compression_type(DBCompressionType::None);
    options.set_block_based_table_factory(&table);
    let db = DB::open(&options, dir.join("db")).unwrap();
    let value = vec![b'v'; VALUE_BYTES];
    for i in 0..KEYS {
        db.put(format!("key{i:08}"), &value).unwrap();
    }
    db.flush().unwrap();
    let mut read = 0usize;
    for item in db.iterator(rocksdb::IteratorMode::Start) {
        read += item.unwrap().1.len();
    }
    assert_eq!(read, KEYS * VALUE_BYTES);
    let usage = db
        .property_int_value("rocksdb.block-cache-usage")
        .unwrap()
        .unwrap();
    let ctl = ProcessAllocator::get()
        .jemalloc()
        .expect("jemalloc serves malloc in the child (LD_PRELOAD)");
    let path = CString::new(dir.join("cache.heap").to_str().unwrap()).unwrap();
    ctl.write::<*const c_char>("prof.dump", path.as_ptr())
        .unwrap();
    println!("block-cache-usage {usage}");
    drop(db);
}
