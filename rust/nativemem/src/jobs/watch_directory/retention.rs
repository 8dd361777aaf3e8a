//! Keeps the watch directory bounded, through its handle: only directories of this user (not
//! links, as `fstatat` without following links sees them) named as bundles are counted and
//! removed, oldest first by the stamp in their name, and a removal descends only into
//! directories of ours opened without following a link ([`remove_ours`]); anything else there,
//! planted or not, is never touched. Temporary bundles left by a process killed while writing
//! are removed once that process is gone and ten minutes have passed.

use super::names;
use crate::files::dir::{entry_name, my_uid, Dir};
use crate::files::listing::{entries, Entry, Kind};
use crate::files::space::space;
use crate::files::tree::{bytes_of, remove_ours};
use crate::files::FileError;
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A temporary bundle this old whose process is gone is a leftover.
pub const STALE_TEMPORARY: Duration = Duration::from_secs(10 * 60);

/// The names of our bundles in `dir`, oldest first.
pub fn bundles(dir: &Dir) -> Result<Vec<String>, FileError> {
    let mut found: Vec<String> = listed(dir)?
        .into_iter()
        .filter(|e| is_own_directory(e) && names::bundle(&e.name).is_some())
        .map(|e| e.name)
        .collect();
    found.sort_by(|a, b| stamp(a).cmp(stamp(b)).then_with(|| a.cmp(b)));
    Ok(found)
}

/// The name of process `pid`'s newest bundle in `dir`, if any.
pub fn newest_of(dir: &Dir, pid: u64) -> Result<Option<String>, FileError> {
    Ok(bundles(dir)?
        .into_iter()
        .rfind(|b| names::bundle(b).is_some_and(|n| n.pid == pid)))
}

/// Removes the oldest of our bundles until at most `keep` remain and they take at most
/// `max_bytes`; `newest` always stays. Returns the names removed.
pub fn prune(
    dir: &Dir,
    keep: u64,
    max_bytes: u64,
    newest: Option<&str>,
) -> Result<Vec<String>, FileError> {
    remove_stale_temporaries(dir)?;
    let bundles = bundles(dir)?;
    let sizes: Vec<u64> = bundles
        .iter()
        .map(|b| size(dir, b))
        .collect::<Result<_, _>>()?;
    let (mut count, mut total) = (bundles.len() as u64, sizes.iter().sum::<u64>());
    let mut removed = Vec::new();
    for (bundle, bytes) in bundles.iter().zip(sizes) {
        if count <= keep && total <= max_bytes {
            break;
        }
        if Some(bundle.as_str()) == newest {
            continue;
        }
        remove(dir, bundle)?;
        removed.push(bundle.clone());
        count -= 1;
        total -= bytes;
    }
    Ok(removed)
}

/// Removes our oldest bundles until the volume has `wanted_free` bytes free or only the newest is
/// left. Returns the names removed.
pub fn make_room(dir: &Dir, wanted_free: u64) -> Result<Vec<String>, FileError> {
    let mut removed = Vec::new();
    if free_bytes(dir)? >= wanted_free {
        return Ok(removed);
    }
    remove_stale_temporaries(dir)?;
    let bundles = bundles(dir)?;
    for bundle in &bundles[..bundles.len().saturating_sub(1)] {
        if free_bytes(dir)? >= wanted_free {
            break;
        }
        remove(dir, bundle)?;
        removed.push(bundle.clone());
    }
    Ok(removed)
}

/// Bytes of the regular files under the bundle `name`; links are not followed.
pub fn size(dir: &Dir, name: &str) -> Result<u64, FileError> {
    let entry = entry_name(name)?;
    bytes_of(dir, &entry).map_err(|e| failed("measure", dir, name, e))
}

/// Free bytes of the volume for this user.
pub fn free_bytes(dir: &Dir) -> Result<u64, FileError> {
    Ok(space(dir)
        .map_err(|e| FileError::io("read the free space of", &dir.shown, e))?
        .free_bytes)
}

fn remove_stale_temporaries(dir: &Dir) -> Result<(), FileError> {
    let stale_before = SystemTime::now()
        .checked_sub(STALE_TEMPORARY)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    for entry in listed(dir)? {
        let Some(pid) = names::temporary(&entry.name) else {
            continue;
        };
        if is_own_directory(&entry) && !alive(pid) && entry.modified_ms < stale_before {
            remove(dir, &entry.name)?;
        }
    }
    Ok(())
}

/// Whether a process `pid` exists in this process's pid namespace (`kill(pid, 0)`; one of
/// another user answers EPERM and is alive too).
fn alive(pid: u64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

fn stamp(bundle: &str) -> &str {
    names::bundle(bundle).map_or("", |n| n.stamp)
}

fn is_own_directory(entry: &Entry) -> bool {
    entry.kind == Kind::Directory && entry.uid == my_uid() && entry.exact_name
}

fn listed(dir: &Dir) -> Result<Vec<Entry>, FileError> {
    entries(dir).map_err(|e| FileError::io("list", &dir.shown, e))
}

fn remove(dir: &Dir, name: &str) -> Result<(), FileError> {
    let entry = entry_name(name)?;
    remove_ours(dir, &entry)
        .map(drop)
        .map_err(|e| failed("remove", dir, name, e))
}

fn failed(what: &str, dir: &Dir, name: &str, e: io::Error) -> FileError {
    FileError::io(what, &dir.shown.join(name), e)
}
