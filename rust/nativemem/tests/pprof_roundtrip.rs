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
    let output = Command::new(go)
        .args(["tool", "pprof", "-top", "-unit=B"])
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
