//! An incident bundle begun and published on the watch directory's descriptor: a fresh 0700
//! directory under a temporary name no one can guess ahead, then renamed to its final name with
//! `RENAME_NOREPLACE`. Its parts and manifest are written in between through the bundle's own
//! descriptor ([`super::directory`], and `/proc/self/fd/<n>/<part>` for the memory watch's writers).

use crate::files::dir::{entry_name, Dir};
use crate::files::FileError;
use serde::{Deserialize, Serialize};
use std::io;

/// `incident_bundle_begin`: a bundle `name` to begin in the watch directory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeginRequest {
    pub directory: i64,
    pub name: String,
}

/// A bundle begun: its temporary directory's descriptor (the caller's to close) and name; both
/// absent when `name` is taken already (the caller waits for another name).
#[derive(Debug, Serialize)]
pub struct Begun {
    pub bundle: Option<i64>,
    pub temporary: Option<String>,
}

pub fn begin(request: &BeginRequest) -> Result<Begun, FileError> {
    let dir = Dir::held(request.directory)?;
    if dir.has(&entry_name(&request.name)?) {
        return Ok(Begun {
            bundle: None,
            temporary: None,
        });
    }
    let temporary = format!(".{}.tmp-{:x}", request.name, random() & i64::MAX as u64);
    let made = dir
        .make_private_child(&entry_name(&temporary)?)
        .map_err(|e| FileError::io("make the bundle directory", &dir.shown.join(&temporary), e))?;
    Ok(Begun {
        bundle: Some(made.into_raw() as i64),
        temporary: Some(temporary),
    })
}

/// `incident_bundle_publish`: the temporary directory renamed to the bundle's final name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    pub directory: i64,
    pub temporary: String,
    pub name: String,
}

/// False, renaming nothing, when `name` exists.
pub fn publish(request: &PublishRequest) -> Result<bool, FileError> {
    let dir = Dir::held(request.directory)?;
    let (from, to) = (entry_name(&request.temporary)?, entry_name(&request.name)?);
    match dir.rename_no_replace(&from, &dir, &to) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(FileError::io("publish", &dir.shown.join(&request.name), e)),
    }
}

/// 64 bits from the kernel's random source, for a temporary name no one can guess ahead.
fn random() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: a buffer of 8 bytes we own; getrandom writes at most that many.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        // No random source (a seccomp filter): the time and pid make a name unique in practice;
        // mkdirat refuses an existing one, and the directory is ours alone.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return nanos ^ (u64::from(std::process::id()) << 32);
    }
    u64::from_ne_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::super::directory::{close, open, remove, replace};
    use super::super::directory::{CloseRequest, NameRequest, ReplaceRequest};
    use super::*;
    use crate::files::walk::{open_dir, Missing};
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_bundle_is_begun_replaced_published_and_removed_on_its_descriptors() {
        let root = std::env::temp_dir().join(format!("nativemem-bundle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        let dir = open_dir(&root, Missing::Fail).unwrap().dir;
        let directory = dir.fd_number();
        let name = "nativemem-incident-1-20261207T000000Z-limit".to_owned();
        let begun = begin(&BeginRequest {
            directory,
            name: name.clone(),
        })
        .unwrap();
        let (bundle, temporary) = (begun.bundle.unwrap(), begun.temporary.unwrap());
        let mode = fs::metadata(root.join(&temporary))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        for text in ["first", "second"] {
            let manifest = ReplaceRequest {
                directory: bundle,
                name: "manifest.json".into(),
                text: text.into(),
            };
            replace(&manifest).unwrap();
            let read = fs::read_to_string(root.join(&temporary).join("manifest.json")).unwrap();
            assert_eq!(read, text);
        }
        let publish_it = PublishRequest {
            directory,
            temporary: temporary.clone(),
            name: name.clone(),
        };
        assert!(publish(&publish_it).unwrap());
        let entries: Vec<_> = fs::read_dir(root.join(&name)).unwrap().collect();
        assert_eq!(
            entries.len(),
            1,
            "no temporary file left beside the manifest"
        );
        let taken = begin(&BeginRequest {
            directory,
            name: name.clone(),
        })
        .unwrap();
        assert!(taken.bundle.is_none() && taken.temporary.is_none());
        let opened = open(&NameRequest {
            directory,
            name: name.clone(),
        })
        .unwrap();
        close(&CloseRequest { directory: opened }).unwrap();
        close(&CloseRequest { directory: bundle }).unwrap();
        assert!(remove(&NameRequest { directory, name }).unwrap());
        assert_eq!(fs::read_dir(&root).unwrap().count(), 0);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn publishing_over_a_taken_name_renames_nothing() {
        let root = std::env::temp_dir().join(format!("nativemem-taken-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join(".temporary")).unwrap();
        fs::create_dir_all(root.join("taken")).unwrap();
        let dir = open_dir(&root, Missing::Fail).unwrap().dir;
        let publish_it = PublishRequest {
            directory: dir.fd_number(),
            temporary: ".temporary".into(),
            name: "taken".into(),
        };
        assert!(!publish(&publish_it).unwrap());
        assert!(
            root.join(".temporary").is_dir(),
            "the temporary directory stays"
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn opening_a_directory_of_another_user_is_refused() {
        if crate::files::dir::my_uid() != 0 {
            return; // only root can make a directory another user owns
        }
        let root = std::env::temp_dir().join(format!("nativemem-theirs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("theirs")).unwrap();
        std::os::unix::fs::chown(root.join("theirs"), Some(9999), None).unwrap();
        let dir = open_dir(&root, Missing::Fail).unwrap().dir;
        let refused = open(&NameRequest {
            directory: dir.fd_number(),
            name: "theirs".into(),
        });
        let message = refused.err().unwrap().to_string();
        assert!(message.contains("belongs to uid 9999"), "{message}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn names_that_leave_the_directory_are_refused() {
        for name in ["..", "a/b", "", "."] {
            let e = remove(&NameRequest {
                directory: 0,
                name: name.into(),
            });
            assert!(matches!(e, Err(FileError::BadPath(_))), "{name:?}");
        }
    }
}
