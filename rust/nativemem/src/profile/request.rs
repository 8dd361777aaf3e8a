//! One request for profile work: the dumps (and base dumps), the outputs wanted, each with its
//! format and, for a file, its path. The dumps are read and symbolized once, however many
//! outputs: streamed and merged by function names ([`Fleet`]), one dump as well as hundreds.

use super::fleet::inputs::{self, Dump};
use super::fleet::{Fleet, Role};
use super::output_cap::{self, MAX_OUTPUT_BYTES};
use super::report::{self, Report};
use super::{modified_nanos, write_output, Format, ProfileError};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What to analyse, as the Java side sends it (JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Dump files, directories (their `*.heap` files and incident bundles), glob patterns,
    /// incident bundles: merged, each dump symbolized with its own sidecar.
    pub dumps: Vec<PathBuf>,
    /// Earlier dumps, named the same ways: every output then shows the per-process average
    /// growth since them.
    #[serde(default)]
    pub bases: Vec<PathBuf>,
    /// Sites listed by the report and the text output.
    pub top: usize,
    /// Whether to return the top sites as a [`Report`].
    #[serde(default)]
    pub report: bool,
    /// Whether the report lists each process's total and its part of the top site.
    #[serde(default)]
    pub by_process: bool,
    #[serde(default)]
    pub outputs: Vec<Output>,
}

/// One rendering of the analysis: written to a new file at `path`, or returned as text.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    pub format: Format,
    #[serde(default)]
    pub path: Option<PathBuf>,
}

/// What a request returns: the report if asked for, and the outputs without a path, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub report: Option<Report>,
    pub rendered: Vec<String>,
}

impl Request {
    /// Checks the request, reads the dumps once, then renders and writes every output, each at
    /// most [`MAX_OUTPUT_BYTES`].
    pub fn run(&self) -> Result<Outcome, ProfileError> {
        self.run_within(MAX_OUTPUT_BYTES)
    }

    /// [`Request::run`] with every output at most `cap` bytes.
    pub fn run_within(&self, cap: u64) -> Result<Outcome, ProfileError> {
        self.check()?;
        let mut warnings = Vec::new();
        let dumps = inputs::expand(&self.dumps, &mut warnings)?;
        let bases = match self.bases.is_empty() {
            true => Vec::new(),
            false => inputs::expand(&self.bases, &mut warnings)?,
        };
        let per_process = self.outputs.iter().any(|o| o.format == Format::Pprof);
        let mut fleet = Fleet::new(per_process);
        fleet.by_process = self.by_process;
        fleet.warnings = warnings;
        // Unnamed addresses of two processes do not match; those of one dump (and its own
        // base, a process compared with itself) do.
        fleet.accept_unmapped = dumps.len() == 1 && bases.len() <= 1;
        fleet.add_all(&dumps, Role::Current)?;
        if !bases.is_empty() {
            fleet.add_all(&bases, Role::Base)?;
        }
        let report = fleet.report(self.top);
        // Every output is rendered before any is written: one over the cap writes none.
        let mut made = Vec::with_capacity(self.outputs.len());
        for output in &self.outputs {
            made.push(render(&fleet, &report, output.format, &dumps, cap)?);
        }
        let mut rendered = Vec::new();
        for (output, bytes) in self.outputs.iter().zip(made) {
            match &output.path {
                Some(path) => write_output(path, &bytes)?,
                None => rendered.push(String::from_utf8_lossy(&bytes).into_owned()),
            }
        }
        Ok(Outcome {
            report: self.report.then_some(report),
            rendered,
        })
    }

    /// Refuses a request that cannot be served before any dump is read.
    fn check(&self) -> Result<(), ProfileError> {
        if self.top == 0 {
            return Err(ProfileError::BadRequest(
                "top must be positive, got 0".into(),
            ));
        }
        if self.dumps.is_empty() {
            return Err(ProfileError::BadRequest(
                "no dump named: give at least one heap profile".into(),
            ));
        }
        for output in &self.outputs {
            if output.path.is_none() && output.format.is_binary() {
                return Err(ProfileError::BadRequest(format!(
                    "{} output is binary or large: give it a file path",
                    output.format.name()
                )));
            }
        }
        Ok(())
    }
}

/// The analysis in `format`; `report` is the fleet's, made once.
fn render(
    fleet: &Fleet,
    report: &Report,
    format: Format,
    dumps: &[Dump],
    cap: u64,
) -> Result<Vec<u8>, ProfileError> {
    let what = match (dumps, fleet.current().processes.len()) {
        ([one], _) => one
            .path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        (_, n) => format!("{n} processes"),
    };
    let difference = fleet.is_difference();
    let bases = report.base_process_count;
    let input = match dumps {
        [one] => one.path.display().to_string(),
        [first, ..] => format!(
            "{} dumps ({} and others)",
            dumps.len(),
            first.path.display()
        ),
        [] => "no dump".into(),
    };
    let too_large = || output_cap::too_large(&input, format, cap);
    let bytes = match format {
        Format::Text => {
            let title = match (difference, report.process_count, bases) {
                (false, 1, _) => format!("In use, {what}"),
                (false, _, _) => format!("In use, {what} (summed)"),
                (true, 1, 1) => format!("Growth since base, {what}"),
                (true, _, _) => format!(
                    "Growth per process, {what} vs {bases} base dump(s) (averages per process)"
                ),
            };
            report::render_text(report, &title).into_bytes()
        }
        Format::Collapsed => fleet
            .collapsed_within(cap)
            .ok_or_else(too_large)?
            .into_bytes(),
        Format::Svg => fleet
            .svg_within(
                &match difference {
                    true => format!("Heap growth: {what} vs base"),
                    false => format!("In-use heap: {what}"),
                },
                cap,
            )?
            .ok_or_else(too_large)?,
        Format::Pprof => {
            if fleet.pprof_message_bytes() > cap {
                return Err(too_large());
            }
            fleet.pprof(newest_time_nanos(fleet, dumps))
        }
    };
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The profile's time: the newest dump's (its sidecar's time, else its file's).
fn newest_time_nanos(fleet: &Fleet, dumps: &[Dump]) -> i64 {
    let sidecar = fleet
        .current()
        .processes
        .iter()
        .filter_map(|p| p.origin.time_ms)
        .max();
    match sidecar {
        Some(ms) => ms as i64 * 1_000_000,
        None => dumps
            .iter()
            .map(|d| modified_nanos(&d.path))
            .max()
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Request {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn bad_requests_are_refused_before_reading_the_dump() {
        let missing = r#""dumps": ["/nonexistent/x.heap"]"#;
        let zero = request(&format!(r#"{{{missing}, "top": 0, "report": true}}"#));
        assert!(zero
            .run()
            .unwrap_err()
            .to_string()
            .contains("top must be positive"));
        let svg = request(&format!(
            r#"{{{missing}, "top": 5, "outputs": [{{"format": "svg"}}]}}"#
        ));
        let err = svg.run().unwrap_err();
        assert!(err.to_string().contains("svg output is binary"), "{err}");
        assert!(err.is_bad_input());
        let text = request(&format!(
            r#"{{{missing}, "top": 5, "outputs": [{{"format": "text"}}]}}"#
        ));
        assert!(matches!(text.run(), Err(ProfileError::BadRequest(_))));
        assert!(serde_json::from_str::<Request>(&format!(
            r#"{{{missing}, "top": 5, "outputs": [{{"format": "gif"}}]}}"#
        ))
        .is_err());
    }
}
