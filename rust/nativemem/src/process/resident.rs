//! Resident pages of address ranges (`mincore`): memory counted where it is resident rather
//! than where it is committed (a young JVM's heap is committed long before it is touched).
//! Only the accessible mappings inside a range are asked about: the `PROT_NONE` rest of a
//! reservation (most of a young JVM's heap) holds no pages. Those mappings are found with the
//! kernel's `PROCMAP_QUERY` (Linux 6.11+), which answers for the asked range alone; older kernels
//! have the whole `/proc/self/maps` text read (a JVM's few hundred lines: most of the cost).

use serde::Serialize;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;

/// `/proc/self/maps` text read at most; a JVM with 10,000 threads writes about 2 MiB.
const MAPS_LIMIT: u64 = 64 << 20;

/// Addresses asked about per `mincore` call: 1 GiB, a 256 KiB vector of 4 KiB pages.
const CHUNK: usize = 1 << 30;

/// Mappings asked about per range at most: more means something else is mapped there.
const QUERY_LIMIT: usize = 1 << 16;

/// Resident bytes of each range asked for; `None` where part of a range is not mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResidentRanges {
    pub resident_bytes: Vec<Option<u64>>,
}

/// Counts the resident pages of each `[start, end)` range of this process's address space.
pub fn resident_in(ranges: &[(u64, u64)]) -> ResidentRanges {
    resident_by(ranges, Mappings::open())
}

/// How the mappings inside a range are found.
enum Mappings {
    /// `PROCMAP_QUERY` on an open `/proc/self/maps`: only the mappings asked about.
    Query(File),
    /// The whole map, read as text, as (start, end, accessible) in address order.
    Listed(Vec<(u64, u64, bool)>),
    /// Neither: every range is asked about whole.
    Unknown,
}

impl Mappings {
    fn open() -> Mappings {
        let Ok(file) = File::open("/proc/self/maps") else {
            return Mappings::Unknown;
        };
        match query(&file, 0) {
            Ok(_) => Mappings::Query(file),
            Err(_) => Mappings::listed_from(file),
        }
    }

    /// The text of `/proc/self/maps` (the only way before Linux 6.11), for tests to compare.
    #[cfg(test)]
    fn listed() -> Mappings {
        match File::open("/proc/self/maps") {
            Ok(file) => Mappings::listed_from(file),
            Err(_) => Mappings::Unknown,
        }
    }

    fn listed_from(file: File) -> Mappings {
        mappings(file).map_or(Mappings::Unknown, Mappings::Listed)
    }

    /// The mappings overlapping `[start, end)`, cut to it, as (start, end, accessible), in
    /// address order; `None` when they cannot be found.
    fn within(&self, start: u64, end: u64) -> Option<Vec<(u64, u64, bool)>> {
        let cut =
            |(from, to, accessible): (u64, u64, bool)| (from.max(start), to.min(end), accessible);
        match self {
            Mappings::Query(file) => {
                let mut out = Vec::new();
                let mut at = start;
                while at < end && out.len() < QUERY_LIMIT {
                    let Some(vma) = query(file, at).ok()? else {
                        break; // nothing mapped at or above `at`
                    };
                    if vma.0 >= end || vma.1 <= at {
                        break;
                    }
                    at = vma.1;
                    out.push(cut(vma));
                }
                (out.len() < QUERY_LIMIT).then_some(out)
            }
            Mappings::Listed(all) => Some(
                all.iter()
                    .copied()
                    .filter(|&(from, to, _)| from < end && to > start)
                    .map(cut)
                    .collect(),
            ),
            Mappings::Unknown => None,
        }
    }
}

fn resident_by(ranges: &[(u64, u64)], mappings: Mappings) -> ResidentRanges {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    let mut vector = Vec::new();
    ResidentRanges {
        resident_bytes: ranges
            .iter()
            .map(|&(start, end)| {
                let Some(mappings) = mappings.within(start, end) else {
                    // No map to skip by: ask about the whole range.
                    return resident(start as usize, end as usize, page, &mut vector);
                };
                let mut covered = 0;
                let mut bytes = 0;
                for (from, to, accessible) in mappings {
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

/// `struct procmap_query` of `<linux/fs.h>` (Linux 6.11), as the kernel lays it out.
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

/// `_IOWR('f', 17, struct procmap_query)`.
const PROCMAP_QUERY: u64 =
    (3 << 30) | ((size_of::<ProcmapQuery>() as u64) << 16) | (0x66 << 8) | 17;
/// The mapping covering the address, or else the next one above it.
const PROCMAP_QUERY_COVERING_OR_NEXT_VMA: u64 = 0x10;
/// `PROCMAP_QUERY_VMA_READABLE | _WRITABLE | _EXECUTABLE` in `vma_flags`.
const PROCMAP_QUERY_VMA_ACCESSIBLE: u64 = 0x7;

/// The mapping of this process at or above `address` as (start, end, accessible); `Ok(None)`
/// when none is, `Err` when the kernel has no `PROCMAP_QUERY`.
fn query(maps: &File, address: u64) -> std::io::Result<Option<(u64, u64, bool)>> {
    let mut q = ProcmapQuery {
        size: size_of::<ProcmapQuery>() as u64,
        query_flags: PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
        query_addr: address,
        ..ProcmapQuery::default()
    };
    // SAFETY: `q` is a valid, fully initialised `procmap_query` whose size field says how
    // much the kernel may read and write; no name or build ID buffer is given (sizes 0).
    let rc = unsafe {
        libc::ioctl(
            maps.as_raw_fd(),
            PROCMAP_QUERY as _,
            &mut q as *mut ProcmapQuery,
        )
    };
    if rc == 0 {
        return Ok(Some((
            q.vma_start,
            q.vma_end,
            q.vma_flags & PROCMAP_QUERY_VMA_ACCESSIBLE != 0,
        )));
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENOENT) => Ok(None),
        _ => Err(error),
    }
}

/// This process's mappings as (start, end, accessible), or `None` if the map cannot be read.
fn mappings(file: File) -> Option<Vec<(u64, u64, bool)>> {
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

    /// Resident bytes of the mappings inside `[start, end)` by `/proc/self/smaps` (`Rss:`).
    fn smaps_rss(start: u64, end: u64) -> u64 {
        let text = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut total = 0;
        for line in text.lines() {
            if let Some((from, to, _)) = parse_maps_line(line) {
                inside = from >= start && to <= end;
            } else if let Some(kib) = line.strip_prefix("Rss:") {
                if inside {
                    total += kib
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .unwrap()
                        << 10;
                }
            }
        }
        total
    }

    /// Whether `PROCMAP_QUERY` is passed to the kernel here: qemu-user answers ENOSYS for it
    /// whatever the kernel underneath.
    fn query_passed_through() -> bool {
        let maps = File::open("/proc/self/maps").unwrap();
        !matches!(query(&maps, 0), Err(e) if e.raw_os_error() == Some(libc::ENOSYS))
    }

    /// Whether `/proc/self/smaps` lists this process's own mapping `[start, end)` (as
    /// [`smaps_rss`] finds it, inside the range): under qemu-user it shows the emulator's host
    /// mappings, one reservation spanning the guest's, while its `/proc/self/maps` is the guest's.
    fn smaps_lists(start: u64, end: u64) -> bool {
        let text = std::fs::read_to_string("/proc/self/smaps").unwrap();
        text.lines()
            .filter_map(parse_maps_line)
            .any(|(from, to, _)| from >= start && to <= end)
    }

    /// Linux 6.11 or later, where `PROCMAP_QUERY` exists.
    fn kernel_has_query() -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next().unwrap().parse().unwrap();
        let minor: u32 = parts.next().unwrap_or("0").parse().unwrap_or(0);
        (major, minor) >= (6, 11)
    }

    #[test]
    fn the_mappings_are_queried_where_the_kernel_can() {
        if kernel_has_query() && !query_passed_through() {
            eprintln!(
                "skipped: PROCMAP_QUERY answers ENOSYS on a 6.11+ kernel: an emulator \
                 (qemu-user) that does not pass the ioctl through"
            );
            return;
        }
        assert_eq!(
            matches!(Mappings::open(), Mappings::Query(_)),
            kernel_has_query()
        );
        // Three mappings: readable, inaccessible, writable; both ways list them alike.
        let page = 4096u64;
        // SAFETY: a fresh private anonymous mapping, unmapped at the end of the test.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                3 * page as usize,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let start = base as u64;
        // SAFETY: the second and third pages of the mapping above.
        unsafe {
            assert_eq!(
                libc::mprotect(base.cast::<u8>().add(4096).cast(), 4096, libc::PROT_NONE),
                0
            );
            let third = base.cast::<u8>().add(8192).cast();
            assert_eq!(
                libc::mprotect(third, 4096, libc::PROT_READ | libc::PROT_WRITE),
                0
            );
        }
        let expected = vec![
            (start, start + page, true),
            (start + page, start + 2 * page, false),
            (start + 2 * page, start + 3 * page, true),
        ];
        let end = start + 3 * page;
        assert_eq!(Mappings::open().within(start, end), Some(expected.clone()));
        assert_eq!(Mappings::listed().within(start, end), Some(expected));
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(base, 3 * page as usize) };
    }

    #[test]
    fn follows_smaps_as_memory_grows_and_shrinks() {
        let page = 4096;
        let length = 256 * page;
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
        // SAFETY: asks the kernel not to back this small mapping with huge pages.
        unsafe { libc::madvise(base, length, libc::MADV_NOHUGEPAGE) };
        let (start, end) = (base as u64, base as u64 + length as u64);
        if !smaps_lists(start, end) {
            eprintln!(
                "skipped: /proc/self/smaps does not list this process's own mapping: an \
                 emulator (qemu-user) showing the host's mappings there"
            );
            // SAFETY: the mapping made above.
            unsafe { libc::munmap(base, length) };
            return;
        }
        let check = |expected_pages: u64, when: &str| {
            let truth = smaps_rss(start, end);
            assert_eq!(truth, expected_pages * page as u64, "smaps {when}");
            for (name, mappings) in [
                ("queried", Mappings::open()),
                ("listed", Mappings::listed()),
            ] {
                assert_eq!(
                    resident_by(&[(start, end)], mappings).resident_bytes,
                    vec![Some(truth)],
                    "{name} mappings {when}"
                );
            }
        };
        check(0, "untouched");
        let touch = |from: usize, to: usize| {
            for i in (from..to).step_by(page) {
                // SAFETY: inside the mapping above.
                unsafe { *(base as *mut u8).add(i) = 1 };
            }
        };
        touch(0, length / 4);
        check(64, "after a quarter was touched");
        touch(0, length);
        check(256, "after all was touched");
        // SAFETY: the first half of the mapping above; its pages are dropped.
        assert_eq!(
            unsafe { libc::madvise(base, length / 2, libc::MADV_DONTNEED) },
            0
        );
        check(128, "after half was dropped");
        // SAFETY: the last quarter becomes inaccessible (a split mapping, skipped).
        let rc = unsafe {
            libc::mprotect(
                (base as *mut u8).add(3 * length / 4).cast(),
                length / 4,
                libc::PROT_NONE,
            )
        };
        assert_eq!(rc, 0);
        assert_eq!(
            resident_in(&[(start, end)]).resident_bytes,
            vec![Some(64 * page as u64)]
        );
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(base, length) };
    }

    /// `length` bytes of fresh private anonymous memory, read-write, in a mapping of its own: a
    /// read-only page on either side (never touched) keeps it, and any part of it later made
    /// `PROT_NONE`, from merging with a neighbour. Merged, it could lie in a larger mapping that
    /// a transparent huge page backs whole on the first touch (or khugepaged collapses); and
    /// qemu-user's `/proc/self/maps` for the guest leaves out every host mapping that is not
    /// wholly the guest's, so merged with the emulator's own memory (a thread's stack or guard,
    /// an arena's reserve) it would vanish from the map and the range read as not mapped.
    /// Freed by [`unmap_isolated`].
    fn map_isolated(length: usize) -> *mut libc::c_void {
        let guard = 4096;
        // SAFETY: a fresh private anonymous mapping; its middle is made writable below.
        let reserved = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length + 2 * guard,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(reserved, libc::MAP_FAILED);
        // SAFETY: inside the mapping above, between its first and last pages.
        unsafe {
            let base = reserved.cast::<u8>().add(guard).cast();
            let rc = libc::mprotect(base, length, libc::PROT_READ | libc::PROT_WRITE);
            assert_eq!(rc, 0);
            // Where the kernel honours it (qemu-user takes it as a hint and ignores it).
            libc::madvise(base, length, libc::MADV_NOHUGEPAGE);
            base
        }
    }

    fn unmap_isolated(base: *mut libc::c_void, length: usize) {
        let guard = 4096;
        // SAFETY: the whole mapping made by `map_isolated`, guards included.
        let rc = unsafe { libc::munmap(base.cast::<u8>().sub(guard).cast(), length + 2 * guard) };
        assert_eq!(rc, 0);
    }

    #[test]
    fn counts_touched_pages_only() {
        let page = 4096;
        let length = 64 * page;
        let base = map_isolated(length);
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
        unmap_isolated(base, length);
    }
}
