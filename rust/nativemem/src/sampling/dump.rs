//! `prof.dump` written the way files for the user are: temp name, mode 0600, renamed into
//! place, never overwriting, one dump at a time, nothing left behind on failure.

use super::files::{check_target, create_private, rename_no_replace, temp_beside};
use super::symbols::{sidecar_path, write_sidecar, SidecarInput};
use super::{profiler, SamplingError};
use serde::Serialize;
use std::ffi::{c_char, CString};
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
    let target = std::path::absolute(&request.target).map_err(|source| SamplingError::Write {
        path: request.target.clone(),
        source,
    })?;
    check_target(&target)?;
    let sidecar = sidecar_path(&target);
    if sidecar.symlink_metadata().is_ok() {
        return Err(SamplingError::BadPath(format!(
            "{} already exists; it would hold the symbols of {}: choose a new name or delete it",
            sidecar.display(),
            target.display()
        )));
    }
    let time_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let tmp = temp_beside(&target, "");
    create_private(&tmp).map_err(|source| SamplingError::Write {
        path: target.clone(),
        source,
    })?;
    let result = dump_into(ctl, &tmp, &target, request, time_ms);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn dump_into(
    ctl: &crate::allocator::Mallctl,
    tmp: &Path,
    target: &Path,
    request: &DumpRequest,
    time_ms: u64,
) -> Result<DumpedProfile, SamplingError> {
    let c_tmp = CString::new(tmp.as_os_str().as_bytes())
        .map_err(|_| SamplingError::BadPath(format!("{} contains a NUL byte", target.display())))?;
    // jemalloc opens the file with O_TRUNC: the mode 0600 we created it with stays.
    ctl.write::<*const c_char>("prof.dump", c_tmp.as_ptr())
        .map_err(|source| SamplingError::Dump {
            path: target.to_path_buf(),
            source,
        })?;
    let header = read_header(tmp).map_err(|reason| SamplingError::NotAProfile {
        path: target.to_path_buf(),
        reason,
    })?;
    let sidecar = write_sidecar(
        target,
        &SidecarInput {
            save_from: &request.save_from,
            perf_map: request.perf_map.as_deref(),
            time_ms,
        },
    )?;
    if let Err(source) = rename_no_replace(tmp, target) {
        let _ = std::fs::remove_dir_all(&sidecar);
        return Err(SamplingError::Write {
            path: target.to_path_buf(),
            source,
        });
    }
    Ok(DumpedProfile {
        path: target.display().to_string(),
        symbols_dir: sidecar.display().to_string(),
        time_ms,
        sample_interval_bytes: header.sample_interval_bytes,
        sampled_bytes: header.sampled_bytes,
    })
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
