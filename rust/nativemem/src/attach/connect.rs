//! The target's attach socket `.java_pid<nspid>` in its `/tmp` (the one descriptor of
//! [`TargetTmp`]): used if present, else started as HotSpot starts it (a `.attach_pid<nspid>`
//! trigger in that `/tmp`, created with the target's rights, then `SIGQUIT` through the target's
//! pidfd) and waited for. Before connecting, the socket must be a socket owned by the target's
//! uid; after, the peer's credentials must be the target's own pid and uid, so a socket planted or
//! swapped in by another user is never spoken to. Connecting, writing and reading each end by the
//! caller's deadline: a listener that never accepts (a full backlog) is an error, not a hang.

use super::as_target::AsTarget;
use super::target::Target;
use super::target_tmp::TargetTmp;
use super::AttachError;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// An open directory of the target (its `/tmp`) and the socket's name in it.
pub struct SocketPlace {
    pub tmp: OwnedFd,
    pub name: CString,
}

impl SocketPlace {
    pub fn of(target: &Target, tmp: &TargetTmp) -> Result<SocketPlace, AttachError> {
        Ok(SocketPlace {
            tmp: tmp
                .dir
                .try_clone()
                .map_err(|e| AttachError::io(target.pid, "cannot duplicate a descriptor", e))?,
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
    tmp: &TargetTmp,
    place: &SocketPlace,
    timeout: Duration,
) -> Result<(), AttachError> {
    if place.lstat().is_some() {
        return Ok(()); // listening already: -Xrs on JDK 17 starts the listener with the JVM
    }
    // The signal that starts the listener kills a JVM that does not catch it (-Xrs; JDK 17+
    // start the listener at start-up then, so its socket is there already).
    if !target.status.catches_quit {
        return Err(AttachError::NoQuitHandler { pid: target.pid });
    }
    let trigger = Trigger::create(target, tmp)?;
    target
        .process
        .signal(libc::SIGQUIT)
        .map_err(|_| AttachError::Exited { pid: target.pid })?;
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

/// Connects to the socket after checking it, then checks who answered; gives up at `deadline`.
pub fn connect(
    target: &Target,
    place: &SocketPlace,
    deadline: Instant,
) -> Result<UnixStream, AttachError> {
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
    let started = Instant::now();
    let stream = match connect_by(&place.path(), deadline) {
        Ok(stream) => stream,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            return Err(AttachError::NotAccepting {
                pid,
                waited: started.elapsed(),
            })
        }
        Err(e) => {
            return Err(AttachError::io(
                pid,
                format!("cannot connect to {}", place.shown()),
                e,
            ))
        }
    };
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

/// A non-blocking connect to the Unix socket at `path`, retried while the listener's backlog is
/// full (`EAGAIN`) and waited for with `poll` when in progress, until `deadline` (`TimedOut`).
/// The stream returned blocks again; its reads and writes take their own deadlines.
pub fn connect_by(path: &str, deadline: Instant) -> std::io::Result<UnixStream> {
    // SAFETY: zeroed sockaddr_un filled within its bounds; the descriptor is owned at once.
    let (socket, address, length) = unsafe {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let socket = OwnedFd::from_raw_fd(fd);
        let mut address: libc::sockaddr_un = std::mem::zeroed();
        address.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = path.as_bytes();
        if bytes.len() >= address.sun_path.len() || bytes.contains(&0) {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        for (place, &b) in address.sun_path.iter_mut().zip(bytes) {
            *place = b as libc::c_char;
        }
        let length =
            (std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t;
        (socket, address, length)
    };
    let mut pause = Duration::from_millis(5);
    loop {
        // SAFETY: a valid socket and an address of `length` bytes.
        let rc = unsafe {
            libc::connect(
                socket.as_raw_fd(),
                (&address as *const libc::sockaddr_un).cast(),
                length,
            )
        };
        if rc == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        let left = deadline.saturating_duration_since(Instant::now());
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            // The backlog is full: a Unix socket says so at once; try again until the deadline.
            Some(libc::EAGAIN) if !left.is_zero() => {
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Some(libc::EAGAIN) => return Err(std::io::ErrorKind::TimedOut.into()),
            Some(libc::EINPROGRESS) => {
                wait_writable(&socket, deadline)?;
                let mut error: libc::c_int = 0;
                let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                // SAFETY: getsockopt into an int of the size given.
                let rc = unsafe {
                    libc::getsockopt(
                        socket.as_raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_ERROR,
                        (&mut error as *mut libc::c_int).cast(),
                        &mut size,
                    )
                };
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if error != 0 {
                    return Err(std::io::Error::from_raw_os_error(error));
                }
                break;
            }
            _ => return Err(e),
        }
    }
    let stream = UnixStream::from(socket);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

fn wait_writable(socket: &OwnedFd, deadline: Instant) -> std::io::Result<()> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        let mut poll = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let millis = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one pollfd.
        let rc = unsafe { libc::poll(&mut poll, 1, millis) };
        if rc > 0 {
            return Ok(());
        }
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Writes all of `bytes` by `deadline` (`TimedOut` after it): each write waits at most what is
/// left, so a peer that reads a byte at a time cannot stretch the whole.
pub fn write_by(stream: &mut UnixStream, bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    let mut written = 0;
    while written < bytes.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left.max(Duration::from_millis(1))))?;
        match stream.write(&bytes[written..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(std::io::ErrorKind::TimedOut.into())
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
/// created in the target's `/tmp` with its rights, `O_EXCL|O_NOFOLLOW`, and removed on drop only
/// if it is still that file. One the target's user or root left there already serves as well.
struct Trigger {
    dir: Option<OwnedFd>,
    name: CString,
    identity: (u64, u64),
}

impl Trigger {
    fn create(target: &Target, tmp: &TargetTmp) -> Result<Trigger, AttachError> {
        let pid = target.pid;
        let uid = target.status.euid;
        let name = cstring(&format!(".attach_pid{}", target.status.nspid));
        let failed = |e| {
            AttachError::io(
                pid,
                "cannot create the attach trigger .attach_pid in its /tmp",
                e,
            )
        };
        let dir = tmp
            .dir
            .try_clone()
            .map_err(|e| AttachError::io(pid, "cannot duplicate a descriptor", e))?;
        let created = {
            let _as = AsTarget::assume(uid, target.status.egid).map_err(failed)?;
            create_exclusive(&dir, &name, 0o600)
        };
        match created {
            Ok(file) => {
                let (identity, owner) = identity(&file);
                let trigger = Trigger {
                    dir: Some(dir),
                    name,
                    identity,
                };
                // Some file systems give files another owner; HotSpot would ignore it.
                if owner != uid && owner != 0 {
                    return Err(failed(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        format!("the file system made it uid {owner}'s, which HotSpot ignores"),
                    )));
                }
                Ok(trigger)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                match lstat_at(&dir, &name) {
                    Some(stat)
                        if stat.st_mode & libc::S_IFMT == libc::S_IFREG
                            && (stat.st_uid == uid || stat.st_uid == 0) =>
                    {
                        Ok(Trigger {
                            dir: None,
                            name,
                            identity: (0, 0),
                        })
                    }
                    _ => Err(failed(e)),
                }
            }
            Err(e) => Err(failed(e)),
        }
    }
}

impl Drop for Trigger {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            remove_if_same(dir, &self.name, self.identity);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener with a backlog of one that never accepts, filled: a hung JVM, or a planted one.
    #[test]
    fn a_listener_that_never_accepts_fails_the_connect_by_its_deadline() {
        let dir = std::env::temp_dir().join(format!("nativemem-backlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // SAFETY: listen on a socket we own with a backlog of 0 (one pending connection).
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let path = path.to_str().unwrap().to_string();
        let mut pending = Vec::new();
        // Fill the backlog: these connect (or queue) at once.
        while let Ok(stream) = connect_by(&path, Instant::now() + Duration::from_millis(50)) {
            pending.push(stream);
            assert!(pending.len() < 64, "the backlog never filled");
        }
        let started = Instant::now();
        let refused = connect_by(&path, started + Duration::from_millis(700)).unwrap_err();
        let took = started.elapsed();
        assert_eq!(refused.kind(), std::io::ErrorKind::TimedOut);
        assert!(took >= Duration::from_millis(650), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        drop(listener);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_listener_that_accepts_is_connected_and_the_stream_blocks() {
        let dir = std::env::temp_dir().join(format!("nativemem-accepts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let mut stream = connect_by(
            path.to_str().unwrap(),
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap();
        let (mut theirs, _) = listener.accept().unwrap();
        write_by(
            &mut stream,
            b"1\0x",
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap();
        let mut got = [0u8; 3];
        std::io::Read::read_exact(&mut theirs, &mut got).unwrap();
        assert_eq!(&got, b"1\0x");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A peer that never reads: the write stops at its deadline, not when the buffer drains.
    #[test]
    fn a_write_to_a_peer_that_never_reads_stops_at_the_deadline() {
        let (mut ours, _theirs) = UnixStream::pair().unwrap();
        let started = Instant::now();
        let big = vec![0u8; 64 << 20];
        let failed = write_by(&mut ours, &big, started + Duration::from_millis(300)).unwrap_err();
        assert_eq!(failed.kind(), std::io::ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
