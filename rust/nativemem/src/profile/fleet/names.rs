//! The labels of a [`super::Fleet`], each kept once: their texts side by side in one string, found
//! again by a 64-bit fingerprint (as [`super::table::StackTable`] finds stacks), so a label costs
//! its bytes and about 20 more, not two `String`s and a hash-map entry.

use super::table::KeyHasher;
use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// No label: ends a chain of labels with one fingerprint.
const NONE: u32 = u32::MAX;

/// Interned label texts, each with an id (its index).
#[derive(Debug, Default)]
pub struct Names {
    text: String,
    /// Where each label ends in `text` (it starts where the previous one ends).
    ends: Vec<usize>,
    /// Fingerprint → the last label with it.
    by_fingerprint: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    /// Per label: the previous one with the same fingerprint (`NONE` ends the chain).
    same_fingerprint: Vec<u32>,
}

impl Names {
    /// The id of `name`, added if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        let fingerprint = fingerprint(name);
        let last = self.by_fingerprint.get(&fingerprint).copied();
        let mut candidate = last.unwrap_or(NONE);
        while candidate != NONE {
            if self.get(candidate as usize) == name {
                return candidate;
            }
            candidate = self.same_fingerprint[candidate as usize];
        }
        let id = self.ends.len() as u32;
        self.text.push_str(name);
        self.ends.push(self.text.len());
        self.same_fingerprint.push(last.unwrap_or(NONE));
        self.by_fingerprint.insert(fingerprint, id);
        id
    }

    /// The id of `name` if it is a label.
    pub fn find(&self, name: &str) -> Option<usize> {
        let mut candidate = *self.by_fingerprint.get(&fingerprint(name))?;
        while candidate != NONE {
            if self.get(candidate as usize) == name {
                return Some(candidate as usize);
            }
            candidate = self.same_fingerprint[candidate as usize];
        }
        None
    }

    /// The text of label `id`.
    pub fn get(&self, id: usize) -> &str {
        let start = match id {
            0 => 0,
            _ => self.ends[id - 1],
        };
        &self.text[start..self.ends[id]]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

fn fingerprint(name: &str) -> u64 {
    let mut hasher = FxHasher::default();
    name.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_text_is_kept_once_and_found_again() {
        let mut names = Names::default();
        let a = names.intern("inflateInit2_");
        let b = names.intern("main");
        let empty = names.intern("");
        assert_eq!(names.intern("inflateInit2_"), a);
        assert_eq!((a, b, empty), (0, 1, 2));
        assert_eq!(names.get(1), "main");
        assert_eq!(names.get(2), "");
        assert_eq!(names.find("main"), Some(1));
        assert_eq!(names.find("mai"), None);
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn texts_with_one_fingerprint_stay_apart() {
        let mut names = Names::default();
        let a = names.intern("a");
        // Forge a second label under the same fingerprint: the chain tells them apart.
        names.text.push('b');
        names.ends.push(names.text.len());
        names.same_fingerprint.push(a);
        names.by_fingerprint.insert(fingerprint("a"), 1);
        assert_eq!(names.intern("a"), a);
        assert_eq!(names.find("a"), Some(0));
        assert_eq!(names.find("b"), None);
        assert_eq!(names.get(1), "b");
    }
}
