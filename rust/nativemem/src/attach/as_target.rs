//! File-system steps done with the target's rights: when root attaches another uid's JVM, the
//! calling thread takes that uid, gid and no supplementary groups for file access (`setfsuid`,
//! `setfsgid` and the raw `setgroups` system call, all per thread) until the guard drops. Root
//! then creates nothing the target's user could not create itself: a `/tmp` the target turned
//! into `/etc` (a bind mount in a user namespace of its own) refuses the write.

use std::io;

/// While alive, this thread's file access runs as the target's uid and gid.
pub struct AsTarget {
    /// The credentials to restore: (fsuid, fsgid, supplementary groups); `None` when nothing was
    /// changed (not root, or the target is root).
    saved: Option<(libc::uid_t, libc::gid_t, Vec<libc::gid_t>)>,
}

impl AsTarget {
    /// Takes `uid` and `gid` for file access when this process is root and `uid` is not.
    pub fn assume(uid: u32, gid: u32) -> io::Result<AsTarget> {
        // SAFETY: plain getters.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if euid != 0 || uid == 0 {
            return Ok(AsTarget { saved: None });
        }
        let groups = groups()?;
        // From here the drop restores whatever was changed.
        let guard = AsTarget {
            saved: Some((euid, egid, groups)),
        };
        let only = [gid];
        // SAFETY: the raw system call changes this thread only (glibc's wrapper would change
        // every thread of the JVM); one group from a valid array.
        if unsafe { libc::syscall(libc::SYS_setgroups, 1, only.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: setfsgid/setfsuid change this thread's file-system ids; each returns the
        // previous value, so calling again with the same id reads back what took effect.
        unsafe {
            libc::setfsgid(gid);
            libc::setfsuid(uid);
            if libc::setfsgid(gid) as u32 != gid || libc::setfsuid(uid) as u32 != uid {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("cannot take uid {uid} gid {gid} for file access"),
                ));
            }
        }
        Ok(guard)
    }
}

impl Drop for AsTarget {
    fn drop(&mut self) {
        if let Some((uid, gid, groups)) = self.saved.take() {
            // SAFETY: back to root's ids (root may: its effective uid never changed), fsuid first
            // so that the capabilities it dropped come back before the groups are set.
            unsafe {
                libc::setfsuid(uid);
                libc::setfsgid(gid);
                libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr());
            }
        }
    }
}

/// This thread's supplementary groups.
fn groups() -> io::Result<Vec<libc::gid_t>> {
    // SAFETY: getgroups(0, NULL) returns the count; then fills at most that many.
    unsafe {
        let count = libc::getgroups(0, std::ptr::null_mut());
        if count < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut groups = vec![0 as libc::gid_t; count as usize];
        let filled = libc::getgroups(count, groups.as_mut_ptr());
        if filled < 0 {
            return Err(io::Error::last_os_error());
        }
        groups.truncate(filled as usize);
        Ok(groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn root_writes_only_where_the_target_could_and_gets_its_rights_back() {
        // SAFETY: plain getter.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: taking another uid's rights needs root");
            return;
        }
        let dir = std::env::temp_dir().join(format!("nativemem-as-target-{}", std::process::id()));
        let closed = dir.join("roots-only");
        let open = dir.join("sticky");
        std::fs::create_dir_all(&closed).unwrap();
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        {
            let _as = AsTarget::assume(9999, 9999).unwrap();
            let refused = std::fs::write(closed.join("x"), b"x").unwrap_err();
            assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
            std::fs::write(open.join("x"), b"x").unwrap();
        }
        assert!(!closed.join("x").exists());
        let made = std::fs::metadata(open.join("x")).unwrap();
        assert_eq!((made.uid(), made.gid()), (9999, 9999));
        // Root's rights again.
        std::fs::write(closed.join("x"), b"x").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
