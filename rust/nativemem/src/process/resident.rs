//! Resident pages of address ranges (`mincore`): memory counted where it is resident rather
//! than where it is committed (a young JVM's heap is committed long before it is touched).
//! Only the accessible mappings inside a range are asked about (`/proc/self/maps`): the
//! `PROT_NONE` rest of a reservation (most of a young JVM's heap) holds no pages.

use serde::Serialize;
use std::io::{BufRead, BufReader, Read};

/// `/proc/self/maps` text read at most; a JVM with 10,000 threads writes about 2 MiB.
const MAPS_LIMIT: u64 = 64 << 20;

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
    let mappings = mappings();
    ResidentRanges {
        resident_bytes: ranges
            .iter()
            .map(|&(start, end)| {
                let Some(mappings) = &mappings else {
                    // No map to skip by: ask about the whole range.
                    return resident(start as usize, end as usize, page, &mut vector);
                };
                let mut covered = 0;
                let mut bytes = 0;
                for &(from, to, accessible) in mappings {
                    let (from, to) = (from.max(start), to.min(end));
                    if from < to {
                        covered += to - from;
                        if accessible {
                            bytes += resident(from as usize, to as usize, page, &mut vector)?;
                        }
                    }
                }
                (covered == end.saturating_sub(start)).then_some(bytes)
            })
            .collect(),
    }
}

/// This process's mappings as (start, end, accessible), or `None` if the map cannot be read.
fn mappings() -> Option<Vec<(u64, u64, bool)>> {
    let file = std::fs::File::open("/proc/self/maps").ok()?;
    let mut reader = BufReader::new(file.take(MAPS_LIMIT));
    let mut out = Vec::new();
    let mut line = String::new();
    while reader.read_line(&mut line).ok()? > 0 {
        out.push(parse_maps_line(&line)?);
        line.clear();
    }
    // A map cut at the limit would hide mappings: better none than a wrong one.
    (reader.into_inner().limit() > 0).then_some(out)
}

/// `7f00-7f10 rw-p 00000000 00:00 0  [path]` → (start, end, any of r/w/x).
fn parse_maps_line(line: &str) -> Option<(u64, u64, bool)> {
    let mut words = line.split_ascii_whitespace();
    let (start, end) = words.next()?.split_once('-')?;
    let perms = words.next()?;
    Some((
        u64::from_str_radix(start, 16).ok()?,
        u64::from_str_radix(end, 16).ok()?,
        perms.bytes().take(3).any(|b| b != b'-'),
    ))
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
    fn maps_lines_say_whether_the_mapping_is_accessible() {
        assert_eq!(
            parse_maps_line("7f00-7f10 rw-p 00000000 00:00 0 \n"),
            Some((0x7f00, 0x7f10, true))
        );
        assert_eq!(
            parse_maps_line("687400000-800000000 ---p 00000000 00:00 0\n"),
            Some((0x6_8740_0000, 0x8_0000_0000, false))
        );
        assert_eq!(parse_maps_line("garbage"), None);
    }

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
        // The PROT_NONE half of a reservation is skipped, and holds nothing anyway.
        // SAFETY: the second half of the mapping above.
        let rc = unsafe {
            libc::mprotect(
                (base as *mut u8).add(length / 2).cast(),
                length / 2,
                libc::PROT_NONE,
            )
        };
        assert_eq!(rc, 0);
        let first_half = resident_in(&[(start, start + length as u64)]);
        assert_eq!(first_half.resident_bytes, vec![Some(16 * page as u64)]);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(base, length) };
    }
}
