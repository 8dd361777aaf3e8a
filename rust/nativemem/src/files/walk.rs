//! Opening a directory path component by component (`O_PATH|O_NOFOLLOW|O_DIRECTORY` from `/`, or
//! from the working directory for a relative path), so the path is resolved exactly once and
//! nothing on the way is looked up again. A symbolic link on the way is followed only if root
//! or this process's user owns it (another user's link could be re-pointed at will): it is read
//! once and the walk goes on from descriptors. `/proc/self/fd/<n>/...` starts from a descriptor
//! this process holds (a directory handle already checked), with nothing above it looked up.

use super::dir::{my_uid, openat, stat_at, Dir};
use super::error::FileError;
use std::collections::VecDeque;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Links followed in one walk at most, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// What to do with a directory of the path that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Fail,
    /// Make it, mode 0700, and go on into it.
    Create,
}

/// A directory reached by a walk.
pub struct Walked {
    pub dir: Dir,
    /// Reached from a descriptor this process holds (`/proc/self/fd/<n>`): nothing above it was
    /// looked up, so nothing above it needs checking.
    pub anchored: bool,
}

/// Opens the directory `path` as described in the module's documentation. A missing directory
/// is a [`FileError::Io`] of kind `NotFound` naming it; a refused link or a file on the way is
/// a [`FileError::BadPath`] naming it.
pub fn open_dir(path: &Path, missing: Missing) -> Result<Walked, FileError> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Err(FileError::BadPath("the directory path is empty".into()));
    }
    let (mut cur, rest, anchored) = match anchored_fd(bytes) {
        Some((fd, rest)) => (dup_dir(fd, path)?, rest, true),
        None if bytes[0] == b'/' => (open_path(libc::AT_FDCWD, "/", path)?, bytes, false),
        None => (open_path(libc::AT_FDCWD, ".", path)?, bytes, false),
    };
    let mut pending: VecDeque<Vec<u8>> = components(rest).collect();
    let mut walked = if anchored {
        PathBuf::from(format!("/proc/self/fd/{}", anchored_number(bytes)))
    } else if bytes[0] == b'/' {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let (mut links, mut made) = (0, 0);
    while let Some(component) = pending.pop_front() {
        match component.as_slice() {
            b"." => continue,
            b".." => {
                cur = open_path(cur.as_raw_fd(), "..", path)?;
                walked.push("..");
                continue;
            }
            _ => {}
        }
        let name = CString::new(component.clone())
            .map_err(|_| FileError::BadPath(format!("{} contains a NUL byte", path.display())))?;
        let here = walked.join(std::ffi::OsStr::from_bytes(&component));
        let st = match stat_at(cur.as_raw_fd(), &name) {
            Ok((_, st)) => st,
            Err(e) if e.kind() == io::ErrorKind::NotFound && missing == Missing::Create => {
                made += 1;
                // SAFETY: a descriptor we hold and a NUL-terminated name.
                let rc = unsafe { libc::mkdirat(cur.as_raw_fd(), name.as_ptr(), 0o700) };
                let err = io::Error::last_os_error();
                if (rc != 0 && err.raw_os_error() != Some(libc::EEXIST)) || made > 256 {
                    return Err(FileError::io("make the directory", &here, err));
                }
                pending.push_front(component);
                continue;
            }
            Err(e) => return Err(FileError::io("open", &here, e)),
        };
        match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK => {
                let me = my_uid();
                if st.st_uid != 0 && st.st_uid != me {
                    return Err(FileError::BadPath(format!(
                        "{} is a symbolic link of uid {}, who could point it elsewhere at any \
                         time; nativemem follows a link on the way only if root or its own uid \
                         ({me}) owns it: name the real directory instead (readlink -f {})",
                        here.display(),
                        st.st_uid,
                        here.display()
                    )));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(FileError::BadPath(format!(
                        "{}: more than {MAX_LINKS} symbolic links on the way",
                        path.display()
                    )));
                }
                let target = read_link_at(cur.as_raw_fd(), &name)
                    .map_err(|e| FileError::io("read the link", &here, e))?;
                if target.first() == Some(&b'/') {
                    cur = open_path(libc::AT_FDCWD, "/", path)?;
                    walked = PathBuf::from("/");
                }
                for c in components(&target).collect::<Vec<_>>().into_iter().rev() {
                    pending.push_front(c);
                }
            }
            libc::S_IFDIR => {
                cur = match openat(
                    cur.as_raw_fd(),
                    &name,
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                ) {
                    Ok(fd) => fd,
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                        return Err(FileError::BadPath(format!(
                            "{} was replaced while being opened; try again, and check who else \
                             writes to its parent directory",
                            here.display()
                        )))
                    }
                    Err(e) => return Err(FileError::io("open", &here, e)),
                };
                walked = here;
            }
            _ => {
                return Err(FileError::BadPath(format!(
                    "{} is not a directory",
                    here.display()
                )))
            }
        }
    }
    let dir = Dir::reopen(std::os::fd::AsFd::as_fd(&cur), path.to_path_buf())
        .map_err(|e| FileError::io("open", path, e))?;
    Ok(Walked { dir, anchored })
}

fn components(bytes: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    bytes
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .map(<[u8]>::to_vec)
}

/// `/proc/self/fd/<n>` at the start of `path`: the descriptor and the rest of the path.
fn anchored_fd(path: &[u8]) -> Option<(i32, &[u8])> {
    let rest = path.strip_prefix(b"/proc/self/fd/")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || (digits < rest.len() && rest[digits] != b'/') {
        return None;
    }
    let fd = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some((fd, &rest[digits..]))
}

fn anchored_number(path: &[u8]) -> i32 {
    anchored_fd(path).map_or(-1, |(fd, _)| fd)
}

/// A duplicate of the directory descriptor `fd` this process holds.
fn dup_dir(fd: i32, path: &Path) -> Result<OwnedFd, FileError> {
    // SAFETY: F_DUPFD_CLOEXEC on any number: a bad one fails with EBADF.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(FileError::io("open", path, io::Error::last_os_error()));
    }
    // SAFETY: copy was just made and is owned by nobody else.
    let copy = unsafe { OwnedFd::from_raw_fd(copy) };
    let dot = CString::from(c".");
    match stat_at(copy.as_raw_fd(), &dot) {
        Ok((st, _)) if st.is_dir() => Ok(copy),
        _ => Err(FileError::BadPath(format!(
            "{} is not a directory this process holds open",
            path.display()
        ))),
    }
}

fn open_path(at: i32, name: &str, shown: &Path) -> Result<OwnedFd, FileError> {
    let name = CString::new(name).unwrap_or_default();
    openat(
        at,
        &name,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
    )
    .map_err(|e| FileError::io("open", shown, e))
}

fn read_link_at(at: i32, name: &CString) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: a descriptor we hold, a NUL-terminated name, a buffer of the length given.
    let n = unsafe { libc::readlinkat(at, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}
