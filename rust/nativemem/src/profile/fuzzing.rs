//! The parsers of the sidecar's files as the analysis calls them, for the fuzz targets
//! (`rust/nativemem/fuzz`): not an API.

use super::java_frames::JavaFrameNames;
use super::sidecar::Sidecar;
use std::path::Path;

/// `symbols.json` as [`Sidecar::beside`] reads it, from a sidecar directory `dir` (the files it
/// names are looked for there: a perf map, `java-frames.json`).
pub fn symbols_json(dir: &Path, bytes: &[u8]) -> Result<Sidecar, String> {
    Sidecar::from_json(dir, bytes)
}

/// `java-frames.json` as [`JavaFrameNames::read`] reads it.
pub fn java_frames_json(bytes: &[u8]) -> Result<JavaFrameNames, String> {
    JavaFrameNames::parse(bytes)
}
