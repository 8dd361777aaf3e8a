//! A heap-profile dump as one job: the dump and its sidecar ([`crate::sampling::dump`]), then,
//! for a dump under the default name, the oldest default-named dumps of this user beside it
//! removed with their sidecars beyond `keep`. One dump at a time is the caller's turn
//! (`ProfileDump`'s lock, which also covers the perf map the JVM writes beforehand).

use crate::files::dir::my_uid;
use crate::files::listing::{entries, Entry, Kind};
use crate::files::tree::remove_ours;
use crate::files::walk::{open_dir, Missing};
use crate::sampling::{self, DumpRequest, DumpedProfile, SamplingError};
use crate::sidecar_layout::DIR_SUFFIX;
use serde::Deserialize;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// What the `heap_dump` job (`NativeBridge.call`) is asked, as JSON.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeapDumpRequest {
    /// Where the dump goes; it must not exist.
    pub target: PathBuf,
    /// Directories whose mapped objects are saved into the sidecar.
    #[serde(default)]
    pub save_from: Vec<PathBuf>,
    /// A file with the JVM's perf map, copied into the sidecar.
    #[serde(default)]
    pub perf_map: Option<PathBuf>,
    /// After the dump, keep this many of this user's default-named dumps in its directory, the
    /// new one always among them ([`prune`]); absent: prune nothing.
    #[serde(default)]
    pub keep: Option<i64>,
}

/// Dumps as `request` says, then prunes; the answer is the dump in place.
pub fn run(request: &HeapDumpRequest) -> Result<DumpedProfile, SamplingError> {
    let dumped = sampling::dump(&DumpRequest {
        target: request.target.clone(),
        save_from: request.save_from.clone(),
        perf_map: request.perf_map.clone(),
    })?;
    if let Some(keep) = request.keep {
        let path = Path::new(&dumped.path);
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            prune(dir, &name.to_string_lossy(), keep);
        }
    }
    Ok(dumped)
}

/// Keeps the `keep` newest default-named dumps of this user in `dir` (`written`, the dump just
/// made, always stays, and counts as one of them); best effort, through one handle of the
/// directory (listed and removed relative to it, nothing followed through a link). In a shared
/// directory (the default, `java.io.tmpdir`) another user can plant files with any name and time
/// stamp: they are not ours, so they neither count nor get deleted.
pub fn prune(dir: &Path, written: &str, keep: i64) {
    let _ = prune_in(dir, written, keep);
}

fn prune_in(dir: &Path, written: &str, keep: i64) -> Option<()> {
    let dir = open_dir(dir, Missing::Fail).ok()?.dir;
    let me = my_uid();
    let listed: Vec<Entry> = entries(&dir)
        .ok()?
        .into_iter()
        .filter(|e| e.exact_name)
        .collect();
    let mut dumps: Vec<(&str, &str)> = listed
        .iter()
        .filter(|e| e.kind == Kind::File && e.uid == me && e.name != written)
        .filter_map(|e| default_stamp(&e.name).map(|stamp| (stamp, e.name.as_str())))
        .collect();
    // The name's UTC stamp orders dumps of every process the same way the clock did.
    dumps.sort_by_key(|&(stamp, _)| stamp);
    let others_kept = keep.saturating_sub(1).max(0);
    let others_kept = usize::try_from(others_kept).unwrap_or(usize::MAX);
    let removed = dumps.len().saturating_sub(others_kept);
    for &(_, dump) in &dumps[..removed] {
        let sidecar = format!("{dump}{DIR_SUFFIX}");
        if listed
            .iter()
            .any(|e| e.name == sidecar && e.kind == Kind::Directory && e.uid == me)
        {
            remove_ours(&dir, &CString::new(sidecar).ok()?).ok()?;
        }
        remove_ours(&dir, &CString::new(dump).ok()?).ok()?;
    }
    Some(())
}

/// The UTC stamp of a default dump name, `nativemem-<pid>-<yyyyMMdd'T'HHmmss.SSS'Z'>.heap`
/// (what `ProfileDump` names a dump without a path), or `None` for any other name.
fn default_stamp(name: &str) -> Option<&str> {
    const SHAPE: &[u8] = b"ddddddddTdddddd.dddZ";
    let (pid, rest) = name.strip_prefix("nativemem-")?.split_once('-')?;
    let stamp = rest.strip_suffix(".heap")?;
    let digits = |c: u8, s: u8| {
        if s == b'd' {
            c.is_ascii_digit()
        } else {
            c == s
        }
    };
    let fits = stamp.len() == SHAPE.len()
        && stamp.bytes().zip(SHAPE).all(|(c, &s)| digits(c, s))
        && !pid.is_empty()
        && pid.bytes().all(|c| c.is_ascii_digit());
    fits.then_some(stamp)
}

#[cfg(test)]
mod tests;
