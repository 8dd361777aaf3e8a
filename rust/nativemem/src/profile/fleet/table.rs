//! Distinct stacks of function names, each stored once: the labels of all stacks side by side
//! in one array (4 bytes a frame), found again by a 64-bit fingerprint, so adding a stack costs
//! one table lookup, and memory grows with the distinct stacks of all dumps, not with their
//! number.

use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// The empty stack's id: the table starts with it.
pub const EMPTY: u32 = 0;

/// Stacks of labels (indices into the caller's names), leaf first, each with an id.
#[derive(Debug)]
pub struct StackTable {
    labels: Vec<u32>,
    /// Where each stack starts in `labels`; one more entry than stacks.
    starts: Vec<usize>,
    /// Fingerprint → the first stack with it.
    by_fingerprint: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    /// Per stack: the next one with the same fingerprint (`EMPTY` ends the chain).
    same_fingerprint: Vec<u32>,
}

impl Default for StackTable {
    fn default() -> StackTable {
        StackTable {
            labels: Vec::new(),
            starts: vec![0, 0],
            by_fingerprint: HashMap::default(),
            same_fingerprint: vec![EMPTY],
        }
    }
}

impl StackTable {
    /// The id of `frames` (leaf first), added if new.
    pub fn intern(&mut self, frames: &[u32]) -> u32 {
        if frames.is_empty() {
            return EMPTY;
        }
        let mut hasher = FxHasher::default();
        frames.hash(&mut hasher);
        let fingerprint = hasher.finish();
        let first = self.by_fingerprint.get(&fingerprint).copied();
        let mut candidate = first.unwrap_or(EMPTY);
        while candidate != EMPTY {
            if self.frames(candidate) == frames {
                return candidate;
            }
            candidate = self.same_fingerprint[candidate as usize];
        }
        let id = self.len() as u32;
        self.labels.extend_from_slice(frames);
        self.starts.push(self.labels.len());
        self.same_fingerprint.push(first.unwrap_or(EMPTY));
        self.by_fingerprint.insert(fingerprint, id);
        id
    }

    /// Stacks, the empty one included.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// The labels of stack `id`, leaf first.
    pub fn frames(&self, id: u32) -> &[u32] {
        let id = id as usize;
        &self.labels[self.starts[id]..self.starts[id + 1]]
    }
}

/// Spreads a fingerprint over all bits (the finalizer of SplitMix64), so the table's buckets
/// are even whatever bits the fingerprint varies in.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }

    fn finish(&self) -> u64 {
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_stacks_share_an_id() {
        let mut table = StackTable::default();
        let a = table.intern(&[2, 1, 0]);
        let b = table.intern(&[3, 1, 0]);
        assert_eq!(table.intern(&[2, 1, 0]), a);
        assert_ne!(a, b);
        assert_eq!(table.len(), 3);
        assert_eq!(table.frames(b), [3, 1, 0]);
        assert_eq!(table.intern(&[]), EMPTY);
        assert!(table.frames(EMPTY).is_empty());
    }

    #[test]
    fn stacks_with_one_fingerprint_stay_apart() {
        let mut table = StackTable::default();
        let a = table.intern(&[7]);
        // Forge a second stack under the same fingerprint: the chain tells them apart.
        let mut hasher = FxHasher::default();
        [7u32][..].hash(&mut hasher);
        let b = table.len() as u32;
        table.labels.push(8);
        table.starts.push(table.labels.len());
        table.same_fingerprint.push(a);
        table.by_fingerprint.insert(hasher.finish(), b);
        assert_eq!(table.intern(&[7]), a);
        assert_eq!(table.intern(&[8]), table.intern(&[8]));
        assert_eq!(table.frames(b), [8]);
    }
}
