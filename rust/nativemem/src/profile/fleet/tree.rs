//! Stacks of function names as a tree of calls: a stack is the node reached by walking its
//! frames from the root, so stacks that share callers share nodes and memory grows with the
//! distinct stacks of all dumps, not with their number.

use rustc_hash::FxHashMap;

/// The root: the empty stack.
pub const ROOT: u32 = 0;

/// Nodes are `u32` indices; each has a parent and a label (an index into the caller's names).
#[derive(Debug)]
pub struct CallTree {
    parent: Vec<u32>,
    label: Vec<u32>,
    /// `(parent << 32 | label)` → child.
    children: FxHashMap<u64, u32>,
}

impl Default for CallTree {
    fn default() -> CallTree {
        CallTree {
            parent: vec![ROOT],
            label: vec![u32::MAX],
            children: FxHashMap::default(),
        }
    }
}

impl CallTree {
    /// The node of `frames` (labels root first), made if new.
    pub fn node(&mut self, frames: impl Iterator<Item = u32>) -> u32 {
        let mut node = ROOT;
        for label in frames {
            let key = (u64::from(node) << 32) | u64::from(label);
            let next = self.parent.len() as u32;
            node = *self.children.entry(key).or_insert_with(|| {
                self.parent.push(node);
                self.label.push(label);
                next
            });
        }
        node
    }

    /// Nodes, the root included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// The labels of `node`'s stack into `out`, leaf first.
    pub fn frames(&self, mut node: u32, out: &mut Vec<u32>) {
        out.clear();
        while node != ROOT {
            out.push(self.label[node as usize]);
            node = self.parent[node as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_callers_share_nodes() {
        let mut tree = CallTree::default();
        let a = tree.node([0, 1, 2].into_iter());
        let b = tree.node([0, 1, 3].into_iter());
        assert_eq!(tree.node([0, 1, 2].into_iter()), a);
        assert_ne!(a, b);
        assert_eq!(tree.len(), 5); // root, 0, 0;1, 0;1;2, 0;1;3
        let mut frames = Vec::new();
        tree.frames(b, &mut frames);
        assert_eq!(frames, [3, 1, 0]);
        tree.frames(ROOT, &mut frames);
        assert!(frames.is_empty());
    }
}
