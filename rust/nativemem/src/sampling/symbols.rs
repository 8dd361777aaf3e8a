//! The sidecar `<dump>.symbols/`: what offline symbolisation needs and cannot get later.
//!
//! `symbols.json` (format `nativemem-symbols/1`) lists every mapped executable object with its
//! build-id; objects that will not be on disk later are saved in `objects/`: deleted ones
//! (copied through `/proc/self/map_files`) and those in directories whose files die with the
//! process (nativemem's extraction directory; the temp directory, where JNI libraries such as
//! rocksdbjni extract themselves). A file still present is hard-linked when the file system
//! allows, which costs nothing; else copied. The JVM's perf map, which names JIT frames, is
//! copied in too.

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
/// cannot be read is listed without build-id or copy rather than failing the dump.
fn entry(dir: &Path, index: usize, object: MappedObject, save_from: &[PathBuf]) -> ObjectEntry {
    // The mapping itself: the right bytes even if the path was deleted or replaced. Its path
    // under /proc is a link by design; the object's own path must not be one.
    let mapped = PathBuf::from(format!("/proc/self/map_files/{}", object.range));
    let source = open_regular(&mapped, Links::Follow)
        .or_else(|_| open_regular(Path::new(&object.path), Links::Refuse))
        .ok();
    let build_id = source
        .as_ref()
        .and_then(|f| build_id(f.try_clone().ok()?))
        .unwrap_or_default();
    let transient = save_from
        .iter()
        .any(|d| Path::new(&object.path).starts_with(d));
    let copy = source
        .filter(|_| object.deleted || transient)
        .and_then(|source| {
            let name = Path::new(&object.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "object".into());
            let relative = format!("{OBJECTS_DIR}/{index}-{name}");
            std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir.join(OBJECTS_DIR))
                .and_then(|()| save(&source, &dir.join(&relative)))
                .ok()
                .map(|()| relative)
        });
    ObjectEntry {
        path: object.path,
        build_id,
        deleted: object.deleted,
        copy,
    }
}

/// Saves the open object at `to`: a hard link to the very file when it is ours (costs nothing),
/// else a private copy of its bytes.
fn save(source: &File, to: &Path) -> io::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if source.metadata()?.uid() == unsafe { libc::geteuid() } && link_open_file(source, to).is_ok()
    {
        return Ok(());
    }
    let mut out = create_private(to)?;
    io::copy(&mut &*source, &mut out)?;
    out.sync_all()
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
}
