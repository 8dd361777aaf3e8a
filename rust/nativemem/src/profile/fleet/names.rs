//! The labels of a [`super::Fleet`], each kept once: their texts side by side in one string, found
//! again through a hash table of label ids ([`Ids`], 8 bytes a slot, the text is the key), as
//! [`super::table::StackTable`] finds stacks, so a label costs its bytes and about 25 more, not
//! two `String`s and a hash-map entry.

use super::table::{fingerprint, Ids};

/// Interned label texts, each with an id (its index).
#[derive(Debug, Default)]
pub struct Names {
    text: String,
    /// Where each label ends in `text` (it starts where the previous one ends).
    ends: Vec<usize>,
    /// The labels' ids, found by the fingerprint of their text.
    ids: Ids,
}

impl Names {
    /// The id of `name`, added if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        let fingerprint = fingerprint(name);
        if let Some(id) = self.find_fingerprinted(fingerprint, name) {
            return id as u32;
        }
        let id = self.ends.len() as u32;
        self.text.push_str(name);
        self.ends.push(self.text.len());
        self.ids.insert(fingerprint, id);
        id
    }

    /// The id of `name` if it is a label.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.find_fingerprinted(fingerprint(name), name)
    }

    fn find_fingerprinted(&self, fingerprint: u32, name: &str) -> Option<usize> {
        let found = self
            .ids
            .find(fingerprint, |id| self.get(id as usize) == name);
        found.map(|id| id as usize)
    }

    /// The text of label `id`.
    pub fn get(&self, id: usize) -> &str {
        text_of(&self.text, &self.ends, id)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

fn text_of<'t>(text: &'t str, ends: &[usize], id: usize) -> &'t str {
    let start = match id {
        0 => 0,
        _ => ends[id - 1],
    };
    &text[start..ends[id]]
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
        // Forge a second label under the fingerprint of the first: the texts tell them apart.
        names.text.push('b');
        names.ends.push(names.text.len());
        names.ids.insert(fingerprint("a"), 1);
        assert_eq!(names.intern("a"), a);
        assert_eq!(names.find("a"), Some(0));
        assert_eq!(names.find("b"), None);
        assert_eq!(names.get(1), "b");
    }
}
