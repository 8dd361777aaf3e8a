//! Files written for the user: complete or absent, private, never silently replaced, and never
//! in a directory where another user could swap them (SECURITY.md).

use super::ProfileError;
use crate::checked_files::unsafe_to_write_in;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Writes `contents` to `path` with mode 0600: first to a temporary name in the same directory,
/// then linked into place, which fails (and leaves nothing behind) if `path` already exists.
pub fn write_new(path: &Path, contents: &[u8]) -> Result<(), ProfileError> {
    let error = |source| ProfileError::Write {
        path: path.to_owned(),
        source,
    };
    if path.symlink_metadata().is_ok() {
        return Err(ProfileError::Exists {
            path: path.to_owned(),
        });
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(meta) = dir.metadata() {
        if let Some(reason) = unsafe_to_write_in(dir, meta.uid(), meta.mode()) {
            return Err(ProfileError::UnsafeDirectory(reason));
        }
    }
    let name = path.file_name().ok_or_else(|| {
        error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}-{nanos}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::hard_link(&temp, path)
    })();
    let _ = std::fs::remove_file(&temp);
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ProfileError::Exists {
            path: path.to_owned(),
        }),
        Err(e) => Err(error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn writes_private_files_and_refuses_to_overwrite() {
        let dir = std::env::temp_dir().join(format!("nativemem-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("report.svg");
        write_new(&path, b"one").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let err = write_new(&path, b"two").unwrap_err();
        assert!(matches!(err, ProfileError::Exists { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        assert!(write_new(&dir.join("missing/x.svg"), b"x").is_err());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = write_new(&dir.join("open.svg"), b"x").unwrap_err();
        assert!(err.to_string().contains("not sticky"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
