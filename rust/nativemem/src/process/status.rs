//! `/proc/<pid>/status`: resident memory split by kind, and threads.

use serde::Serialize;

/// Resident memory of one process, in bytes, as the kernel accounts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProcessMemory {
    pub rss_bytes: u64,
    pub rss_anon_bytes: u64,
    pub rss_file_bytes: u64,
    pub rss_shmem_bytes: u64,
    /// Peak resident set size (VmHWM).
    pub peak_rss_bytes: u64,
    /// Virtual size (VmSize).
    pub virtual_bytes: u64,
    pub threads: u64,
}

/// Parses the text of a `status` file. Returns the name of the first missing field on error.
///
/// ```
/// let text = "VmHWM:\t 2048 kB\nVmRSS:\t 1024 kB\nRssAnon:\t 512 kB\nRssFile:\t 500 kB\n\
///             RssShmem:\t 12 kB\nVmSize:\t 4096 kB\nThreads:\t7\n";
/// let m = nativemem::process::parse_status(text).unwrap();
/// assert_eq!(m.rss_bytes, 1024 * 1024);
/// assert_eq!(m.rss_anon_bytes + m.rss_file_bytes + m.rss_shmem_bytes, m.rss_bytes);
/// assert_eq!(m.threads, 7);
/// ```
pub fn parse_status(text: &str) -> Result<ProcessMemory, &'static str> {
    let field = |name: &'static str| -> Result<u64, &'static str> {
        text.lines()
            .find_map(|line| {
                let rest = line.strip_prefix(name)?.strip_prefix(':')?;
                let mut words = rest.split_whitespace();
                let value: u64 = words.next()?.parse().ok()?;
                Some(match words.next() {
                    Some("kB") => value * 1024,
                    _ => value,
                })
            })
            .ok_or(name)
    };
    Ok(ProcessMemory {
        rss_bytes: field("VmRSS")?,
        rss_anon_bytes: field("RssAnon")?,
        rss_file_bytes: field("RssFile")?,
        rss_shmem_bytes: field("RssShmem")?,
        peak_rss_bytes: field("VmHWM")?,
        virtual_bytes: field("VmSize")?,
        threads: field("Threads")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_status_matches_statm() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let m = parse_status(&status).unwrap();
        // statm's second field is resident pages: an independent source for RSS.
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        let from_statm = pages * page;
        let diff = m.rss_bytes.abs_diff(from_statm);
        assert!(
            diff < 4 << 20,
            "status {} vs statm {}",
            m.rss_bytes,
            from_statm
        );
        assert!(m.threads >= 1);
    }

    #[test]
    fn missing_field_is_named() {
        assert_eq!(parse_status("VmRSS: 1 kB\n"), Err("RssAnon"));
        assert_eq!(parse_status(""), Err("VmRSS"));
    }
}
