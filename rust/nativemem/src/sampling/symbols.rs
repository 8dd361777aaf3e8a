//! The sidecar `<dump>.symbols/`: what offline symbolisation needs and cannot get later.
//!
//! `symbols.json` (format `nativemem-symbols/1`) lists every mapped executable object with its
//! build-id; objects that will not be on disk later are saved in `objects/`: deleted ones
//! (copied through `/proc/self/map_files`) and those in directories whose files die with the
//! process (nativemem's extraction directory; the temp directory, where JNI libraries such as
//! rocksdbjni extract themselves). A file still present is hard-linked when the file system
//! allows, which costs nothing; else copied. The JVM's perf map, which names JIT frames, is
//! copied in too.

use super::files::{create_private, rename_no_replace, temp_beside};
use super::maps::{executable_objects, MappedObject};
use super::SamplingError;
use serde::Serialize;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

pub(super) const FORMAT: &str = "nativemem-symbols/1";

#[derive(Serialize)]
struct Symbols {
    format: &'static str,
    pid: u32,
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
}

/// `<dump file name>.symbols` next to the dump.
pub(super) fn sidecar_path(dump: &Path) -> PathBuf {
    let mut name = dump.file_name().unwrap_or_default().to_os_string();
    name.push(".symbols");
    dump.with_file_name(name)
}

/// Writes the sidecar for `dump` atomically: built under a temp name, then renamed.
pub(super) fn write_sidecar(dump: &Path, input: &SidecarInput) -> Result<PathBuf, SamplingError> {
    let target = sidecar_path(dump);
    let tmp = temp_beside(&target, "");
    let fail = |source: io::Error| SamplingError::Write {
        path: target.clone(),
        source,
    };
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmp)
        .map_err(fail)?;
    let written = fill(&tmp, input).and_then(|()| rename_no_replace(&tmp, &target));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(fail(e));
    }
    Ok(target)
}

fn fill(dir: &Path, input: &SidecarInput) -> io::Result<()> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let mut objects = Vec::new();
    for (index, object) in executable_objects(&maps).into_iter().enumerate() {
        objects.push(entry(dir, index, object, input.save_from));
    }
    let perf_map = match input.perf_map {
        Some(source) => {
            copy_private(source, &dir.join("perf.map"))?;
            Some("perf.map".to_owned())
        }
        None => None,
    };
    let symbols = Symbols {
        format: FORMAT,
        pid: std::process::id(),
        time_ms: input.time_ms,
        objects,
        perf_map,
    };
    let mut out = create_private(&dir.join("symbols.json"))?;
    serde_json::to_writer_pretty(&mut out, &symbols)?;
    out.write_all(b"\n")?;
    out.sync_all()
}

/// Describes one object; copies it when it will not be found on disk later. An object that
/// cannot be read is listed without build-id or copy rather than failing the dump.
fn entry(dir: &Path, index: usize, object: MappedObject, save_from: &[PathBuf]) -> ObjectEntry {
    // The mapping itself: the right bytes even if the path was deleted or replaced.
    let mapped = PathBuf::from(format!("/proc/self/map_files/{}", object.range));
    let source = if mapped.exists() {
        mapped
    } else {
        PathBuf::from(&object.path)
    };
    let build_id = build_id(&source).unwrap_or_default();
    let transient = save_from
        .iter()
        .any(|d| Path::new(&object.path).starts_with(d));
    let copy = (object.deleted || transient)
        .then(|| {
            let name = Path::new(&object.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "object".into());
            let relative = format!("objects/{index}-{name}");
            std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir.join("objects"))
                .and_then(|()| {
                    let to = dir.join(&relative);
                    if object.deleted {
                        copy_private(&source, &to)
                    } else {
                        std::fs::hard_link(&object.path, &to)
                            .or_else(|_| copy_private(&source, &to))
                    }
                })
                .ok()
                .map(|()| relative)
        })
        .flatten();
    ObjectEntry {
        path: object.path,
        build_id,
        deleted: object.deleted,
        copy,
    }
}

/// The GNU build-id of an ELF file, as lowercase hex; `None` if it has none or is not ELF.
pub(super) fn build_id(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    let id = object::Object::build_id(&elf).ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

fn copy_private(from: &Path, to: &Path) -> io::Result<()> {
    let mut source = File::open(from)?;
    let mut out = create_private(to)?;
    io::copy(&mut source, &mut out)?;
    out.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_matches_readelf_for_libc() {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let libc = executable_objects(&maps)
            .into_iter()
            .find(|o| o.path.contains("libc.so"))
            .expect("libc mapped");
        let ours = build_id(Path::new(&libc.path)).expect("libc has a build-id");
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
}
