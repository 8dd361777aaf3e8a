//! Hostile input never panics: random bytes, damaged real-looking dumps, and the whole pipeline
//! on whatever parses. Failures proptest finds are kept in `proptest-regressions/` and replayed
//! first on every run; the hand-picked ones below stay as plain tests.

use nativemem::profile::{
    collapsed, flamegraph, parse, report, sidecar, stacks_pprof, symbolize, Stacks,
};
use proptest::prelude::*;
use std::path::Path;

/// Runs everything a user can ask for on `input`; only errors, never panics, are allowed.
fn analyse_everything(input: &[u8]) {
    let Ok(dump) = parse::parse(Path::new("fuzz.heap"), input) else {
        return;
    };
    let mut symbolizer = symbolize::Symbolizer::new(&dump.mappings, sidecar::Sidecar::default());
    let stacks = Stacks::from_dump(&dump, &mut symbolizer);
    let r = report::report(&stacks, 10);
    assert!(r.top_flat.len() <= 10);
    let _ = report::render_text(&r, "fuzz");
    let _ = collapsed::render(&stacks);
    let _ = collapsed::render_difference(&stacks, &stacks);
    let _ = stacks_pprof::render(&stacks, 0);
    if stacks.samples.len() < 50 {
        let _ = flamegraph::render(&stacks, None, "fuzz");
    }
}

const VALID: &str = "heap_v2/524288\n  t*: 3: 3072 [0: 0]\n  t0: 3: 3072 [0: 0]\n\
    @ 0x401000 0x401100 0x7f0000001000\n  t*: 2: 2048 [0: 0]\n  t0: 2: 2048 [0: 0]\n\
    @ 0x401010\n  t*: 1: 1024 [0: 0]\n\nMAPPED_LIBRARIES:\n\
    00400000-00402000 r-xp 00000000 fe:00 1  /nonexistent/app\n\
    7f0000000000-7f0000002000 r-xp 00000000 fe:00 2  /nonexistent/libx.so (deleted)\n";

fn dump_line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<u64>(), 0..20).prop_map(|a| {
            let hex: Vec<String> = a.iter().map(|x| format!("0x{x:x}")).collect();
            format!("@ {}", hex.join(" "))
        }),
        (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>())
            .prop_map(|(a, b, c, d)| format!("  t*: {a}: {b} [{c}: {d}]")),
        (0u32..64, any::<u32>(), any::<u32>())
            .prop_map(|(t, a, b)| format!("  t{t}: {a}: {b} [0: 0]")),
        Just("MAPPED_LIBRARIES:".to_string()),
        (any::<u64>(), any::<u64>(), "[ -~]{0,40}")
            .prop_map(|(s, e, p)| format!("{s:x}-{e:x} r-xp 00000000 00:00 0 {p}")),
        "[ -~]{0,80}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        analyse_everything(&bytes);
        let mut with_header = b"heap_v2/4096\n".to_vec();
        with_header.extend_from_slice(&bytes);
        analyse_everything(&with_header);
    }

    #[test]
    fn random_dump_lines_never_panic(lines in prop::collection::vec(dump_line(), 0..40)) {
        let text = format!("heap_v2/1024\n{}\n", lines.join("\n"));
        analyse_everything(text.as_bytes());
    }

    #[test]
    fn damaged_dumps_never_panic(cut in 0usize..VALID.len(), at in 0usize..VALID.len(), byte: u8) {
        analyse_everything(&VALID.as_bytes()[..cut]);
        let mut flipped = VALID.as_bytes().to_vec();
        flipped[at] = byte;
        analyse_everything(&flipped);
    }

    /// Counts written are counts read, for any well-formed dump.
    #[test]
    fn well_formed_dumps_round_trip(
        stacks in prop::collection::vec(
            (prop::collection::vec(1u64..u64::MAX, 1..30), any::<u32>(), any::<u32>()), 0..30),
        interval in 0u64..1 << 30,
    ) {
        let mut text = format!("heap_v2/{interval}\n  t*: 0: 0 [0: 0]\n");
        for (addresses, objects, bytes) in &stacks {
            let hex: Vec<String> = addresses.iter().map(|a| format!("0x{a:x}")).collect();
            text += &format!("@ {}\n  t*: {objects}: {bytes} [0: 0]\n  t0: {objects}: {bytes} [0: 0]\n", hex.join(" "));
        }
        text += "\nMAPPED_LIBRARIES:\n";
        let dump = parse::parse(Path::new("gen.heap"), text.as_bytes()).unwrap();
        prop_assert_eq!(dump.sample_interval, interval);
        prop_assert_eq!(dump.stacks.len(), stacks.len());
        for (read, (addresses, objects, bytes)) in dump.stacks.iter().zip(&stacks) {
            prop_assert_eq!(&read.addresses, addresses);
            prop_assert_eq!(read.counts.objects, u64::from(*objects));
            prop_assert_eq!(read.counts.bytes, u64::from(*bytes));
        }
        analyse_everything(text.as_bytes());
    }
}

/// Inputs that once deserved a second look, kept as plain tests.
#[test]
fn hand_picked_regressions() {
    // Found by proptest: unbiasing scales each stack to ~2^62 bytes, and a few such stacks
    // overflowed the flame graph's u64 sum.
    let huge: String = (1..6).fold("heap_v2/1073741824\n".into(), |text, i| {
        text + &format!("@ 0x{i}\n  t*: 4294967295: 4294967295 [0: 0]\n")
    });
    for input in [
        "heap_v2/1\n@\n  t*: 1: 0 [0: 0]\n",          // empty stack
        "heap_v2/1\n@ 0x0 0x0\n  t*: 5: 0 [0: 0]\n",  // objects without bytes: no division by 0
        "heap_v2/18446744073709551615\n@ 0x1\n  t*: 18446744073709551615: 18446744073709551615 [0: 0]\n",
        "heap_v2/0\n@ 0xffffffffffffffff 0x8000000000000000\n  t*: 1: 1 [0: 0]\n",
        "heap_v2/1\nMAPPED_LIBRARIES:\nffffffffffffffff-0 r-xp 0 0:0 0 /x\n",
        "heap_v2/1\nMAPPED_LIBRARIES:\n0-ffffffffffffffff r-xp ffffffffffffffff 0:0 0 /proc/self/exe\n",
        "heap_v2/1\n@ 0x10\n  t*: 1: 1 [0: 0]\nMAPPED_LIBRARIES:\n0-100 r-xp ffffffffffffff00 0:0 0 /proc/self/exe\n",
        "heap_v2/1\n  t*: 1: 1 [0: 0\n",
        "heap_v2/1\n  t: 1: 1 [0: 0]\n",
        "heap_v2/1\n  tx: 1: 1 [0: 0]\n",
        "heap_v2/1\r\n@ 0x1\r\n  t*: 1: 1 [0: 0]\r\n",
        "heap profile:   1:  8 [  1:  8] @ heap_v2/524288\n",
        // exp(-ratio) rounds to 1: the scale 1/(1 - 1) must not become infinity.
        "heap_v2/1073741823\n@ 0x1\n  t*: 4294967295: 1 [0: 0]\n",
        huge.as_str(),
        VALID,
    ] {
        analyse_everything(input.as_bytes());
    }
}
