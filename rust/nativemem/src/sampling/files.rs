//! Files written for the user, safe in a directory other users share.
//!
//! The target directory is opened once and checked on its descriptor: no other user may be able
//! to replace entries in it (owned by us or root; writable by others only if sticky, as `/tmp`).
//! Everything is first written into a private 0700 directory made inside it and reached only
//! through its descriptor (`/proc/self/fd/<n>`), so even jemalloc, which opens the dump by name,
//! cannot be redirected by a link swapped in; finished files are renamed into place relative to
//! the descriptors with `RENAME_NOREPLACE`, never replacing anything.

use super::SamplingError;
use crate::checked_files::unsafe_to_write_in;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory opened once; names are resolved relative to its descriptor.
pub(super) struct Dir {
    fd: OwnedFd,
    /// As the user named it, for messages.
    pub shown: PathBuf,
}

impl Dir {
    /// Opens the directory a new file `target` goes into, after checking that `target` is a
    /// usable name, that the directory is writable by us and that no other user can swap
    /// entries in it. Returns the directory and the file name.
    pub fn for_new_file(target: &Path) -> Result<(Dir, CString), SamplingError> {
        let bad = |what: String| Err(SamplingError::BadPath(what));
        if target.as_os_str().is_empty() {
            return bad(
                "the heap profile path is empty; pass a file name such as /tmp/app.heap".into(),
            );
        }
        if target.is_dir() {
            return bad(format!(
                "{} is a directory; pass the path of a new file inside it, e.g. {}/app.heap",
                target.display(),
                target.display()
            ));
        }
        let Some(name) = target.file_name() else {
            return bad(format!(
                "{} does not end in a file name; pass e.g. /tmp/app.heap",
                target.display()
            ));
        };
        let shown = parent_of(target);
        let c_dir = cstr(&shown)?;
        // SAFETY: a NUL-terminated path; the descriptor returned is owned below.
        let fd = unsafe {
            libc::open(
                c_dir.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            let err = io::Error::last_os_error();
            return bad(if err.kind() == io::ErrorKind::NotFound {
                format!(
                    "the directory {} of {} does not exist; create it first",
                    shown.display(),
                    target.display()
                )
            } else {
                format!(
                    "the directory {} of {} cannot be opened ({err}); choose another directory",
                    shown.display(),
                    target.display()
                )
            });
        }
        // SAFETY: fd was just opened and is owned by nobody else.
        let dir = Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            shown,
        };
        dir.check_shared_safely(target)?;
        let name = cstr(Path::new(name))?;
        if dir.has(&name) {
            return bad(format!(
                "{} already exists; heap profiles never overwrite a file: choose a new name or \
                 delete it",
                target.display()
            ));
        }
        Ok((dir, name))
    }

    /// Refuses a directory in which another user could rename, replace or delete our files.
    fn check_shared_safely(&self, target: &Path) -> Result<(), SamplingError> {
        let st = self.stat()?;
        if let Some(reason) = unsafe_to_write_in(&self.shown, st.st_uid, st.st_mode) {
            return Err(SamplingError::BadPath(reason));
        }
        // SAFETY: a descriptor we own and a NUL-terminated ".".
        if unsafe {
            libc::faccessat(
                self.fd.as_raw_fd(),
                c".".as_ptr(),
                libc::W_OK | libc::X_OK,
                0,
            )
        } != 0
        {
            return Err(SamplingError::BadPath(format!(
                "the directory {} is not writable by this process (uid {}); choose another \
                 directory for {}",
                self.shown.display(),
                // SAFETY: geteuid has no preconditions.
                unsafe { libc::geteuid() },
                target.display()
            )));
        }
        Ok(())
    }

    fn stat(&self) -> Result<libc::stat, SamplingError> {
        // SAFETY: an all-zero stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a descriptor we own and a pointer to a stat.
        if unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(self.io_error(io::Error::last_os_error()));
        }
        Ok(st)
    }

    /// Whether `name` exists (as anything, a dangling link included).
    pub fn has(&self, name: &CString) -> bool {
        // SAFETY: as in `stat`.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a descriptor we own, a NUL-terminated name and a stat out-parameter.
        unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
        }
    }

    /// Makes a fresh 0700 directory inside this one and opens it; the caller removes it.
    pub fn private_child(&self, hint: &str) -> Result<(Dir, CString), SamplingError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = CString::new(format!(".{hint}.{}-{n}.tmp", std::process::id()))
            .map_err(|_| SamplingError::BadPath(format!("{hint} contains a NUL byte")))?;
        let at = self.fd.as_raw_fd();
        // SAFETY: a descriptor we own and a NUL-terminated name.
        if unsafe { libc::mkdirat(at, name.as_ptr(), 0o700) } != 0 {
            return Err(self.io_error(io::Error::last_os_error()));
        }
        // SAFETY: as above; O_NOFOLLOW: what we just made, not a link put in its place.
        let fd = unsafe {
            libc::openat(
                at,
                name.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(self.io_error(io::Error::last_os_error()));
        }
        let child = Dir {
            // SAFETY: fd was just opened and is owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            shown: self.shown.join(name.to_string_lossy().as_ref()),
        };
        Ok((child, name))
    }

    /// A path that reaches `name` through this directory's descriptor, for code that takes a
    /// path (jemalloc's `prof.dump`, std's file functions): no name above it is looked up again.
    pub fn anchored(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).join(name)
    }

    /// Renames `from` in this directory to `to` in `into`, failing rather than replacing `to`.
    pub fn rename_no_replace(&self, from: &CString, into: &Dir, to: &CString) -> io::Result<()> {
        let (at, into_at) = (self.fd.as_raw_fd(), into.fd.as_raw_fd());
        // SAFETY: descriptors we own and NUL-terminated names; renameat2 only reads them.
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
        // A file system without RENAME_NOREPLACE: a hard link fails if `to` exists (files only;
        // for a directory linkat fails and so does the dump, leaving nothing behind).
        // SAFETY: as above.
        if unsafe { libc::linkat(at, from.as_ptr(), into_at, to.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        unsafe { libc::unlinkat(at, from.as_ptr(), 0) };
        Ok(())
    }

    /// Removes `name` and everything below it, without following links (std's remove_dir_all).
    pub fn remove_tree(&self, name: &CString) {
        let path = self.anchored(&name.to_string_lossy());
        if std::fs::remove_dir_all(&path).is_err() {
            let _ = std::fs::remove_file(&path);
        }
    }

    fn io_error(&self, source: io::Error) -> SamplingError {
        SamplingError::Write {
            path: self.shown.clone(),
            source,
        }
    }
}

/// The directory a relative or absolute file path lives in.
pub(super) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates `path`, which must not exist, readable and writable by the owner only.
pub(super) fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

fn cstr(path: &Path) -> Result<CString, SamplingError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SamplingError::BadPath(format!("{} contains a NUL byte", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nativemem-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn message(target: &Path) -> String {
        match Dir::for_new_file(target) {
            Err(SamplingError::BadPath(m)) => m,
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("{} accepted", target.display()),
        }
    }

    #[test]
    fn targets_are_checked_with_the_path_in_the_message() {
        let dir = scratch("check");
        assert!(message(&dir).contains("is a directory"));
        let missing = dir.join("nope/x.heap");
        assert!(message(&missing).contains("does not exist") && message(&missing).contains("nope"));
        let existing = dir.join("x.heap");
        std::fs::write(&existing, b"x").unwrap();
        assert!(message(&existing).contains("already exists"));
        std::os::unix::fs::symlink("/nonexistent", dir.join("dangling.heap")).unwrap();
        assert!(message(&dir.join("dangling.heap")).contains("already exists"));
        assert!(message(Path::new("")).contains("is empty"));
        assert!(Dir::for_new_file(&dir.join("new.heap")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn world_writable_directories_must_be_sticky() {
        let dir = scratch("sticky");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = message(&dir.join("a.heap"));
        assert!(refused.contains("not sticky (mode 777)"), "{refused}");
        assert!(
            refused.contains("directory only you can write"),
            "{refused}"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(Dir::for_new_file(&dir.join("a.heap")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rename_never_replaces_and_private_children_are_0700() {
        let base = scratch("rename");
        let (dir, name) = Dir::for_new_file(&base.join("b")).unwrap();
        let (work, work_name) = dir.private_child("b").unwrap();
        let mode = std::fs::metadata(base.join(work_name.to_str().unwrap()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(work.anchored("a"), b"a").unwrap();
        std::fs::write(base.join("b"), b"b").unwrap();
        let a = CString::new("a").unwrap();
        let err = work.rename_no_replace(&a, &dir, &name).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(base.join("b")).unwrap(), b"b");
        std::fs::remove_file(base.join("b")).unwrap();
        work.rename_no_replace(&a, &dir, &name).unwrap();
        assert_eq!(std::fs::read(base.join("b")).unwrap(), b"a");
        dir.remove_tree(&work_name);
        assert!(!dir.has(&work_name));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// An attacker who can swap the directory for a link after the checks (as in a world-writable
    /// parent) redirects nothing: every later step goes through the descriptors.
    #[test]
    fn a_directory_swapped_after_the_checks_redirects_nothing() {
        let base = scratch("swap");
        let (dir_path, elsewhere) = (base.join("dir"), base.join("elsewhere"));
        std::fs::create_dir_all(&dir_path).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let (dir, name) = Dir::for_new_file(&dir_path.join("x.heap")).unwrap();
        let (work, work_name) = dir.private_child("x.heap").unwrap();
        std::fs::rename(&dir_path, base.join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dir_path).unwrap();
        create_private(&work.anchored("heap")).unwrap();
        work.rename_no_replace(&CString::new("heap").unwrap(), &dir, &name)
            .unwrap();
        dir.remove_tree(&work_name);
        assert!(base.join("moved/x.heap").is_file());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
