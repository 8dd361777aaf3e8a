//! The target process held by a pidfd (`pidfd_open`, Linux 5.3+): a signal sent through it
//! reaches that process or nobody, never another one that reused its pid after it exited. Without
//! pidfds the process is told by its start time (`/proc/<pid>/stat`), checked again right before
//! `kill`.

use crate::files::{read_capped, Links};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// One process, as it was when opened.
#[derive(Debug)]
pub struct ProcessHandle {
    pid: u32,
    pidfd: Option<OwnedFd>,
    /// Its start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
    start_time: u64,
}

impl ProcessHandle {
    /// Holds `pid`: `NotFound` if no such process runs.
    pub fn open(pid: u32) -> io::Result<ProcessHandle> {
        let start_time = start_time(pid)?;
        // SAFETY: pidfd_open(pid, 0) returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        let pidfd = if fd >= 0 {
            // SAFETY: a descriptor just returned, owned by nobody else.
            Some(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
        } else {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ESRCH) => return Err(io::ErrorKind::NotFound.into()),
                // An older kernel, or a seccomp filter that refuses it: start times instead.
                Some(libc::ENOSYS | libc::EPERM | libc::EINVAL) => None,
                _ => return Err(e),
            }
        };
        let handle = ProcessHandle {
            pid,
            pidfd,
            start_time,
        };
        // The pid might have been reused between reading the start time and pidfd_open.
        if !handle.is_same() {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(handle)
    }

    /// Whether the process held still exists (a zombie counts) and is the one opened: what was
    /// read from `/proc/<pid>` before this call described it.
    pub fn is_same(&self) -> bool {
        if let Some(pidfd) = &self.pidfd {
            // SAFETY: signal 0 checks existence only; the descriptor is ours.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    0,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            // EPERM: it exists, and is another user's (whom an attach then refuses by name).
            if rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
                return false;
            }
        }
        start_time(self.pid).is_ok_and(|t| t == self.start_time)
    }

    /// Sends `signal` to the process held; `NotFound` if it has exited (nothing is sent).
    pub fn signal(&self, signal: libc::c_int) -> io::Result<()> {
        let rc = match &self.pidfd {
            // SAFETY: the descriptor is ours; no siginfo, no flags.
            Some(pidfd) => unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            },
            None => {
                if !self.is_same() {
                    return Err(io::ErrorKind::NotFound.into());
                }
                // SAFETY: kill with a valid signal; the pid was checked just before.
                unsafe { libc::kill(self.pid as libc::pid_t, signal) as libc::c_long }
            }
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ESRCH) => Err(io::ErrorKind::NotFound.into()),
            _ => Err(e),
        }
    }

    /// Whether signals go through a pidfd (else by pid after a start-time check).
    pub fn has_pidfd(&self) -> bool {
        self.pidfd.is_some()
    }
}

/// Field 22 of `/proc/<pid>/stat`, read after the command name (which may hold spaces and
/// parentheses).
fn start_time(pid: u32) -> io::Result<u64> {
    let path = format!("/proc/{pid}/stat");
    let text = read_capped(std::path::Path::new(&path), Links::Follow, 4096)?;
    let text = String::from_utf8_lossy(&text);
    text.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|field| field.parse().ok())
        .ok_or_else(|| io::ErrorKind::InvalidData.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_reaches_the_process_or_nobody() {
        let mut child = std::process::Command::new("sleep")
            .arg("100")
            .spawn()
            .unwrap();
        let handle = ProcessHandle::open(child.id()).unwrap();
        assert!(handle.is_same());
        handle.signal(0).unwrap();
        // Gone and reaped: its pid may now be anyone's; nothing may be sent.
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!handle.is_same());
        let sent = handle.signal(libc::SIGQUIT);
        assert_eq!(
            sent.map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound),
            "pidfd: {}",
            handle.has_pidfd()
        );
    }

    /// Another user's process exists for the handle, though it may not be signalled.
    #[test]
    fn another_users_process_is_held_as_it_is() {
        // SAFETY: plain getter.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: starting a process of another uid needs root");
            return;
        }
        let mut child = std::process::Command::new("setpriv")
            .args([
                "--reuid",
                "9999",
                "--regid",
                "9999",
                "--clear-groups",
                "sleep",
                "100",
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let pid = child.id();
        let checked = std::thread::spawn(move || {
            // This thread alone takes uid 9998 for signals too (setresuid through the raw call).
            // SAFETY: the raw system call changes this thread's ids only.
            unsafe { libc::syscall(libc::SYS_setresuid, 9998, 9998, 9998) };
            let handle = ProcessHandle::open(pid).unwrap();
            handle.is_same()
        })
        .join()
        .unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(checked);
    }

    #[test]
    fn no_such_process_is_not_found() {
        // Above the largest pid_max Linux allows (4194304).
        assert_eq!(
            ProcessHandle::open(4_194_305)
                .map(|_| ())
                .map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn start_time_is_read_past_a_name_with_parentheses() {
        let own = start_time(std::process::id()).unwrap();
        assert!(own > 0);
    }
}
