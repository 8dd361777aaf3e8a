//! Java frames interned where a sampled allocation is recorded: inside `malloc`, so a fixed,
//! zero-initialised table of atomics (no allocation, no lock), and each frame's index encoded as an
//! address no code can have.
//!
//! A frame is a (method id, bytecode index) pair packed into one `u64`: user-space method ids
//! (pointers below 2^47, or small integers on JDKs that number them) in the high 47 bits, the
//! bytecode index + [`BCI_BIAS`] in the low 17. Slots are claimed by compare-and-swap from 0 and
//! never freed, so an index names one frame for the life of the process.

pub use crate::jvm::frame_addresses::{address_of, error_marker, FIRST_FRAME, MORE_FRAMES};
use std::sync::atomic::{AtomicU64, Ordering};

/// Slots for distinct frames (512 KiB of zeroes in .bss).
pub const CAPACITY: usize = 1 << 16;
/// Probes before a frame is given up as "more Java frames".
const MAX_PROBES: usize = 64;
const BCI_BITS: u32 = 17;
/// AsyncGetCallTrace reports a native method's frame as bci -3; the bias keeps small negatives.
const BCI_BIAS: i32 = 8;

/// A Java frame as AsyncGetCallTrace reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub method: u64,
    pub bci: i32,
}

impl Frame {
    fn pack(self) -> Option<u64> {
        let bci = u64::try_from(self.bci.checked_add(BCI_BIAS)?).ok()?;
        (self.method != 0 && self.method < 1 << (64 - BCI_BITS) && bci < 1 << BCI_BITS)
            .then_some(self.method << BCI_BITS | bci)
    }

    fn unpack(key: u64) -> Frame {
        Frame {
            method: key >> BCI_BITS,
            bci: (key & ((1 << BCI_BITS) - 1)) as i32 - BCI_BIAS,
        }
    }
}

/// The interned frames.
pub struct FrameTable {
    slots: [AtomicU64; CAPACITY],
}

impl Default for FrameTable {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameTable {
    pub const fn new() -> FrameTable {
        FrameTable {
            slots: [const { AtomicU64::new(0) }; CAPACITY],
        }
    }

    /// The index of `frame`, interning it if new; [`MORE_FRAMES`] when it cannot be kept.
    /// Lock-free and allocation-free: safe inside `malloc`.
    pub fn intern(&self, frame: Frame) -> u32 {
        let Some(key) = frame.pack() else {
            return MORE_FRAMES;
        };
        // Fibonacci hashing: method ids are aligned pointers, the multiply spreads them.
        let start = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize;
        for probe in 0..MAX_PROBES {
            let slot = (start + probe) % CAPACITY;
            let found = match self.slots[slot].compare_exchange(
                0,
                key,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => key,
                Err(current) => current,
            };
            if found == key {
                return FIRST_FRAME + slot as u32;
            }
        }
        MORE_FRAMES
    }

    /// The frame an index names, if it names one.
    pub fn get(&self, index: u32) -> Option<Frame> {
        let slot = index.checked_sub(FIRST_FRAME)? as usize;
        let key = self.slots.get(slot)?.load(Ordering::Acquire);
        (key != 0).then(|| Frame::unpack(key))
    }

    /// Every interned frame with its index.
    pub fn entries(&self) -> impl Iterator<Item = (u32, Frame)> + '_ {
        self.slots.iter().enumerate().filter_map(|(slot, key)| {
            let key = key.load(Ordering::Acquire);
            (key != 0).then(|| (FIRST_FRAME + slot as u32, Frame::unpack(key)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_intern_once_and_round_trip() {
        let table = Box::new(FrameTable::new());
        let a = Frame {
            method: 0x7f12_3456_7890,
            bci: 42,
        };
        let native = Frame {
            method: 0x7f12_3456_7890,
            bci: -3,
        };
        let ia = table.intern(a);
        assert_eq!(table.intern(a), ia);
        let ib = table.intern(native);
        assert_ne!(ia, ib);
        assert_eq!(table.get(ia), Some(a));
        assert_eq!(table.get(ib), Some(native));
        assert_eq!(table.entries().count(), 2);
        assert_eq!(table.get(MORE_FRAMES), None);
    }

    #[test]
    fn frames_that_do_not_fit_are_the_marker() {
        let table = Box::new(FrameTable::new());
        assert_eq!(table.intern(Frame { method: 0, bci: 1 }), MORE_FRAMES);
        let huge = Frame {
            method: 1 << 50,
            bci: 1,
        };
        assert_eq!(table.intern(huge), MORE_FRAMES);
        let bci = Frame {
            method: 8,
            bci: 1 << 20,
        };
        assert_eq!(table.intern(bci), MORE_FRAMES);
    }

    #[test]
    fn a_full_table_gives_the_marker_not_a_wrong_frame() {
        let table = Box::new(FrameTable::new());
        let mut markers = 0;
        for method in 1..=(CAPACITY as u64 + 1000) {
            let frame = Frame {
                method: method * 8,
                bci: 0,
            };
            let index = table.intern(frame);
            if index == MORE_FRAMES {
                markers += 1;
            } else {
                assert_eq!(table.get(index), Some(frame));
            }
        }
        assert!(markers >= 1000);
    }
}
