//! `prof.dump` written the way files for the user are (`files`): into a private directory
//! reached by descriptor, mode 0600, renamed into place, never overwriting, nothing left behind
//! on failure; one dump at a time is the caller's turn (`jobs::heap_dump`). The dump is then read
//! once, by the one heap_v2 reader (`profile::summary_of`), and its summary is the answer: the
//! caller opens nothing again.

use super::symbols::{write_sidecar, SidecarInput};
use super::SamplingError;
use crate::allocator::{keys, Mallctl};
use crate::files::{create_private, remove_tree, Dir, Purpose};
use crate::profile::{self, Summary};
use crate::sidecar_layout::{dir_beside, DIR_SUFFIX};
use serde::Serialize;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// What to dump and what to save beside it.
pub struct DumpRequest {
    pub target: PathBuf,
    /// Directories whose mapped objects are saved into the sidecar.
    pub save_from: Vec<PathBuf>,
    /// A file with the JVM's perf map, copied into the sidecar.
    pub perf_map: Option<PathBuf>,
}

/// A dump that is in place, and what it holds (`dump_time_ms` is when it was taken).
#[derive(Debug, Clone, Serialize)]
pub struct DumpedProfile {
    pub path: String,
    pub symbols_dir: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// Where a dump's samples come from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// The process's jemalloc, through `prof.dump`.
    Jemalloc(&'static Mallctl),
    /// The import-rewriting engine's live heap (`sampling::glibc`).
    #[cfg(import_rewriting)]
    Imports,
}

/// Dumps the heap profile of `source` to `request.target` with its sidecar.
pub(crate) fn dump_from(
    request: &DumpRequest,
    source: impl FnOnce() -> Result<Source, SamplingError>,
) -> Result<DumpedProfile, SamplingError> {
    let source = source()?;
    let (dir, name) = Dir::for_new_file(&request.target, HEAP_PROFILE)?;
    let target = std::path::absolute(&request.target).map_err(|source| SamplingError::Write {
        path: request.target.clone(),
        source,
    })?;
    let sidecar_name = {
        let mut bytes = name.as_bytes().to_vec();
        bytes.extend_from_slice(DIR_SUFFIX.as_bytes());
        CString::new(bytes).unwrap_or_default()
    };
    if dir.has(&sidecar_name) {
        return Err(SamplingError::BadPath(format!(
            "{} already exists; it would hold the symbols of {}: choose a new name or delete it",
            dir_beside(&target).display(),
            target.display()
        )));
    }
    let time_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (work, work_name) = dir.private_child(&name.to_string_lossy())?;
    let result = dump_into(source, &work, request, time_ms).and_then(|summary| {
        // The sidecar first: a dump in place always has its symbols beside it.
        let place = |from: &str, to: &CString, shown: PathBuf| {
            work.rename_no_replace(&CString::new(from).unwrap_or_default(), &dir, to)
                .map_err(|source| SamplingError::Write {
                    path: shown,
                    source,
                })
        };
        place(SIDECAR, &sidecar_name, dir_beside(&target))?;
        if let Err(e) = place(DUMP, &name, target.clone()) {
            remove_tree(&dir, &sidecar_name);
            return Err(e);
        }
        Ok(summary)
    });
    remove_tree(&dir, &work_name);
    Ok(DumpedProfile {
        path: target.display().to_string(),
        symbols_dir: dir_beside(&target).display().to_string(),
        summary: result?,
    })
}

/// For messages about the dump's path.
const HEAP_PROFILE: Purpose = Purpose {
    noun: "heap profile",
    example: "app.heap",
};

/// Names inside the private work directory.
const DUMP: &str = "heap";
const SIDECAR: &str = "symbols";

/// Writes the dump and its sidecar into `work`, a private directory reached by descriptor, and
/// reads the dump back for its summary.
fn dump_into(
    source: Source,
    work: &Dir,
    request: &DumpRequest,
    time_ms: u64,
) -> Result<Summary, SamplingError> {
    let dump = work.anchored(DUMP);
    let failed = |source| SamplingError::Write {
        path: work.shown.join(DUMP),
        source,
    };
    // jemalloc opens the file with O_TRUNC: the mode 0600 we created it with stays.
    let file = create_private(&dump).map_err(failed)?;
    match source {
        Source::Jemalloc(ctl) => {
            drop(file);
            let c_dump = CString::new(dump.as_os_str().as_bytes()).map_err(|_| {
                SamplingError::BadPath(format!("{} contains a NUL byte", dump.display()))
            })?;
            ctl.set(keys::PROF_DUMP, c_dump.as_ptr())
                .map_err(|source| SamplingError::Dump {
                    path: request.target.clone(),
                    source,
                })?;
        }
        #[cfg(import_rewriting)]
        Source::Imports => {
            let mut out = std::io::BufWriter::new(file);
            super::glibc::write_dump(&mut out)
                .and_then(|_| out.into_inner().map_err(|e| e.into_error()))
                .and_then(|file| file.sync_all())
                .map_err(failed)?;
        }
    }
    let summary =
        profile::summary_of(&dump, Some(time_ms)).map_err(|e| SamplingError::NotAProfile {
            path: request.target.clone(),
            reason: e.to_string(),
        })?;
    write_sidecar(
        &work.anchored(SIDECAR),
        &SidecarInput {
            save_from: &request.save_from,
            perf_map: request.perf_map.as_deref(),
            time_ms,
            engine: match source {
                Source::Jemalloc(_) => super::JEMALLOC_ENGINE,
                #[cfg(import_rewriting)]
                Source::Imports => super::glibc::ENGINE,
            },
        },
    )?;
    Ok(summary)
}
