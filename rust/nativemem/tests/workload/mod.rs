//! Real heap_v2 dumps for the tests: the C workload beside this file, run under Debian's
//! jemalloc with profiling on.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const JEMALLOC: &str = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

/// Why dumps cannot be made here, if they cannot.
pub fn missing_tools() -> Option<String> {
    if !Path::new(JEMALLOC).exists() {
        return Some(format!(
            "{JEMALLOC} is missing (apt-get install libjemalloc2)"
        ));
    }
    for tool in ["cc", "jeprof"] {
        let found = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!(
                "{tool} is not on PATH (apt-get install gcc libjemalloc-dev)"
            ));
        }
    }
    None
}

/// Compiles the workload once per test binary run into `dir`.
pub fn build(dir: &Path) -> PathBuf {
    let binary = dir.join("heap_workload");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/heap_workload.c");
    let status = Command::new("cc")
        .args(["-g", "-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on {}", source.display());
    binary
}

/// Runs the workload: a dump at `dump` (and one at `base` before the planted growth).
pub fn run(binary: &Path, dump: &Path, depth: u32, lg_sample: u32, base: Option<&Path>) {
    let _ = std::fs::remove_file(dump);
    let mut command = Command::new(binary);
    command
        .arg(dump)
        .arg(depth.to_string())
        .env("LD_PRELOAD", JEMALLOC)
        .env(
            "MALLOC_CONF",
            format!("prof:true,lg_prof_sample:{lg_sample}"),
        );
    if let Some(base) = base {
        let _ = std::fs::remove_file(base);
        command.arg(base);
    }
    let output = command.output().expect("run workload");
    assert!(
        output.status.success(),
        "workload failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A fresh directory for one test's files.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Dumps of four processes for merged reports: three taken after the planted growth (sampled
/// every 512 B, 1 KiB, 512 B) and one before it, each with a sidecar naming its pid
/// (`100 + i`) and host (`host-<i>`); then a truncated copy of the first and a file of another
/// format, which a merge passes over. Returns (the four good dumps, the two bad files).
#[allow(dead_code)]
pub fn fleet(binary: &Path, dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut good = Vec::new();
    for i in 0..3u32 {
        let (after, before) = (
            dir.join(format!("after-{i}.heap")),
            dir.join(format!("before-{i}.heap")),
        );
        run(binary, &after, 6, 9 + i % 2, Some(&before));
        good.push(after);
        if i == 2 {
            good.push(before);
        }
    }
    for (i, dump) in good.iter().enumerate() {
        let mut name = dump.file_name().unwrap().to_owned();
        name.push(".symbols");
        let sidecar = dump.with_file_name(name);
        std::fs::create_dir_all(&sidecar).unwrap();
        let json = format!(
            r#"{{"format":"nativemem-symbols/1","pid":{},"host":"host-{i}","time_ms":{},"objects":[]}}"#,
            100 + i,
            1_764_500_000_000u64 + i as u64
        );
        std::fs::write(sidecar.join("symbols.json"), json).unwrap();
    }
    let text = std::fs::read(&good[0]).unwrap();
    let truncated = dir.join("truncated.heap");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let other = dir.join("tcmalloc.heap");
    std::fs::write(
        &other,
        "heap profile:    1:  2048 [     1:  2048] @ heapprofile\n",
    )
    .unwrap();
    (good, vec![truncated, other])
}
