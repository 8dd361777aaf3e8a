//! The executable objects mapped into this process, from `/proc/self/maps`.

/// One mapped file with executable code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MappedObject {
    /// As the kernel prints it, without the ` (deleted)` suffix.
    pub path: String,
    /// The file was deleted or replaced after it was mapped.
    pub deleted: bool,
    /// `<start>-<end>` of its first executable mapping: the name under `/proc/self/map_files`.
    pub range: String,
    /// The mapped file's device (major, minor) and inode, as the kernel prints them: the file
    /// mapped, whatever its path names now.
    pub device: (u64, u64),
    pub inode: u64,
}

const DELETED: &str = " (deleted)";

/// Executable file mappings, one entry per path, in address order.
pub(super) fn executable_objects(maps: &str) -> Vec<MappedObject> {
    let mut objects: Vec<MappedObject> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode pathname (the path may contain spaces)
        let mut fields = line.splitn(6, ' ');
        let (Some(range), Some(perms), Some(_), Some(device), Some(inode), Some(rest)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let name = rest.trim_start();
        if !perms.contains('x') || !name.starts_with('/') {
            continue;
        }
        let (path, deleted) = match name.strip_suffix(DELETED) {
            Some(p) => (p, true),
            None => (name, false),
        };
        if objects.iter().any(|o| o.path == path) {
            continue;
        }
        objects.push(MappedObject {
            path: path.to_owned(),
            deleted,
            range: range.to_owned(),
            device: parse_device(device).unwrap_or_default(),
            inode: inode.parse().unwrap_or_default(),
        });
    }
    objects
}

/// `<major>:<minor>` in hex, as `/proc/<pid>/maps` prints a device.
fn parse_device(text: &str) -> Option<(u64, u64)> {
    let (major, minor) = text.split_once(':')?;
    Some((
        u64::from_str_radix(major, 16).ok()?,
        u64::from_str_radix(minor, 16).ok()?,
    ))
}

/// A `st_dev` as (major, minor), glibc's encoding (`gnu_dev_major`, `gnu_dev_minor`).
pub(super) fn device_of(st_dev: u64) -> (u64, u64) {
    let major = ((st_dev >> 8) & 0xfff) | ((st_dev >> 32) & !0xfff);
    let minor = (st_dev & 0xff) | ((st_dev >> 12) & !0xff);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_executable_files_once_and_marks_deleted_ones() {
        let maps = "\
55d0c0000000-55d0c0001000 r--p 00000000 08:01 1 /usr/bin/java
55d0c0001000-55d0c0002000 r-xp 00001000 08:01 1 /usr/bin/java
7f0000000000-7f0000100000 r-xp 00000000 00:00 0 
7f0000100000-7f0000200000 r-xp 00000000 08:01 7 /tmp/x/lib with space.so (deleted)
7f0000200000-7f0000300000 r-xp 00010000 08:01 1 /usr/bin/java
7f0000300000-7f0000301000 r-xp 00000000 00:00 0 [vdso]
";
        let objects = executable_objects(maps);
        assert_eq!(objects.len(), 2, "{objects:?}");
        assert_eq!(objects[0].path, "/usr/bin/java");
        assert_eq!(objects[0].range, "55d0c0001000-55d0c0002000");
        assert!(!objects[0].deleted);
        assert_eq!(objects[1].path, "/tmp/x/lib with space.so");
        assert!(objects[1].deleted);
        assert_eq!((objects[1].device, objects[1].inode), ((8, 1), 7));
    }

    #[test]
    fn the_device_of_a_mapped_file_is_its_st_dev() {
        use std::os::unix::fs::MetadataExt;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let libc = executable_objects(&maps)
            .into_iter()
            .find(|o| o.path.contains("libc.so") && !o.deleted)
            .expect("libc mapped");
        let file = std::fs::File::open(&libc.path).unwrap();
        let meta = file.metadata().unwrap();
        assert_eq!(meta.ino(), libc.inode);
        // overlayfs reports its own device; the maps show the layer's.
        if !super::super::kept::on_overlay(&file) {
            assert_eq!(device_of(meta.dev()), libc.device);
        }
    }
}
