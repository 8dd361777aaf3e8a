//! The agent jar by a path the target can read. The jar's own path when the target shares this
//! process's mount namespace and user; otherwise a copy in the target's `/tmp`, reached through
//! `/proc/<pid>/root/tmp` (a directory handle opened once): named by its content,
//! `.nativemem-agent-<crc32>-<size>.jar`, created `O_EXCL|O_NOFOLLOW`, mode 0400, given to the
//! target's uid. The target needs that path for as long as it runs (the JVM puts every agent jar
//! on its system class path, and later commands and resource reads go through it), so the copy is
//! kept, and reused by the next attach when it holds exactly our bytes, belongs to the target's
//! uid (or root) and no one else can write it; anything else under that name (planted, changed)
//! is never used: a copy under a fresh random name is made instead. A copy whose load failed is
//! removed.

use super::connect::{create_exclusive, identity, remove_if_same};
use super::target::Target;
use super::AttachError;
use crate::files::checked::{self as checked_files, Links};
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The largest jar copied (the nativemem jar is a few MiB).
const MAX_JAR_BYTES: u64 = 256 << 20;

/// The prefix of copies, so a copy says what it is.
pub const COPY_PREFIX: &str = ".nativemem-agent-";

/// The jar as the target reaches it.
pub struct AgentJar {
    /// The path to put in the `load` request.
    pub path_for_target: String,
    copy: Option<Copy>,
}

struct Copy {
    dir: OwnedFd,
    name: CString,
    identity: (u64, u64),
}

impl AgentJar {
    pub fn for_target(target: &Target, jar: &Path) -> Result<AgentJar, AttachError> {
        let pid = target.pid;
        let real = std::fs::canonicalize(jar)
            .map_err(|e| AttachError::io(pid, format!("cannot resolve {}", jar.display()), e))?;
        // SAFETY: plain getter.
        let me = unsafe { libc::geteuid() };
        if !target.other_mount_namespace && me == target.status.euid {
            let path = real.to_str().ok_or_else(|| {
                AttachError::RequestTooLong(format!("{} is not UTF-8", real.display()))
            })?;
            return Ok(AgentJar {
                path_for_target: path.to_string(),
                copy: None,
            });
        }
        let mut source = checked_files::open_regular(&real, Links::Follow)
            .map_err(|e| AttachError::io(pid, format!("cannot read {}", real.display()), e))?;
        let mut bytes = Vec::new();
        (&mut source)
            .take(MAX_JAR_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| AttachError::io(pid, format!("cannot read {}", real.display()), e))?;
        if bytes.len() as u64 > MAX_JAR_BYTES {
            return Err(AttachError::io(
                pid,
                format!("{} is over {MAX_JAR_BYTES} bytes", real.display()),
                std::io::ErrorKind::InvalidData.into(),
            ));
        }
        let dir = target.tmp()?;
        let named = format!("{COPY_PREFIX}{:08x}-{}.jar", crc32(&bytes), bytes.len());
        let name = CString::new(named).unwrap_or_default();
        if holds_exactly(&dir, &name, &bytes, target.status.euid) {
            return Ok(AgentJar {
                path_for_target: format!("/tmp/{}", name.to_string_lossy()),
                copy: None,
            });
        }
        let name = match create_exclusive(&dir, &name, 0o400) {
            Ok(file) => return write_copy(target, dir, name, file, &bytes, me),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Someone else's file, or one changed since: never used; a name of our own.
                CString::new(format!("{COPY_PREFIX}{}.jar", random_hex()?)).unwrap_or_default()
            }
            Err(e) => {
                return Err(AttachError::io(
                    pid,
                    "cannot create a copy of the agent jar in its /tmp",
                    e,
                ))
            }
        };
        let file = create_exclusive(&dir, &name, 0o400).map_err(|e| {
            AttachError::io(pid, "cannot create a copy of the agent jar in its /tmp", e)
        })?;
        write_copy(target, dir, name, file, &bytes, me)
    }

    /// Whether the target reads a copy made for it by this attach.
    pub fn is_copy(&self) -> bool {
        self.copy.is_some()
    }

    /// The target loaded the jar: it needs the copy for as long as it runs.
    pub fn keep(&mut self) {
        self.copy = None;
    }
}

fn write_copy(
    target: &Target,
    dir: OwnedFd,
    name: CString,
    mut file: std::fs::File,
    bytes: &[u8],
    me: u32,
) -> Result<AgentJar, AttachError> {
    let pid = target.pid;
    let copy = Copy {
        identity: identity(&file).0,
        dir,
        name,
    };
    let shown = format!("/tmp/{}", copy.name.to_string_lossy());
    // From here a failure drops `jar`, which removes the copy.
    let jar = AgentJar {
        path_for_target: shown.clone(),
        copy: Some(copy),
    };
    file.write_all(bytes)
        .map_err(|e| AttachError::io(pid, format!("cannot write {shown}"), e))?;
    if me == 0 {
        // SAFETY: fchown of a descriptor this function owns.
        let rc = unsafe { libc::fchown(file.as_raw_fd(), target.status.euid, target.status.egid) };
        if rc != 0 {
            return Err(AttachError::io(
                pid,
                format!("cannot give {shown} to uid {}", target.status.euid),
                std::io::Error::last_os_error(),
            ));
        }
    }
    Ok(jar)
}

/// Whether `name` in `dir` is a regular file (not a link) of `uid` or root that no one else can
/// write, holding exactly `bytes`: a copy an earlier attach left, safe to hand to the target.
fn holds_exactly(dir: &OwnedFd, name: &CString, bytes: &[u8], uid: u32) -> bool {
    // SAFETY: a valid directory descriptor and C string; the descriptor is owned below.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: a descriptor just opened, owned by the File from here on.
    let mut file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file()
        || (meta.uid() != uid && meta.uid() != 0)
        || meta.mode() & 0o022 != 0
        || meta.len() != bytes.len() as u64
    {
        return false;
    }
    let mut theirs = Vec::with_capacity(bytes.len());
    (&mut file)
        .take(bytes.len() as u64 + 1)
        .read_to_end(&mut theirs)
        .is_ok()
        && theirs == bytes
}

/// CRC-32 (IEEE) of `bytes`, for the copy's name only: reuse compares every byte.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

impl Drop for AgentJar {
    fn drop(&mut self) {
        if let Some(copy) = &self.copy {
            remove_if_same(&copy.dir, &copy.name, copy.identity);
        }
    }
}

/// 128 random bits as hex: a name no one can predict and plant first.
fn random_hex() -> Result<String, AttachError> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: getrandom into the unfilled rest of `bytes`.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(AttachError::io(0, "no random bytes", e));
        }
        filled += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_is_the_ieee_one() {
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn copy_names_are_unpredictable() {
        let a = super::random_hex().unwrap();
        let b = super::random_hex().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
