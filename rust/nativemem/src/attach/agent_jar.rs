//! The agent jar by a path the target can read, and the SHA-256 of the bytes handed over, which
//! the load request carries and the agent checks before it loads a class from the jar. The jar's
//! own path when the target shares this process's mount namespace and user; otherwise a copy in a
//! private directory of the target's uid in its `/tmp` (the one descriptor of [`TargetTmp`]):
//! `.nativemem-agent-<uid>/`, mode 0700, made and written with the target's rights
//! ([`AsTarget`]), so no other user can rename, replace or add anything in it, and root writes
//! nothing the target's user could not. The copy is named by its content,
//! `nativemem-agent-<sha-256, 32 hex digits>.jar`, created `O_EXCL|O_NOFOLLOW`, mode 0400. The
//! target needs that path for as long as it runs (the JVM puts every agent jar on its system
//! class path, and later commands and resource reads go through it), so the copy is kept, and
//! reused by the next attach when it holds exactly our bytes, belongs to the target's uid (or
//! root) and no one else can write it; anything else under that name is never used: a copy under
//! a fresh random name is made instead. A private directory that is not the target's uid's with
//! no group or other bits is never used either (a fresh random one instead). A copy whose load
//! failed is removed. A `/tmp` others can write without the sticky bit gets no copy at all.

use super::as_target::AsTarget;
use super::connect::{create_exclusive, identity, remove_if_same};
use super::sha256;
use super::target::Target;
use super::target_tmp::{fstat, TargetTmp};
use super::AttachError;
use crate::files::checked::{self as checked_files, Links};
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// The largest jar copied (the nativemem jar is a few MiB).
const MAX_JAR_BYTES: u64 = 256 << 20;

/// The prefix of private directories and copies, so each says what it is.
pub const COPY_PREFIX: &str = ".nativemem-agent-";

/// The jar as the target reaches it.
pub struct AgentJar {
    /// The path to put in the `load` request.
    pub path_for_target: String,
    /// SHA-256 of the bytes handed to the target, lowercase hex.
    pub sha256: String,
    copy: Option<Copy>,
}

struct Copy {
    dir: OwnedFd,
    name: CString,
    identity: (u64, u64),
}

impl AgentJar {
    pub fn for_target(
        target: &Target,
        tmp: &TargetTmp,
        jar: &Path,
    ) -> Result<AgentJar, AttachError> {
        let pid = target.pid;
        let real = std::fs::canonicalize(jar)
            .map_err(|e| AttachError::io(pid, format!("cannot resolve {}", jar.display()), e))?;
        let bytes = read_jar(pid, &real)?;
        let sha256 = sha256::hex(&bytes);
        // SAFETY: plain getter.
        let me = unsafe { libc::geteuid() };
        if !target.other_mount_namespace && me == target.status.euid {
            let path = real.to_str().ok_or_else(|| {
                AttachError::RequestTooLong(format!("{} is not UTF-8", real.display()))
            })?;
            return Ok(AgentJar {
                path_for_target: path.to_string(),
                sha256,
                copy: None,
            });
        }
        AgentJar::copy_into(
            tmp,
            pid,
            (target.status.euid, target.status.egid),
            &bytes,
            sha256,
        )
    }

    /// Copies `bytes` (whose SHA-256 is `sha256`) into the private directory of `owner`'s uid in
    /// `tmp`, with `owner`'s rights.
    fn copy_into(
        tmp: &TargetTmp,
        pid: u32,
        owner: (u32, u32),
        bytes: &[u8],
        sha256: String,
    ) -> Result<AgentJar, AttachError> {
        if let Some(why) = &tmp.swappable {
            return Err(AttachError::UnsafeTmp {
                pid,
                why: why.clone(),
            });
        }
        let uid = owner.0;
        let failed = |e| AttachError::io(pid, "cannot copy the agent jar into its /tmp", e);
        let _as = AsTarget::assume(uid, owner.1).map_err(failed)?;
        let (dir, dir_name) = private_dir(&tmp.dir, uid).map_err(failed)?;
        let shown = |name: &CString| format!("/tmp/{dir_name}/{}", name.to_string_lossy());
        let name =
            CString::new(format!("nativemem-agent-{}.jar", &sha256[..32])).unwrap_or_default();
        if holds_exactly(&dir, &name, bytes, uid) {
            return Ok(AgentJar {
                path_for_target: shown(&name),
                sha256,
                copy: None,
            });
        }
        let (name, file) = match create_exclusive(&dir, &name, 0o400) {
            Ok(file) => (name, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // A file changed since, or not ours: never used; a name of our own.
                let name = CString::new(format!("nativemem-agent-{}.jar", random_hex()?))
                    .unwrap_or_default();
                let file = create_exclusive(&dir, &name, 0o400).map_err(failed)?;
                (name, file)
            }
            Err(e) => return Err(failed(e)),
        };
        let path_for_target = shown(&name);
        write_copy(pid, dir, name, file, bytes, path_for_target, sha256)
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

fn read_jar(pid: u32, real: &Path) -> Result<Vec<u8>, AttachError> {
    let mut source = checked_files::open_regular(real, Links::Follow)
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
    Ok(bytes)
}

/// The private directory of `uid` in `tmp`, opened (not a link) and checked on its descriptor: a
/// directory of `uid` with no group or other bits. `.nativemem-agent-<uid>` when it is one (or
/// can be made), else a fresh `.nativemem-agent-<uid>-<random>`. Called with `uid`'s rights.
fn private_dir(tmp: &OwnedFd, uid: u32) -> std::io::Result<(OwnedFd, String)> {
    let shared = format!("{COPY_PREFIX}{uid}");
    if let Some(dir) = open_private(tmp, &shared, uid)? {
        return Ok((dir, shared));
    }
    let fresh = format!(
        "{shared}-{}",
        random_hex().map_err(|_| std::io::Error::from(std::io::ErrorKind::Other))?
    );
    match open_private(tmp, &fresh, uid)? {
        Some(dir) => Ok((dir, fresh)),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("/tmp/{fresh}, just made, is not a private directory of uid {uid}"),
        )),
    }
}

/// `name` in `tmp`, made 0700 if absent, opened without following a link; `None` unless it is a
/// directory of `uid` with no group or other permission bits.
fn open_private(tmp: &OwnedFd, name: &str, uid: u32) -> std::io::Result<Option<OwnedFd>> {
    let c_name = CString::new(name).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    // SAFETY: a valid directory descriptor and C string.
    if unsafe { libc::mkdirat(tmp.as_raw_fd(), c_name.as_ptr(), 0o700) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    // SAFETY: a valid directory descriptor and C string; the descriptor is owned below.
    let fd = unsafe {
        libc::openat(
            tmp.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        // A link or a file under that name: not ours to use.
        return match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR | libc::EACCES) => Ok(None),
            _ => Err(e),
        };
    }
    // SAFETY: a descriptor just opened, owned by nobody else.
    let dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let stat = fstat(&dir)?;
    let private = stat.st_mode & libc::S_IFMT == libc::S_IFDIR
        && stat.st_uid == uid
        && stat.st_mode & 0o077 == 0;
    Ok(private.then_some(dir))
}

fn write_copy(
    pid: u32,
    dir: OwnedFd,
    name: CString,
    mut file: std::fs::File,
    bytes: &[u8],
    path_for_target: String,
    sha256: String,
) -> Result<AgentJar, AttachError> {
    let copy = Copy {
        identity: identity(&file).0,
        dir,
        name,
    };
    // From here a failure drops `jar`, which removes the copy.
    let jar = AgentJar {
        path_for_target,
        sha256,
        copy: Some(copy),
    };
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| AttachError::io(pid, format!("cannot write {}", jar.path_for_target), e))?;
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
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
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
    use super::*;
    use crate::attach::target::open_dir;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::PathBuf;

    fn root_or_skip(why: &str) -> bool {
        // SAFETY: plain getter.
        let root = unsafe { libc::geteuid() } == 0;
        if !root {
            eprintln!("skipped: {why} needs root");
        }
        root
    }

    /// A made-up root directory for a target: `<dir>/tmp` with `mode`, root's.
    fn fake_root(test: &str, mode: u32) -> (PathBuf, OwnedFd) {
        let root = std::env::temp_dir().join(format!("nativemem-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(mode)).unwrap();
        let handle = open_dir(None, root.to_str().unwrap()).unwrap();
        (root, handle)
    }

    fn files_under(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                found.extend(files_under(&path));
            } else {
                found.push(path);
            }
        }
        found
    }

    /// The target re-points its /tmp after it was opened (a new root, a bind mount): the copy
    /// goes where the checked descriptor points, never to the new place.
    #[test]
    fn the_copy_lands_in_the_directory_checked_whatever_the_target_does_after() {
        if !root_or_skip("writing as uid 9999") {
            return;
        }
        let (root, handle) = fake_root("jar-swap", 0o1777);
        let tmp = TargetTmp::open_under(&handle, 7, 9999).unwrap();
        // Now its /tmp is a link to a directory of root's, as /etc would be.
        let etc = root.join("etc");
        std::fs::create_dir(&etc).unwrap();
        std::fs::rename(root.join("tmp"), root.join("checked")).unwrap();
        std::os::unix::fs::symlink(&etc, root.join("tmp")).unwrap();
        let bytes = b"PK jar bytes".to_vec();
        let mut jar =
            AgentJar::copy_into(&tmp, 7, (9999, 9999), &bytes, sha256::hex(&bytes)).unwrap();
        jar.keep();
        assert!(files_under(&etc).is_empty(), "{:?}", files_under(&etc));
        let private = root.join("checked/.nativemem-agent-9999");
        let meta = std::fs::symlink_metadata(&private).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o7777), (9999, 0o700));
        let copies = files_under(&root.join("checked"));
        assert_eq!(copies.len(), 1, "{copies:?}");
        assert_eq!(std::fs::read(&copies[0]).unwrap(), bytes);
        let meta = std::fs::symlink_metadata(&copies[0]).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o7777),
            (9999, 9999, 0o400)
        );
        assert_eq!(
            jar.path_for_target,
            format!(
                "/tmp/.nativemem-agent-9999/nativemem-agent-{}.jar",
                &sha256::hex(&bytes)[..32]
            )
        );
        // The next attach reuses it.
        let again = AgentJar::copy_into(&tmp, 7, (9999, 9999), &bytes, sha256::hex(&bytes));
        assert!(!again.unwrap().is_copy());
        assert_eq!(files_under(&root.join("checked")).len(), 1);
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Copies into a fresh fake /tmp of `mode`, expecting a refusal: its message; nothing is
    /// left in that /tmp.
    fn refused_copy(test: &str, mode: u32) -> String {
        let (root, handle) = fake_root(test, mode);
        let tmp = TargetTmp::open_under(&handle, 7, 9999).unwrap();
        let bytes = b"PK".to_vec();
        let error = AgentJar::copy_into(&tmp, 7, (9999, 9999), &bytes, sha256::hex(&bytes))
            .err()
            .unwrap()
            .to_string();
        assert_eq!(std::fs::read_dir(root.join("tmp")).unwrap().count(), 0);
        std::fs::remove_dir_all(&root).unwrap();
        error
    }

    /// A /tmp that is really a directory only root may write (the target bind-mounted /etc over
    /// its /tmp before it was opened): root, writing with the target's rights, creates nothing.
    #[test]
    fn a_tmp_the_target_cannot_write_gets_nothing_from_root() {
        if root_or_skip("writing as uid 9999") {
            let error = refused_copy("jar-etc", 0o755);
            assert!(error.contains("Permission denied"), "{error}");
        }
    }

    /// An emptyDir: root's, 0777, not sticky. Another uid could rename a private directory away
    /// and put his own under its name before the target reads the jar: no copy is made there.
    #[test]
    fn a_tmp_others_can_write_without_the_sticky_bit_gets_no_copy() {
        if root_or_skip("a directory of root's") {
            let error = refused_copy("jar-emptydir", 0o777);
            assert!(error.contains("not sticky"), "{error}");
        }
    }

    /// Someone else's directory (or link) under the private directory's name is never used.
    #[test]
    fn a_planted_private_directory_is_passed_over() {
        if !root_or_skip("planting as uid 1234") {
            return;
        }
        let (root, handle) = fake_root("jar-planted", 0o1777);
        let planted = root.join("tmp/.nativemem-agent-9999");
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(1234), Some(1234)).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
        let tmp = TargetTmp::open_under(&handle, 7, 9999).unwrap();
        let bytes = b"PK".to_vec();
        let mut jar =
            AgentJar::copy_into(&tmp, 7, (9999, 9999), &bytes, sha256::hex(&bytes)).unwrap();
        jar.keep();
        assert!(
            jar.path_for_target
                .starts_with("/tmp/.nativemem-agent-9999-"),
            "{}",
            jar.path_for_target
        );
        assert_eq!(std::fs::read_dir(&planted).unwrap().count(), 0);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn copy_names_are_unpredictable() {
        let a = super::random_hex().unwrap();
        let b = super::random_hex().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
