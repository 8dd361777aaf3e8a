//! Steps on a directory descriptor a job answered (the watch directory, a bundle): a file
//! replaced atomically, a tree of ours removed, a child directory of ours opened, the descriptor
//! closed. Names are one path component; nothing follows a link.

use crate::files::dir::{entry_name, my_uid, Dir};
use crate::files::tree::remove_ours;
use crate::files::FileError;
use serde::Deserialize;
use std::mem::ManuallyDrop;

/// `directory_replace`: the file `name` written anew or over its old self.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaceRequest {
    pub directory: i64,
    pub name: String,
    pub text: String,
}

pub fn replace(request: &ReplaceRequest) -> Result<(), FileError> {
    let dir = Dir::held(request.directory)?;
    let name = entry_name(&request.name)?;
    dir.replace(&name, request.text.as_bytes())
        .map_err(|e| FileError::io("write", &dir.shown.join(&request.name), e))
}

/// `directory_remove` (`name` and all of ours below it) and `directory_open` (the directory
/// `name`, opened without following a link, checked to be ours).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameRequest {
    pub directory: i64,
    pub name: String,
}

/// Whether all of it went (entries of other users stay, and the directories above them).
pub fn remove(request: &NameRequest) -> Result<bool, FileError> {
    let dir = Dir::held(request.directory)?;
    remove_ours(&dir, &entry_name(&request.name)?)
        .map_err(|e| FileError::io("remove", &dir.shown.join(&request.name), e))
}

/// The directory's descriptor, the caller's to close.
pub fn open(request: &NameRequest) -> Result<i64, FileError> {
    let dir = Dir::held(request.directory)?;
    let path = dir.shown.join(&request.name);
    let child = dir
        .open_child(&entry_name(&request.name)?)
        .map_err(|e| FileError::io("open", &path, e))?;
    let st = child.stat().map_err(|e| FileError::io("stat", &path, e))?;
    if st.uid != my_uid() {
        return Err(FileError::BadPath(format!(
            "{} belongs to uid {}, not to this process",
            path.display(),
            st.uid
        )));
    }
    Ok(child.into_raw() as i64)
}

/// `directory_close`: a descriptor a job answered, closed once by its holder.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloseRequest {
    pub directory: i64,
}

pub fn close(request: &CloseRequest) -> Result<(), FileError> {
    drop(ManuallyDrop::into_inner(Dir::held(request.directory)?));
    Ok(())
}
