//! What the kernel reports about this process.

mod container_memory;
mod resident;
mod status;

pub use container_memory::{
    container_memory, container_memory_of, container_memory_of_under, container_memory_under,
    memory_pressure, memory_pressure_under, ContainerMemory,
};
pub use resident::{resident_in, ResidentRanges};
pub use status::{parse_status, ProcessMemory};

use std::path::PathBuf;

/// Errors reading the process's own view from `/proc`.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has no '{field}' line; is /proc mounted and is this Linux?")]
    MissingField { path: PathBuf, field: &'static str },
}

/// Reads `/proc/self/status` for this process.
pub fn memory() -> Result<ProcessMemory, ProcessError> {
    let path = PathBuf::from("/proc/self/status");
    let text = std::fs::read_to_string(&path).map_err(|source| ProcessError::Read {
        path: path.clone(),
        source,
    })?;
    parse_status(&text).map_err(|field| ProcessError::MissingField { path, field })
}
