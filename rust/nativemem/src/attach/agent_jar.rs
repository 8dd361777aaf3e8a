//! The agent jar by a path the target can read. The jar's own path when the target shares this
//! process's mount namespace and user; otherwise a copy in the target's `/tmp`, reached through
//! `/proc/<pid>/root/tmp`: a fresh unpredictable name, created `O_EXCL|O_NOFOLLOW` relative to
//! that directory's handle, mode 0400 for the target's uid, removed on drop.

use super::connect::{create_exclusive, identity, remove_if_same};
use super::target::Target;
use super::AttachError;
use crate::checked_files::{self, Links};
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The largest jar copied (the nativemem jar is a few MiB).
const MAX_JAR_BYTES: u64 = 256 << 20;

/// The prefix of copies, so a copy left by a killed CLI says what it is.
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
        let dir = target.tmp()?;
        let name = CString::new(format!("{COPY_PREFIX}{}.jar", random_hex()?)).map_err(|_| {
            AttachError::io(
                pid,
                "bad copy name",
                std::io::ErrorKind::InvalidInput.into(),
            )
        })?;
        let mut file = create_exclusive(&dir, &name, 0o400).map_err(|e| {
            AttachError::io(pid, "cannot create a copy of the agent jar in its /tmp", e)
        })?;
        let copy = Copy {
            identity: identity(&file).0,
            dir,
            name,
        };
        let shown = format!("/tmp/{}", copy.name.to_string_lossy());
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
        file.write_all(&bytes)
            .map_err(|e| AttachError::io(pid, format!("cannot write {shown}"), e))?;
        if me == 0 {
            // SAFETY: fchown of a descriptor this function owns.
            let rc =
                unsafe { libc::fchown(file.as_raw_fd(), target.status.euid, target.status.egid) };
            if rc != 0 {
                return Err(AttachError::io(
                    pid,
                    format!("cannot give {shown} to uid {}", target.status.euid),
                    std::io::Error::last_os_error(),
                ));
            }
        }
        Ok(AgentJar {
            path_for_target: shown,
            copy: Some(copy),
        })
    }

    /// Whether the target reads a copy made for it.
    pub fn is_copy(&self) -> bool {
        self.copy.is_some()
    }
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
    fn copy_names_are_unpredictable() {
        let a = super::random_hex().unwrap();
        let b = super::random_hex().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
