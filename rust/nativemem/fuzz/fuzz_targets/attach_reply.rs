//! The attach reply parser on any bytes a target JVM could send: no panic, no hang, and what it
//! accepts keeps its invariants (a body that is a suffix of the input; a status line within the
//! limit).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nativemem::attach::reply::{load_return_code, parse_reply, shown};

fuzz_target!(|data: &[u8]| {
    if let Ok(reply) = parse_reply(data) {
        assert!(data.ends_with(reply.body));
        assert!(data.len() - reply.body.len() <= 26);
        let _ = load_return_code(reply.body);
    }
    let text = shown(data);
    assert!(!text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
});
