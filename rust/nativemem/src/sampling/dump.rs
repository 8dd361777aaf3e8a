//! `prof.dump` written the way files for the user are (`files`): into a private directory
//! reached by descriptor, mode 0600, renamed into place, never overwriting, one dump at a time,
//! nothing left behind on failure.

use super::symbols::{sidecar_path, write_sidecar, SidecarInput};
use super::{profiler, SamplingError};
use crate::allocator::keys;
use crate::files::{create_private, Dir, Purpose};
use serde::Serialize;
use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// What to dump and what to save beside it.
pub struct DumpRequest {
    pub target: PathBuf,
    /// Directories whose mapped objects are saved into the sidecar.
    pub save_from: Vec<PathBuf>,
    /// A file with the JVM's perf map, copied into the sidecar.
    pub perf_map: Option<PathBuf>,
}

/// A dump that is in place.
#[derive(Debug, Clone, Serialize)]
pub struct DumpedProfile {
    pub path: String,
    pub symbols_dir: String,
    pub time_ms: u64,
    pub sample_interval_bytes: u64,
    pub sampled_bytes: u64,
}

/// Dumps the heap profile to `request.target` with its sidecar.
pub fn dump(request: &DumpRequest) -> Result<DumpedProfile, SamplingError> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let ctl = profiler()?;
    let (dir, name) = Dir::for_new_file(&request.target, HEAP_PROFILE)?;
    let target = std::path::absolute(&request.target).map_err(|source| SamplingError::Write {
        path: request.target.clone(),
        source,
    })?;
    let sidecar_name = {
        let mut bytes = name.as_bytes().to_vec();
        bytes.extend_from_slice(b".symbols");
        CString::new(bytes).unwrap_or_default()
    };
    if dir.has(&sidecar_name) {
        return Err(SamplingError::BadPath(format!(
            "{} already exists; it would hold the symbols of {}: choose a new name or delete it",
            sidecar_path(&target).display(),
            target.display()
        )));
    }
    let time_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (work, work_name) = dir.private_child(&name.to_string_lossy())?;
    let result = dump_into(ctl, &work, request, time_ms).and_then(|header| {
        // The sidecar first: a dump in place always has its symbols beside it.
        let place = |from: &str, to: &CString, shown: PathBuf| {
            work.rename_no_replace(&CString::new(from).unwrap_or_default(), &dir, to)
                .map_err(|source| SamplingError::Write {
                    path: shown,
                    source,
                })
        };
        place(SIDECAR, &sidecar_name, sidecar_path(&target))?;
        if let Err(e) = place(DUMP, &name, target.clone()) {
            dir.remove_tree(&sidecar_name);
            return Err(e);
        }
        Ok(header)
    });
    dir.remove_tree(&work_name);
    let header = result?;
    Ok(DumpedProfile {
        path: target.display().to_string(),
        symbols_dir: sidecar_path(&target).display().to_string(),
        time_ms,
        sample_interval_bytes: header.sample_interval_bytes,
        sampled_bytes: header.sampled_bytes,
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

/// Writes the dump and its sidecar into `work`, a private directory reached by descriptor.
fn dump_into(
    ctl: &crate::allocator::Mallctl,
    work: &Dir,
    request: &DumpRequest,
    time_ms: u64,
) -> Result<DumpHeader, SamplingError> {
    let dump = work.anchored(DUMP);
    let failed = |source| SamplingError::Write {
        path: work.shown.join(DUMP),
        source,
    };
    // jemalloc opens the file with O_TRUNC: the mode 0600 we created it with stays.
    create_private(&dump).map_err(failed)?;
    let c_dump = CString::new(dump.as_os_str().as_bytes())
        .map_err(|_| SamplingError::BadPath(format!("{} contains a NUL byte", dump.display())))?;
    ctl.set(keys::PROF_DUMP, c_dump.as_ptr())
        .map_err(|source| SamplingError::Dump {
            path: request.target.clone(),
            source,
        })?;
    let header = read_header(&dump).map_err(|reason| SamplingError::NotAProfile {
        path: request.target.clone(),
        reason,
    })?;
    write_sidecar(
        &work.anchored(SIDECAR),
        &SidecarInput {
            save_from: &request.save_from,
            perf_map: request.perf_map.as_deref(),
            time_ms,
        },
    )?;
    Ok(header)
}

/// The first two lines of a heap_v2 dump.
#[derive(Debug, PartialEq, Eq)]
pub struct DumpHeader {
    pub sample_interval_bytes: u64,
    pub sampled_bytes: u64,
}

fn read_header(path: &Path) -> Result<DumpHeader, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut lines = BufReader::new(file).lines();
    let mut next = || lines.next().transpose().map_err(|e| e.to_string());
    let first = next()?.unwrap_or_default();
    let second = next()?.unwrap_or_default();
    parse_header(&first, &second)
}

/// Parses `heap_v2/<interval>` and `  t*: <objs>: <bytes> [<objs>: <bytes>]`.
pub fn parse_header(first: &str, second: &str) -> Result<DumpHeader, String> {
    let interval = first
        .trim()
        .strip_prefix("heap_v2/")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("first line is '{first}', expected 'heap_v2/<sample interval>'"))?;
    let bytes = second
        .trim()
        .strip_prefix("t*:")
        .and_then(|rest| rest.split(':').nth(1))
        .and_then(|b| b.split_whitespace().next())
        .and_then(|b| b.parse().ok())
        .ok_or_else(|| {
            format!("second line is '{second}', expected 't*: <objects>: <bytes> [...]'")
        })?;
    Ok(DumpHeader {
        sample_interval_bytes: interval,
        sampled_bytes: bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_parse() {
        assert_eq!(
            parse_header("heap_v2/524288", "  t*: 28: 106610 [0: 0]"),
            Ok(DumpHeader {
                sample_interval_bytes: 524288,
                sampled_bytes: 106610
            })
        );
        assert!(parse_header("heap_v1/1", "t*: 1: 2 [0: 0]").is_err());
        assert!(parse_header("heap_v2/8", "t0: 1: 2 [0: 0]").is_err());
    }
}
