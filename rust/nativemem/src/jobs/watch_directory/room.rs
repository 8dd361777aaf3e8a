//! Room for a capture on the watch's volume (`fstatvfs` through the directory's handle), on top
//! of `nativemem.watch.keep` and `nativemem.watch.maxMiB`. A capture needs about the size of this
//! process's previous bundle, and at least 16 MiB with a heap profile, 1 MiB without, and
//! nativemem keeps a margin free for the application: 1/32 of the volume, at least 256 KiB and at
//! most 64 MiB. When free space is short, our oldest bundles (never the newest) are removed
//! first; if it is still short, the capture is trimmed (no heap profile, page or raw allocator
//! statistics: the small JSON verdict, timeline, snapshot, handles and advice stay, about 256 KiB
//! at most) or, below that, skipped. An `emptyDir`'s `sizeLimit` is not a file system limit and
//! does not show here: `nativemem.watch.maxMiB` is the bound for it.

use super::retention::{self, free_bytes};
use crate::files::dir::Dir;
use crate::files::space::space;
use crate::files::FileError;
use crate::profile::report::human_bytes;
use serde::Serialize;

pub const MIN_MARGIN_BYTES: u64 = 256 << 10;
pub const MAX_MARGIN_BYTES: u64 = 64 << 20;
pub const TRIMMED_BYTES: u64 = 256 << 10;
pub const FIRST_WITH_PROFILE_BYTES: u64 = 16 << 20;
pub const FIRST_WITHOUT_PROFILE_BYTES: u64 = 1 << 20;

/// What a capture may write: all, a trimmed bundle (with the reason), or nothing (with the
/// reason); and the bundles removed to make room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Room {
    pub trimmed: Option<String>,
    pub skipped: Option<String>,
    pub removed: Vec<String>,
}

/// The margin kept free for the application on a volume of `total_bytes`.
pub fn margin(total_bytes: u64) -> u64 {
    (total_bytes / 32).clamp(MIN_MARGIN_BYTES, MAX_MARGIN_BYTES)
}

/// Decides, removing our oldest bundles first when free space is short.
pub fn decide(dir: &Dir, previous: Option<&str>, profile: bool) -> Result<Room, FileError> {
    let mut need = if profile {
        FIRST_WITH_PROFILE_BYTES
    } else {
        FIRST_WITHOUT_PROFILE_BYTES
    };
    if let Some(previous) = previous {
        need = need.max(retention::size(dir, previous)?);
    }
    let total = space(dir)
        .map_err(|e| FileError::io("read the free space of", &dir.shown, e))?
        .total_bytes;
    let margin = margin(total);
    let mut removed = Vec::new();
    if free_bytes(dir)? < need + margin {
        removed = retention::make_room(dir, need + margin)?;
    }
    let free = free_bytes(dir)?;
    let (trimmed, skipped) = if free >= need + margin {
        (None, None)
    } else {
        let state = format!(
            "{} free on the volume of {} (nativemem keeps {} free for the application; a full \
             bundle needs about {})",
            human(free),
            dir.shown.display(),
            human(margin),
            human(need)
        );
        if free >= TRIMMED_BYTES + margin {
            let why = format!(
                "trimmed: {state}; the heap profile, the page and the raw allocator statistics \
                 left out"
            );
            (Some(why), None)
        } else {
            (None, Some(format!("capture skipped: {state}")))
        }
    };
    Ok(Room {
        trimmed,
        skipped,
        removed,
    })
}

fn human(bytes: u64) -> String {
    human_bytes(bytes.min(i64::MAX as u64) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_a_32nd_of_the_volume_within_its_bounds() {
        assert_eq!(margin(0), MIN_MARGIN_BYTES);
        assert_eq!(margin(1 << 30), 32 << 20);
        assert_eq!(margin(1 << 40), MAX_MARGIN_BYTES);
    }
}
