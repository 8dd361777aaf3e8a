//! Distinct stacks of function names, each stored once: the labels of all stacks side by side
//! in one array (4 bytes a frame), found again through a hash table of stack ids (4 bytes a
//! slot, the stack itself is the key), so adding a stack costs one table lookup, and memory
//! grows with the distinct stacks of all dumps, not with their number.

use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// The empty stack's id: the table starts with it.
pub const EMPTY: u32 = 0;

/// Stacks of labels (indices into the caller's names), leaf first, each with an id.
#[derive(Debug)]
pub struct StackTable {
    labels: Vec<u32>,
    /// Where each stack starts in `labels`; one more entry than stacks.
    starts: Vec<usize>,
    /// The ids of the stacks but the empty one, found by the hash of their labels.
    ids: HashTable<u32>,
}

impl Default for StackTable {
    fn default() -> StackTable {
        StackTable {
            labels: Vec::new(),
            starts: vec![0, 0],
            ids: HashTable::new(),
        }
    }
}

impl StackTable {
    /// The id of `frames` (leaf first), added if new.
    pub fn intern(&mut self, frames: &[u32]) -> u32 {
        if frames.is_empty() {
            return EMPTY;
        }
        let hash = hash_of(frames);
        if let Some(&id) = self.ids.find(hash, |&id| self.frames(id) == frames) {
            return id;
        }
        let id = self.len() as u32;
        self.labels.extend_from_slice(frames);
        self.starts.push(self.labels.len());
        let StackTable {
            labels,
            starts,
            ids,
        } = self;
        let frames_of = |id: u32| &labels[starts[id as usize]..starts[id as usize + 1]];
        ids.insert_unique(hash, id, |&id| hash_of(frames_of(id)));
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

/// The hash of `value` for the interning tables ([`StackTable`], [`super::names::Names`], the
/// addresses of [`crate::profile::stacks::Resolver`]): Fx, its bits spread by the finalizer of
/// SplitMix64, so the table's buckets are even whatever bits the value varies in (addresses
/// vary in their middle bits).
pub fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    let mut x = hasher.finish();
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
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
    fn stacks_with_one_hash_stay_apart() {
        let mut table = StackTable::default();
        let a = table.intern(&[7]);
        // Forge a second stack under the hash of the first: the labels tell them apart.
        let b = table.len() as u32;
        table.labels.push(8);
        table.starts.push(table.labels.len());
        let (labels, starts) = (&table.labels, &table.starts);
        let frames_of = |id: u32| &labels[starts[id as usize]..starts[id as usize + 1]];
        table
            .ids
            .insert_unique(hash_of(&[7u32][..]), b, |&id| hash_of(frames_of(id)));
        assert_eq!(table.intern(&[7]), a);
        assert_eq!(table.frames(b), [8]);
        let c = table.intern(&[8]);
        assert_ne!(c, b, "found by the forged hash");
        assert_eq!(table.intern(&[8]), c);
    }
}
