//! The symbol sidecar beside a dump: saved copies of deleted libraries (checked by build id) and
//! the JVM perf map for JIT-compiled frames.

mod workload;

use nativemem::profile::{self, report};
use object::Object;
use std::path::Path;

fn build_id(path: &Path) -> String {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let id = file.build_id().unwrap().expect("gcc writes a build id");
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn top_site(dump: &Path) -> (String, Vec<String>) {
    let (_, stacks) = profile::analyze(dump).unwrap();
    let r = report::report(&stacks, 5);
    (r.top_flat[0].name.clone(), r.warnings)
}

fn write_sidecar(dump: &Path, object: &str, build_id: &str, copy: &str) {
    let dir = dump.with_file_name(format!(
        "{}.symbols",
        dump.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::create_dir_all(dir.join("objects")).unwrap();
    let json = format!(
        r#"{{"format":"nativemem-symbols/1","pid":1,"time_ms":0,"objects":[{{"path":"{object}","build_id":"{build_id}","deleted":true,"copy":"{copy}"}}],"perf_map":null}}"#
    );
    std::fs::write(dir.join("symbols.json"), json).unwrap();
}

#[test]
fn deleted_program_is_named_from_its_saved_copy() {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = workload::scratch("sidecar_copy");
    let binary = workload::build(&dir);
    let dump = dir.join("gone.heap");
    workload::run(&binary, &dump, 3, 9, None);
    let id = build_id(&binary);

    // The program is deleted after the dump, as an extracted JNI library would be.
    let saved = dir.join("saved-copy");
    std::fs::rename(&binary, &saved).unwrap();
    let (name, warnings) = top_site(&dump);
    assert!(name.starts_with("heap_workload+0x"), "{name}");
    assert!(
        warnings.iter().any(|w| w.contains("heap_workload")),
        "{warnings:?}"
    );

    // With the copy in the sidecar, sites have their names back.
    write_sidecar(
        &dump,
        binary.to_str().unwrap(),
        &id,
        "objects/heap_workload",
    );
    let symbols = dir.join("gone.heap.symbols");
    std::fs::copy(&saved, symbols.join("objects/heap_workload")).unwrap();
    assert_eq!(top_site(&dump).0, "planted_big");

    // A copy whose build id is not the one at dump time is refused, not trusted.
    write_sidecar(
        &dump,
        binary.to_str().unwrap(),
        "00ff",
        "objects/heap_workload",
    );
    let (name, warnings) = top_site(&dump);
    assert!(name.starts_with("heap_workload+0x"), "{name}");
    assert!(
        warnings.iter().any(|w| w.contains("build id")),
        "{warnings:?}"
    );
}

#[test]
fn jit_frames_are_named_from_the_perf_map() {
    let dir = workload::scratch("sidecar_perf_map");
    let dump = dir.join("jit.heap");
    // A native allocation called from a JIT-compiled Java method in the code cache (anonymous
    // executable memory), itself called by an interpreted one.
    std::fs::write(
        &dump,
        "heap_v2/4096\n  t*: 1: 4194304 [0: 0]\n\
         @ 0x7f0000001234 0x7f0000002010\n  t*: 1: 4194304 [0: 0]\n\
         MAPPED_LIBRARIES:\n7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n",
    )
    .unwrap();
    let (name, _) = top_site(&dump);
    assert_eq!(name, "0x7f0000001234");
    let symbols = dir.join("jit.heap.symbols");
    std::fs::create_dir_all(&symbols).unwrap();
    std::fs::write(
        symbols.join("perf-42.map"),
        "7f0000001200 80 Lcom/example/Cache;::fill\n7f0000002000 100 Interpreter\n",
    )
    .unwrap();
    std::fs::write(
        symbols.join("symbols.json"),
        r#"{"format":"nativemem-symbols/1","pid":42,"time_ms":0,"objects":[],"perf_map":"perf-42.map"}"#,
    )
    .unwrap();
    let (_, stacks) = profile::analyze(&dump).unwrap();
    let r = report::report(&stacks, 5);
    assert_eq!(r.top_flat[0].name, "com.example.Cache::fill");
    assert_eq!(r.top_flat[0].flat_bytes, 4 << 20);
    assert!(r.top_cumulative.iter().any(|s| s.name == "Interpreter"));
}
