//! A directory opened once: every name is resolved relative to its descriptor, so a link or a
//! directory swapped in above it after it was opened redirects nothing.

use super::error::FileError;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Owner, mode, device and inode of an open file, from `fstat`/`fstatat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub uid: u32,
    pub mode: u32,
    pub dev: u64,
    pub ino: u64,
}

impl Stat {
    fn of(st: &libc::stat) -> Stat {
        Stat {
            uid: st.st_uid,
            mode: st.st_mode,
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }

    pub fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }
}

/// `name` as an entry of a directory: one path component, not `.` or `..`, no NUL byte.
pub fn entry_name(name: &str) -> Result<CString, FileError> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(FileError::BadPath(format!(
            "{name:?} is not an entry name (one path component)"
        )));
    }
    CString::new(name).map_err(|_| FileError::BadPath(format!("{name:?} has a NUL byte")))
}

/// The effective uid of this process.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// A directory opened once; names are resolved relative to its descriptor.
pub struct Dir {
    fd: OwnedFd,
    /// As the user named it, for messages.
    pub shown: PathBuf,
}

impl Dir {
    /// The directory of a descriptor the Java side holds (a `DirectoryHandle`), borrowed: it is
    /// not closed when the result is dropped.
    ///
    /// # Safety
    /// `fd` must stay open while the result lives.
    unsafe fn borrow_raw(fd: RawFd) -> std::mem::ManuallyDrop<Dir> {
        let shown = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .unwrap_or_else(|_| PathBuf::from(format!("/proc/self/fd/{fd}")));
        std::mem::ManuallyDrop::new(Dir {
            // SAFETY: the caller keeps fd open; ManuallyDrop never closes it.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            shown,
        })
    }

    /// The directory of a descriptor number the Java side holds (a `DirectoryHandle`, which
    /// passes it only while open and under its lock), borrowed: not closed when dropped.
    pub fn held(handle: i64) -> Result<std::mem::ManuallyDrop<Dir>, FileError> {
        if !(0..=i32::MAX as i64).contains(&handle) {
            return Err(FileError::BadPath(format!(
                "{handle} is not an open directory handle"
            )));
        }
        // SAFETY: DirectoryHandle passes its descriptor only while it is open, and closes it
        // only once no call is using it.
        Ok(unsafe { Dir::borrow_raw(handle as RawFd) })
    }

    /// Opens `.` of `fd` anew (`O_RDONLY|O_DIRECTORY`): a descriptor with its own offset, usable
    /// by `fdopendir`, even when `fd` is an `O_PATH` one.
    pub(crate) fn reopen(fd: BorrowedFd, shown: PathBuf) -> io::Result<Dir> {
        let fd = openat(
            fd.as_raw_fd(),
            &CString::from(c"."),
            libc::O_RDONLY | libc::O_DIRECTORY,
        )?;
        Ok(Dir { fd, shown })
    }

    /// The raw descriptor, for the Java side, which closes it once with `close_raw`.
    pub fn into_raw(self) -> RawFd {
        self.fd.into_raw_fd()
    }

    /// The descriptor's number, as the Java side holds it (`held` reads it back).
    pub fn fd_number(&self) -> i64 {
        self.fd.as_raw_fd() as i64
    }

    /// The descriptor, borrowed.
    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// `fstat` of the directory itself.
    pub fn stat(&self) -> io::Result<Stat> {
        // SAFETY: an all-zero stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a descriptor we own and a pointer to a stat.
        if unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Stat::of(&st))
    }

    /// `fstatat(name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a link as a link.
    pub fn stat_at(&self, name: &CString) -> io::Result<(Stat, libc::stat)> {
        stat_at(self.fd.as_raw_fd(), name)
    }

    /// Whether `name` exists (as anything, a dangling link included).
    pub fn has(&self, name: &CString) -> bool {
        self.stat_at(name).is_ok()
    }

    /// Opens the directory `name` in this one without following a link
    /// (`O_NOFOLLOW|O_DIRECTORY`); the caller checks whose it is on the result.
    pub fn open_child(&self, name: &CString) -> io::Result<Dir> {
        let fd = openat(
            self.fd.as_raw_fd(),
            name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )?;
        Ok(Dir {
            fd,
            shown: self.shown.join(name.to_string_lossy().as_ref()),
        })
    }

    /// Makes the directory `name` (mode 0700, which must not exist), opens it without following
    /// a link and checks on its descriptor that it is ours, a directory, and that no group or
    /// other bit is set: what was made is what is used.
    pub fn make_private_child(&self, name: &CString) -> io::Result<Dir> {
        // SAFETY: a descriptor we own and a NUL-terminated name.
        if unsafe { libc::mkdirat(self.fd.as_raw_fd(), name.as_ptr(), 0o700) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let child = self.open_child(name)?;
        let st = child.stat()?;
        if st.uid != my_uid() || st.mode & 0o077 != 0 || !st.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} changed hands after it was made (uid {}, mode {:o})",
                    child.shown.display(),
                    st.uid,
                    st.mode & 0o7777
                ),
            ));
        }
        Ok(child)
    }

    /// Makes a fresh 0700 directory inside this one under a temporary name and opens it; the
    /// caller removes it.
    pub fn private_child(&self, hint: &str) -> Result<(Dir, CString), FileError> {
        let name = self.temp_name(hint);
        let child = self
            .make_private_child(&name)
            .map_err(|e| FileError::io("make a directory in", &self.shown, e))?;
        Ok((child, name))
    }

    /// A path that reaches `name` through this directory's descriptor, for code that takes a
    /// path (jemalloc's `prof.dump`, std's file functions): no name above it is looked up again.
    pub fn anchored(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).join(name)
    }

    /// Renames `from` in this directory to `to` in `into`, failing rather than replacing `to`.
    pub fn rename_no_replace(&self, from: &CString, into: &Dir, to: &CString) -> io::Result<()> {
        rename_no_replace(self.fd(), from, into.fd(), to)
    }

    /// Writes `contents` to the new file `name` (mode 0600): under a temporary name, synced,
    /// then renamed into place, which fails with `AlreadyExists` (leaving nothing behind) if
    /// `name` exists. A full disk leaves nothing either.
    pub fn write_new(&self, name: &CString, contents: &[u8]) -> io::Result<()> {
        let temp = self.temp_name(&name.to_string_lossy());
        // Not ours if this fails (a name taken, however unlikely): nothing to remove then.
        let mut file = self.create_private(&temp)?;
        let placed = file
            .write_all(contents)
            .and_then(|()| file.sync_all())
            .and_then(|()| self.rename_no_replace(&temp, self, name));
        if placed.is_err() {
            self.remove_file(&temp);
        }
        placed
    }

    /// Writes `contents` to `name` anew or over what is there, atomically: a new file made as
    /// [`Dir::write_new`] under a temporary name, then renamed over `name`, so that a reader (or
    /// a kill) finds the old file or the new one, never none and never half of one.
    pub fn replace(&self, name: &CString, contents: &[u8]) -> io::Result<()> {
        let next = self.temp_name(&name.to_string_lossy());
        self.write_new(&next, contents)?;
        // SAFETY: a descriptor we own and NUL-terminated names.
        let rc = unsafe {
            libc::renameat(
                self.fd.as_raw_fd(),
                next.as_ptr(),
                self.fd.as_raw_fd(),
                name.as_ptr(),
            )
        };
        if rc != 0 {
            let err = io::Error::last_os_error();
            self.remove_file(&next);
            return Err(err);
        }
        Ok(())
    }

    /// A fresh name for a temporary entry made from `hint`: hidden, unique in this process.
    pub fn temp_name(&self, hint: &str) -> CString {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!(".{hint}.{}-{n}.tmp", std::process::id());
        // A hint from a CString or a path's lossy text has no NUL byte.
        CString::new(name).unwrap_or_default()
    }

    /// Creates `name` in this directory, which must not exist as anything, mode 0600.
    pub fn create_private(&self, name: &CString) -> io::Result<File> {
        let fd = openat_mode(
            self.fd.as_raw_fd(),
            name,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o600,
        )?;
        Ok(File::from(fd))
    }

    /// Removes the file `name` we made, if it is still there.
    pub fn remove_file(&self, name: &CString) {
        // SAFETY: a descriptor we own and a NUL-terminated name.
        unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) };
    }
}

/// `fstatat(at, name, AT_SYMLINK_NOFOLLOW)`.
pub(crate) fn stat_at(at: RawFd, name: &CString) -> io::Result<(Stat, libc::stat)> {
    // SAFETY: an all-zero stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a descriptor the caller holds, a NUL-terminated name and a stat out-parameter.
    if unsafe { libc::fstatat(at, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((Stat::of(&st), st))
}

/// `openat(at, name, flags | O_CLOEXEC)`, the result owned.
pub(crate) fn openat(at: RawFd, name: &CString, flags: libc::c_int) -> io::Result<OwnedFd> {
    openat_mode(at, name, flags, 0)
}

fn openat_mode(
    at: RawFd,
    name: &CString,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: a descriptor the caller holds and a NUL-terminated name; the result is owned below.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Renames `from` in `at` to `to` in `into`, failing rather than replacing `to`.
pub(crate) fn rename_no_replace(
    at: BorrowedFd,
    from: &CString,
    into: BorrowedFd,
    to: &CString,
) -> io::Result<()> {
    let (at, into_at) = (at.as_raw_fd(), into.as_raw_fd());
    // SAFETY: descriptors the caller holds and NUL-terminated names; renameat2 only reads them.
    let rc = unsafe {
        libc::renameat2(
            at,
            from.as_ptr(),
            into_at,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) {
        return Err(err);
    }
    // A file system without RENAME_NOREPLACE: a hard link fails if `to` exists (files only; for
    // a directory linkat fails and so does the caller, leaving nothing behind).
    // SAFETY: as above.
    if unsafe { libc::linkat(at, from.as_ptr(), into_at, to.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    unsafe { libc::unlinkat(at, from.as_ptr(), 0) };
    Ok(())
}
