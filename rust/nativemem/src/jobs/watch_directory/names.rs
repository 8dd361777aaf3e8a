//! The names of the watch's bundles, `nativemem-incident-<pid>-<UTC stamp>-<trigger>`, and of
//! the temporary directories they are written in, `.nativemem-incident-<pid>-….tmp-<hex>`.

const PREFIX: &str = "nativemem-incident-";
const TRIGGERS: [&str; 4] = ["limit", "growth", "leaked-handles", "on-demand"];

/// A bundle's name read back: the writing process and the UTC stamp (`20261207T031135Z`), which
/// orders bundles by capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleName<'a> {
    pub pid: u64,
    pub stamp: &'a str,
}

/// The bundle `name` names, or None for any other name.
pub fn bundle(name: &str) -> Option<BundleName<'_>> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, rest) = rest.split_once('-')?;
    let pid = digits(pid)?;
    let (stamp, trigger) = rest.split_once('-').filter(|(s, _)| s.len() == 16)?;
    let b = stamp.as_bytes();
    let stamped = b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'T'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && b[15] == b'Z';
    (stamped && TRIGGERS.contains(&trigger)).then_some(BundleName { pid, stamp })
}

/// The writing process of a temporary bundle directory `name`, or None for any other name.
pub fn temporary(name: &str) -> Option<u64> {
    let rest = name.strip_prefix('.')?.strip_prefix(PREFIX)?;
    let (pid, rest) = rest.split_once('-')?;
    let (_, hex) = rest.rsplit_once(".tmp-")?;
    let hex_ok = !hex.is_empty() && hex.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    hex_ok.then_some(())?;
    digits(pid)
}

fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_names_are_read_back_and_others_refused() {
        let name = "nativemem-incident-4242-20261207T031135Z-leaked-handles";
        assert_eq!(
            bundle(name),
            Some(BundleName {
                pid: 4242,
                stamp: "20261207T031135Z"
            })
        );
        for other in [
            "nativemem-incident-4242-20261207T031135Z-other",
            "nativemem-incident-x-20261207T031135Z-limit",
            "nativemem-incident-4242-2026120T031135Z-limit",
            "nativemem-incident-4242-20261207T031135Z-limit.tmp",
            "nativemem-incident--20261207T031135Z-limit",
            "nativemem-4242",
        ] {
            assert_eq!(bundle(other), None, "{other}");
        }
    }

    #[test]
    fn temporary_names_give_their_process() {
        let name = ".nativemem-incident-77-20261207T031135Z-limit.tmp-3fa9";
        assert_eq!(temporary(name), Some(77));
        assert_eq!(temporary("nativemem-incident-77-x.tmp-3fa9"), None);
        assert_eq!(temporary(".nativemem-incident-77-x.tmp-XYZ"), None);
        assert_eq!(temporary(".nativemem-incident-77-x.tmp-"), None);
    }
}
