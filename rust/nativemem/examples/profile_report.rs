//! Analyses a heap profile from the command line, outside the JVM: the benchmark harness and a
//! debugging aid. `profile_report <dump> [--base <dump>] [--format text|collapsed|svg|pprof]
//! [--top N] [-o FILE] [--repeat N]` (with --repeat, prints the mean time per analysis).

use nativemem::profile::{Analysis, Format};
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
    let (mut dump, mut base, mut out) = (None::<PathBuf>, None::<PathBuf>, None::<PathBuf>);
    let (mut format, mut top, mut repeat) = (Format::Text, 20usize, 0u32);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--base" => base = Some(value()?.into()),
            "--format" => format = value()?.parse().map_err(|e| format!("{e}"))?,
            "--top" => top = value()?.parse().map_err(|e| format!("--top: {e}"))?,
            "-o" => out = Some(value()?.into()),
            "--repeat" => repeat = value()?.parse().map_err(|e| format!("--repeat: {e}"))?,
            _ => dump = Some(arg.into()),
        }
    }
    let dump = dump.ok_or("usage: profile_report <dump> [--base <dump>] [--format F] [--top N] [-o FILE] [--repeat N]")?;
    if repeat > 0 {
        let started = Instant::now();
        for _ in 0..repeat {
            let analysis = Analysis::open(&dump, base.as_deref()).map_err(|e| e.to_string())?;
            std::hint::black_box(analysis.render(format, top).map_err(|e| e.to_string())?);
        }
        let mean = started.elapsed().as_secs_f64() / f64::from(repeat);
        println!("{:.3}", mean);
        return Ok(());
    }
    let analysis = Analysis::open(&dump, base.as_deref()).map_err(|e| e.to_string())?;
    match out {
        Some(out) => analysis.write(format, top, &out).map_err(|e| e.to_string()),
        None => {
            let bytes = analysis.render(format, top).map_err(|e| e.to_string())?;
            use std::io::Write;
            std::io::stdout()
                .write_all(&bytes)
                .map_err(|e| e.to_string())
        }
    }
}
