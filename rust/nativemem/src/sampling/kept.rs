//! Descriptors of loaded objects kept open while they are mapped, so that a sidecar can still
//! copy one whose file was deleted after loading (zstd-jni, netty and others extract their
//! library to the temp directory, `System.load` it and delete it at once) when this user cannot
//! open `/proc/self/map_files` (it takes `CAP_CHECKPOINT_RESTORE` or `CAP_SYS_ADMIN`).
//!
//! The import-rewriting engine calls [`refresh`] when it starts and each time a `dlopen` or
//! `dlclose` has returned, after the loader let go of its lock and outside any allocation hook:
//! the file of a library just loaded is then still there. Which directories die with the process
//! (`save_from`: the temp directory, nativemem's extraction directory) is told only at dump time,
//! so every object outside the system's library directories and the JVM's home is kept, at most
//! [`MAX_KEPT`] descriptors; one whose mapping is gone is let go at the next refresh.

use super::maps::{device_of, executable_objects, MappedObject};
use crate::files::{open_regular, Links};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

/// Descriptors kept at most: a JVM maps a few dozen objects outside its home and the system's
/// directories, JNI libraries included.
pub(super) const MAX_KEPT: usize = 64;

/// Objects whose files live for the machine's life: never kept.
const SYSTEM_DIRS: &[&str] = &[
    "/lib",
    "/lib32",
    "/lib64",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
];

struct Kept {
    device: (u64, u64),
    inode: u64,
    file: File,
}

/// Taken after a `dlopen`/`dlclose` returned and while writing a sidecar; never in a hook.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// Keeps a descriptor of each newly mapped object that may be deleted while mapped; lets go of
/// those no longer mapped.
#[cfg_attr(not(import_rewriting), allow(dead_code))]
pub(crate) fn refresh() {
    if let Ok(maps) = std::fs::read_to_string("/proc/self/maps") {
        refresh_from(&maps);
    }
}

fn refresh_from(maps: &str) {
    let objects = executable_objects(maps);
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    kept.retain(|k| objects.iter().any(|o| is(o, k)));
    let home = jvm_home(&objects);
    for object in &objects {
        if kept.len() >= MAX_KEPT {
            break;
        }
        let path = Path::new(&object.path);
        let lasting = SYSTEM_DIRS.iter().any(|d| path.starts_with(d))
            || home.is_some_and(|home| path.starts_with(home));
        if object.deleted || lasting || kept.iter().any(|k| is(object, k)) {
            continue;
        }
        if let Some(file) = open_mapped(object) {
            kept.push(Kept {
                device: object.device,
                inode: object.inode,
                file,
            });
        }
    }
}

/// A descriptor of the file mapped as `object`, if one was kept.
pub(super) fn kept(object: &MappedObject) -> Option<File> {
    let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    let found = kept.iter().find(|k| is(object, k))?;
    found.file.try_clone().ok()
}

/// Keeps `object`'s descriptor as [`refresh`] would, whatever directory it lies in.
#[cfg(test)]
pub(super) fn keep_for_test(object: &MappedObject) {
    let file = open_mapped(object).expect("the mapped file, still in place");
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    kept.push(Kept {
        device: object.device,
        inode: object.inode,
        file,
    });
}

fn is(object: &MappedObject, kept: &Kept) -> bool {
    object.inode == kept.inode && object.device == kept.device
}

/// The object's path opened, if it is still the file mapped: a regular file, not reached
/// through a final link, with the mapping's inode (and device, but on overlayfs, whose files
/// report the overlay's device while the maps show the layer's).
fn open_mapped(object: &MappedObject) -> Option<File> {
    let file = open_regular(Path::new(&object.path), Links::Refuse).ok()?;
    let meta = file.metadata().ok()?;
    let same_device = device_of(meta.dev()) == object.device || on_overlay(&file);
    (meta.ino() == object.inode && same_device).then_some(file)
}

pub(super) fn on_overlay(file: &File) -> bool {
    const OVERLAYFS_SUPER_MAGIC: i64 = 0x794c_7630;
    // SAFETY: fstatfs fills the zeroed struct for an open descriptor.
    unsafe {
        let mut fs: libc::statfs = std::mem::zeroed();
        libc::fstatfs(std::os::fd::AsRawFd::as_raw_fd(file), &mut fs) == 0
            && fs.f_type as i64 == OVERLAYFS_SUPER_MAGIC
    }
}

/// The JVM's home, from where `libjvm.so` lies (`<home>/lib/server/libjvm.so`, or
/// `<home>/lib/<arch>/server/libjvm.so` before JDK 9): its files last.
fn jvm_home(objects: &[MappedObject]) -> Option<&Path> {
    let jvm = objects
        .iter()
        .map(|o| Path::new(&o.path))
        .find(|p| p.file_name().is_some_and(|n| n == "libjvm.so"))?;
    jvm.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "lib"))?
        .parent()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jvm_home_holds_its_lib_directory() {
        let maps = "\
7f0000000000-7f0000100000 r-xp 00000000 08:01 7 /opt/jdk-21/lib/server/libjvm.so
7f0000100000-7f0000200000 r-xp 00000000 08:01 8 /opt/jdk8/jre/lib/amd64/libzip.so
";
        let objects = executable_objects(maps);
        assert_eq!(jvm_home(&objects), Some(Path::new("/opt/jdk-21")));
        let old = "7f0000000000-7f0000100000 r-xp 00000000 08:01 7 /opt/jdk8/jre/lib/amd64/server/libjvm.so\n";
        assert_eq!(
            jvm_home(&executable_objects(old)),
            Some(Path::new("/opt/jdk8/jre"))
        );
    }
}
