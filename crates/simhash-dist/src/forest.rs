//! A union-find over sparse 64-bit positions: each worker filters the edges it finds down to
//! a spanning forest, so that only edges that join two components go on to the components'
//! rounds ([`crate::rounds::components`]).

use std::collections::HashMap;

/// A union-find whose elements are any `u64`s, created on first use.
#[derive(Debug, Default)]
pub(crate) struct Forest {
    parent: HashMap<u64, u64>,
    /// The edges that joined two components, in the order found.
    pub(crate) edges: Vec<(u64, u64)>,
}

impl Forest {
    fn find(&mut self, mut x: u64) -> u64 {
        loop {
            let p = self.parent.get(&x).copied().unwrap_or(x);
            if p == x {
                return x;
            }
            let grand = self.parent.get(&p).copied().unwrap_or(p);
            if grand != p {
                // Path halving.
                self.parent.insert(x, grand);
            }
            x = grand;
        }
    }

    /// Every element with its component's name, its smallest element (the smaller root
    /// always stays the root), sorted: what [`crate::rounds::components`] computes across
    /// workers, against which it is tested.
    #[cfg(test)]
    pub(crate) fn components(&mut self) -> Vec<(u64, u64)> {
        // Roots are values only (an element is a key once it has a parent).
        let mut elements: Vec<u64> = self.parent.iter().flat_map(|(&k, &v)| [k, v]).collect();
        elements.sort_unstable();
        elements.dedup();
        elements.into_iter().map(|x| (x, self.find(x))).collect()
    }

    /// Whether `a` and `b` are in one component.
    pub(crate) fn joined(&mut self, a: u64, b: u64) -> bool {
        self.find(a) == self.find(b)
    }

    /// Links `a` and `b`; keeps the edge if it joined two components.
    pub(crate) fn union(&mut self, a: u64, b: u64) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The smaller root stays the root: trees stay shallow enough with path halving.
            let (root, child) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent.insert(child, root);
            self.edges.push((a, b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_joining_edges() {
        let mut f = Forest::default();
        for (a, b) in [(1, 2), (2, 3), (1, 3), (10, 20), (3, 1), (20, 2), (5, 5)] {
            f.union(a, b);
        }
        assert_eq!(f.edges, [(1, 2), (2, 3), (10, 20), (20, 2)]);
        let named = f.components();
        assert!(named.iter().all(|&(_, root)| root == 1), "{named:?}");
        assert_eq!(named.len(), 5);
    }
}
