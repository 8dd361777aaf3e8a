//! Lines of a dump's MAPPED_LIBRARIES section (a copy of `/proc/<pid>/maps`): each parsed as the
//! dump reader parses it, the memory map built, and addresses at the edges of every mapping
//! named through the symbolizer (module + file offset; object files are not read under
//! `cfg(fuzzing)`).

#![no_main]

use nativemem::profile::mappings::{Mapping, MemoryMap};
use nativemem::profile::sidecar::Sidecar;
use nativemem::profile::symbolize::{unnamed_name, Symbolizer};

// A mapping keeps its path and ~40 bytes: SECURITY.md, "Fuzzing".
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 64, fixed: 64 << 10, |data| {
    // The dump reader hands the maps parser only lines that are UTF-8.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mappings: Vec<Mapping> = text.lines().filter_map(Mapping::parse).collect();
    for m in &mappings {
        assert!(m.start < m.end);
        let _ = (m.file(), m.module_name());
    }
    let map = MemoryMap::new(mappings);
    let mut symbolizer = Symbolizer::new(&map, Sidecar::default());
    for m in map.all().iter().take(64) {
        for address in [m.start, m.end - 1, m.start + (m.end - m.start) / 2] {
            // Overlapping mappings (never in real maps) may hide one another: no assertion.
            let resolved = symbolizer.resolve(address);
            // Unnamed code has no lines: its name is made from its mapping and address.
            assert_eq!(resolved.lines.is_empty(), resolved.unnamed);
            if resolved.unnamed {
                let _ = unnamed_name(resolved.mapping.map(|i| map.get(i)), address);
            }
        }
    }
});
