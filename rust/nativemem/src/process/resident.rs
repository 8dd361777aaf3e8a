//! Resident pages of address ranges (`mincore`): memory counted where it is resident rather
//! than where it is committed (a young JVM's heap is committed long before it is touched).

use serde::Serialize;

/// Addresses asked about per `mincore` call: 1 GiB, a 256 KiB vector of 4 KiB pages.
const CHUNK: usize = 1 << 30;

/// Resident bytes of each range asked for; `None` where part of a range is not mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResidentRanges {
    pub resident_bytes: Vec<Option<u64>>,
}

/// Counts the resident pages of each `[start, end)` range of this process's address space.
pub fn resident_in(ranges: &[(u64, u64)]) -> ResidentRanges {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    let mut vector = Vec::new();
    ResidentRanges {
        resident_bytes: ranges
            .iter()
            .map(|&(start, end)| resident(start as usize, end as usize, page, &mut vector))
            .collect(),
    }
}

fn resident(start: usize, end: usize, page: usize, vector: &mut Vec<u8>) -> Option<u64> {
    if start % page != 0 || end < start {
        return None;
    }
    let end = end.checked_next_multiple_of(page)?;
    let mut pages = 0u64;
    let mut at = start;
    while at < end {
        let length = (end - at).min(CHUNK);
        vector.resize(length.div_ceil(page), 0);
        // SAFETY: `at` is page-aligned, the vector holds one byte per page of `length`, and
        // mincore only reads the page tables: an unmapped range fails with ENOMEM, no fault.
        let rc = unsafe { libc::mincore(at as *mut libc::c_void, length, vector.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        pages += vector.iter().filter(|&&b| b & 1 == 1).count() as u64;
        at += length;
    }
    Some(pages * page as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_touched_pages_only() {
        let page = 4096;
        let length = 64 * page;
        // SAFETY: a fresh private anonymous mapping, unmapped at the end of the test.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let start = base as u64;
        let untouched = resident_in(&[(start, start + length as u64)]);
        assert_eq!(untouched.resident_bytes, vec![Some(0)]);
        for i in (0..length).step_by(2 * page) {
            // SAFETY: inside the mapping above.
            unsafe { *(base as *mut u8).add(i) = 1 };
        }
        let half = resident_in(&[(start, start + length as u64), (0, page as u64)]);
        assert_eq!(half.resident_bytes, vec![Some(32 * page as u64), None]);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(base, length) };
    }
}
