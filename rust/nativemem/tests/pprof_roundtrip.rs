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

/// `go tool pprof -top` total for one sample type, in base units.
fn pprof_total(go: &Path, file: &Path, index: &str) -> i64 {
    let output = Command::new(go)
        .args([
            "tool",
            "pprof",
            "-top",
            "-unit=B",
            &format!("-sample_index={index}"),
        ])
        .arg(file)
        .output()
        .expect("run go tool pprof");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    total
        .trim_end_matches('B')
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn go_pprof_reads_the_same_totals() {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return;
    }
    let Some(go) = go() else {
        eprintln!("skipped: Go is not installed (no 'go' on PATH or in /usr/local/go)");
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
