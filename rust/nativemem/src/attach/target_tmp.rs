//! The target's `/tmp` (HotSpot's `os::get_temp_directory()` on Linux), resolved once: opened
//! through `/proc/<pid>/root`, a link refused, and checked on its descriptor. The trigger, the
//! socket and the agent jar's copy are all reached relative to that one descriptor, so a target
//! that changes its root or its mounts afterwards changes nothing of where they go.

use super::target::open_dir;
use super::AttachError;
use std::os::fd::{AsRawFd, OwnedFd};

/// The target's `/tmp`, opened and checked.
pub struct TargetTmp {
    pub dir: OwnedFd,
    /// Why another user could swap entries of this directory (writable by others, not sticky):
    /// nothing is handed to the target by a path in it then.
    pub swappable: Option<String>,
}

impl TargetTmp {
    /// Opens `/proc/<pid>/root/tmp` for a target of `uid`.
    pub fn open(pid: u32, uid: u32) -> Result<TargetTmp, AttachError> {
        let root = open_dir(None, &format!("/proc/{pid}/root"))
            .map_err(|e| AttachError::io(pid, "cannot open its root directory", e))?;
        TargetTmp::open_under(&root, pid, uid)
    }

    /// Opens `tmp` under `root` (the target's root directory) and checks it.
    pub fn open_under(root: &OwnedFd, pid: u32, uid: u32) -> Result<TargetTmp, AttachError> {
        let dir = open_dir(Some(root), "tmp")
            .map_err(|e| AttachError::io(pid, "cannot open its /tmp (not a link)", e))?;
        let stat = fstat(&dir).map_err(|e| AttachError::io(pid, "cannot stat its /tmp", e))?;
        let swappable = judge(stat.st_uid, stat.st_mode, uid)
            .map_err(|why| AttachError::UnsafeTmp { pid, why })?;
        Ok(TargetTmp { dir, swappable })
    }
}

/// Whether a `/tmp` owned by `owner` with `mode` may serve a target of `uid`: `Err` if another
/// user owns it (he could redirect anything put there); `Ok(Some(why))` if others may write it
/// without the sticky bit (they can rename its entries); `Ok(None)` if it is safe.
fn judge(owner: u32, mode: libc::mode_t, uid: u32) -> Result<Option<String>, String> {
    if owner != uid && owner != 0 {
        return Err(format!(
            "its /tmp belongs to uid {owner}, neither its own uid {uid} nor root"
        ));
    }
    if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
        return Ok(Some(format!(
            "its /tmp (mode {:04o}) is writable by other users and not sticky, so they can \
             rename what is put there",
            mode & 0o7777
        )));
    }
    Ok(None)
}

pub(crate) fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: fstat into a zeroed stat of a descriptor we own.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut stat) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn owner_and_mode_decide() {
        assert_eq!(judge(0, 0o41777, 9999), Ok(None));
        assert_eq!(judge(9999, 0o40700, 9999), Ok(None));
        assert_eq!(judge(0, 0o40755, 9999), Ok(None));
        assert!(judge(1234, 0o41777, 9999).unwrap_err().contains("uid 1234"));
        let shared = judge(0, 0o40777, 9999).unwrap().unwrap();
        assert!(
            shared.contains("0777") && shared.contains("not sticky"),
            "{shared}"
        );
        assert!(judge(0, 0o42775, 9999).unwrap().is_some(), "fsGroup's 2775");
    }

    #[test]
    fn another_users_tmp_is_refused_and_a_shared_one_is_marked() {
        // SAFETY: plain getter.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: giving a directory to another uid needs root");
            return;
        }
        let root = std::env::temp_dir().join(format!("nativemem-tmp-judge-{}", std::process::id()));
        let tmp = root.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let handle = open_dir(None, root.to_str().unwrap()).unwrap();
        std::os::unix::fs::chown(&tmp, Some(1234), None).unwrap();
        let error = TargetTmp::open_under(&handle, 7, 9999)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("belongs to uid 1234"), "{error}");
        std::os::unix::fs::chown(&tmp, Some(0), None).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o777)).unwrap();
        let opened = TargetTmp::open_under(&handle, 7, 9999).unwrap();
        assert!(opened.swappable.is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
