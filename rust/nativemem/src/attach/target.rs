//! Who and where the target JVM is, from `/proc/<pid>` as this process sees it: its effective
//! uid and gid, its pid as it sees itself (the last `NSpid` field), whether it lives in another
//! mount namespace and whether it is a HotSpot JVM; the process itself is held by a pidfd
//! ([`ProcessHandle`]) from before the first read, so everything read describes it and a signal
//! reaches it or nobody. Its `/tmp` is [`super::target_tmp`]'s.

use super::process_handle::ProcessHandle;
use super::AttachError;
use crate::files::checked::{self as checked_files, Links};
use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The most of `/proc/<pid>/status` or `maps` read: a JVM's maps run to a few MiB.
const MAX_PROC_FILE: u64 = 64 << 20;

/// The parts of `/proc/<pid>/status` an attach needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub euid: u32,
    pub egid: u32,
    /// The pid as the process sees itself (innermost pid namespace).
    pub nspid: u32,
    /// Whether it catches SIGQUIT (bit 2 of `SigCgt`): HotSpot does unless `-Xrs`.
    pub catches_quit: bool,
}

/// Parses `/proc/<pid>/status` text; `None` if a needed line is missing or malformed.
pub fn parse_status(text: &str, pid: u32) -> Option<Status> {
    let mut euid = None;
    let mut egid = None;
    let mut nspid = None;
    let mut catches_quit = None;
    for line in text.lines() {
        let (key, value) = match line.split_once(':') {
            Some(kv) => kv,
            None => continue,
        };
        let mut fields = value.split_whitespace();
        match key {
            "Uid" => euid = fields.nth(1).and_then(|v| v.parse().ok()),
            "Gid" => egid = fields.nth(1).and_then(|v| v.parse().ok()),
            "NSpid" => nspid = fields.last().and_then(|v| v.parse().ok()),
            "SigCgt" => {
                catches_quit = fields
                    .next()
                    .and_then(|v| u64::from_str_radix(v, 16).ok())
                    .map(|mask| mask & (1 << (libc::SIGQUIT - 1)) != 0)
            }
            _ => {}
        }
    }
    Some(Status {
        euid: euid?,
        egid: egid?,
        // Kernels before 4.1 have no NSpid line: no pid namespaces to tell apart.
        nspid: nspid.unwrap_or(pid),
        catches_quit: catches_quit?,
    })
}

/// The target, checked as far as can be without talking to it.
#[derive(Debug)]
pub struct Target {
    pub pid: u32,
    pub status: Status,
    pub other_mount_namespace: bool,
    pub process: ProcessHandle,
}

impl Target {
    /// Reads `/proc/<pid>`: the process must exist and be attachable by this process's user
    /// (`rerun` is the command line the error suggests to run as the target's user).
    pub fn inspect(pid: u32, rerun: &str) -> Result<Target, AttachError> {
        let process = match ProcessHandle::open(pid) {
            Ok(process) => process,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(AttachError::NoSuchProcess { pid })
            }
            Err(e) => return Err(AttachError::io(pid, "cannot open it (pidfd_open)", e)),
        };
        let proc_dir = format!("/proc/{pid}");
        let status = match read_proc(&format!("{proc_dir}/status")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(AttachError::NoSuchProcess { pid })
            }
            Err(e) => return Err(AttachError::io(pid, "cannot read its status", e)),
        };
        let status = parse_status(&status, pid).ok_or_else(|| AttachError::NotHotSpot {
            pid,
            why: "its /proc status is not a process's".into(),
        })?;
        // SAFETY: plain getters.
        let (me_uid, me_gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        // HotSpot's check (os::Posix::matches_effective_uid_and_gid_or_root): the peer is root,
        // or has the JVM's effective uid and gid.
        if me_uid != 0 && (me_uid != status.euid || me_gid != status.egid) {
            return Err(AttachError::OtherUser {
                pid,
                uid: status.euid,
                gid: status.egid,
                name: user_name(status.euid),
                rerun: rerun_as(status.euid, status.egid, user_name(status.euid), rerun),
            });
        }
        let maps = read_proc(&format!("{proc_dir}/maps"))
            .map_err(|e| AttachError::io(pid, "cannot read its memory maps", e))?;
        if let Some(why) = not_hotspot(&maps) {
            return Err(AttachError::NotHotSpot { pid, why });
        }
        // Whether it catches SIGQUIT matters only if its listener must be started
        // (connect::ensure_listening): with -Xrs, JDK 17+ start it at start-up.
        let other_mount_namespace = other_mount_namespace(pid)?;
        // The pid may have been reused while /proc was read: then none of it was the target's.
        if !process.is_same() {
            return Err(AttachError::NoSuchProcess { pid });
        }
        Ok(Target {
            pid,
            status,
            other_mount_namespace,
            process,
        })
    }

    /// Whether the process is gone or dying within a second (after its connection broke).
    pub fn exits_soon(&self) -> bool {
        for _ in 0..20 {
            if !self.alive() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    /// Whether the process still runs (and is not a zombie).
    pub fn alive(&self) -> bool {
        if !self.process.is_same() {
            return false;
        }
        match read_proc(&format!("/proc/{}/stat", self.pid)) {
            Ok(stat) => !matches!(
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next()),
                Some('Z' | 'X') | None
            ),
            Err(_) => false,
        }
    }
}

/// Why the maps are not a HotSpot JVM's; `None` if they are.
pub fn not_hotspot(maps: &str) -> Option<String> {
    let mapped = |library: &str| {
        maps.lines()
            .any(|line| line.ends_with(library) && line.contains('/'))
    };
    if mapped("/libj9vm29.so") {
        return Some("an OpenJ9 JVM, whose attach mechanism differs".into());
    }
    if mapped("/libjvm.so") {
        None
    } else {
        Some("it maps no libjvm.so".into())
    }
}

fn read_proc(path: &str) -> std::io::Result<String> {
    let file: File = checked_files::open_regular(Path::new(path), Links::Follow)?;
    let mut bytes = Vec::new();
    file.take(MAX_PROC_FILE).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn other_mount_namespace(pid: u32) -> Result<bool, AttachError> {
    let mine = std::fs::metadata("/proc/self/ns/mnt")
        .map_err(|e| AttachError::io(pid, "cannot read this process's mount namespace", e))?;
    let theirs = std::fs::metadata(format!("/proc/{pid}/ns/mnt"))
        .map_err(|e| AttachError::io(pid, "cannot read its mount namespace", e))?;
    Ok((mine.dev(), mine.ino()) != (theirs.dev(), theirs.ino()))
}

/// Opens a directory as an `O_PATH` handle: relative to `at` without following a final link, or
/// (`at` = None) an absolute `/proc` path whose magic links are meant to be followed.
pub(crate) fn open_dir(at: Option<&OwnedFd>, path: &str) -> std::io::Result<OwnedFd> {
    let name = CString::new(path).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let mut flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let dir = match at {
        Some(at) => {
            flags |= libc::O_NOFOLLOW;
            at.as_raw_fd()
        }
        None => libc::AT_FDCWD,
    };
    // SAFETY: a valid C string and directory descriptor.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The name of `uid` in this system's user database.
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: zeroed passwd filled by getpwuid_r within `buf`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pwd.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// The command that runs `rerun` as `uid`: `runuser` by name where the user has one, else
/// `setpriv` by number (a container's uid often has no name on the node).
fn rerun_as(uid: u32, gid: u32, name: Option<String>, rerun: &str) -> String {
    match name {
        Some(name) if !name.contains(|c: char| c.is_whitespace() || c == '\'') => {
            format!("runuser -u {name} -- {rerun}")
        }
        _ => format!("setpriv --reuid {uid} --regid {gid} --clear-groups -- {rerun}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str =
        "Name:\tjava\nUid:\t1000\t9999\t9999\t9999\nGid:\t1001\t9998\t9998\t9998\n\
NSpid:\t4242\t7\nSigCgt:\t0000000000000004\n";

    #[test]
    fn status_gives_effective_ids_innermost_pid_and_quit_handler() {
        assert_eq!(
            parse_status(STATUS, 4242),
            Some(Status {
                euid: 9999,
                egid: 9998,
                nspid: 7,
                catches_quit: true
            })
        );
        let no_quit = STATUS.replace("0000000000000004", "0000000000000002");
        assert!(!parse_status(&no_quit, 4242).unwrap().catches_quit);
        let old_kernel = STATUS.replace("NSpid:\t4242\t7\n", "");
        assert_eq!(parse_status(&old_kernel, 4242).unwrap().nspid, 4242);
        assert_eq!(parse_status("Uid:\tx\n", 1), None);
    }

    #[test]
    fn hotspot_is_told_by_libjvm() {
        let jvm = "7f00-7f01 r-xp 0 08:01 1 /usr/lib/jvm/x/lib/server/libjvm.so\n";
        assert_eq!(not_hotspot(jvm), None);
        assert!(not_hotspot("55-56 r-xp 0 08:01 1 /usr/bin/sleep\n").is_some());
        let j9 = format!("{jvm}7f-80 r-xp 0 08:01 2 /opt/j9/lib/default/libj9vm29.so\n");
        assert!(not_hotspot(&j9).unwrap().contains("OpenJ9"));
    }

    #[test]
    fn rerun_by_name_or_by_number() {
        assert_eq!(
            rerun_as(
                9999,
                9999,
                Some("app".into()),
                "java -jar n.jar attach 7 stats"
            ),
            "runuser -u app -- java -jar n.jar attach 7 stats"
        );
        assert!(rerun_as(9999, 9998, None, "x").starts_with("setpriv --reuid 9999 --regid 9998"));
    }
}
