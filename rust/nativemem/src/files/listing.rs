//! The entries of a directory handle: names with what `fstatat(AT_SYMLINK_NOFOLLOW)` says of
//! each (a link as a link), read through a fresh descriptor of the same directory.

use super::dir::{stat_at, Dir};
use serde::Serialize;
use std::ffi::{CStr, CString};
use std::io;

/// What an entry is, its link not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Directory,
    File,
    Link,
    Other,
}

/// One entry of a directory.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The name, lossily as UTF-8 (an entry whose name is not UTF-8 is never ours to touch:
    /// callers match names they made).
    pub name: String,
    pub uid: u32,
    pub kind: Kind,
    pub modified_ms: i64,
    pub size_bytes: u64,
    /// False when the name is not valid UTF-8: then `name` does not reach the entry.
    pub exact_name: bool,
}

/// The entries of `dir` (not `.` and `..`). An entry removed while listing is left out.
pub fn entries(dir: &Dir) -> io::Result<Vec<Entry>> {
    let fresh = Dir::reopen(dir.fd(), dir.shown.clone())?;
    let raw = fresh.into_raw();
    // SAFETY: raw is an O_RDONLY directory descriptor we own; fdopendir takes it over.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let err = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so raw is still ours to close.
        unsafe { libc::close(raw) };
        return Err(err);
    }
    let mut out = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; clearing it tells end-of-stream from an error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: a stream from fdopendir, used by this thread only.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let err = io::Error::last_os_error();
            break if err.raw_os_error().unwrap_or(0) == 0 {
                Ok(())
            } else {
                Err(err)
            };
        }
        // SAFETY: readdir returned an entry whose d_name is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) }.to_owned();
        if name.as_bytes() == b"." || name.as_bytes() == b".." {
            continue;
        }
        if let Some(e) = describe(raw, name) {
            out.push(e);
        }
    };
    // SAFETY: the stream is ours; closedir closes raw too.
    unsafe { libc::closedir(stream) };
    result.map(|()| out)
}

fn describe(at: i32, name: CString) -> Option<Entry> {
    let (stat, st) = stat_at(at, &name).ok()?;
    let kind = match stat.mode & libc::S_IFMT {
        libc::S_IFDIR => Kind::Directory,
        libc::S_IFREG => Kind::File,
        libc::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    };
    let exact_name = name.to_str().is_ok();
    Some(Entry {
        name: name.to_string_lossy().into_owned(),
        uid: stat.uid,
        kind,
        modified_ms: st.st_mtime * 1000 + st.st_mtime_nsec / 1_000_000,
        size_bytes: st.st_size as u64,
        exact_name,
    })
}
