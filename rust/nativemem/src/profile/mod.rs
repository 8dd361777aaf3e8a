//! Heap profiles: a jemalloc `heap_v2` dump → symbolized stacks → text, collapsed stacks, flame
//! graph, pprof, and the difference of two dumps.
//!
//! The pipeline mirrors jeprof so figures agree with it: parse (streaming), unbias each stack's
//! counts (Poisson sampling), symbolize through the dump's own memory map and the sidecar the
//! dump writer saved, strip allocator frames, then render.

pub mod bundle_layout;
pub mod collapsed;
pub mod demangle;
pub mod diff;
pub mod dwarf_depth;
pub mod export;
pub mod flamegraph;
pub mod fleet;
pub mod frame_kind;
#[doc(hidden)]
pub mod fuzzing;
pub mod java_frames;
pub mod mappings;
pub mod otlp;
pub mod output_cap;
pub mod parse;
pub mod pprof;
pub mod report;
pub mod request;
pub mod sidecar;
pub mod stacks;
pub mod stacks_pprof;
pub mod strip;
pub mod symbolize;
pub mod unbias;

pub use parse::HeapDump;
pub use request::{Outcome, Output, Request};
pub use stacks::Stacks;

use crate::files::Links;
use crate::files::{self, FileError, Purpose};
use std::path::{Path, PathBuf};

/// Errors from reading, analysing or writing heap profiles. Each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read heap profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is empty: not a heap profile (write one with NativeMemory.dumpProfile() or \
         'java -jar nativemem.jar attach <pid> dump')"
    )]
    Empty { path: PathBuf },
    #[error(
        "{path} is not a jemalloc heap_v2 profile (first line: '{first_line}'); pass a file \
         written by NativeMemory.dumpProfile(), 'attach <pid> dump' or jemalloc's 'prof.dump' mallctl"
    )]
    NotHeapV2 { path: PathBuf, first_line: String },
    #[error("{path}, line {line}: {reason}; the dump is damaged, write a new one")]
    Malformed {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error(
        "{path} claims {bytes:.0} bytes in use (more than 1 PiB, beyond any heap): the dump is \
         damaged, write a new one"
    )]
    Implausible { path: PathBuf, bytes: f64 },
    #[error(
        "{path} ends before its memory map (MAPPED_LIBRARIES): a truncated dump whose stacks \
         cannot be named; write a new one"
    )]
    Truncated { path: PathBuf },
    #[error(transparent)]
    File(#[from] FileError),
    #[error("unknown output format '{0}': use text, collapsed, svg or pprof")]
    UnknownFormat(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("cannot draw the flame graph: {0}")]
    FlameGraph(String),
    #[error(
        "the {format} output of {input} would pass {cap_mib:.1} MiB, the most one analysis \
         writes (its stacks are too many or too deep: a damaged or crafted dump?); ask for the \
         text report with a --top limit, or analyze fewer dumps at once"
    )]
    OutputTooLarge {
        input: String,
        format: &'static str,
        cap_mib: f64,
    },
}

impl ProfileError {
    /// The input (a dump, a format name) is wrong, as opposed to the file system failing.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ProfileError::Empty { .. }
                | ProfileError::NotHeapV2 { .. }
                | ProfileError::Malformed { .. }
                | ProfileError::Implausible { .. }
                | ProfileError::Truncated { .. }
                | ProfileError::File(FileError::BadPath(_))
                | ProfileError::UnknownFormat(_)
                | ProfileError::BadRequest(_)
                | ProfileError::OutputTooLarge { .. }
        )
    }
}

/// An output of [`Analysis::render`]; named in requests as in [`Format::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Top sites, flat and cumulative, in jeprof's columns.
    Text,
    /// `root;...;leaf bytes` lines (`stack base current` for a difference).
    Collapsed,
    /// Flame graph SVG.
    Svg,
    /// Gzipped pprof protobuf.
    Pprof,
}

impl Format {
    /// The name requests, the CLI and the Java `Format` enum use.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Collapsed => "collapsed",
            Format::Svg => "svg",
            Format::Pprof => "pprof",
        }
    }

    /// Binary (pprof) or too large to print (svg): only written to files.
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Svg | Format::Pprof)
    }
}

impl std::str::FromStr for Format {
    type Err = ProfileError;

    fn from_str(name: &str) -> Result<Format, ProfileError> {
        [Format::Text, Format::Collapsed, Format::Svg, Format::Pprof]
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| ProfileError::UnknownFormat(name.to_owned()))
    }
}

/// What the dump's header says, before any symbolization.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub sample_interval_bytes: u64,
    /// The dump's own in-use totals (header `t*` line): sampled counts, biased.
    pub sampled_bytes: u64,
    pub sampled_objects: u64,
    /// In-use totals unbiased per stack as jeprof does: the totals `analyze` reports (it also
    /// leaves out stacks made only of allocator frames, which jemalloc does not write in practice).
    pub in_use_bytes: i64,
    pub in_use_objects: i64,
    pub stack_count: usize,
    pub mapping_count: usize,
    /// When the dump was taken, as its sidecar says; absent without a readable sidecar.
    pub dump_time_ms: Option<u64>,
    pub warnings: Vec<String>,
}

/// Reads a dump (streamed, its stacks not held) to check it and tell its header and totals.
pub fn summary(path: &Path) -> Result<Summary, ProfileError> {
    summary_of(path, sidecar::time_ms_beside(path))
}

/// [`summary`] of a dump taken at `dump_time_ms` (its writer knows; a reader asks the sidecar).
pub fn summary_of(path: &Path, dump_time_ms: Option<u64>) -> Result<Summary, ProfileError> {
    let (header, stream) = parse::open_stream(path, Links::Follow, false)?;
    let (mut objects, mut bytes, mut stacks) = (0.0, 0.0, 0);
    let interval = header.sample_interval;
    let dump = stream.for_each(&mut |addresses, counts| {
        stacks += 1;
        if !addresses.is_empty() {
            let (n, b) = unbias::unbias(counts.objects, counts.bytes, interval);
            objects += n;
            bytes += b;
        }
    })?;
    Ok(Summary {
        sample_interval_bytes: dump.sample_interval,
        sampled_bytes: dump.totals.bytes,
        sampled_objects: dump.totals.objects,
        in_use_bytes: bytes as i64,
        in_use_objects: objects as i64,
        stack_count: stacks,
        mapping_count: dump.mappings.all().len(),
        dump_time_ms,
        warnings: dump.warnings,
    })
}

/// A dump read and symbolized: the unit every output is made from.
pub fn analyze(path: &Path) -> Result<(HeapDump, Stacks), ProfileError> {
    let dump = parse::read(path)?;
    let sidecar = sidecar::Sidecar::beside(path);
    let mut symbolizer = symbolize::Symbolizer::new(&dump.mappings, sidecar);
    let stacks = Stacks::from_dump(&dump, &mut symbolizer);
    // Every output sums these; refuse what no heap holds once, rather than per format.
    let bytes: f64 = stacks.samples.iter().map(|s| s.bytes.abs()).sum();
    if bytes.is_nan() || bytes >= IMPLAUSIBLE_BYTES {
        return Err(ProfileError::Implausible {
            path: path.to_owned(),
            bytes,
        });
    }
    Ok((dump, stacks))
}

/// More bytes than any heap holds (1 PiB): only a damaged or forged dump claims that.
pub const IMPLAUSIBLE_BYTES: f64 = (1u64 << 50) as f64;

/// One dump analysed, or the growth from a base dump to it.
pub struct Analysis {
    path: PathBuf,
    current: Stacks,
    base: Option<Stacks>,
    /// `current - base` when there is a base.
    growth: Option<Stacks>,
}

impl Analysis {
    pub fn open(path: &Path, base: Option<&Path>) -> Result<Analysis, ProfileError> {
        let (_, current) = analyze(path)?;
        let base = base.map(analyze).transpose()?.map(|(_, stacks)| stacks);
        let growth = base.as_ref().map(|base| diff::difference(&current, base));
        Ok(Analysis {
            path: path.to_owned(),
            current,
            base,
            growth,
        })
    }

    /// What the report and pprof show: the growth for a difference, else the dump itself.
    fn shown(&self) -> &Stacks {
        self.growth.as_ref().unwrap_or(&self.current)
    }

    /// Top `top` sites (growth by site for a difference).
    pub fn report(&self, top: usize) -> report::Report {
        report::report(self.shown(), top)
    }

    /// The analysis in `format`.
    pub fn render(&self, format: Format, top: usize) -> Result<Vec<u8>, ProfileError> {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        Ok(match format {
            Format::Text => {
                let title = match self.base {
                    Some(_) => format!("Growth since base, {name}"),
                    None => format!("In use, {name}"),
                };
                report::render_text(&self.report(top), &title).into_bytes()
            }
            Format::Collapsed => match &self.base {
                Some(base) => collapsed::render_difference(base, &self.current),
                None => collapsed::render(&self.current),
            }
            .into_bytes(),
            Format::Svg => {
                let title = match self.base {
                    Some(_) => format!("Heap growth: {name} vs base"),
                    None => format!("In-use heap: {name}"),
                };
                flamegraph::render(&self.current, self.base.as_ref(), &title)?
            }
            Format::Pprof => stacks_pprof::render(self.shown(), modified_nanos(&self.path)),
        })
    }

    /// Writes the analysis in `format` to a new file `out` (0600; never replaces a file).
    pub fn write(&self, format: Format, top: usize, out: &Path) -> Result<(), ProfileError> {
        write_output(out, &self.render(format, top)?)
    }
}

/// Writes `bytes` to a new file `out` (0600; never replaces a file).
pub(crate) fn write_output(out: &Path, bytes: &[u8]) -> Result<(), ProfileError> {
    let purpose = Purpose {
        noun: "profile output",
        example: "profile.svg",
    };
    Ok(files::write_new(out, bytes, purpose)?)
}

/// A file's modification time in nanoseconds since the epoch; 0 if unknown.
pub(crate) fn modified_nanos(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}
