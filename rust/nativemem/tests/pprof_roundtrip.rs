//! The pprof file, read back by an independent decoder (`go tool pprof`), holds the same totals
//! as our report.

mod workload;

use nativemem::profile::{Analysis, Format};
use std::path::{Path, PathBuf};
use std::process::Command;

fn go() -> Option<PathBuf> {
    let on_path = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if on_path {
        return Some("go".into());
    }
    let installed = Path::new("/usr/local/go/bin/go");
    installed.exists().then(|| installed.to_owned())
}

/// Go, when the workload's tools and Go are both here; else says which is missing (skipped).
fn tools() -> Option<PathBuf> {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return None;
    }
    let go = go();
    if go.is_none() {
        eprintln!("skipped: Go is not installed (no 'go' on PATH or in /usr/local/go)");
    }
    go
}

/// The output of `go tool pprof -top -unit=B <args> <file>`, which must succeed.
fn pprof_top(go: &Path, file: &Path, args: &[&str]) -> String {
    let mut all = vec!["-top", "-unit=B"];
    all.extend_from_slice(args);
    pprof_output(go, file, &all)
}

/// Bytes as `go tool pprof -unit=B` prints them (`21984750B`).
fn bytes(text: &str, line: &str) -> i64 {
    text.trim()
        .trim_end_matches('B')
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

/// `go tool pprof -top` total for one sample type, in base units.
fn pprof_total(go: &Path, file: &Path, index: &str) -> i64 {
    let text = pprof_top(go, file, &[&format!("-sample_index={index}")]);
    // "Showing nodes accounting for 21984750B, 99.54% of 22086303B total"
    let line = text
        .lines()
        .find(|l| l.contains(" total"))
        .unwrap_or_else(|| panic!("{text}"));
    let total = line
        .rsplit(" of ")
        .next()
        .unwrap()
        .trim_end_matches(" total");
    bytes(total, line)
}

#[test]
fn go_pprof_reads_the_same_totals() {
    let Some(go) = tools() else {
        return;
    };
    let dir = workload::scratch("pprof_roundtrip");
    let binary = workload::build(&dir);
    let (dump, base) = (dir.join("after.heap"), dir.join("before.heap"));
    workload::run(&binary, &dump, 8, 9, Some(&base));

    for (name, base) in [
        ("profile.pb.gz", None),
        ("growth.pb.gz", Some(base.as_path())),
    ] {
        let analysis = Analysis::open(&dump, base).unwrap();
        let report = analysis.report(10);
        let file = dir.join(name);
        analysis.write(Format::Pprof, 10, &file).unwrap();
        assert_eq!(
            pprof_total(&go, &file, "inuse_space"),
            report.total_bytes,
            "{name}"
        );
        assert_eq!(
            pprof_total(&go, &file, "inuse_objects"),
            report.total_objects,
            "{name}"
        );
    }
}

#[test]
fn go_pprof_reads_merged_totals_and_slices_them_by_process() {
    use nativemem::profile::{Output, Request};
    let Some(go) = tools() else {
        return;
    };
    let dir = workload::scratch("pprof_fleet");
    let binary = workload::build(&dir);
    let (good, _) = workload::fleet(&binary, &dir);
    let request = |dumps: Vec<PathBuf>, file: Option<PathBuf>| Request {
        dumps,
        bases: Vec::new(),
        top: 10,
        report: true,
        by_process: false,
        outputs: file
            .map(|path| Output {
                format: Format::Pprof,
                path: Some(path),
            })
            .into_iter()
            .collect(),
    };
    let file = dir.join("fleet.pb.gz");
    let merged = request(good.clone(), Some(file.clone())).run().unwrap();
    let total = merged.report.unwrap().total_bytes;
    assert_eq!(pprof_total(&go, &file, "inuse_space"), total);
    // One process's slice (by its sidecar's host) holds that dump's own total.
    let own = request(vec![good[1].clone()], None).run().unwrap();
    let sliced = pprof_total_focused(&go, &file, "host=host-1");
    let own = own.report.unwrap().total_bytes;
    assert!(
        (sliced - own).abs() <= 1,
        "host-1 slice {sliced}, {} alone {own}",
        good[1].display()
    );
}

/// `go tool pprof -top -tagfocus=<focus>`: the in-use bytes of the samples kept (every node
/// shown, so "accounting for" is their sum; "of ... total" stays the whole profile's).
fn pprof_total_focused(go: &Path, file: &Path, focus: &str) -> i64 {
    let text = pprof_top(
        go,
        file,
        &[
            "-nodecount=1000000",
            "-nodefraction=0",
            "-sample_index=inuse_space",
            &format!("-tagfocus={focus}"),
        ],
    );
    // "Showing nodes accounting for 28541238B, 33.75% of 84569524B total"
    let line = text
        .lines()
        .find(|l| l.contains("accounting for "))
        .unwrap_or_else(|| panic!("{text}"));
    let kept = line.split("accounting for ").nth(1).unwrap();
    bytes(kept.split(',').next().unwrap(), line)
}

/// Java frames in the sidecar's table: (frame index, class, method, source file, line).
const JAVA_FRAMES: [(u32, &str, &str, &str, u32); 3] = [
    (32, "dev.example.Planter", "plant", "Planter.java", 4),
    (33, "dev.example.Planter", "plant", "Planter.java", 5),
    (34, "dev.example.Planter", "main", "Planter.java", 9),
];

/// Copies `dump` to `out` with Java frames above every stack (`Planter.plant` at line 4 on
/// even stacks, line 5 on odd ones, both called from `Planter.main`), as the backtrace hook
/// records them, and a sidecar naming them.
fn with_java_frames(dump: &Path, out: &Path) {
    use nativemem::jvm::frame_addresses::address_of;
    let text = std::fs::read_to_string(dump).unwrap();
    let mut stacks = 0;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.starts_with("@ ") {
            let plant = if stacks % 2 == 0 { 32 } else { 33 };
            stacks += 1;
            lines.push(format!(
                "{line} 0x{:x} 0x{:x}",
                address_of(plant),
                address_of(34)
            ));
        } else {
            lines.push(line.to_owned());
        }
    }
    std::fs::write(out, lines.join("\n") + "\n").unwrap();
    let mut name = out.file_name().unwrap().to_owned();
    name.push(".symbols");
    let sidecar = out.with_file_name(name);
    std::fs::create_dir_all(&sidecar).unwrap();
    std::fs::write(
        sidecar.join("symbols.json"),
        r#"{"format":"nativemem-symbols/1","pid":7,"host":"planter","objects":[]}"#,
    )
    .unwrap();
    let frames: Vec<String> = JAVA_FRAMES
        .iter()
        .map(|(index, class, method, file, line)| {
            format!(
                r#"{{"index":{index},"bci":1,"class":"{class}","method":"{method}","source_file":"{file}","line":{line}}}"#
            )
        })
        .collect();
    std::fs::write(
        sidecar.join("java-frames.json"),
        format!(
            r#"{{"format":"nativemem-java-frames/1","frames":[{}]}}"#,
            frames.join(",")
        ),
    )
    .unwrap();
}

/// The output of `go tool pprof <args> <file>`, which must succeed.
fn pprof_output(go: &Path, file: &Path, args: &[&str]) -> String {
    let output = Command::new(go)
        .args(["tool", "pprof"])
        .args(args)
        .arg(file)
        .output()
        .expect("run go tool pprof");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

/// The flat and cumulative bytes `go tool pprof -top` shows on the row that ends in `name`.
fn top_row(text: &str, name: &str) -> (i64, i64) {
    let row = text
        .lines()
        .find(|l| l.trim_end().ends_with(name))
        .unwrap_or_else(|| panic!("no row for '{name}' in\n{text}"));
    let fields: Vec<&str> = row.split_whitespace().collect();
    (bytes(fields[0], row), bytes(fields[3], row))
}

/// The GNU build ID of `binary` as readelf prints it.
fn readelf_build_id(binary: &Path) -> String {
    let output = Command::new("readelf")
        .arg("-n")
        .arg(binary)
        .output()
        .expect("run readelf");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Build ID:"))
        .unwrap_or_else(|| panic!("no build ID in\n{text}"));
    line.rsplit(' ').next().unwrap().to_owned()
}

#[test]
fn go_pprof_sees_mappings_addresses_lines_and_java_methods() {
    use nativemem::profile::{Output, Request};
    let Some(go) = tools() else {
        return;
    };
    let dir = workload::scratch("pprof_located");
    let binary = workload::build(&dir);
    let native = dir.join("native.heap");
    workload::run(&binary, &native, 4, 9, None);
    let dump = dir.join("java.heap");
    with_java_frames(&native, &dump);
    let file = dir.join("java.pb.gz");
    let outcome = Request {
        dumps: vec![dump.clone()],
        bases: Vec::new(),
        top: 1000,
        report: true,
        by_process: false,
        outputs: vec![Output {
            format: Format::Pprof,
            path: Some(file.clone()),
        }],
    }
    .run()
    .unwrap();
    let report = outcome.report.unwrap();
    let site = |name: &str| {
        report
            .top_cumulative
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no site {name}"))
    };
    let report_stacks = report.stack_count as i64;
    let bytes_args = [
        "-top",
        "-unit=B",
        "-sample_index=inuse_space",
        "-nodefraction=0",
    ];

    // The program's mapping: its path and the build ID readelf reads from the file.
    let raw = pprof_output(&go, &file, &["-raw"]);
    let mappings = raw.split("Mappings").nth(1).expect("a Mappings section");
    let program = mappings
        .lines()
        .find(|l| l.contains(binary.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no mapping of {} in\n{mappings}", binary.display()));
    assert!(program.contains(&readelf_build_id(&binary)), "{program}");
    // The allocator's own frames are left out, as the report leaves them out.
    let locations = raw.split("Locations").nth(1).expect("a Locations section");
    for internal in ["libjemalloc.so.2+", "malloc_usable_size", " calloc "] {
        assert!(!locations.contains(internal), "{internal} in\n{locations}");
    }
    // Native locations at real addresses, in a mapping, with the source line DWARF gives.
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/heap_workload.c"),
    )
    .unwrap();
    let big_line = 1 + source
        .lines()
        .position(|l| l.contains("hold(malloc(64 << 10))"))
        .unwrap();
    let big = raw
        .lines()
        .find(|l| l.contains(&format!("planted_big heap_workload.c:{big_line}")))
        .or_else(|| {
            raw.lines()
                .find(|l| l.contains("planted_big") && l.contains(&format!(":{big_line}")))
        })
        .unwrap_or_else(|| panic!("no location of planted_big at line {big_line} in\n{raw}"));
    assert!(
        big.contains(" M=") && !big.contains(" 0x0 "),
        "not a mapped address: {big}"
    );

    // Totals equal the report's; per line, the planted site's bytes equal its row in the report.
    assert_eq!(pprof_total(&go, &file, "inuse_space"), report.total_bytes);
    assert_eq!(
        pprof_total(&go, &file, "inuse_objects"),
        report.total_objects
    );
    let mut lines_args = bytes_args.to_vec();
    lines_args.extend(["-lines", "-nodecount=100000"]);
    let by_line = pprof_output(&go, &file, &lines_args);
    // Each sample's bytes are whole, within one byte of the unbiased figure; the file's total is
    // exact, a part of it within one byte per stack.
    let near = |pprof: i64, report: i64| (pprof - report).abs() <= report_stacks;
    let (flat, _) = top_row(&by_line, &format!("heap_workload.c:{big_line}"));
    assert!(near(flat, site("planted_big").flat_bytes), "{by_line}");
    // Java frames: functions `Class.method`, their source file and line in the line table.
    for (_, class, method, file_name, line) in JAVA_FRAMES {
        let (_, cumulative) = top_row(&by_line, &format!("{class}.{method} {file_name}:{line}"));
        let name = format!("{class}.{method}({file_name}:{line})");
        let report_bytes = site(&name).cumulative_bytes;
        assert!(
            near(cumulative, report_bytes),
            "{name}: {cumulative} in pprof, {report_bytes} in the report\n{by_line}"
        );
    }
    // By function, the method's two lines are one function holding every byte.
    let mut cum_args = bytes_args.to_vec();
    cum_args.extend(["-cum", "-nodecount=100000"]);
    let by_function = pprof_output(&go, &file, &cum_args);
    let (_, plant) = top_row(&by_function, "dev.example.Planter.plant");
    assert_eq!(plant, report.total_bytes, "{by_function}");
    // Its process label slices the whole of it.
    let focused = pprof_total_focused(&go, &file, "host=planter");
    assert_eq!(focused, report.total_bytes);
}
