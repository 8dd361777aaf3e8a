//! The memory watch's directory as three jobs, each one call: opened once, where bundles go
//! ([`placement`]); made ready before a capture: checked, this process's previous bundle found,
//! room made on the volume ([`room`]); pruned after it ([`retention`]). The Java side holds the
//! directory's descriptor for the bundle's own steps and passes it back as `directory`.

pub mod names;
pub mod placement;
pub mod retention;
pub mod room;

use crate::files::dir::Dir;
use crate::files::FileError;
use placement::Refused;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Errors of the watch directory's jobs.
#[derive(Debug, thiserror::Error)]
pub enum WatchDirectoryError {
    /// The directory is not safe to write in, or cannot be opened: the message says what to do.
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    File(#[from] FileError),
}

/// `watch_directory_open`: the directory the user named.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    pub path: PathBuf,
}

/// The directory bundles go in: its descriptor, now the caller's to close; its path, for
/// messages; and where bundles go and what another user can do, said once.
#[derive(Debug, Serialize)]
pub struct Opened {
    pub directory: i64,
    pub path: String,
    pub placement: String,
}

pub fn open(request: &OpenRequest) -> Result<Opened, WatchDirectoryError> {
    let placed = placement::open(&request.path)?;
    let path = placed.dir.shown.display().to_string();
    Ok(Opened {
        directory: placed.dir.into_raw() as i64,
        path,
        placement: placed.placement,
    })
}

/// `watch_directory_ready`: before a capture of process `pid`, with a heap profile or without.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadyRequest {
    pub directory: i64,
    pub pid: u64,
    pub profile: bool,
}

/// The directory ready for a capture: the previous bundle of the process (its profile is the
/// diff's base), and the room the capture has.
#[derive(Debug, Serialize)]
pub struct Ready {
    pub previous: Option<String>,
    #[serde(flatten)]
    pub room: room::Room,
}

pub fn ready(request: &ReadyRequest) -> Result<Ready, WatchDirectoryError> {
    let dir = Dir::held(request.directory)?;
    placement::check(&dir)?;
    let mut previous = retention::newest_of(&dir, request.pid)?;
    let room = room::decide(&dir, previous.as_deref(), request.profile)?;
    if previous.as_ref().is_some_and(|p| room.removed.contains(p)) {
        previous = None;
    }
    Ok(Ready { previous, room })
}

/// `watch_directory_prune`: after a capture, keep at most `keep` bundles of at most `max_bytes`
/// in all, `newest` among them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PruneRequest {
    pub directory: i64,
    pub keep: u64,
    pub max_bytes: u64,
    pub newest: Option<String>,
}

/// The names of the bundles removed.
pub fn prune(request: &PruneRequest) -> Result<Vec<String>, WatchDirectoryError> {
    let dir = Dir::held(request.directory)?;
    Ok(retention::prune(
        &dir,
        request.keep,
        request.max_bytes,
        request.newest.as_deref(),
    )?)
}

#[cfg(test)]
mod tests;
