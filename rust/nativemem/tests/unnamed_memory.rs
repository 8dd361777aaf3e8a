//! A dump of many unnamed addresses, shaped as `bench/many-stacks.sh`'s worst case: no memory
//! map, so no address can be named, and every stack with a leaf address of its own. The analysis
//! (a request for the report and the text, as `analyze` makes it) holds a bounded number of heap
//! bytes per address, counted by this test binary's allocator: unnamed code keeps no name or
//! function of its own, its name is made from its address when it is shown.

use nativemem::profile::{Format, Output, Request};
use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the heap bytes live now and the most live since [`reset_peak`].
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let moved = System.realloc(p, layout, size);
        if !moved.is_null() {
            // The old block is counted until the new one is there (a copy holds both).
            grew(size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// Distinct stacks, each with a leaf address of its own.
const STACKS: usize = 200_000;

/// Heap bytes the analysis may hold at its peak per distinct address (here per stack too: each
/// has its own). Measured 192: a location of 16 bytes and its 8-byte table slot, its label's
/// text, slot and weights, the stack's 4 labels, slot and weights, room to grow (a block being
/// grown is counted twice). The structure before, a name and a function record kept per
/// address, held 495.
const BOUND_PER_ADDRESS: usize = 250;

/// A heap_v2 dump (interval 1: unbiased counts are the sampled ones) of `STACKS` stacks of 4
/// frames: a leaf of its own, then 2,000, 97 and 13 distinct callers; no memory map.
fn dump() -> String {
    let mut text = format!(
        "heap_v2/1\n  t*: {STACKS}: {} [0: 0]\n  t0: {STACKS}: {} [0: 0]\n",
        STACKS * 512,
        STACKS * 512
    );
    for i in 0..STACKS {
        let _ = write!(
            text,
            "@ 0x{:x} 0x{:x} 0x{:x} 0x{:x}\n  t*: 1: 512 [0: 0]\n  t0: 1: 512 [0: 0]\n",
            0x1000_0000 + i * 16,
            0x2000_0000 + (i / 2000 % 2000) * 16,
            0x3000_0000 + (i % 97) * 16,
            0x4000_0000 + (i % 13) * 16
        );
    }
    text + "\nMAPPED_LIBRARIES:\n"
}

#[test]
fn an_unnamed_address_costs_a_bounded_number_of_bytes() {
    let dir = std::env::temp_dir().join(format!("nativemem-unnamed-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("unique.heap");
    std::fs::write(&path, dump()).unwrap();
    let request = Request {
        dumps: vec![path],
        bases: Vec::new(),
        top: 20,
        report: true,
        by_process: false,
        outputs: vec![Output {
            format: Format::Text,
            path: None,
        }],
    };
    let before = reset_peak();
    let outcome = request.run().unwrap();
    let held = PEAK.load(Ordering::Relaxed) - before;
    std::fs::remove_dir_all(&dir).unwrap();

    let report = outcome.report.unwrap();
    assert_eq!(report.total_bytes, (STACKS * 512) as i64);
    assert_eq!(report.stack_count, STACKS);
    // Equal leaves rank by name: the first address, named from itself.
    assert_eq!(report.top_flat[0].name, "0x10000000");
    assert_eq!(report.top_flat[0].flat_bytes, 512);
    // The callers are return addresses, named one byte back (inside the call).
    assert!(
        report.top_cumulative.iter().any(|s| s.name == "0x3fffffff"),
        "{:?}",
        report.top_cumulative
    );
    assert!(outcome.rendered[0].contains("  0x10000000\n"));
    let per_address = held / STACKS;
    println!("peak heap {held} bytes: {per_address} bytes per address");
    assert!(
        per_address <= BOUND_PER_ADDRESS,
        "the analysis held {held} bytes at its peak, {per_address} per unnamed address (bound \
         {BOUND_PER_ADDRESS})"
    );
}
