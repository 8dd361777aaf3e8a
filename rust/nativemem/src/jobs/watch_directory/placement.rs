//! The directory bundles go in, opened once through the file layer and used only through its
//! descriptor (SECURITY.md, "Watch directories on shared volumes"). The directory the user names
//! is walked from `/` without following another user's link and made 0700 if missing. If it is
//! this user's and no group or other user can write it, bundles go in it. If it is shared (root's
//! or this user's, writable by others, sticky or not: a Kubernetes `emptyDir` is 0777, a volume
//! with `fsGroup` 2777), bundles go in a private child `nativemem-<uid>` made 0700 (or reused, if
//! it is this user's with no group or other bits), checked on its descriptor. Another user's
//! directory is refused. Since nothing is looked up by name again, another user on the volume can
//! at most move or delete bundles, never redirect a write or a deletion.

use crate::files::dir::{entry_name, my_uid, Dir, Stat};
use crate::files::walk::{open_dir, Missing};
use crate::files::FileError;

use std::path::Path;

/// What every refusal ends with: what to do instead.
pub const FIX: &str = "give the watch a directory of your own or a shared volume's directory \
                       (root's), e.g. -Dnativemem.watch.dir=/volume/incidents";

/// The private directory made in a shared one: `nativemem-<uid>`.
pub const PRIVATE_PREFIX: &str = "nativemem-";

const GROUP_OR_OTHER_WRITE: u32 = 0o022;

/// The directory bundles go in, and where that is and what another user can do, said once.
pub struct Placed {
    pub dir: Dir,
    pub placement: String,
}

/// A directory refused, or one that could not be opened: the message ends with [`FIX`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl From<FileError> for Refused {
    fn from(e: FileError) -> Refused {
        Refused(format!("{e}; {FIX}"))
    }
}

/// Opens (making it if missing) the directory `named` and decides where bundles go.
pub fn open(named: &Path) -> Result<Placed, Refused> {
    let dir = open_dir(named, Missing::Create)?.dir;
    let me = my_uid();
    let st = stat(&dir)?;
    let mode = st.mode & 0o7777;
    if st.uid == me && mode & GROUP_OR_OTHER_WRITE == 0 {
        let placement = format!(
            "bundles go in {} (this user's, mode {mode:o}), used through one open descriptor: \
             another user can at most move or delete bundles where a directory above lets them, \
             never redirect a write or a deletion",
            dir.shown.display()
        );
        return Ok(Placed { dir, placement });
    }
    if st.uid != me && st.uid != 0 {
        return Err(Refused(format!(
            "{} belongs to uid {}, not to this process (uid {me}) or root, so its owner could take \
             what nativemem puts there; {FIX}",
            dir.shown.display(),
            st.uid
        )));
    }
    let name = format!("{PRIVATE_PREFIX}{me}");
    let mine = private_child(&dir, &name)?;
    let placement = format!(
        "bundles go in {} (made by nativemem, mode 0700, used through one open descriptor) \
         because {} is shared (uid {}, mode {mode:o}): another user of the volume can at most \
         move or delete {name} and the bundles in it, never redirect a write or a deletion",
        mine.shown.display(),
        named.display(),
        st.uid
    );
    Ok(Placed {
        dir: mine,
        placement,
    })
}

/// Checks, on the descriptor, that the directory is still this user's alone.
pub fn check(dir: &Dir) -> Result<(), Refused> {
    let st = stat(dir)?;
    if st.uid == my_uid() && st.mode & GROUP_OR_OTHER_WRITE == 0 {
        return Ok(());
    }
    Err(Refused(format!(
        "{} is no longer this user's alone (uid {}, mode {:o}); {FIX}",
        dir.shown.display(),
        st.uid,
        st.mode & 0o7777
    )))
}

fn private_child(shared: &Dir, name: &str) -> Result<Dir, Refused> {
    let entry = entry_name(name)?;
    if !shared.has(&entry) {
        match shared.make_private_child(&entry) {
            Ok(made) => return Ok(made),
            // made meanwhile (another JVM of this user, or someone else): checked below
            Err(_) if shared.has(&entry) => {}
            Err(e) => {
                return Err(
                    FileError::io("make the private directory", &shown(shared, name), e).into(),
                )
            }
        }
    }
    let existing = shared.open_child(&entry).map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::ELOOP) => "it is a symbolic link".to_owned(),
            Some(libc::ENOTDIR) => "it is not a directory".to_owned(),
            _ => e.to_string(),
        };
        Refused(format!(
            "{} exists and is not a directory nativemem can use ({why}): remove it, or {FIX}",
            shown(shared, name).display()
        ))
    })?;
    let st = stat(&existing)?;
    if st.uid != my_uid() || st.mode & 0o077 != 0 {
        return Err(Refused(format!(
            "{} exists but is not this user's private directory (uid {}, mode {:o}): remove it, \
             or {FIX}",
            existing.shown.display(),
            st.uid,
            st.mode & 0o7777
        )));
    }
    Ok(existing)
}

fn stat(dir: &Dir) -> Result<Stat, FileError> {
    dir.stat().map_err(|e| FileError::io("stat", &dir.shown, e))
}

fn shown(dir: &Dir, name: &str) -> std::path::PathBuf {
    dir.shown.join(name)
}
