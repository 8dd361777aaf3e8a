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
