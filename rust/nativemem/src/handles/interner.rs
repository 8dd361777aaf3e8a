//! Bounded string interning: creation stacks, kinds and thread names become small ids.

use std::collections::HashMap;

/// Id of the entry that stands for everything the table had no room for.
pub const OVERFLOW: u32 = 0;

/// Strings to dense ids, at most `capacity` of them; later strings share [`OVERFLOW`].
#[derive(Debug)]
pub struct Interner {
    ids: HashMap<String, u32>,
    texts: Vec<String>,
    capacity: usize,
    max_len: usize,
    dropped: u64,
}

impl Interner {
    /// `overflow` names the shared entry; `max_len` bounds each stored text in bytes.
    pub fn new(overflow: &str, capacity: usize, max_len: usize) -> Self {
        Interner {
            ids: HashMap::new(),
            texts: vec![overflow.to_string()],
            capacity: capacity.max(1),
            max_len,
            dropped: 0,
        }
    }

    /// The id of `text`, adding it while there is room.
    pub fn intern(&mut self, text: &str) -> u32 {
        let text = truncate(text, self.max_len);
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        if self.texts.len() > self.capacity {
            self.dropped += 1;
            return OVERFLOW;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.to_string());
        self.ids.insert(text.to_string(), id);
        id
    }

    pub fn text(&self, id: u32) -> &str {
        self.texts
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or_else(|| &self.texts[OVERFLOW as usize])
    }

    /// Number of `intern` calls that found no room.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Number of distinct texts kept.
    pub fn kept(&self) -> usize {
        self.texts.len() - 1
    }
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
        let mut table = Interner::new("(dropped)", 2, 100);
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
    fn long_text_truncated_on_char_boundary() {
        let mut table = Interner::new("-", 4, 3);
        let id = table.intern("aé-long");
        assert_eq!(table.text(id), "aé");
    }
}
