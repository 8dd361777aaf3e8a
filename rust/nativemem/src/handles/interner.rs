//! Bounded string interning: creation stacks, kinds and thread names become small ids.
//!
//! The bound is memory, not a count: a long test suite makes many distinct stacks, most of whose
//! handles are closed again. Entries the caller no longer needs can be [`Interner::evict`]ed and
//! their ids reused, so the table keeps room for the stacks that matter.

use std::collections::HashMap;
use std::sync::Arc;

/// Id of the entry that stands for everything the table had no room for.
pub const OVERFLOW: u32 = 0;

/// Bytes an entry costs beyond its text: the id map's slot and the table's slot.
const ENTRY_OVERHEAD: usize = 64;

/// Strings to dense ids within `max_bytes`; strings that find no room share [`OVERFLOW`].
#[derive(Debug)]
pub struct Interner {
    ids: HashMap<Arc<str>, u32>,
    /// By id; `None` for a slot freed by eviction (listed in `free`).
    texts: Vec<Option<Arc<str>>>,
    free: Vec<u32>,
    max_bytes: usize,
    bytes: usize,
    max_len: usize,
    dropped: u64,
}

impl Interner {
    /// `overflow` names the shared entry; `max_len` bounds each stored text in bytes, `max_bytes`
    /// the whole table.
    pub fn new(overflow: &str, max_bytes: usize, max_len: usize) -> Self {
        Interner {
            ids: HashMap::new(),
            texts: vec![Some(Arc::from(overflow))],
            free: Vec::new(),
            max_bytes,
            bytes: 0,
            max_len,
            dropped: 0,
        }
    }

    /// The id of `text` if it is in the table.
    pub fn find(&self, text: &str) -> Option<u32> {
        self.ids.get(truncate(text, self.max_len)).copied()
    }

    /// Whether a new `text` would fit.
    pub fn has_room_for(&self, text: &str) -> bool {
        self.bytes + cost(truncate(text, self.max_len)) <= self.max_bytes
    }

    /// The id of `text`, adding it while there is room.
    pub fn intern(&mut self, text: &str) -> u32 {
        let text = truncate(text, self.max_len);
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        if !self.has_room_for(text) {
            self.dropped += 1;
            return OVERFLOW;
        }
        let shared: Arc<str> = Arc::from(text);
        let id = match self.free.pop() {
            Some(id) => {
                self.texts[id as usize] = Some(shared.clone());
                id
            }
            None => {
                self.texts.push(Some(shared.clone()));
                (self.texts.len() - 1) as u32
            }
        };
        self.bytes += cost(text);
        self.ids.insert(shared, id);
        id
    }

    /// Frees `id` for reuse; the overflow entry stays.
    pub fn evict(&mut self, id: u32) {
        if id == OVERFLOW {
            return;
        }
        if let Some(slot) = self.texts.get_mut(id as usize) {
            if let Some(text) = slot.take() {
                self.bytes -= cost(&text);
                self.ids.remove(&text);
                self.free.push(id);
            }
        }
    }

    pub fn text(&self, id: u32) -> &str {
        match self.texts.get(id as usize) {
            Some(Some(text)) => text,
            _ => self.texts[OVERFLOW as usize].as_deref().unwrap_or(""),
        }
    }

    /// Ids in use, the overflow entry excluded.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids.values().copied()
    }

    /// Number of `intern` calls that found no room.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Number of distinct texts kept.
    pub fn kept(&self) -> usize {
        self.ids.len()
    }

    /// Memory the table holds, about.
    pub fn bytes(&self) -> usize {
        self.bytes + self.texts.capacity() * std::mem::size_of::<Option<Arc<str>>>()
    }
}

fn cost(text: &str) -> usize {
    text.len() + ENTRY_OVERHEAD
}

/// The longest prefix of `text` within `max_len` bytes that ends on a character boundary.
fn truncate(text: &str, max_len: usize) -> &str {
    if text.len() <= max_len {
        return text;
    }
    let mut end = max_len;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_same_id_and_overflow_counted() {
        let mut table = Interner::new("(dropped)", 2 * (1 + ENTRY_OVERHEAD), 100);
        let a = table.intern("a");
        assert_eq!(table.intern("a"), a);
        let b = table.intern("b");
        assert_ne!(a, b);
        assert_eq!(table.intern("c"), OVERFLOW);
        assert_eq!(table.intern("d"), OVERFLOW);
        assert_eq!(table.dropped(), 2);
        assert_eq!(table.text(OVERFLOW), "(dropped)");
        assert_eq!(table.kept(), 2);
    }

    #[test]
    fn evicted_entry_makes_room_and_its_id_is_reused() {
        let mut table = Interner::new("(dropped)", 2 * (1 + ENTRY_OVERHEAD), 100);
        let a = table.intern("a");
        table.intern("b");
        assert_eq!(table.intern("c"), OVERFLOW);
        table.evict(a);
        assert_eq!(table.find("a"), None);
        let c = table.intern("c");
        assert_eq!(c, a, "the freed id is reused");
        assert_eq!(table.text(c), "c");
        assert_eq!(table.kept(), 2);
    }

    #[test]
    fn long_text_truncated_on_char_boundary() {
        let mut table = Interner::new("-", 4096, 3);
        let id = table.intern("aé-long");
        assert_eq!(table.text(id), "aé");
    }
}
