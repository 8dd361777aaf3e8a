//! Free and total bytes of the file system a directory handle is on (`fstatvfs`).

use super::dir::Dir;
use std::io;
use std::os::fd::AsRawFd;

/// Bytes an unprivileged writer may still use (`f_bavail`) and the file system's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    pub free_bytes: u64,
    pub total_bytes: u64,
}

pub fn space(dir: &Dir) -> io::Result<Space> {
    // SAFETY: an all-zero statvfs is a valid out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a descriptor we hold and a pointer to a statvfs.
    if unsafe { libc::fstatvfs(dir.fd().as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let unit = st.f_frsize as u64;
    Ok(Space {
        free_bytes: (st.f_bavail as u64).saturating_mul(unit),
        total_bytes: (st.f_blocks as u64).saturating_mul(unit),
    })
}
