//! A frame in a static function of a stripped library has no name of its own: the nearest
//! exported symbol before it is another function (jeprof shows that neighbour's name). Every
//! output shows the object and file offset instead, with the nearest named caller on the stack:
//! `libunnamed-stripped.so+0x1139 (called from exported_second)`. The same library with its
//! symbol table names the static function exactly.

use nativemem::profile::{Analysis, Format};
use object::{Object, ObjectSegment};
use std::io::Read;
use std::path::Path;
use std::process::Command;

const SOURCE: &str = r#"
int exported_first(int x) { return x * 3 + 1; }

static __attribute__((noinline, used)) int hidden_static(const int *p, int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += p[i] * 7 + (sum >> 3);
  return sum;
}

int exported_second(const int *p, int n) { return hidden_static(p, n) + 1; }
"#;

const BASE: u64 = 0x7f00_0000_0000;

fn tool(program: &str, args: &[&str], file: &Path) -> String {
    let output = Command::new(program)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(output.status.success(), "{program} {args:?} failed");
    String::from_utf8(output.stdout).unwrap()
}

/// A symbol's address as `nm` (binutils, not our reader) lists it.
fn nm_address(nm_output: &str, name: &str) -> u64 {
    nm_output
        .lines()
        .find_map(|line| {
            let fields: Vec<_> = line.split_whitespace().collect();
            (fields.len() == 3 && fields[2] == name)
                .then(|| u64::from_str_radix(fields[0], 16).unwrap())
        })
        .unwrap_or_else(|| panic!("nm lists no {name}:\n{nm_output}"))
}

/// The file offset of a linked address (where the loader maps it from).
fn file_offset(library: &Path, address: u64) -> u64 {
    let data = std::fs::read(library).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.segments()
        .find_map(|s| {
            let (offset, size) = s.file_range();
            (address >= s.address() && address - s.address() < size)
                .then(|| address - s.address() + offset)
        })
        .expect("address in a loaded segment")
}

/// A dump with one 1 MiB stack of these file offsets (leaf first; the callers' as return
/// addresses, one past the call), the library mapped from offset 0.
fn dump_into(dir: &Path, name: &str, library: &Path, stack: &[u64]) -> std::path::PathBuf {
    dump_stacks(dir, name, library, &[stack])
}

/// A dump with a 1 MiB stack for each of `stacks`, as [`dump_into`] writes one.
fn dump_stacks(dir: &Path, name: &str, library: &Path, stacks: &[&[u64]]) -> std::path::PathBuf {
    let dump = dir.join(name);
    let mut text = format!(
        "heap_v2/1\n  t*: {n}: {} [0: 0]\n",
        stacks.len() * 1048576,
        n = stacks.len()
    );
    for stack in stacks {
        let addresses: Vec<String> = stack
            .iter()
            .enumerate()
            .map(|(i, offset)| format!("0x{:x}", BASE + offset + u64::from(i > 0)))
            .collect();
        text += &format!("@ {}\n  t*: 1: 1048576 [0: 0]\n", addresses.join(" "));
    }
    text += &format!(
        "MAPPED_LIBRARIES:\n{:x}-{:x} r-xp 00000000 00:00 1 {}\n",
        BASE,
        BASE + 0x10_0000,
        library.display()
    );
    std::fs::write(&dump, text).unwrap();
    dump
}

fn leaf(dump: &Path) -> String {
    let analysis = Analysis::open(dump, None).unwrap();
    analysis.report(5).top_flat[0].name.clone()
}

#[test]
fn unnamed_code_shows_object_offset_and_nearest_named_caller() {
    for program in ["cc", "strip", "nm"] {
        if Command::new(program).arg("--version").output().is_err() {
            eprintln!("skipped: {program} is missing (apt-get install gcc binutils)");
            return;
        }
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("unnamed_frames");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("unnamed.c");
    std::fs::write(&source, SOURCE).unwrap();
    let full = dir.join("libunnamed.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-fno-toplevel-reorder", "-o"])
        .arg(&full)
        .arg(&source)
        .status()
        .expect("run cc");
    assert!(status.success());
    let stripped = dir.join("libunnamed-stripped.so");
    std::fs::copy(&full, &stripped).unwrap();
    tool("strip", &["--strip-all"], &stripped);

    // The truth from binutils: where the static function is, and the export before it.
    let symbols = tool("nm", &[], &full);
    let hidden = nm_address(&symbols, "hidden_static");
    let exported = nm_address(
        &tool("nm", &["-D", "--defined-only"], &stripped),
        "exported_first",
    );
    assert!(exported < hidden, "the export precedes the static function");
    assert!(
        !tool("nm", &["-D"], &stripped).contains("hidden_static"),
        "strip left the static name"
    );
    let probe = hidden + 4;
    let offset = file_offset(&full, probe);
    let caller = file_offset(&full, nm_address(&symbols, "exported_second") + 4);

    // With the symbol table: the exact static name.
    assert_eq!(
        leaf(&dump_into(&dir, "full.heap", &full, &[offset, caller])),
        "hidden_static"
    );

    // Stripped: object and file offset, completed by the named caller; never the neighbour
    // `exported_first`, whose symbol ends before the address.
    let shown = format!("libunnamed-stripped.so+0x{offset:x} (called from exported_second)");
    let dump = dump_into(&dir, "stripped.heap", &stripped, &[offset, caller]);
    assert_eq!(leaf(&dump), shown);

    let analysis = Analysis::open(&dump, None).unwrap();
    let text = String::from_utf8(analysis.render(Format::Text, 5).unwrap()).unwrap();
    assert!(text.contains(&shown), "{text}");
    assert!(!text.contains("exported_first"), "{text}");
    let collapsed = String::from_utf8(analysis.render(Format::Collapsed, 5).unwrap()).unwrap();
    assert_eq!(
        collapsed.trim_end(),
        format!("exported_second;{shown} 1048576"),
        "collapsed stacks"
    );
    let svg = String::from_utf8(analysis.render(Format::Svg, 5).unwrap()).unwrap();
    assert!(svg.contains(&shown), "flame graph lacks {shown}");
    let mut pprof = Vec::new();
    flate2::read::GzDecoder::new(&analysis.render(Format::Pprof, 5).unwrap()[..])
        .read_to_end(&mut pprof)
        .unwrap();
    assert!(
        pprof.windows(shown.len()).any(|w| w == shown.as_bytes()),
        "pprof string table lacks {shown}"
    );
    assert!(
        !pprof.windows(14).any(|w| w == b"exported_first"),
        "pprof names the neighbour"
    );

    // Per stack: the same code under two callers is two sites, each with its own caller.
    let first = file_offset(&full, exported + 1);
    let two = dump_stacks(
        &dir,
        "two-callers.heap",
        &stripped,
        &[&[offset, caller], &[offset, first]],
    );
    let mut sites: Vec<_> = Analysis::open(&two, None)
        .unwrap()
        .report(5)
        .top_flat
        .into_iter()
        .filter(|s| s.flat_bytes > 0)
        .map(|s| (s.name, s.flat_bytes))
        .collect();
    sites.sort();
    let under =
        |caller: &str| format!("libunnamed-stripped.so+0x{offset:x} (called from {caller})");
    assert_eq!(
        sites,
        [
            (under("exported_first"), 1048576),
            (under("exported_second"), 1048576)
        ]
    );

    // Nothing named above it: the object and offset alone.
    let alone = dump_into(&dir, "alone.heap", &stripped, &[offset]);
    assert_eq!(leaf(&alone), format!("libunnamed-stripped.so+0x{offset:x}"));

    // The exported function itself is named exactly (its size covers the address).
    let exact = dump_into(
        &dir,
        "export.heap",
        &stripped,
        &[file_offset(&full, exported + 1)],
    );
    assert_eq!(leaf(&exact), "exported_first");
}
