//! The cap on what one analysis renders. Reading a dump is bounded per byte of it (SECURITY.md,
//! "Fuzzing"), but an output multiplies: every stack becomes a line of collapsed text, a column
//! of flame-graph boxes, a pprof sample with a location id per frame and a label per process. A
//! crafted 5 MB dump drew a 127 MB flame graph and took 578 MiB to encode as pprof. Each output is
//! therefore written into a buffer that refuses to grow past the cap, and the pprof message's size
//! is reckoned from the stacks before it is built; past the cap the analysis fails, naming its
//! input, the output and the cap, having written nothing.

use super::{Format, ProfileError};
use std::io::{self, Write};

/// The most one output of one analysis may be (and, for pprof, its message before encoding).
pub const MAX_OUTPUT_BYTES: u64 = 64 << 20;

/// A buffer that refuses to grow past `cap` bytes (`io::ErrorKind::FileTooLarge`).
pub struct CappedBuffer {
    pub bytes: Vec<u8>,
    cap: u64,
    /// A write was refused: the output passed the cap.
    pub refused: bool,
}

impl CappedBuffer {
    pub fn new(cap: u64) -> CappedBuffer {
        CappedBuffer {
            bytes: Vec::new(),
            cap,
            refused: false,
        }
    }
}

impl Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.cap {
            self.refused = true;
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "over the output cap",
            ));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The error of an output of `input` that would pass `cap` bytes.
pub fn too_large(input: &str, format: Format, cap: u64) -> ProfileError {
    ProfileError::OutputTooLarge {
        input: input.to_owned(),
        format: format.name(),
        cap_mib: cap as f64 / (1 << 20) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_stops_at_its_cap() {
        let mut buffer = CappedBuffer::new(10);
        buffer.write_all(b"0123456789").unwrap();
        let refused = buffer.write_all(b"x").unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::FileTooLarge);
        assert!(buffer.refused);
        assert_eq!(buffer.bytes.len(), 10);
    }
}
