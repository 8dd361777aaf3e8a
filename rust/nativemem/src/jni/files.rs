//! Exports behind `dev.nativemem.internal.DirectoryHandle`: a directory descriptor the Java side
//! holds as a `long` and closes once; every other call works relative to it (`crate::files`).

use super::exports::{from_java, to_java};
use super::BridgeError;
use crate::files::dir::{Dir, Stat};
use crate::files::walk::{self, Missing};
use crate::files::{listing, read_capped_at, space, tree, FileError};
use jni::objects::{JByteArray, JLongArray, JString};
use jni::sys::{jboolean, jbyteArray, jlong, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;
use std::ffi::CString;
use std::io;
use std::mem::ManuallyDrop;
use std::path::PathBuf;

/// The directory of a descriptor the Java side holds open for the length of the call.
fn held(fd: jlong) -> Result<ManuallyDrop<Dir>, BridgeError> {
    if !(0..=i32::MAX as jlong).contains(&fd) {
        return Err(BridgeError::InvalidArgument(format!(
            "{fd} is not an open directory handle"
        )));
    }
    // SAFETY: DirectoryHandle passes its descriptor only while it is open, and closes it only
    // once no call is using it.
    Ok(unsafe { Dir::borrow_raw(fd as i32) })
}

/// An entry name: one path component, not `.` or `..`.
fn name_of(env: &mut JNIEnv, name: &JString) -> Result<CString, BridgeError> {
    let text = from_java(env, name, "name")?;
    if text.is_empty() || text == "." || text == ".." || text.contains('/') {
        return Err(BridgeError::InvalidArgument(format!(
            "{text:?} is not an entry name (one path component)"
        )));
    }
    CString::new(text).map_err(|_| BridgeError::InvalidArgument("a name with a NUL byte".into()))
}

fn io_err(what: &str, dir: &Dir, name: Option<&CString>, e: io::Error) -> BridgeError {
    let path = match name {
        Some(n) => dir.shown.join(n.to_string_lossy().as_ref()),
        None => dir.shown.clone(),
    };
    FileError::io(what, &path, e).into()
}

export! {
    fn dirOpen(env, path: JString<'l>, create: jboolean) -> jlong {
        let path = PathBuf::from(from_java(env, &path, "path")?);
        let missing = if create != 0 {
            Missing::Create
        } else {
            Missing::Fail
        };
        Ok(walk::open_dir(&path, missing)?.dir.into_raw() as jlong)
    }
}

export! {
    fn dirClose(_, fd: jlong) {
        let dir = held(fd)?;
        drop(ManuallyDrop::into_inner(dir));
        Ok(())
    }
}

export! {
    /// `out`: uid, mode, device, inode of the directory itself.
    fn dirStat(env, fd: jlong, out: JLongArray<'l>) {
        let dir = held(fd)?;
        let st: Stat = dir.stat().map_err(|e| io_err("stat", &dir, None, e))?;
        let values = [st.uid as i64, st.mode as i64, st.dev as i64, st.ino as i64];
        env.set_long_array_region(&out, 0, &values)?;
        Ok(())
    }
}

export! {
    fn dirHas(env, fd: jlong, name: JString<'l>) -> jboolean {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        Ok(if dir.has(&name) { JNI_TRUE } else { JNI_FALSE })
    }
}

export! {
    fn dirMakePrivate(env, fd: jlong, name: JString<'l>) -> jlong {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        let child = dir
            .make_private_child(&name)
            .map_err(|e| io_err("make the private directory", &dir, Some(&name), e))?;
        Ok(child.into_raw() as jlong)
    }
}

export! {
    fn dirOpenChild(env, fd: jlong, name: JString<'l>) -> jlong {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        let child = dir.open_child(&name).map_err(|e| {
            let e = match e.raw_os_error() {
                Some(libc::ELOOP) => io::Error::other("it is a symbolic link"),
                Some(libc::ENOTDIR) => io::Error::other("it is not a directory"),
                _ => e,
            };
            io_err("open the directory", &dir, Some(&name), e)
        })?;
        Ok(child.into_raw() as jlong)
    }
}

export! {
    /// False, writing nothing, when `name` exists.
    fn dirWriteNew(env, fd: jlong, name: JString<'l>, contents: JByteArray<'l>) -> jboolean {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        if contents.is_null() {
            return Err(BridgeError::InvalidArgument(
                "contents must not be null".into(),
            ));
        }
        let bytes = env.convert_byte_array(&contents)?;
        match dir.write_new(&name, &bytes) {
            Ok(()) => Ok(JNI_TRUE),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(JNI_FALSE),
            Err(e) => Err(io_err("write", &dir, Some(&name), e)),
        }
    }
}

export! {
    /// False, renaming nothing, when `to` exists in `into`.
    fn dirRename(env, fd: jlong, from: JString<'l>, into: jlong, to: JString<'l>) -> jboolean {
        let (dir, from) = (held(fd)?, name_of(env, &from)?);
        let (into, to) = (held(into)?, name_of(env, &to)?);
        match dir.rename_no_replace(&from, &into, &to) {
            Ok(()) => Ok(JNI_TRUE),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(JNI_FALSE),
            Err(e) => Err(io_err("rename", &dir, Some(&from), e)),
        }
    }
}

export! {
    fn dirListJson(env, fd: jlong) -> jstring {
        let dir = held(fd)?;
        let entries = listing::entries(&dir).map_err(|e| io_err("list", &dir, None, e))?;
        to_java(env, &serde_json::to_string(&entries)?)
    }
}

export! {
    /// Whether all of `name` went (entries of other users stay, and the directories above them).
    fn dirRemoveTree(env, fd: jlong, name: JString<'l>) -> jboolean {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        let all =
            tree::remove_ours(&dir, &name).map_err(|e| io_err("remove", &dir, Some(&name), e))?;
        Ok(if all { JNI_TRUE } else { JNI_FALSE })
    }
}

export! {
    fn dirTreeBytes(env, fd: jlong, name: JString<'l>) -> jlong {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        let bytes =
            tree::bytes_of(&dir, &name).map_err(|e| io_err("measure", &dir, Some(&name), e))?;
        Ok(bytes.min(i64::MAX as u64) as jlong)
    }
}

export! {
    /// `out`: free bytes (for an unprivileged writer) and total bytes of the file system.
    fn dirSpace(env, fd: jlong, out: JLongArray<'l>) {
        let dir = held(fd)?;
        let s = space::space(&dir).map_err(|e| io_err("read the free space of", &dir, None, e))?;
        let values = [
            s.free_bytes.min(i64::MAX as u64) as i64,
            s.total_bytes.min(i64::MAX as u64) as i64,
        ];
        env.set_long_array_region(&out, 0, &values)?;
        Ok(())
    }
}

export! {
    /// The bytes of the regular file `name`, at most `max_bytes`; null when there is no such entry.
    /// A link, FIFO, device or directory, or a larger file, is an `IllegalArgumentException` naming
    /// the file and what it is.
    fn dirReadRegular(env, fd: jlong, name: JString<'l>, max_bytes: jlong) -> jbyteArray {
        let (dir, name) = (held(fd)?, name_of(env, &name)?);
        let cap = max_bytes.max(0) as u64;
        match read_capped_at(&dir, &name, cap) {
            Ok(bytes) => Ok(env.byte_array_from_slice(&bytes)?.into_raw()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(std::ptr::null_mut()),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                Err(FileError::BadPath(format!("{} {e}", name.to_string_lossy())).into())
            }
            Err(e) => Err(io_err("read", &dir, Some(&name), e)),
        }
    }
}
