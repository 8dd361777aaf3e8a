//! The addresses that stand for Java frames in a heap profile: written by the backtrace hook
//! (`sampling::java_frames`), read back by the analysis (`profile`).

/// Synthetic frames are non-canonical addresses on x86-64 (4- and 5-level paging) and AArch64: no
/// code can be there, so jeprof and any symbolizer show them as unknown addresses, never as a
/// wrong function. Below 2^63, which jeprof drops as fake.
pub const ADDRESS_BASE: u64 = 0x4000_0000_0000_0000;
/// Each index owns 16 bytes; the address points into their middle, so a reader that moves a
/// return address back by one byte (jeprof, our analysis) still lands on the same index.
const STRIDE: u64 = 16;
const OFFSET: u64 = 8;

/// Indexes below this are markers; table slot `i` is index `FIRST_FRAME + i`.
pub const FIRST_FRAME: u32 = 32;
/// The table was full or the probes ran out: the thread's remaining Java frames are not shown.
pub const MORE_FRAMES: u32 = 0;
/// AsyncGetCallTrace's error code `-code` is marker index `code` (1..=31).
pub const fn error_marker(code: i32) -> u32 {
    if code < 0 && code > -(FIRST_FRAME as i32) {
        (-code) as u32
    } else {
        MORE_FRAMES
    }
}

/// The address that stands for a synthetic frame index.
pub const fn address_of(index: u32) -> u64 {
    ADDRESS_BASE + index as u64 * STRIDE + OFFSET
}

/// The index an address stands for, if it is a synthetic frame's (or one byte before it).
pub fn index_of(address: u64) -> Option<u32> {
    let delta = address.checked_sub(ADDRESS_BASE)?;
    u32::try_from(delta / STRIDE).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_decode_also_one_byte_back() {
        for index in [0, 1, FIRST_FRAME, FIRST_FRAME + 65536 - 1] {
            let address = address_of(index);
            assert_eq!(index_of(address), Some(index));
            assert_eq!(index_of(address - 1), Some(index));
        }
        assert_eq!(index_of(0x7fff_ffff_f000), None);
        assert_eq!(error_marker(-2), 2);
        assert_eq!(error_marker(-40), MORE_FRAMES);
    }
}
