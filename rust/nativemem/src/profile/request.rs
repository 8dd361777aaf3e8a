//! One request for profile work: a dump (and a base), the outputs wanted, each with its format
//! and, for a file, its path. The dumps are parsed and symbolized once, however many outputs.

use super::report::Report;
use super::{Analysis, Format, ProfileError};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What to do with one dump, as the Java side sends it (JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub dump: PathBuf,
    /// An earlier dump: every output then shows the growth since it.
    #[serde(default)]
    pub base: Option<PathBuf>,
    /// Sites listed by the report and the text output.
    pub top: usize,
    /// Whether to return the top sites as a [`Report`].
    #[serde(default)]
    pub report: bool,
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
    /// Checks the request, analyses the dumps once, then renders and writes every output.
    pub fn run(&self) -> Result<Outcome, ProfileError> {
        self.check()?;
        let analysis = Analysis::open(&self.dump, self.base.as_deref())?;
        let mut rendered = Vec::new();
        for output in &self.outputs {
            match &output.path {
                Some(path) => analysis.write(output.format, self.top, path)?,
                None => rendered.push(
                    String::from_utf8_lossy(&analysis.render(output.format, self.top)?)
                        .into_owned(),
                ),
            }
        }
        Ok(Outcome {
            report: self.report.then(|| analysis.report(self.top)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Request {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn bad_requests_are_refused_before_reading_the_dump() {
        let missing = r#""dump": "/nonexistent/x.heap""#;
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
        assert!(matches!(text.run(), Err(ProfileError::Read { .. })));
        assert!(serde_json::from_str::<Request>(&format!(
            r#"{{{missing}, "top": 5, "outputs": [{{"format": "gif"}}]}}"#
        ))
        .is_err());
    }
}
