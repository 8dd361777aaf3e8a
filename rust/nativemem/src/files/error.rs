//! The file layer's one error type: each message names the path and says what to do next.

use std::io;
use std::path::{Path, PathBuf};

/// Errors of the file layer. Each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path or its directory cannot be used; the message names it and says why.
    #[error("{0}")]
    BadPath(String),
    #[error(
        "{path} already exists; {noun}s never overwrite a file: choose a new name or delete it"
    )]
    Exists { path: PathBuf, noun: String },
    #[error("cannot write the {noun} {path}: {source}")]
    Write {
        path: PathBuf,
        noun: String,
        #[source]
        source: io::Error,
    },
    /// A step on a directory handle failed: "cannot list /vol/x: Permission denied".
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FileError {
    pub fn io(what: &str, path: &Path, source: io::Error) -> FileError {
        FileError::Io {
            what: what.to_owned(),
            path: path.to_owned(),
            source,
        }
    }
}
