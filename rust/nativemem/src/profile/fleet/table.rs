//! Distinct stacks of function names, each stored once: the labels of all stacks side by side
//! in one array (4 bytes a frame), found again through a hash table of stack ids ([`Ids`], 8
//! bytes a slot, the stack itself is the key), so adding a stack costs one table lookup, and
//! memory grows with the distinct stacks of all dumps, not with their number.

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
    /// The ids of the stacks but the empty one, found by the fingerprint of their labels.
    ids: Ids,
}

impl Default for StackTable {
    fn default() -> StackTable {
        StackTable {
            labels: Vec::new(),
            starts: vec![0, 0],
            ids: Ids::default(),
        }
    }
}

impl StackTable {
    /// The id of `frames` (leaf first), added if new.
    pub fn intern(&mut self, frames: &[u32]) -> u32 {
        if frames.is_empty() {
            return EMPTY;
        }
        let fingerprint = fingerprint(frames);
        if let Some(id) = self.ids.find(fingerprint, |id| self.frames(id) == frames) {
            return id;
        }
        let id = self.len() as u32;
        self.labels.extend_from_slice(frames);
        self.starts.push(self.labels.len());
        self.ids.insert(fingerprint, id);
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

/// Ids of keys kept elsewhere (in an arena: the stacks of [`StackTable`], the texts of
/// [`super::names::Names`], the addresses of [`crate::profile::stacks::Resolver`]), found by a
/// 32-bit fingerprint of the key kept beside each id: 8 bytes a slot, and the table grows, and
/// most probes that miss are told apart, without reading the keys again.
#[derive(Debug, Default)]
pub struct Ids(HashTable<Slot>);

#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u32,
    fingerprint: u32,
}

impl Ids {
    /// The id with `fingerprint` whose key `is` the one sought.
    pub fn find(&self, fingerprint: u32, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        let slot = self.0.find(spread(fingerprint), |s| {
            s.fingerprint == fingerprint && is(s.id)
        });
        slot.map(|s| s.id)
    }

    /// Adds `id`, whose key has `fingerprint` (and is not in the table yet).
    pub fn insert(&mut self, fingerprint: u32, id: u32) {
        let slot = Slot { id, fingerprint };
        self.0
            .insert_unique(spread(fingerprint), slot, |s| spread(s.fingerprint));
    }
}

/// The fingerprint of `value` for [`Ids`]: Fx, folded to 32 bits.
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u32 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    let hash = hasher.finish();
    (hash ^ (hash >> 32)) as u32
}

/// A fingerprint's bits spread over 64 (the finalizer of SplitMix64), so the table's buckets
/// are even whatever bits the keys vary in (addresses vary in their middle bits).
fn spread(fingerprint: u32) -> u64 {
    let mut x = u64::from(fingerprint);
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
    fn stacks_with_one_fingerprint_stay_apart() {
        let mut table = StackTable::default();
        let a = table.intern(&[7]);
        // Forge a second stack under the fingerprint of the first: the labels tell them apart.
        let b = table.len() as u32;
        table.labels.push(8);
        table.starts.push(table.labels.len());
        table.ids.insert(fingerprint(&[7u32][..]), b);
        assert_eq!(table.intern(&[7]), a);
        assert_eq!(table.frames(b), [8]);
        let c = table.intern(&[8]);
        assert_ne!(c, b, "found by the forged fingerprint");
        assert_eq!(table.intern(&[8]), c);
    }
}
