//! A JVM perf map (`<hex start> <hex size> <name>` per compiled method) as the sidecar reader
//! takes it (the file's bytes), and lookups of addresses in and around its entries named as the
//! symbolizer names JIT frames.

#![no_main]

use nativemem::profile::sidecar::PerfMap;
use nativemem::profile::symbolize::java_method_name;

// 24 bytes per entry of at least 6 bytes, and the names (SECURITY.md, "Fuzzing").
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 5, fixed: 64 << 10, |data| {
    let map = PerfMap::parse(data);
    let starts = data.split(|&b| b == b'\n').filter_map(|line| {
        let word = std::str::from_utf8(line.split(|&b| b == b' ').next()?).ok()?;
        u64::from_str_radix(word.trim_start_matches("0x"), 16).ok()
    });
    for start in starts.take(64).chain([0, u64::MAX]) {
        for address in [start, start.wrapping_sub(1), start.wrapping_add(1)] {
            if let Some(name) = map.find(address) {
                assert!(!name.is_empty());
                let _ = java_method_name(name);
            }
        }
    }
});
