//! A whole heap_v2 dump (header, stacks, the MAPPED_LIBRARIES maps section) through what `report`
//! runs: the header summary (`HeapProfile`), then the streaming parser into a fleet (unbias,
//! symbolize through the dump's own maps, strip allocator frames, merge), the report as text and
//! collapsed stacks. Object files the maps name are not read (`cfg(fuzzing)`). The flame graph
//! and pprof writers (inferno, prost and gzip over what the report holds) would take most of each
//! run: `tests/parse_fuzz.rs` renders them from generated dumps.

#![no_main]

use nativemem::files::Links;
use nativemem::profile::fleet::{Fleet, Role};
use nativemem::profile::{report, summary};
use nativemem_fuzz::MemoryFile;
use std::cell::RefCell;

thread_local! {
    /// The dump, as a file the user names (a link is followed: `/proc/self/fd/<n>`).
    static DUMP: RefCell<MemoryFile> = RefCell::new(MemoryFile::new("fuzz.heap"));
}

// Heap per byte of dump (every distinct address becomes a location, a function and a label) plus
// the fixed buffers (two 256 KiB read buffers): SECURITY.md, "Fuzzing".
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 512, fixed: 4 << 20, |data| {
    let path = DUMP.with_borrow_mut(|dump| dump.holding(data).to_owned());
    let summary = summary(&path);
    let mut fleet = Fleet::new(true);
    fleet.accept_unmapped = true;
    fleet.by_process = true;
    let added = fleet.add(&path, Links::Follow, Role::Current);
    if let (Ok(summary), Ok(())) = (&summary, &added) {
        let process = &fleet.current().processes[0];
        assert_eq!(summary.sample_interval_bytes, process.sample_interval);
    }
    if added.is_err() {
        return;
    }
    let shown = fleet.report(10);
    assert!(shown.top_flat.len() <= 10 && shown.top_cumulative.len() <= 10);
    let _ = report::render_text(&shown, "fuzz");
    let _ = fleet.collapsed();
});
