//! The target's attach socket `.java_pid<nspid>` in its `/tmp`: used if present, else started
//! as HotSpot starts it (a `.attach_pid<nspid>` trigger in its working directory, or in its
//! `/tmp`, then `SIGQUIT`) and waited for. Before connecting, the socket must be a socket owned by
//! the target's uid; after, the peer's credentials must be the target's own pid and uid, so a
//! socket planted or swapped in by another user is never spoken to.

use super::target::Target;
use super::AttachError;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// An open directory of the target (its `/tmp`) and the socket's name in it.
pub struct SocketPlace {
    pub tmp: OwnedFd,
    pub name: CString,
}

impl SocketPlace {
    pub fn of(target: &Target) -> Result<SocketPlace, AttachError> {
        Ok(SocketPlace {
            tmp: target.tmp()?,
            name: cstring(&format!(".java_pid{}", target.status.nspid)),
        })
    }

    /// The socket's path as this process reaches it: through the checked directory handle.
    fn path(&self) -> String {
        format!(
            "/proc/self/fd/{}/{}",
            self.tmp.as_raw_fd(),
            self.name.to_string_lossy()
        )
    }

    /// The socket as the target sees it, for messages.
    fn shown(&self) -> String {
        format!("/tmp/{}", self.name.to_string_lossy())
    }

    fn lstat(&self) -> Option<libc::stat> {
        lstat_at(&self.tmp, &self.name)
    }
}

/// Makes sure the target listens, starting its listener if needed, within `timeout`.
pub fn ensure_listening(
    target: &Target,
    place: &SocketPlace,
    timeout: Duration,
) -> Result<(), AttachError> {
    if place.lstat().is_some() {
        return Ok(()); // listening already: -Xrs on JDK 17 starts the listener with the JVM
    }
    if !target.status.catches_quit {
        return Err(AttachError::NoQuitHandler { pid: target.pid });
    }
    let trigger = Trigger::create(target)?;
    // SAFETY: kill with a valid signal; the pid was checked to be a HotSpot JVM that catches it.
    if unsafe { libc::kill(target.pid as libc::pid_t, libc::SIGQUIT) } != 0 {
        return Err(AttachError::Exited { pid: target.pid });
    }
    let started = Instant::now();
    let mut pause = Duration::from_millis(10);
    let outcome = loop {
        if place.lstat().is_some() {
            break Ok(());
        }
        if !target.alive() {
            break Err(AttachError::Exited { pid: target.pid });
        }
        if started.elapsed() >= timeout {
            break Err(AttachError::NoSocket {
                pid: target.pid,
                waited: started.elapsed(),
            });
        }
        std::thread::sleep(pause.min(timeout.saturating_sub(started.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(200));
    };
    drop(trigger);
    outcome
}

/// Connects to the socket after checking it, then checks who answered.
pub fn connect(target: &Target, place: &SocketPlace) -> Result<UnixStream, AttachError> {
    let pid = target.pid;
    let uid = target.status.euid;
    let stat = place.lstat().ok_or(AttachError::NoSocket {
        pid,
        waited: Duration::ZERO,
    })?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(AttachError::NotTheTargetsSocket {
            pid,
            path: place.shown(),
            why: "it is not a socket".into(),
        });
    }
    if stat.st_uid != uid {
        return Err(AttachError::ForeignSocket {
            pid,
            path: place.shown(),
            owner: stat.st_uid,
            uid,
        });
    }
    let stream = UnixStream::connect(place.path())
        .map_err(|e| AttachError::io(pid, format!("cannot connect to {}", place.shown()), e))?;
    let peer = peer_credentials(&stream)
        .map_err(|e| AttachError::io(pid, "cannot read the socket's peer credentials", e))?;
    if peer.uid != uid {
        return Err(AttachError::ForeignSocket {
            pid,
            path: place.shown(),
            owner: peer.uid,
            uid,
        });
    }
    if peer.pid as u32 != pid {
        return Err(AttachError::NotTheTargetsSocket {
            pid,
            path: place.shown(),
            why: format!("process {} listens on it", peer.pid),
        });
    }
    Ok(stream)
}

fn peer_credentials(stream: &UnixStream) -> std::io::Result<libc::ucred> {
    // SAFETY: getsockopt into a zeroed ucred of the size given.
    unsafe {
        let mut cred: libc::ucred = std::mem::zeroed();
        let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        let rc = libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut length,
        );
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(cred)
    }
}

/// The `.attach_pid<nspid>` file HotSpot looks for on `SIGQUIT` (owned by its uid or root),
/// created here with `O_EXCL|O_NOFOLLOW` and removed on drop only if it is still that file.
struct Trigger {
    dir: OwnedFd,
    name: CString,
    identity: (u64, u64),
}

impl Trigger {
    fn create(target: &Target) -> Result<Trigger, AttachError> {
        let name = cstring(&format!(".attach_pid{}", target.status.nspid));
        let mut failure = None;
        for dir in [target.cwd(), target.tmp()] {
            let dir = match dir {
                Ok(dir) => dir,
                Err(e) => {
                    failure = Some(e);
                    continue;
                }
            };
            match create_exclusive(&dir, &name, 0o600) {
                Ok(file) => {
                    let identity = identity(&file);
                    let trigger = Trigger {
                        dir,
                        name: name.clone(),
                        identity: identity.0,
                    };
                    // Some file systems give files another owner; HotSpot would ignore it.
                    // SAFETY: plain getter.
                    let me = unsafe { libc::geteuid() };
                    if identity.1 == me {
                        return Ok(trigger);
                    }
                }
                Err(e) => failure = Some(AttachError::io(
                    target.pid,
                    "cannot create the attach trigger .attach_pid in its working directory or /tmp",
                    e,
                )),
            }
        }
        Err(failure.unwrap_or(AttachError::NoSocket {
            pid: target.pid,
            waited: Duration::ZERO,
        }))
    }
}

impl Drop for Trigger {
    fn drop(&mut self) {
        remove_if_same(&self.dir, &self.name, self.identity);
    }
}

/// Creates `name` in `dir`, never following a link, never reusing a file; owner-only `mode`.
pub(crate) fn create_exclusive(
    dir: &OwnedFd,
    name: &CString,
    mode: libc::mode_t,
) -> std::io::Result<std::fs::File> {
    // SAFETY: a valid directory descriptor and C string.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_WRONLY | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by the File from here on.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// (device, inode) and owner of an open file.
pub(crate) fn identity(file: &std::fs::File) -> ((u64, u64), u32) {
    use std::os::unix::fs::MetadataExt;
    match file.metadata() {
        Ok(m) => ((m.dev(), m.ino()), m.uid()),
        Err(_) => ((0, 0), u32::MAX),
    }
}

/// Removes `name` from `dir` if it is still the file of `identity`: never what someone else put
/// there since.
pub(crate) fn remove_if_same(dir: &OwnedFd, name: &CString, identity: (u64, u64)) {
    if let Some(stat) = lstat_at(dir, name) {
        if (stat.st_dev, stat.st_ino) == identity {
            // SAFETY: a valid directory descriptor and C string.
            unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

fn lstat_at(dir: &OwnedFd, name: &CString) -> Option<libc::stat> {
    // SAFETY: fstatat into a zeroed stat, not following a link.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        let rc = libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        );
        (rc == 0).then_some(stat)
    }
}

fn cstring(name: &str) -> CString {
    // Names made here from digits and ASCII: no NUL.
    CString::new(name).unwrap_or_default()
}
