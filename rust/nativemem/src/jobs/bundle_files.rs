//! The files of an incident bundle read at once, for its page and its verdict: the bundle's
//! directory opened once (walked without following another user's link), checked to be this
//! user's and writable by no one else (who could swap its files), then each file asked for read
//! through that descriptor as a regular file (no link, FIFO or device) of at most its cap.

use crate::files::dir::{entry_name, my_uid, Dir};
use crate::files::walk::{open_dir, Missing};
use crate::files::{read_capped_at, FileError};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// At most this many files in one request.
pub const MAX_FILES: usize = 64;

/// `bundle_files`: the bundle's directory and the files wanted, each with its cap in bytes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleFilesRequest {
    pub path: PathBuf,
    pub files: Vec<Wanted>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wanted {
    pub name: String,
    pub max_bytes: u64,
}

/// The bundle's owner and mode, and, when it is this user's alone, each file asked for.
#[derive(Debug, Serialize)]
pub struct BundleFiles {
    pub uid: u32,
    pub mode: u32,
    pub private: bool,
    pub files: Vec<Read>,
}

/// One file: its text, or why not (absent: neither).
#[derive(Debug, Serialize)]
pub struct Read {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<Problem>,
}

/// Why a file present was not read.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Problem {
    Link,
    TooLarge,
    NotRegular(String),
    /// Not UTF-8 text: where its first invalid byte is.
    NotUtf8(String),
    Unreadable(String),
}

pub fn read(request: &BundleFilesRequest) -> Result<BundleFiles, FileError> {
    if request.files.len() > MAX_FILES {
        return Err(FileError::BadPath(format!(
            "at most {MAX_FILES} files of a bundle at once, {} asked",
            request.files.len()
        )));
    }
    let dir = open_dir(&request.path, Missing::Fail)?.dir;
    let st = dir
        .stat()
        .map_err(|e| FileError::io("stat", &dir.shown, e))?;
    let private = st.uid == my_uid() && st.mode & 0o022 == 0;
    let files = if private {
        request
            .files
            .iter()
            .map(|w| one(&dir, w))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    Ok(BundleFiles {
        uid: st.uid,
        mode: st.mode & 0o7777,
        private,
        files,
    })
}

fn one(dir: &Dir, wanted: &Wanted) -> Result<Read, FileError> {
    let name = &wanted.name;
    let entry = entry_name(name)?;
    let (text, problem) = match read_capped_at(dir, &entry, wanted.max_bytes) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => (Some(text), None),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                (
                    None,
                    Some(Problem::NotUtf8(format!("invalid UTF-8 at byte {at}"))),
                )
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, None),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            let why = e.to_string();
            let problem = if why.contains("symbolic link") {
                Problem::Link
            } else if why.contains("more than the") {
                Problem::TooLarge
            } else {
                Problem::NotRegular(why)
            };
            (None, Some(problem))
        }
        Err(e) => (None, Some(Problem::Unreadable(e.to_string()))),
    };
    Ok(Read {
        name: name.clone(),
        text,
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_files_at_once_are_refused_before_the_directory_is_opened() {
        let files = (0..=MAX_FILES)
            .map(|i| Wanted {
                name: format!("f{i}"),
                max_bytes: 1,
            })
            .collect();
        let request = BundleFilesRequest {
            path: PathBuf::from("/nonexistent-bundle"),
            files,
        };
        let message = read(&request).unwrap_err().to_string();
        assert!(message.contains("at most 64 files"), "{message}");
    }
}
