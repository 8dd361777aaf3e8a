//! Files written for the user: checked target, temp name in the same directory, mode 0600,
//! renamed into place without ever replacing an existing file.

use super::SamplingError;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Checks that `target` can be created: absolute or relative, its directory exists and is
/// writable, and nothing is there yet.
pub(super) fn check_target(target: &Path) -> Result<(), SamplingError> {
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
    if target.symlink_metadata().is_ok() {
        return bad(format!(
            "{} already exists; heap profiles never overwrite a file: choose a new name or \
             delete it",
            target.display()
        ));
    }
    let dir = parent_of(target);
    if !dir.is_dir() {
        return bad(format!(
            "the directory {} of {} does not exist; create it first",
            dir.display(),
            target.display()
        ));
    }
    let c_dir = c_path(&dir)?;
    // SAFETY: access only reads the NUL-terminated path.
    if unsafe { libc::access(c_dir.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return bad(format!(
            "the directory {} is not writable by this process (uid {}); choose another \
             directory for {}",
            dir.display(),
            // SAFETY: getuid has no preconditions.
            unsafe { libc::getuid() },
            target.display()
        ));
    }
    Ok(())
}

/// The directory a relative or absolute file path lives in.
pub(super) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A fresh, hidden name next to `target`: `.<name>.<pid>-<n>.tmp`.
pub(super) fn temp_beside(target: &Path, suffix: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    parent_of(target).join(format!(".{name}{suffix}.{}-{n}.tmp", std::process::id()))
}

/// Creates `path`, which must not exist, readable and writable by the owner only.
pub(super) fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Renames `from` to `to`, failing with `AlreadyExists` rather than replacing `to`.
pub(super) fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let (c_from, c_to) = (cstr(from)?, cstr(to)?);
    // SAFETY: both paths are NUL-terminated; renameat2 only reads them.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            c_from.as_ptr(),
            libc::AT_FDCWD,
            c_to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) || from.is_dir() {
        return Err(err);
    }
    // A file system without RENAME_NOREPLACE: a hard link fails if `to` exists.
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn c_path(path: &Path) -> Result<CString, SamplingError> {
    cstr(path)
        .map_err(|_| SamplingError::BadPath(format!("{} contains a NUL byte", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nativemem-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn targets_are_checked_with_the_path_in_the_message() {
        let dir = scratch("check");
        let msg = |p: &Path| match check_target(p) {
            Err(SamplingError::BadPath(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(msg(&dir).contains("is a directory"));
        let missing = dir.join("nope/x.heap");
        assert!(msg(&missing).contains("does not exist") && msg(&missing).contains("nope"));
        let existing = dir.join("x.heap");
        std::fs::write(&existing, b"x").unwrap();
        assert!(msg(&existing).contains("already exists"));
        assert!(check_target(&dir.join("new.heap")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rename_never_replaces() {
        let dir = scratch("rename");
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let err = rename_no_replace(&a, &b).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&b).unwrap(), b"b");
        std::fs::remove_file(&b).unwrap();
        rename_no_replace(&a, &b).unwrap();
        assert!(!a.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
