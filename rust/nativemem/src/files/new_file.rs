//! Files nativemem creates for the user: heap profiles, their sidecars, profile outputs, the
//! agent's handle report. One set of rules (SECURITY.md), kept here only:
//!
//! - the target directory is opened once (`walk`: component by component, no link of another
//!   user followed) and checked on its descriptor: ours or root's, writable by others only if
//!   sticky (as `/tmp`), and no directory above it lets another user swap it (unless it was
//!   reached from a directory handle of this process, `/proc/self/fd/<n>/...`);
//! - everything is then done relative to that descriptor, so a link swapped in after the checks
//!   redirects nothing; files are created `O_EXCL|O_NOFOLLOW`, mode 0600, under a temporary name;
//! - finished files are renamed into place with `RENAME_NOREPLACE` (or linked where a file system
//!   lacks it): an existing name is never replaced, and a failed write leaves nothing behind.

use super::dir::Dir;
use super::error::FileError;
use super::walk::{self, Missing};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What a file is, for messages: "the heap profile path is empty; pass a file name such as
/// /tmp/app.heap".
#[derive(Debug, Clone, Copy)]
pub struct Purpose<'a> {
    /// Singular, as in "the heap profile".
    pub noun: &'a str,
    /// A file name to suggest, as in "app.heap".
    pub example: &'a str,
}

/// Writes `contents` to the new file `target` (mode 0600): under a temporary name in the same
/// directory, then renamed into place, which fails with [`FileError::Exists`] (leaving nothing
/// behind) if `target` exists.
pub fn write_new(target: &Path, contents: &[u8], purpose: Purpose) -> Result<(), FileError> {
    let (dir, name) = Dir::for_new_file(target, purpose)?;
    dir.write_new(&name, contents).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => FileError::Exists {
            path: target.to_owned(),
            noun: purpose.noun.to_owned(),
        },
        _ => FileError::Write {
            path: target.to_owned(),
            noun: purpose.noun.to_owned(),
            source: e,
        },
    })
}

impl Dir {
    /// Opens the directory a new file `target` goes into, after checking that `target` is a
    /// usable name, that the directory is writable by us and that no other user can swap
    /// entries in it. Returns the directory and the file name.
    pub fn for_new_file(target: &Path, purpose: Purpose) -> Result<(Dir, CString), FileError> {
        let bad = |what: String| Err(FileError::BadPath(what));
        if target.as_os_str().is_empty() {
            return bad(format!(
                "the {} path is empty; pass a file name such as /tmp/{}",
                purpose.noun, purpose.example
            ));
        }
        if target.is_dir() {
            return bad(format!(
                "{} is a directory; pass the path of a new file inside it, e.g. {}/{}",
                target.display(),
                target.display(),
                purpose.example
            ));
        }
        let Some(name) = target.file_name() else {
            return bad(format!(
                "{} does not end in a file name; pass e.g. /tmp/{}",
                target.display(),
                purpose.example
            ));
        };
        let shown = parent_of(target);
        let walked = match walk::open_dir(&shown, Missing::Fail) {
            Ok(walked) => walked,
            Err(FileError::Io { source: err, .. }) => {
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
                })
            }
            Err(refused) => return Err(refused),
        };
        let dir = walked.dir;
        dir.check_shared_safely(target, purpose, walked.anchored)?;
        let name = cstr(Path::new(name))?;
        if dir.has(&name) {
            return Err(FileError::Exists {
                path: target.to_owned(),
                noun: purpose.noun.to_owned(),
            });
        }
        Ok((dir, name))
    }

    /// Refuses a directory in which another user could rename, replace or delete our files, or
    /// that another user could swap for one of theirs (through a directory above it).
    fn check_shared_safely(
        &self,
        target: &Path,
        purpose: Purpose,
        anchored: bool,
    ) -> Result<(), FileError> {
        let st = self
            .stat()
            .map_err(|e| FileError::io("open", &self.shown, e))?;
        let fix = |problem: String| {
            FileError::BadPath(format!(
                "{problem}; write the {} into a directory only you can write, or a sticky one \
                 such as /tmp",
                purpose.noun
            ))
        };
        if let Some(problem) = unsafe_to_write_in(&self.shown, st.uid, st.mode) {
            return Err(fix(problem));
        }
        if anchored {
            // A descriptor this process holds (a checked directory handle): nothing above it is
            // looked up again, so nothing above it can redirect what is written.
            return self.check_writable(target);
        }
        // Where the descriptor really is, as the kernel says; each directory above it is checked.
        let fd_link = format!("/proc/self/fd/{}", self.fd().as_raw_fd());
        let real =
            std::fs::read_link(fd_link).map_err(|e| FileError::io("open", &self.shown, e))?;
        for above in real.ancestors().skip(1) {
            let meta = above
                .symlink_metadata()
                .map_err(|e| FileError::io("open", above, e))?;
            if let Some(problem) = unsafe_to_write_in(above, meta.uid(), meta.mode()) {
                return Err(fix(format!(
                    "{problem}, or swap {} for a directory of theirs",
                    real.display()
                )));
            }
        }
        self.check_writable(target)
    }

    fn check_writable(&self, target: &Path) -> Result<(), FileError> {
        // SAFETY: a descriptor we own and a NUL-terminated ".".
        if unsafe {
            libc::faccessat(
                self.fd().as_raw_fd(),
                c".".as_ptr(),
                libc::W_OK | libc::X_OK,
                0,
            )
        } != 0
        {
            return Err(FileError::BadPath(format!(
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
}

/// The directory a relative or absolute file path lives in.
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates `path`, which must not exist, readable and writable by the owner only.
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

fn cstr(path: &Path) -> Result<CString, FileError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| FileError::BadPath(format!("{} contains a NUL byte", path.display())))
}

/// Why no file should be written in a directory with this owner and mode, if so: another user
/// could rename, replace or delete what we put there. A directory of ours or root's is safe unless
/// others may write it without the sticky bit (as `/tmp` has).
fn unsafe_to_write_in(dir: &Path, owner: u32, mode: u32) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if owner != me && owner != 0 {
        return Some(format!(
            "the directory {} belongs to uid {owner} (not this process's uid {me}), who could \
             replace or delete what is written there",
            dir.display()
        ));
    }
    if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
        return Some(format!(
            "the directory {} is writable by other users and not sticky (mode {:o}), so anyone \
             could replace what is written there",
            dir.display(),
            mode & 0o7777
        ));
    }
    None
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

    const HEAP: Purpose = Purpose {
        noun: "heap profile",
        example: "app.heap",
    };

    fn message(target: &Path) -> String {
        match Dir::for_new_file(target, HEAP) {
            Err(e @ (FileError::BadPath(_) | FileError::Exists { .. })) => e.to_string(),
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
        assert_eq!(
            message(Path::new("")),
            "the heap profile path is empty; pass a file name such as /tmp/app.heap"
        );
        assert!(Dir::for_new_file(&dir.join("new.heap"), HEAP).is_ok());
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
        assert!(Dir::for_new_file(&dir.join("a.heap"), HEAP).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rename_never_replaces_and_private_children_are_0700() {
        let base = scratch("rename");
        let (dir, name) = Dir::for_new_file(&base.join("b"), HEAP).unwrap();
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
        crate::files::remove_tree(&dir, &work_name);
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
        let (dir, name) = Dir::for_new_file(&dir_path.join("x.heap"), HEAP).unwrap();
        let (work, work_name) = dir.private_child("x.heap").unwrap();
        std::fs::rename(&dir_path, base.join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dir_path).unwrap();
        create_private(&work.anchored("heap")).unwrap();
        work.rename_no_replace(&CString::new("heap").unwrap(), &dir, &name)
            .unwrap();
        crate::files::remove_tree(&dir, &work_name);
        assert!(base.join("moved/x.heap").is_file());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn writes_private_files_and_refuses_to_overwrite() {
        let dir = scratch("write");
        let path = dir.join("report.svg");
        write_new(&path, b"one", HEAP).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let err = write_new(&path, b"two", HEAP).unwrap_err();
        assert!(matches!(err, FileError::Exists { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        assert!(write_new(&dir.join("missing/x.svg"), b"x", HEAP).is_err());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = write_new(&dir.join("open.svg"), b"x", HEAP).unwrap_err();
        assert!(err.to_string().contains("not sticky"), "{err}");
        assert!(
            err.to_string()
                .contains("write the heap profile into a directory only you can write"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A private directory inside one that others may write without the sticky bit could be
    /// renamed away and replaced by theirs: refused, naming the directory above.
    #[test]
    fn a_directory_others_could_swap_is_refused() {
        let base = scratch("above");
        let inner = base.join("inner");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = message(&inner.join("x.heap"));
        assert!(
            refused.contains(&format!("{} is writable by other users", base.display())),
            "{refused}"
        );
        assert!(refused.contains("swap"), "{refused}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(Dir::for_new_file(&inner.join("x.heap"), HEAP).is_ok());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
