//! A sidecar's `symbols.json` as the analysis reads it: the format, the process it names, each
//! object's build id and saved copy (refused when it leaves the sidecar), the perf map's name.
//! The files it names are looked for in a directory that does not exist.

#![no_main]

use nativemem::profile::fuzzing;
use std::path::{Component, Path};

const DIR: &str = "/nonexistent/nativemem-fuzz/app.heap.symbols";

// serde_json's values plus a map entry per object: SECURITY.md, "Fuzzing".
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 32, fixed: 64 << 10, |data| {
    let Ok(sidecar) = fuzzing::symbols_json(Path::new(DIR), data) else {
        return;
    };
    if let Some(host) = &sidecar.origin.host {
        assert!(!host.is_empty() && host.len() <= 255);
    }
    for path in ["/usr/lib/libc.so.6", "", "/x"] {
        if let Some(copy) = sidecar.object(path).and_then(|o| o.copy.as_deref()) {
            // A saved copy never leaves the sidecar directory.
            let inner = copy.strip_prefix(DIR).expect("a copy inside the sidecar");
            assert!(inner
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir)));
        }
    }
    let _ = sidecar.perf_map().find(0x7f00_0000_1000);
});
