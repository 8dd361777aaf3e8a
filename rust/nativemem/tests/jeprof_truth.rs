//! Our analysis of real jemalloc dumps against jeprof's on the same files.

mod workload;

use nativemem::profile::{self, report};
use std::path::Path;
use std::process::Command;

/// A line of `jeprof --text --show_bytes`: flat, cumulative, name.
#[derive(Debug)]
struct JeprofLine {
    flat: i64,
    cumulative: i64,
    name: String,
}

fn jeprof(binary: &Path, dump: &Path, extra: &[&str]) -> (i64, Vec<JeprofLine>) {
    jeprof_of(binary, &[dump], extra)
}

/// jeprof on several dumps at once: it adds their unbiased (fractional) figures stack by stack
/// and truncates only what it prints.
fn jeprof_of(binary: &Path, dumps: &[&Path], extra: &[&str]) -> (i64, Vec<JeprofLine>) {
    let output = Command::new("jeprof")
        .args(["--text", "--show_bytes", "--nodecount=10000"])
        .args(extra)
        .arg(binary)
        .args(dumps)
        .output()
        .expect("run jeprof");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut total = None;
    let mut lines = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Total: ") {
            total = rest.trim_end_matches(" B").trim().parse::<i64>().ok();
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 6 {
            continue;
        }
        let (Ok(flat), Ok(cumulative)) = (fields[0].parse(), fields[3].parse()) else {
            continue;
        };
        // nm adds symbol versions to names from stripped libraries: `name@@GLIBCXX_3.4`.
        let name = fields[5..].join(" ");
        let name = name.split("@@").next().unwrap_or(&name).to_owned();
        lines.push(JeprofLine {
            flat,
            cumulative,
            name,
        });
    }
    (
        total.unwrap_or_else(|| panic!("no Total line in:\n{text}")),
        lines,
    )
}

fn within_one_percent(ours: i64, theirs: i64) -> bool {
    (ours - theirs).abs() as f64 <= 0.01 * theirs.abs() as f64 + 1.0
}

/// Our top 10 (flat or cumulative) matches jeprof's: same bytes at each rank, and every site
/// jeprof names at a rank has that many bytes in our report.
fn assert_top_ten_agree(ours: &[report::Site], theirs: &[JeprofLine], cumulative: bool) {
    let value = |s: &report::Site| {
        if cumulative {
            s.cumulative_bytes
        } else {
            s.flat_bytes
        }
    };
    let their_value = |l: &JeprofLine| if cumulative { l.cumulative } else { l.flat };
    for (rank, line) in theirs.iter().take(10).enumerate() {
        let mine = value(&ours[rank]);
        assert!(
            within_one_percent(mine, their_value(line)),
            "rank {rank}: ours {} = {mine}, jeprof {} = {}",
            ours[rank].name,
            line.name,
            their_value(line)
        );
        let same_site: Vec<_> = ours.iter().filter(|s| s.name == line.name).collect();
        if same_site.is_empty() {
            // jeprof names a stripped library's static function after the nearest symbol
            // before it, another function; we show its object and offset (`libc.so.6+0x2724a
            // (called from __libc_start_main)`): the site at this rank, with the same bytes.
            assert!(
                ours[rank].name.contains("+0x"),
                "jeprof's {} is not in our report: {ours:#?}",
                line.name
            );
            continue;
        }
        let mine: i64 = same_site.iter().map(|s| value(s)).sum();
        assert!(
            within_one_percent(mine, their_value(line)),
            "{}: ours {mine}, jeprof {}",
            line.name,
            their_value(line)
        );
    }
}

#[test]
fn top_sites_and_totals_agree_with_jeprof() {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = workload::scratch("jeprof_truth");
    let binary = workload::build(&dir);
    let dump = dir.join("workload.heap");
    workload::run(&binary, &dump, 9, 9, None);

    let (dump_data, stacks) = profile::analyze(&dump).unwrap();
    assert!(
        dump_data.stacks.len() > 300,
        "{} stacks",
        dump_data.stacks.len()
    );
    let ours = report::report(&stacks, 10_000);
    let (total, flat) = jeprof(&binary, &dump, &[]);
    assert_eq!(ours.total_bytes, total, "total bytes");
    assert_top_ten_agree(&ours.top_flat, &flat, false);
    let (total_cum, cumulative) = jeprof(&binary, &dump, &["--cum"]);
    assert_eq!(total_cum, total);
    assert_top_ten_agree(&ours.top_cumulative, &cumulative, true);

    // The planted sites are found by name with their known sizes (64 KiB blocks are never
    // scaled by unbiasing; 256 B blocks are, so only roughly).
    let site = |name: &str| {
        ours.top_flat
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .clone()
    };
    assert_eq!(site("planted_big").flat_bytes, 256 * 64 * 1024);
    let small = site("planted_small").flat_bytes as f64;
    assert!(
        (small / (4096.0 * 256.0) - 1.0).abs() < 0.25,
        "planted_small {small}"
    );
    assert!(ours
        .top_cumulative
        .iter()
        .any(|s| s.name == "tree_left" || s.name == "tree_right"));
}

#[test]
fn growth_between_two_dumps_agrees_with_jeprof_base() {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = workload::scratch("jeprof_base");
    let binary = workload::build(&dir);
    let (dump, base) = (dir.join("after.heap"), dir.join("before.heap"));
    workload::run(&binary, &dump, 6, 9, Some(&base));

    let (_, current) = profile::analyze(&dump).unwrap();
    let (_, before) = profile::analyze(&base).unwrap();
    let growth = report::report(&profile::diff::difference(&current, &before), 10);
    let (total, lines) = jeprof(&binary, &dump, &["--base", base.to_str().unwrap()]);
    assert_eq!(growth.total_bytes, total);
    assert_eq!(growth.top_flat[0].name, "planted_growth");
    assert_eq!(growth.top_flat[0].flat_bytes, 128 * 32 * 1024);
    assert_top_ten_agree(&growth.top_flat, &lines, false);
}

#[test]
fn merged_totals_are_jeprofs_of_the_same_dumps_and_site_counts_are_exact() {
    if let Some(reason) = workload::missing_tools() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = workload::scratch("fleet_truth");
    let binary = workload::build(&dir);
    let (good, bad) = workload::fleet(&binary, &dir);
    let request = profile::Request {
        dumps: good.iter().chain(&bad).cloned().collect(),
        bases: Vec::new(),
        top: 10_000,
        report: true,
        by_process: true,
        outputs: Vec::new(),
    };
    let merged = request.run().unwrap().report.unwrap();

    // Totals: what jeprof says of the same dumps given together, to the byte: the unbiased
    // estimates are fractional, added unrounded and truncated once. The sum of what jeprof says
    // of each dump on its own (each truncated) may be less by up to a byte per dump.
    let dumps: Vec<&Path> = good.iter().map(|d| d.as_path()).collect();
    // (Its sites are not compared: jeprof names every process's addresses through the first
    // dump's memory map.)
    let (jeprof_merged, _) = jeprof_of(&binary, &dumps, &[]);
    assert_eq!(merged.total_bytes, jeprof_merged, "merged total");
    let jeprof_sum: i64 = good.iter().map(|d| jeprof(&binary, d, &[]).0).sum();
    assert!(
        (0..good.len() as i64).contains(&(merged.total_bytes - jeprof_sum)),
        "merged {} vs the dumps' own jeprof totals {jeprof_sum}",
        merged.total_bytes
    );
    assert_eq!(merged.process_count, good.len());
    for (process, dump) in merged.processes.iter().zip(&good) {
        assert_eq!(process.dump, dump.display().to_string());
        let (own, _) = jeprof(&binary, dump, &[]);
        assert!(
            (process.total_bytes - own).abs() <= 1,
            "{process:?} vs {own}"
        );
    }
    let warnings = merged.warnings.join("\n");
    for file in &bad {
        assert!(
            warnings.contains(&format!("skipped {}", file.display())),
            "{warnings}"
        );
    }
    assert!(warnings.contains("different intervals"), "{warnings}");

    // Per site: in how many dumps it is, against each dump analysed on its own.
    let own: Vec<Vec<String>> = good
        .iter()
        .map(|d| {
            let (_, stacks) = profile::analyze(d).unwrap();
            let sites = report::report(&stacks, 10_000).top_cumulative;
            sites.into_iter().map(|s| s.name).collect()
        })
        .collect();
    for site in &merged.top_cumulative {
        let expected = own
            .iter()
            .filter(|names| names.contains(&site.name))
            .count();
        assert_eq!(site.processes, expected, "{}", site.name);
    }
    let count = |name: &str| {
        merged
            .top_flat
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.processes)
    };
    // Planted: the growth only after it, in three of the four processes.
    assert_eq!(count("planted_growth"), Some(3));
    assert_eq!(count("planted_big"), Some(4));
}
