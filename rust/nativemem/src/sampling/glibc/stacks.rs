//! Stacks of sampled allocations, interned once each: a lock-free hash of stacks whose frames
//! live in an append-only arena. A stack's id (its slot + 1) is what a live block keeps.
//! Id 0 is "no stack kept" (the table or the arena was full).

use super::region::Region;
use std::sync::atomic::{AtomicU64, Ordering};

/// Frames one stack keeps at most.
pub const MAX_FRAMES: usize = 128;
const MAX_PROBES: usize = 64;
/// A writer that has claimed a slot finishes within a few hundred instructions; a reader of the
/// same hash waits this many spins for its frames to compare them. A writer preempted in between
/// (more threads than cores) can take longer: the reader then takes the slot on the word of the
/// 63-bit hash alone rather than wait (two distinct stacks share one with a chance of about
/// n²/2⁶⁴ for n stacks) and never gives up the sample's stack for it.
const MAX_SPINS: usize = 10_000;
const ARENA_FULL: u64 = u64::MAX;

pub struct Stacks {
    /// `[hash, location]` pairs; location = arena offset << 8 | frame count.
    slots: Region,
    capacity: usize,
    arena: Region,
    arena_next: AtomicU64,
    dropped: AtomicU64,
}

impl Stacks {
    /// Room for `capacity` distinct stacks (a power of two) and `frames` frames in all.
    pub fn new(capacity: usize, frames: usize) -> Option<Stacks> {
        let capacity = capacity.next_power_of_two();
        Some(Stacks {
            slots: Region::map(capacity * 16)?,
            capacity,
            arena: Region::map(frames * 8)?,
            arena_next: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        })
    }

    pub fn reserved_bytes(&self) -> u64 {
        (self.slots.len() + self.arena.len()) as u64
    }

    pub fn resident_bytes(&self) -> u64 {
        self.slots.resident_bytes() + self.arena.resident_bytes()
    }

    /// Samples whose stack could not be kept.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Distinct stacks kept.
    pub fn count(&self) -> usize {
        (0..self.capacity)
            .filter(|&i| self.slots.u64s()[i * 2].load(Ordering::Relaxed) != 0)
            .count()
    }

    /// Forgets every stack; only when no hook can run.
    pub fn clear(&self) {
        self.slots.reset();
        self.arena.reset();
        self.arena_next.store(0, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Relaxed);
    }

    /// The id of `frames` (at most [`MAX_FRAMES`] are kept), interning it if new; 0 when it
    /// cannot be kept. Lock-free and allocation-free.
    pub fn intern(&self, frames: &[u64]) -> u32 {
        let frames = &frames[..frames.len().min(MAX_FRAMES)];
        let hash = hash(frames);
        let slots = self.slots.u64s();
        let start = (hash >> 16) as usize;
        for probe in 0..MAX_PROBES {
            let slot = (start + probe) & (self.capacity - 1);
            let (key, location) = (&slots[slot * 2], &slots[slot * 2 + 1]);
            let mut current = key.load(Ordering::Acquire);
            if current == 0 {
                match key.compare_exchange(0, hash, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        location.store(self.store(frames), Ordering::Release);
                        return self.id_or_dropped(slot, location.load(Ordering::Relaxed));
                    }
                    Err(found) => current = found,
                }
            }
            if current != hash {
                continue;
            }
            let mut spins = 0;
            let at = loop {
                let at = location.load(Ordering::Acquire);
                if at != 0 {
                    break at;
                }
                spins += 1;
                if spins > MAX_SPINS {
                    return slot as u32 + 1;
                }
                std::hint::spin_loop();
            };
            if at == ARENA_FULL {
                continue;
            }
            if self.frames_at(at) == frames {
                return slot as u32 + 1;
            }
        }
        self.dropped.fetch_add(1, Ordering::Relaxed);
        0
    }

    fn id_or_dropped(&self, slot: usize, at: u64) -> u32 {
        if at == ARENA_FULL {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            0
        } else {
            slot as u32 + 1
        }
    }

    /// Copies `frames` into the arena; its location, or [`ARENA_FULL`].
    fn store(&self, frames: &[u64]) -> u64 {
        let arena = self.arena.u64s();
        let offset = self
            .arena_next
            .fetch_add(frames.len() as u64, Ordering::AcqRel);
        let end = offset + frames.len() as u64;
        if end > arena.len() as u64 || offset >= 1 << 55 {
            return ARENA_FULL;
        }
        for (cell, &frame) in arena[offset as usize..end as usize].iter().zip(frames) {
            cell.store(frame, Ordering::Relaxed);
        }
        offset << 8 | frames.len() as u64
    }

    fn frames_at(&self, at: u64) -> FramesAt {
        FramesAt {
            arena: self.arena.u64s(),
            offset: (at >> 8) as usize,
            len: (at & 0xff) as usize,
        }
    }

    /// The frames of stack `id`, if it names one.
    pub fn get(&self, id: u32) -> Option<Vec<u64>> {
        let slot = (id as usize).checked_sub(1)?;
        if slot >= self.capacity {
            return None;
        }
        let at = self.slots.u64s()[slot * 2 + 1].load(Ordering::Acquire);
        (at != 0 && at != ARENA_FULL).then(|| self.frames_at(at).collect())
    }
}

struct FramesAt {
    arena: &'static [AtomicU64],
    offset: usize,
    len: usize,
}

impl Iterator for FramesAt {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let frame = self.arena.get(self.offset)?.load(Ordering::Relaxed);
        self.offset += 1;
        self.len -= 1;
        Some(frame)
    }
}

impl PartialEq<&[u64]> for FramesAt {
    fn eq(&self, other: &&[u64]) -> bool {
        self.len == other.len()
            && other.iter().enumerate().all(|(i, &frame)| {
                self.arena
                    .get(self.offset + i)
                    .is_some_and(|cell| cell.load(Ordering::Relaxed) == frame)
            })
    }
}

/// A non-zero hash of the frames (FxHash's multiply-rotate).
fn hash(frames: &[u64]) -> u64 {
    let mut h: u64 = frames.len() as u64;
    for &frame in frames {
        h = (h.rotate_left(5) ^ frame).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    h | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_intern_once_and_read_back() {
        let stacks = Stacks::new(64, 1024).unwrap();
        let a = [0x1000u64, 0x2000, 0x3000];
        let b = [0x1000u64, 0x2000];
        let ia = stacks.intern(&a);
        assert_ne!(ia, 0);
        assert_eq!(stacks.intern(&a), ia);
        let ib = stacks.intern(&b);
        assert_ne!(ib, ia);
        assert_eq!(stacks.get(ia), Some(a.to_vec()));
        assert_eq!(stacks.get(ib), Some(b.to_vec()));
        assert_eq!(stacks.get(0), None);
        assert_eq!(stacks.count(), 2);
    }

    #[test]
    fn a_full_arena_gives_no_stack_and_counts_it() {
        let stacks = Stacks::new(64, 4).unwrap();
        assert_ne!(stacks.intern(&[1, 2, 3]), 0);
        assert_eq!(stacks.intern(&[4, 5, 6]), 0);
        assert_eq!(stacks.dropped(), 1);
    }

    #[test]
    fn threads_interning_the_same_stacks_agree() {
        let stacks = std::sync::Arc::new(Stacks::new(1 << 10, 1 << 16).unwrap());
        let ids: Vec<Vec<u32>> = (0..8)
            .map(|_| {
                let stacks = stacks.clone();
                std::thread::spawn(move || {
                    (0..200u64)
                        .map(|i| stacks.intern(&[i, i * 7, 0x4000 + i]))
                        .collect()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        assert!(ids.iter().all(|each| each == &ids[0]));
        assert_eq!(stacks.count(), 200);
    }
}
