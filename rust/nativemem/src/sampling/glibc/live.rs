//! The live heap of sampled blocks: address → (size, stack id), lock-free, fixed size.
//!
//! Buckets of four slots (64 bytes, one cache line) found by the address's hash. A block is
//! inserted in its home bucket, or, when that is full, in one of the next buckets, and the
//! home bucket is marked as overflowed. A lookup reads the home bucket; only a marked one sends
//! it further. So the free of an unsampled block costs one cache line (plus a bit that stays in
//! cache), and no slot ever needs a tombstone: a removed slot is simply empty again.

use super::region::Region;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const SLOTS_PER_BUCKET: usize = 4;
/// Buckets a block may land in, its home included.
const MAX_BUCKETS: usize = 8;
const SIZE_BITS: u32 = 40;
const STACK_BITS: u32 = 24;

/// A sampled block as the table keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub size: u64,
    pub stack: u32,
}

impl Block {
    fn pack(self) -> u64 {
        let size = self.size.min((1 << SIZE_BITS) - 1);
        let stack = (self.stack as u64).min((1 << STACK_BITS) - 1);
        // Never zero: an entry's meta word of 0 means "being written".
        (size << STACK_BITS | stack) | 1 << 63
    }

    fn unpack(word: u64) -> Block {
        let word = word & !(1 << 63);
        Block {
            size: word >> STACK_BITS,
            stack: (word & ((1 << STACK_BITS) - 1)) as u32,
        }
    }
}

/// The table.
pub struct LiveHeap {
    /// `[address, meta]` pairs, four pairs a bucket.
    slots: Region,
    /// One bit per bucket: a block whose home it is lies further on.
    overflowed: Region,
    buckets: usize,
    count: AtomicU64,
    bytes: AtomicU64,
    /// Samples not kept because every slot within reach was taken.
    dropped: AtomicU64,
}

impl LiveHeap {
    /// A table for `buckets` × 4 blocks (`buckets` a power of two).
    pub fn new(buckets: usize) -> Option<LiveHeap> {
        let buckets = buckets.next_power_of_two();
        Some(LiveHeap {
            slots: Region::map(buckets * SLOTS_PER_BUCKET * 16)?,
            overflowed: Region::map(buckets.div_ceil(64) * 8)?,
            buckets,
            count: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        })
    }

    /// Blocks the table can hold.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.buckets * SLOTS_PER_BUCKET
    }

    /// Memory reserved for the table, and how much of it is resident.
    pub fn reserved_bytes(&self) -> u64 {
        (self.slots.len() + self.overflowed.len()) as u64
    }

    pub fn resident_bytes(&self) -> u64 {
        self.slots.resident_bytes() + self.overflowed.resident_bytes()
    }

    /// Live sampled blocks and their bytes (as sampled, not unbiased).
    pub fn live(&self) -> (u64, u64) {
        (
            self.count.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Empties the table; only when no hook can run.
    pub fn clear(&self) {
        self.slots.reset();
        self.overflowed.reset();
        self.count.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Relaxed);
    }

    fn home(&self, address: usize) -> usize {
        // Blocks are 16-byte aligned; the multiply spreads the rest.
        ((address as u64 >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize
            & (self.buckets - 1)
    }

    fn entry(&self, bucket: usize, slot: usize) -> (&AtomicUsize, &AtomicU64) {
        let index = (bucket * SLOTS_PER_BUCKET + slot) * 2;
        (&self.slots.usizes()[index], &self.slots.u64s()[index + 1])
    }

    fn overflow_bit(&self, bucket: usize) -> (&AtomicU64, u64) {
        (&self.overflowed.u64s()[bucket / 64], 1 << (bucket % 64))
    }

    /// Records a sampled block. Lock-free; false when no slot within reach was free.
    ///
    /// A block still recorded at the same address was freed where no hook saw it (inside libc:
    /// `getline`'s realloc, `freeaddrinfo`): that sample ended, and is dropped first.
    pub fn insert(&self, address: usize, block: Block) -> bool {
        if address == 0 {
            return false;
        }
        self.remove(address);
        let home = self.home(address);
        for step in 0..MAX_BUCKETS {
            let bucket = (home + step) & (self.buckets - 1);
            for slot in 0..SLOTS_PER_BUCKET {
                let (key, meta) = self.entry(bucket, slot);
                if key.load(Ordering::Relaxed) == 0
                    && key
                        .compare_exchange(0, address, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                {
                    meta.store(block.pack(), Ordering::Release);
                    self.count.fetch_add(1, Ordering::Relaxed);
                    self.bytes.fetch_add(block.size, Ordering::Relaxed);
                    return true;
                }
            }
            if step == 0 {
                let (word, bit) = self.overflow_bit(home);
                word.fetch_or(bit, Ordering::AcqRel);
            }
        }
        self.dropped.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Removes the block at `address` if it was sampled, and returns it. The common answer,
    /// "not sampled", reads one bucket.
    #[inline]
    pub fn remove(&self, address: usize) -> Option<Block> {
        if address == 0 || self.count.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let home = self.home(address);
        let (word, bit) = self.overflow_bit(home);
        let reach = if word.load(Ordering::Acquire) & bit != 0 {
            MAX_BUCKETS
        } else {
            1
        };
        for step in 0..reach {
            let bucket = (home + step) & (self.buckets - 1);
            for slot in 0..SLOTS_PER_BUCKET {
                let (key, meta) = self.entry(bucket, slot);
                if key.load(Ordering::Acquire) != address {
                    continue;
                }
                // The block's owner frees it once; the insert finished before its malloc
                // returned, so the meta word is there.
                let block = Block::unpack(meta.swap(0, Ordering::AcqRel));
                key.store(0, Ordering::Release);
                // Saturating: a clear may have zeroed the counts under a straggling hook.
                let less = |by: u64| move |n: u64| Some(n.saturating_sub(by));
                let _ = self
                    .count
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, less(1));
                let _ =
                    self.bytes
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, less(block.size));
                return Some(block);
            }
        }
        None
    }

    /// Every block in the table (a snapshot while others allocate: each block is seen or not).
    pub fn for_each(&self, mut each: impl FnMut(usize, Block)) {
        for bucket in 0..self.buckets {
            for slot in 0..SLOTS_PER_BUCKET {
                let (key, meta) = self.entry(bucket, slot);
                let address = key.load(Ordering::Acquire);
                let word = meta.load(Ordering::Acquire);
                if address != 0 && word != 0 {
                    each(address, Block::unpack(word));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_moved_and_removed() {
        let heap = LiveHeap::new(1024).unwrap();
        let a = Block {
            size: 4096,
            stack: 7,
        };
        assert!(heap.insert(0x1000, a));
        assert_eq!(heap.live(), (1, 4096));
        assert_eq!(heap.remove(0x2000), None);
        assert_eq!(heap.remove(0x1000), Some(a));
        assert_eq!(heap.remove(0x1000), None);
        assert_eq!(heap.live(), (0, 0));
    }

    #[test]
    fn a_crowded_home_overflows_and_every_block_is_still_found() {
        let heap = LiveHeap::new(16).unwrap();
        // More blocks than one bucket holds: several share a home.
        let addresses: Vec<usize> = (1..=40).map(|i| i * 16).collect();
        for (i, &address) in addresses.iter().enumerate() {
            assert!(heap.insert(
                address,
                Block {
                    size: i as u64 + 1,
                    stack: 1
                }
            ));
        }
        let mut seen = 0;
        heap.for_each(|_, _| seen += 1);
        assert_eq!(seen, 40);
        for (i, &address) in addresses.iter().enumerate() {
            assert_eq!(heap.remove(address).map(|b| b.size), Some(i as u64 + 1));
        }
        assert_eq!(heap.live(), (0, 0));
    }

    #[test]
    fn a_full_table_drops_and_counts() {
        let heap = LiveHeap::new(1).unwrap();
        let kept = (1..=64)
            .filter(|i| heap.insert(i * 16, Block { size: 1, stack: 1 }))
            .count();
        assert_eq!(kept, heap.capacity());
        assert_eq!(heap.dropped(), 64 - kept as u64);
    }

    #[test]
    fn threads_inserting_and_removing_leave_it_empty() {
        let heap = std::sync::Arc::new(LiveHeap::new(1 << 12).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let heap = heap.clone();
                std::thread::spawn(move || {
                    for round in 0..200 {
                        let base = (t * 1_000_000 + round * 1000 + 1) * 16;
                        for i in 0..500 {
                            heap.insert(base + i * 16, Block { size: 8, stack: 3 });
                        }
                        for i in 0..500 {
                            assert!(heap.remove(base + i * 16).is_some());
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(heap.live(), (0, 0));
        let mut left = 0;
        heap.for_each(|_, _| left += 1);
        assert_eq!(left, 0);
    }
}
