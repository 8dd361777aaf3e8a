//! Analyses heap profiles from the command line, outside the JVM: the benchmark harness and a
//! debugging aid. `profile_report <dump|dir|pattern>... [--base <dump>]... [--format
//! text|collapsed|svg|pprof] [--top N] [--by-process] [-o FILE] [--repeat N]` (with --repeat,
//! prints the mean time per analysis). `--whole` analyses one dump held whole (the
//! address-by-address [`Analysis`], for comparison).

use nativemem::profile::{Analysis, Format, Output, Request};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    if let Err(message) = run() {
        eprintln!("profile_report: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut dumps, mut bases, mut out) = (Vec::<PathBuf>::new(), Vec::new(), None::<PathBuf>);
    let (mut format, mut top, mut repeat) = (Format::Text, 20usize, 0u32);
    let (mut by_process, mut whole) = (false, false);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--base" => bases.push(value()?.into()),
            "--format" => format = value()?.parse().map_err(|e| format!("{e}"))?,
            "--top" => top = value()?.parse().map_err(|e| format!("--top: {e}"))?,
            "-o" => out = Some(value()?.into()),
            "--repeat" => repeat = value()?.parse().map_err(|e| format!("--repeat: {e}"))?,
            "--by-process" => by_process = true,
            "--whole" => whole = true,
            _ => dumps.push(arg.into()),
        }
    }
    if dumps.is_empty() {
        return Err(
            "usage: profile_report <dump>... [--base <dump>]... [--format F] [--top N] \
             [--by-process] [-o FILE] [--repeat N] [--whole]"
                .into(),
        );
    }
    // Timed binary outputs go to a scratch file (requests write them to files only).
    let scratch = std::env::temp_dir().join(format!("profile_report-{}.out", std::process::id()));
    let once = || -> Result<Vec<u8>, String> {
        if whole {
            let analysis = Analysis::open(&dumps[0], bases.first().map(PathBuf::as_path))
                .map_err(|e| e.to_string())?;
            return analysis.render(format, top).map_err(|e| e.to_string());
        }
        let request = Request {
            dumps: dumps.clone(),
            bases: bases.clone(),
            top,
            report: false,
            by_process,
            outputs: vec![Output {
                format,
                path: match (repeat, format.is_binary()) {
                    (0, _) => out.clone(),
                    (_, true) => Some(scratch.clone()),
                    (_, false) => None,
                },
            }],
        };
        let outcome = request.run().map_err(|e| e.to_string());
        if repeat > 0 && format.is_binary() {
            let _ = std::fs::remove_file(&scratch);
        }
        let outcome = outcome?;
        Ok(outcome.rendered.concat().into_bytes())
    };
    if repeat > 0 {
        let started = Instant::now();
        for _ in 0..repeat {
            std::hint::black_box(once()?);
        }
        let mean = started.elapsed().as_secs_f64() / f64::from(repeat);
        println!("{:.3}", mean);
        return Ok(());
    }
    let bytes = once()?;
    use std::io::Write;
    std::io::stdout()
        .write_all(&bytes)
        .map_err(|e| e.to_string())
}
