//! Opening files another user may have planted or named: never blocking on a FIFO, never
//! reading a device, following a final symbolic link only where the caller allows it, and
//! reading with a size cap. Used by `sampling` (files it copies into a sidecar) and `profile`
//! (every file a dump or a sidecar names); files we write are `new_file`'s. Errors are `io::Error`s whose text says what was
//! wrong with the file; callers add its name and what to do.

use super::dir::{openat, Dir};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest JVM perf map read or copied: one line per compiled method, tens of MiB for the
/// largest services.
pub const MAX_PERF_MAP_BYTES: u64 = 512 << 20;

/// Whether a symbolic link as the last path component is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

/// Opens `path` for reading if it is a regular file. `O_NONBLOCK` keeps a FIFO from blocking
/// the open; the type is then checked on the open descriptor (`fstat`), so nothing can be
/// swapped in between.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) if links == Links::Refuse => invalid("is a symbolic link"),
            _ => e,
        })?;
    regular_only(file)
}

/// Opens `name` in the directory handle `dir` for reading if it is a regular file: `openat`
/// with `O_NOFOLLOW|O_NONBLOCK`, then `fstat` on the descriptor, so a link or a FIFO swapped in
/// is refused and never blocks.
pub fn open_regular_at(dir: &Dir, name: &CString) -> io::Result<File> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW;
    let fd = openat(dir.fd().as_raw_fd(), name, flags).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => invalid("is a symbolic link"),
        _ => e,
    })?;
    regular_only(File::from(fd))
}

/// Reads the regular file `beneath` (a relative path) of at most `cap` bytes, inside `root`:
/// `root` is opened once (a magic link such as `/proc/<pid>/root` is followed, it is the point),
/// then each component of `beneath` is opened from the one before with `O_NOFOLLOW`, so no link
/// in any component is followed and no `..` or absolute path is taken: nothing leads out of that
/// tree (another process's container, whose files its owner controls). The same walk as
/// `openat2`'s `RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS`, on kernels and emulators without it.
pub fn read_capped_in_root(root: &Path, beneath: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Component;
    let names = beneath
        .components()
        .map(|component| match component {
            Component::Normal(name) => {
                CString::new(name.as_bytes()).map_err(|_| invalid("has a NUL byte in its name"))
            }
            _ => Err(invalid(
                "leads out of its root (an absolute path, `.` or `..`)",
            )),
        })
        .collect::<io::Result<Vec<CString>>>()?;
    let Some((file, dirs)) = names.split_last() else {
        return Err(invalid("names no file"));
    };
    let mut at: std::os::fd::OwnedFd = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(root)?
        .into();
    let no_link = |e: io::Error| match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => invalid("passes through a symbolic link"),
        _ => e,
    };
    for dir in dirs {
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        at = openat(at.as_raw_fd(), dir, flags).map_err(no_link)?;
    }
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW;
    let fd = openat(at.as_raw_fd(), file, flags).map_err(no_link)?;
    read_capped_from(regular_only(File::from(fd))?, cap)
}

/// Reads the regular file `name` of `dir` (as [`open_regular_at`]) of at most `cap` bytes.
pub fn read_capped_at(dir: &Dir, name: &CString, cap: u64) -> io::Result<Vec<u8>> {
    read_capped_from(open_regular_at(dir, name)?, cap)
}

/// `file` if it is a regular file, its non-blocking flag cleared; else why not.
fn regular_only(file: File) -> io::Result<File> {
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(invalid(&format!("is {what}, not a regular file")));
    }
    // Regular files never block; clear the flag so reads behave as usual.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, 0) };
    Ok(file)
}

/// Reads a whole regular file of at most `cap` bytes.
pub fn read_capped(path: &Path, links: Links, cap: u64) -> io::Result<Vec<u8>> {
    read_capped_from(open_regular(path, links)?, cap)
}

fn read_capped_from(file: File, cap: u64) -> io::Result<Vec<u8>> {
    let size = file.metadata()?.len();
    if size > cap {
        return Err(too_large(size, cap));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow after fstat: read one byte past the cap to notice.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

/// A path that names exactly the file open as `file` (`/proc/self/fd/<n>`), for libraries that
/// take a path: they reopen the checked file, not whatever the original name points to now.
pub fn fd_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

fn too_large(size: u64, cap: u64) -> io::Error {
    invalid(&format!(
        "is {size} bytes, more than the {cap} bytes accepted"
    ))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nativemem-checked-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn fifos_devices_and_links_are_refused_without_blocking() {
        let dir = scratch("kinds");
        let fifo = dir.join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_capped(&fifo, Links::Follow, 10).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        let zero = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_capped(&zero, Links::Refuse, 10).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = read_capped(&zero, Links::Follow, 10).unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_are_capped() {
        let dir = scratch("cap");
        let file = dir.join("f");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(
            read_capped(&file, Links::Refuse, 10).unwrap(),
            b"0123456789"
        );
        let err = read_capped(&file, Links::Refuse, 9).unwrap_err();
        assert!(err.to_string().contains("more than the 9 bytes"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
