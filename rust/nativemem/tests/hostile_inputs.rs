//! Dumps and sidecars written by someone else: files they name may be FIFOs, devices, links or
//! huge, and their numbers may be absurd. Analysis must end, bounded, with a warning that names
//! the file skipped or an error that says the dump is damaged.

use nativemem::profile::{self, report, ProfileError};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nativemem-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A dump with one stack at 0x1010 inside `object`, mapped at 0x1000.
fn dump_naming(dir: &Path, object: &Path) -> PathBuf {
    let dump = dir.join("app.heap");
    std::fs::write(
        &dump,
        format!(
            "heap_v2/524288\n  t*: 1: 4096 [0: 0]\n@ 0x1010\n  t*: 1: 4096 [0: 0]\n\n\
             MAPPED_LIBRARIES:\n00001000-00002000 r-xp 00000000 fe:00 1  {}\n",
            object.display()
        ),
    )
    .unwrap();
    dump
}

fn sidecar(dump: &Path) -> PathBuf {
    let dir = dump.with_file_name("app.heap.symbols");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The report's warnings, or a failure if analysis takes longer than a minute (a hang).
fn warnings_within_a_minute(dump: &Path) -> Vec<String> {
    let (tx, rx) = mpsc::channel();
    let dump = dump.to_owned();
    std::thread::spawn(move || {
        let result = profile::analyze(&dump).map(|(_, stacks)| report::report(&stacks, 5).warnings);
        let _ = tx.send(result);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("analysis hung")
        .expect("analysis failed")
}

fn assert_warned(warnings: &[String], file: &Path, what: &str) {
    let name = file.display().to_string();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&name) && w.contains(what)),
        "no warning naming {name} with '{what}': {warnings:?}"
    );
}

#[test]
fn a_fifo_named_in_the_maps_is_skipped_with_a_warning() {
    let dir = scratch("maps-fifo");
    let fifo = dir.join("libplanted.so");
    mkfifo(&fifo);
    let dump = dump_naming(&dir, &fifo);
    assert_warned(&warnings_within_a_minute(&dump), &fifo, "a FIFO");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fifo_as_symbols_json_is_skipped_with_a_warning() {
    let dir = scratch("json-fifo");
    let dump = dump_naming(&dir, Path::new("/nonexistent/lib.so"));
    let json = sidecar(&dump).join("symbols.json");
    mkfifo(&json);
    assert_warned(&warnings_within_a_minute(&dump), &json, "a FIFO");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_perf_map_linked_to_dev_zero_is_not_read() {
    let dir = scratch("perf-zero");
    let dump = dump_naming(&dir, Path::new("/nonexistent/lib.so"));
    let side = sidecar(&dump);
    std::fs::write(
        side.join("symbols.json"),
        r#"{"format":"nativemem-symbols/1","objects":[],"perf_map":"perf.map"}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", side.join("perf.map")).unwrap();
    assert_warned(
        &warnings_within_a_minute(&dump),
        &side.join("perf.map"),
        "symbolic link",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_oversized_symbols_json_is_skipped_not_loaded() {
    let dir = scratch("json-huge");
    let dump = dump_naming(&dir, Path::new("/nonexistent/lib.so"));
    let json = sidecar(&dump).join("symbols.json");
    // Sparse: 3 GB that take no disk, as the report of this case had.
    std::fs::File::create(&json)
        .unwrap()
        .set_len(3_000_000_000)
        .unwrap();
    assert_warned(&warnings_within_a_minute(&dump), &json, "more than the");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fifo_as_the_dump_is_refused() {
    let dir = scratch("dump-fifo");
    let fifo = dir.join("app.heap");
    mkfifo(&fifo);
    let Err(err) = profile::analyze(&fifo) else {
        panic!("a FIFO was analysed")
    };
    assert!(err.to_string().contains("a FIFO"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn absurd_numbers_are_a_damaged_dump_in_every_format() {
    let dir = scratch("absurd");
    let interval = dir.join("interval.heap");
    std::fs::write(
        &interval,
        "heap_v2/18446744073709551615\n  t*: 1: 1 [0: 0]\n",
    )
    .unwrap();
    let Err(err) = profile::analyze(&interval) else {
        panic!("an interval of 2^64-1 was accepted")
    };
    assert!(
        matches!(err, ProfileError::Malformed { line: 1, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("beyond jemalloc's largest"),
        "{err}"
    );

    let counts = dir.join("counts.heap");
    std::fs::write(
        &counts,
        "heap_v2/524288\n  t*: 1: 9223372036854775807 [0: 0]\n@ 0x1010\n  \
         t*: 1: 9223372036854775807 [0: 0]\n",
    )
    .unwrap();
    let err = profile::Analysis::open(&counts, None)
        .err()
        .expect("refused");
    assert!(matches!(err, ProfileError::Implausible { .. }), "{err}");
    assert!(
        err.is_bad_input() && err.to_string().contains("damaged"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A dump of 1,000 distinct stacks 24 frames deep (240 KB) whose outputs grow past a cap: each
/// output fails naming the dump, the format and the cap, and no file is written; under the
/// default cap (64 MiB) the same dump is drawn.
#[test]
fn outputs_past_the_cap_fail_naming_the_dump_and_write_nothing() {
    let dir = std::env::temp_dir().join(format!("nativemem-cap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dump = dir.join("wide.heap");
    let mut text = String::from("heap_v2/524288\n  t*: 1000: 102400000 [0: 0]\n");
    for stack in 0..1000u64 {
        text.push('@');
        for frame in 0..24u64 {
            text.push_str(&format!(" 0x{:x}", 0x10_0000 + stack * 64 + frame));
        }
        text.push_str("\n  t*: 1: 102400 [0: 0]\n");
    }
    text.push_str("\nMAPPED_LIBRARIES:\n");
    std::fs::write(&dump, &text).unwrap();
    for format in ["collapsed", "svg", "pprof"] {
        let out = dir.join(format!("out.{format}"));
        let request = serde_json::from_str::<profile::request::Request>(&format!(
            r#"{{"dumps": [{:?}], "top": 5, "outputs": [{{"format": "{format}", "path": {:?}}}]}}"#,
            dump, out
        ))
        .unwrap();
        let error = request
            .run_within(65536)
            .err()
            .unwrap_or_else(|| panic!("{format}: the output passed the cap"));
        let message = error.to_string();
        assert!(
            matches!(error, ProfileError::OutputTooLarge { .. }),
            "{message}"
        );
        assert!(
            message.contains(&format!("{format} output of {}", dump.display())),
            "{message}"
        );
        assert!(message.contains("0.1 MiB"), "{message}");
        assert!(!out.exists(), "{format}: written despite the cap");
        request.run().unwrap();
        assert!(std::fs::metadata(&out).unwrap().len() > 65536, "{format}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
