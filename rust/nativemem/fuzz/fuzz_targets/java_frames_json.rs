//! A sidecar's `java-frames.json` as the analysis reads it, and the names it gives the Java
//! frames of a dump (markers, unnamed and named frames alike).

#![no_main]

use nativemem::jvm::frame_addresses::{FIRST_FRAME, MORE_FRAMES};
use nativemem::profile::fuzzing;

// serde_json's values plus one name per frame: SECURITY.md, "Fuzzing".
nativemem_fuzz::bounded_fuzz_target!(per_input_byte: 32, fixed: 64 << 10, |data| {
    let Ok(names) = fuzzing::java_frames_json(data) else {
        return;
    };
    for index in [
        MORE_FRAMES,
        1,
        2,
        31,
        FIRST_FRAME,
        FIRST_FRAME + 1,
        65535,
        u32::MAX,
    ] {
        assert!(!names.frame(index).name.is_empty());
    }
});
