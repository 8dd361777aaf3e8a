//! The sidecar `<dump>.symbols/`: what offline symbolisation needs and cannot get later.
//!
//! `symbols.json` (format `nativemem-symbols/1`) lists every mapped executable object with its
//! build-id; objects that will not be on disk later are saved in `objects/`: deleted ones
//! (copied through `/proc/self/map_files`, else through the descriptor [`super::kept`] opened
//! when the object was loaded) and those in directories whose files die with the process
//! (nativemem's extraction directory; the temp directory, where JNI libraries such as
//! rocksdbjni extract themselves). A file still present is hard-linked when the file system
//! allows, which costs nothing; else copied. One that should have been saved and could not be
//! says why in its optional `missing` key. The JVM's perf map, which names JIT frames, is copied
//! in too.

use super::maps::{executable_objects, MappedObject};
use super::SamplingError;
use crate::files::create_private;
use crate::files::{fd_path, open_regular, read_capped, Links, MAX_PERF_MAP_BYTES};
use crate::sidecar_layout::{
    JAVA_FRAMES_FILE, OBJECTS_DIR, PERF_MAP_FILE, SYMBOLS_FILE, SYMBOLS_FORMAT,
};
use serde::Serialize;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct Symbols {
    format: &'static str,
    pid: u32,
    /// The engine that sampled the dump: `jemalloc` or `import-rewriting`.
    engine: &'static str,
    /// The host name: which machine of a fleet the dump came from.
    host: String,
    time_ms: u64,
    objects: Vec<ObjectEntry>,
    perf_map: Option<String>,
}

#[derive(Serialize)]
struct ObjectEntry {
    path: String,
    build_id: String,
    deleted: bool,
    copy: Option<String>,
    /// Why an object that should have been copied was not (absent when it was, or needed none).
    #[serde(skip_serializing_if = "Option::is_none")]
    missing: Option<String>,
}

/// What goes into a sidecar besides the process's own mappings.
pub(super) struct SidecarInput<'a> {
    /// Directories whose objects are saved (nativemem's extraction directory, the temp dir).
    pub save_from: &'a [PathBuf],
    /// A file holding the JVM's perf map, if the JVM could write one.
    pub perf_map: Option<&'a Path>,
    pub time_ms: u64,
    /// The engine that sampled the dump.
    pub engine: &'static str,
}

/// Writes the sidecar into `dir`, a new directory inside the dump's private work directory.
pub(super) fn write_sidecar(dir: &Path, input: &SidecarInput) -> Result<(), SamplingError> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .and_then(|()| fill(dir, input))
        .map_err(|source| SamplingError::Write {
            path: dir.to_owned(),
            source,
        })
}

fn fill(dir: &Path, input: &SidecarInput) -> io::Result<()> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let mut objects = Vec::new();
    for (index, object) in executable_objects(&maps).into_iter().enumerate() {
        objects.push(entry(dir, index, object, input.save_from));
    }
    let perf_map = match input.perf_map {
        Some(source) => {
            copy_private(source, &dir.join(PERF_MAP_FILE))?;
            Some(PERF_MAP_FILE.to_owned())
        }
        None => None,
    };
    // After prof.dump: every Java frame the dump holds is interned by now.
    if let Some(names) = super::java_frames::names() {
        let mut out = create_private(&dir.join(JAVA_FRAMES_FILE))?;
        serde_json::to_writer(&mut out, &names)?;
        out.sync_all()?;
    }
    let symbols = Symbols {
        format: SYMBOLS_FORMAT,
        pid: std::process::id(),
        engine: input.engine,
        host: host_name(),
        time_ms: input.time_ms,
        objects,
        perf_map,
    };
    let mut out = create_private(&dir.join(SYMBOLS_FILE))?;
    serde_json::to_writer_pretty(&mut out, &symbols)?;
    out.write_all(b"\n")?;
    out.sync_all()
}

/// This machine's host name (the kernel's node name); empty if it cannot be read.
fn host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: the buffer is writable for its length; gethostname NUL-terminates within it when
    // the name fits, and the last byte is kept 0 for when it does not.
    let ok = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len() - 1) } == 0;
    let end = name.iter().position(|&b| b == 0).unwrap_or(0);
    if ok {
        String::from_utf8_lossy(&name[..end]).into_owned()
    } else {
        String::new()
    }
}

/// Describes one object; copies it when it will not be found on disk later. An object that
/// cannot be read is listed without build-id or copy rather than failing the dump; one that
/// should have been copied and was not says why in `missing`.
fn entry(dir: &Path, index: usize, object: MappedObject, save_from: &[PathBuf]) -> ObjectEntry {
    // The mapping itself: the right bytes even if the path was deleted or replaced. Its path
    // under /proc is a link by design; the object's own path must not be one.
    let mapped = PathBuf::from(format!("/proc/self/map_files/{}", object.range));
    let map_files = open_regular(&mapped, Links::Follow);
    entry_from(dir, index, object, save_from, map_files)
}

/// [`entry`] with `/proc/self/map_files`' answer for the object; then a descriptor kept since
/// it was loaded ([`super::kept`]), then its path.
fn entry_from(
    dir: &Path,
    index: usize,
    object: MappedObject,
    save_from: &[PathBuf],
    map_files: io::Result<File>,
) -> ObjectEntry {
    let (source, map_files_error) = match map_files {
        Ok(file) => (Some(file), None),
        Err(e) => {
            let other = super::kept::kept(&object)
                .or_else(|| open_regular(Path::new(&object.path), Links::Refuse).ok());
            (other, Some(e))
        }
    };
    let build_id = source
        .as_ref()
        .and_then(|f| build_id(f.try_clone().ok()?))
        .unwrap_or_default();
    let transient = save_from
        .iter()
        .any(|d| Path::new(&object.path).starts_with(d));
    let wanted = object.deleted || transient;
    let saved = match (&source, wanted) {
        (Some(source), true) => {
            let name = Path::new(&object.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "object".into());
            let relative = format!("{OBJECTS_DIR}/{index}-{name}");
            Some(
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .recursive(true)
                    .create(dir.join(OBJECTS_DIR))
                    .and_then(|()| save(source, &dir.join(&relative)))
                    .map(|()| relative),
            )
        }
        _ => None,
    };
    let (copy, missing) = match saved {
        Some(Ok(relative)) => (Some(relative), None),
        Some(Err(e)) => (None, Some(format!("its copy could not be saved ({e})"))),
        None if wanted && source.is_none() => (None, Some(why_unread(&object, map_files_error))),
        None => (None, None),
    };
    ObjectEntry {
        path: object.path,
        build_id,
        deleted: object.deleted,
        copy,
        missing,
    }
}

/// Why an object to be saved could not be read at all.
fn why_unread(object: &MappedObject, map_files: Option<io::Error>) -> String {
    let denied = map_files.as_ref().is_some_and(|e| {
        matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
            || e.kind() == io::ErrorKind::PermissionDenied
    });
    let how = match (denied, map_files) {
        (true, _) => "this user cannot read /proc/self/map_files (it takes CAP_CHECKPOINT_RESTORE \
                      or CAP_SYS_ADMIN)"
            .to_owned(),
        (false, Some(e)) => format!("/proc/self/map_files/{} cannot be read ({e})", object.range),
        (false, None) => "it cannot be read".to_owned(),
    };
    match object.deleted {
        true => format!(
            "deleted after it was loaded, and no copy was saved: {how}, and no descriptor of it \
             was kept since its loading"
        ),
        false => format!("no copy was saved: {how}, and its path cannot be read"),
    }
}

/// Saves the open object at `to`: a hard link to the very file when it is ours (costs nothing),
/// else a private copy of its bytes. A deleted file cannot be linked (no name is left to it).
fn save(source: &File, to: &Path) -> io::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if source.metadata()?.uid() == unsafe { libc::geteuid() } && link_open_file(source, to).is_ok()
    {
        return Ok(());
    }
    let mut out = create_private(to)?;
    copy_whole(source, &mut out)?;
    out.sync_all()
}

/// Copies every byte of `source` from offset 0 with positioned reads: the descriptor's offset,
/// shared with every clone of it (the build-id was read through one), is neither used nor moved.
fn copy_whole(source: &File, out: &mut File) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut buffer = vec![0u8; 1 << 16];
    let mut offset = 0u64;
    loop {
        let read = match source.read_at(&mut buffer, offset) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write_all(&buffer[..read])?;
        offset += read as u64;
    }
}

/// Hard-links the file open as `file` at `to`: the checked inode, whatever its name says now.
fn link_open_file(file: &File, to: &Path) -> io::Result<()> {
    let cstr = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    };
    let (from, to) = (cstr(&fd_path(file))?, cstr(to)?);
    // SAFETY: NUL-terminated paths; AT_SYMLINK_FOLLOW resolves the /proc/self/fd magic link.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The GNU build-id of an ELF file, as lowercase hex; `None` if it has none or is not ELF.
pub(super) fn build_id(file: File) -> Option<String> {
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    let id = object::Object::build_id(&elf).ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// Copies a file we were handed (the JVM's perf map) into the sidecar: a regular file only,
/// never through a link, at most `MAX_PERF_MAP_BYTES`.
fn copy_private(from: &Path, to: &Path) -> io::Result<()> {
    let bytes = read_capped(from, Links::Refuse, MAX_PERF_MAP_BYTES)?;
    let mut out = create_private(to)?;
    out.write_all(&bytes)?;
    out.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` bytes of `file` mapped private, read-only and executable, as the loader maps code;
    /// the caller unmaps them.
    fn map_executable(file: &File, len: usize) -> *mut libc::c_void {
        // SAFETY: a private read-only executable mapping of an open file, unmapped by the caller.
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE,
                std::os::fd::AsRawFd::as_raw_fd(file),
                0,
            )
        };
        assert_ne!(mapped, libc::MAP_FAILED, "{}", io::Error::last_os_error());
        mapped
    }

    fn map_files_readable() -> bool {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let any = &executable_objects(&maps)[0];
        File::open(format!("/proc/self/map_files/{}", any.range)).is_ok()
    }

    #[test]
    fn host_name_is_the_kernels() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(host_name(), kernel.trim_end());
    }

    #[test]
    fn build_id_matches_readelf_for_libc() {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let libc = executable_objects(&maps)
            .into_iter()
            .find(|o| o.path.contains("libc.so"))
            .expect("libc mapped");
        let file = File::open(&libc.path).unwrap();
        let ours = build_id(file).expect("libc has a build-id");
        let readelf = std::process::Command::new("readelf")
            .args(["-n", &libc.path])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&readelf.stdout);
        assert!(
            text.contains(&format!("Build ID: {ours}")),
            "{ours} not in {text}"
        );
    }

    #[test]
    fn saving_an_own_file_links_the_open_inode() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("nativemem-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.so"), b"ELF?").unwrap();
        let source = File::open(dir.join("lib.so")).unwrap();
        // The name now points elsewhere; the saved file must be the one opened.
        std::fs::rename(dir.join("lib.so"), dir.join("old.so")).unwrap();
        std::fs::write(dir.join("lib.so"), b"planted").unwrap();
        save(&source, &dir.join("saved.so")).unwrap();
        let (saved, old) = (
            std::fs::metadata(dir.join("saved.so")).unwrap(),
            std::fs::metadata(dir.join("old.so")).unwrap(),
        );
        assert_eq!(saved.ino(), old.ino(), "a hard link to the opened file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Found on a Kafka-like service whose zstd-jni deletes its extracted library right after
    /// loading it: the copy began at the `.dynstr` offset, where reading the build-id had left
    /// the descriptor's offset (a `try_clone` shares it).
    #[test]
    fn a_copy_holds_the_whole_file_whatever_was_read_through_the_descriptor_before() {
        use std::io::{Read, Seek, SeekFrom};
        let dir = std::env::temp_dir().join(format!("nativemem-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(dir.join("lib.so"), &bytes).unwrap();
        let source = File::open(dir.join("lib.so")).unwrap();
        let mut clone = source.try_clone().unwrap();
        clone.seek(SeekFrom::Start(0x46e0)).unwrap();
        clone.read_exact(&mut [0u8; 100]).unwrap();
        // Deleted: no hard link can be made to it (nlink 0), so it is copied.
        std::fs::remove_file(dir.join("lib.so")).unwrap();
        save(&source, &dir.join("saved.so")).unwrap();
        let saved = std::fs::read(dir.join("saved.so")).unwrap();
        assert_eq!(saved.len(), bytes.len(), "the copy's length");
        assert!(saved == bytes, "the copy's bytes differ from the file's");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A shared object mapped executable, then deleted, as a JNI library that removes its
    /// extracted file after `System.load`: the sidecar holds a byte-identical copy with its
    /// build-id.
    #[test]
    fn a_deleted_mapped_object_is_saved_whole_with_its_build_id() {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let system = executable_objects(&maps)
            .into_iter()
            .find(|o| o.path.contains("libc.so"))
            .expect("libc mapped");
        let bytes = std::fs::read(&system.path).unwrap();
        let expected = build_id(File::open(&system.path).unwrap()).expect("libc has a build-id");
        let dir = std::env::temp_dir().join(format!("nativemem-deleted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sidecar")).unwrap();
        let lib = dir.join("libextracted.so");
        std::fs::write(&lib, &bytes).unwrap();
        let file = File::open(&lib).unwrap();
        let mapped = map_executable(&file, bytes.len());
        drop(file);
        std::fs::remove_file(&lib).unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let object = executable_objects(&maps)
            .into_iter()
            .find(|o| o.path == lib.to_string_lossy())
            .expect("the deleted object mapped");
        assert!(object.deleted, "{object:?}");
        let entry = entry(&dir.join("sidecar"), 3, object, &[]);
        // SAFETY: the mapping made above, used by nothing else.
        unsafe { libc::munmap(mapped, bytes.len()) };
        match entry.copy {
            Some(copy) => {
                assert_eq!(entry.build_id, expected);
                let copy = dir.join("sidecar").join(copy);
                let saved = std::fs::read(&copy).unwrap();
                assert_eq!(saved.len(), bytes.len(), "the copy's length");
                assert!(saved == bytes, "the copy's bytes differ from the object's");
                let saved_id = build_id(File::open(&copy).unwrap());
                assert_eq!(saved_id.as_deref(), Some(expected.as_str()));
            }
            // Without CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) /proc/self/map_files cannot
            // be opened, and the path is gone: the sidecar says so.
            None if !map_files_readable() => {
                let missing = entry.missing.expect("no copy and no reason said");
                assert!(missing.contains("/proc/self/map_files"), "{missing}");
            }
            None => panic!("no copy of the deleted object: {:?}", entry.missing),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// As a user without CAP_CHECKPOINT_RESTORE sees it (uid 65534 in the report): map_files
    /// refused, the path deleted. The descriptor kept when the object was loaded is copied;
    /// without one, the entry says why there is no copy.
    #[test]
    fn without_map_files_a_deleted_object_is_copied_from_its_kept_descriptor_or_said_missing() {
        let dir = std::env::temp_dir().join(format!("nativemem-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sidecar")).unwrap();
        let bytes: Vec<u8> = (0..70_000u32).map(|i| (i * 13 % 253) as u8).collect();
        // `deleted`: before it is mapped, so that no refresh running meanwhile keeps it.
        let mapped_object = |name: &str, deleted: bool| {
            let lib = dir.join(name);
            std::fs::write(&lib, &bytes).unwrap();
            let file = File::open(&lib).unwrap();
            if deleted {
                std::fs::remove_file(&lib).unwrap();
            }
            (lib, map_executable(&file, bytes.len()))
        };
        let (kept_lib, kept_map) = mapped_object("libkept.so", false);
        let (lost_lib, lost_map) = mapped_object("liblost.so", true);
        let find = |lib: &Path| {
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            executable_objects(&maps)
                .into_iter()
                .find(|o| Path::new(&o.path) == lib)
                .expect("mapped")
        };
        // What the engine does after a dlopen returned, for the first one only.
        super::super::kept::keep_for_test(&find(&kept_lib));
        std::fs::remove_file(&kept_lib).unwrap();
        let denied = || Err(io::Error::from_raw_os_error(libc::EPERM));
        let saved = entry_from(&dir.join("sidecar"), 1, find(&kept_lib), &[], denied());
        let lost = entry_from(&dir.join("sidecar"), 2, find(&lost_lib), &[], denied());
        // SAFETY: the mappings made above, used by nothing else.
        unsafe {
            libc::munmap(kept_map, bytes.len());
            libc::munmap(lost_map, bytes.len());
        }
        let json = serde_json::to_string(&lost).unwrap();
        assert!(json.contains("\"missing\""), "{json}");
        let json = serde_json::to_string(&saved).unwrap();
        assert!(!json.contains("missing"), "{json}");
        let copy = saved.copy.expect("copied from the kept descriptor");
        assert!(std::fs::read(dir.join("sidecar").join(copy)).unwrap() == bytes);
        assert_eq!(saved.missing, None);
        assert!(lost.deleted && lost.copy.is_none());
        let missing = lost.missing.expect("the reason there is no copy");
        assert!(
            missing.contains("deleted after it was loaded")
                && missing.contains("cannot read /proc/self/map_files"),
            "{missing}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
