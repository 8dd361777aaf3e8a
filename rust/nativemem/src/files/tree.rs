//! Removing and measuring trees of ours under a directory handle: `unlinkat` relative to
//! descriptors, descending only into directories opened `O_NOFOLLOW|O_DIRECTORY` that this
//! process's user owns, never following a link, never removing an entry another user owns.

use super::dir::{my_uid, stat_at, Dir};
use super::listing::{entries, Kind};
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

/// Directories below the top one descended at most: ours are two deep.
const MAX_DEPTH: usize = 16;

/// Removes `name` in `dir` and everything of ours below it. Entries of another user (and
/// directories deeper than [`MAX_DEPTH`]) stay, and then so do the directories above them:
/// the result says whether everything went.
pub fn remove_ours(dir: &Dir, name: &CString) -> io::Result<bool> {
    remove(dir, name, 0)
}

/// Removes `name` in `dir` and everything of ours below it, best effort ([`remove_ours`]).
pub fn remove_tree(dir: &Dir, name: &CString) {
    let _ = remove_ours(dir, name);
}

fn remove(dir: &Dir, name: &CString, depth: usize) -> io::Result<bool> {
    let (st, _) = match dir.stat_at(name) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    if st.uid != my_uid() {
        return Ok(false);
    }
    if !st.is_dir() {
        return unlink(dir, name, 0);
    }
    if depth >= MAX_DEPTH {
        return Ok(false);
    }
    let child = dir.open_child(name)?;
    let opened = child.stat()?;
    if opened.uid != my_uid() || opened.dev != st.dev || opened.ino != st.ino {
        return Ok(false); // swapped between the look and the open
    }
    let mut all = true;
    for entry in entries(&child)? {
        if !entry.exact_name {
            all = false;
            continue;
        }
        let entry_name = CString::new(entry.name).unwrap_or_default();
        all &= remove(&child, &entry_name, depth + 1)?;
    }
    if !all {
        return Ok(false);
    }
    unlink(dir, name, libc::AT_REMOVEDIR)
}

fn unlink(dir: &Dir, name: &CString, flags: libc::c_int) -> io::Result<bool> {
    // SAFETY: a descriptor we hold and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.fd().as_raw_fd(), name.as_ptr(), flags) } == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.kind() {
        io::ErrorKind::NotFound => Ok(true),
        _ => Err(err),
    }
}

/// Bytes of the regular files under `name` (a directory of ours), links not followed, nothing
/// counted below a directory of another user.
pub fn bytes_of(dir: &Dir, name: &CString) -> io::Result<u64> {
    bytes(dir, name, 0)
}

fn bytes(dir: &Dir, name: &CString, depth: usize) -> io::Result<u64> {
    let (st, raw) = stat_at(dir.fd().as_raw_fd(), name)?;
    if !st.is_dir() {
        return Ok(if st.mode & libc::S_IFMT == libc::S_IFREG {
            raw.st_size as u64
        } else {
            0
        });
    }
    if st.uid != my_uid() || depth >= MAX_DEPTH {
        return Ok(0);
    }
    let child = dir.open_child(name)?;
    let mut total = 0u64;
    for entry in entries(&child)? {
        total += match entry.kind {
            Kind::File => entry.size_bytes,
            Kind::Directory if entry.exact_name => {
                let entry_name = CString::new(entry.name).unwrap_or_default();
                bytes(&child, &entry_name, depth + 1).unwrap_or(0)
            }
            _ => 0,
        };
    }
    Ok(total)
}
