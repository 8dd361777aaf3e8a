//! Collapsed ("folded") stacks: `root;caller;leaf <bytes>` per distinct stack, the input of
//! flame graph tools. A difference is written as `stack <base bytes> <current bytes>`, the
//! differential form flame graph tools read.

use super::stacks::Stacks;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bytes per distinct function stack, keyed by its folded form (root first).
pub fn fold(stacks: &Stacks) -> BTreeMap<String, f64> {
    let labels = stacks.labels();
    let mut folded: BTreeMap<String, f64> = BTreeMap::new();
    let mut key = String::new();
    let mut frames = Vec::new();
    for sample in &stacks.samples {
        frames.clear();
        frames.extend(stacks.frames(&labels, sample));
        fold_into(&mut key, frames.iter().map(|&l| labels.names[l].as_str()));
        match folded.get_mut(key.as_str()) {
            Some(bytes) => *bytes += sample.bytes,
            None => {
                folded.insert(key.clone(), sample.bytes);
            }
        }
    }
    folded
}

/// The folded form of a stack given leaf first (`root;...;leaf`) into `key`.
pub fn fold_into<'a>(key: &mut String, leaf_first: impl DoubleEndedIterator<Item = &'a str>) {
    key.clear();
    for (i, name) in leaf_first.rev().enumerate() {
        if i > 0 {
            key.push(';');
        }
        // ';' separates frames and the last space starts the count: keep names clean. Control
        // characters would break lines (and XML 1.0 forbids them in the flame graph): shown.
        for c in name.chars() {
            match c {
                ';' => key.push(':'),
                c => crate::terminal_text::push_char(key, c),
            }
        }
    }
}

/// One line per distinct stack with its bytes (rounded; stacks under half a byte are left out).
pub fn render(stacks: &Stacks) -> String {
    let pairs = fold(stacks).into_iter().map(|(k, b)| (k, (0.0, b)));
    lines(&pairs.collect(), false)
}

/// Differential lines `stack <base> <current>` over the union of both profiles' stacks.
pub fn render_difference(base: &Stacks, current: &Stacks) -> String {
    let mut pairs: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (key, bytes) in fold(base) {
        pairs.entry(key).or_default().0 += bytes;
    }
    for (key, bytes) in fold(current) {
        pairs.entry(key).or_default().1 += bytes;
    }
    lines(&pairs, true)
}

/// Lines of folded stacks with their `(base, current)` bytes, rounded: `stack current`, or
/// `stack base current` for a difference; lines of nothing left out.
pub fn lines(folded: &BTreeMap<String, (f64, f64)>, difference: bool) -> String {
    let mut out = String::new();
    for (key, (base, current)) in folded {
        let (b, a) = (base.round() as i64, current.round() as i64);
        if difference && (a != 0 || b != 0) {
            let _ = writeln!(out, "{key} {b} {a}");
        } else if !difference && a != 0 {
            let _ = writeln!(out, "{key} {a}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::stacks::tests::stacks_of;

    #[test]
    fn control_characters_in_names_are_shown_not_kept() {
        let mut key = String::new();
        fold_into(
            &mut key,
            ["leaf\u{1b}[2J\n1 999", "ma;in\u{9b}"].into_iter(),
        );
        assert_eq!(key, "ma:in\\u009b;leaf\\x1b[2J\\n1 999");
    }

    #[test]
    fn folds_root_first_and_merges_equal_stacks() {
        let stacks = stacks_of(&[
            (&["leaf", "main"], 100.4),
            (&["leaf", "main"], 50.0),
            (&["odd;name", "main"], 7.0),
        ]);
        assert_eq!(render(&stacks), "main;leaf 150\nmain;odd:name 7\n");
    }

    #[test]
    fn differences_keep_both_columns() {
        let base = stacks_of(&[(&["a", "main"], 10.0), (&["gone", "main"], 5.0)]);
        let current = stacks_of(&[(&["a", "main"], 30.0), (&["new", "main"], 8.0)]);
        assert_eq!(
            render_difference(&base, &current),
            "main;a 10 30\nmain;gone 5 0\nmain;new 0 8\n"
        );
    }
}
