//! A spanning forest over sparse 64-bit positions: each worker filters the edges it finds
//! down to those that join two components, so that only they go on to the components'
//! rounds ([`crate::rounds::components`]). The union-find is `simhash_cluster`'s
//! [`UnionFind`]; this module only numbers the positions densely as they first appear.

use std::collections::HashMap;

use simhash_cluster::UnionFind;

/// The edges that joined two components of `u64` positions, created on first use.
#[derive(Debug)]
pub(crate) struct Forest {
    /// Each position's dense number in `sets`.
    numbers: HashMap<u64, u32>,
    /// The positions, by dense number.
    #[cfg(test)]
    positions: Vec<u64>,
    sets: UnionFind,
    /// The edges that joined two components, in the order found.
    pub(crate) edges: Vec<(u64, u64)>,
}

impl Default for Forest {
    fn default() -> Forest {
        Forest {
            numbers: HashMap::new(),
            #[cfg(test)]
            positions: Vec::new(),
            sets: UnionFind::new(0),
            edges: Vec::new(),
        }
    }
}

impl Forest {
    /// The dense number of `x`, numbering it if it is new.
    fn number(&mut self, x: u64) -> u32 {
        if let Some(&n) = self.numbers.get(&x) {
            return n;
        }
        // A worker's positions are its documents' (u32 each), so fewer than u32::MAX.
        let n = self.sets.push().expect("fewer than u32::MAX positions on one worker");
        self.numbers.insert(x, n);
        #[cfg(test)]
        self.positions.push(x);
        n
    }

    /// Every element with its component's name, its smallest element, sorted: what
    /// [`crate::rounds::components`] computes across workers, against which it is tested.
    #[cfg(test)]
    pub(crate) fn components(&mut self) -> Vec<(u64, u64)> {
        let mut smallest: HashMap<u32, u64> = HashMap::new();
        for (n, &x) in self.positions.iter().enumerate() {
            let root = self.sets.root(n as u32);
            let name = smallest.entry(root).or_insert(x);
            *name = (*name).min(x);
        }
        let mut named: Vec<(u64, u64)> = (0..self.positions.len())
            .map(|n| (self.positions[n], smallest[&self.sets.root(n as u32)]))
            .collect();
        named.sort_unstable();
        named
    }

    /// Links `a` and `b`; keeps the edge if it joined two components. A self-loop is no
    /// edge and adds no element.
    pub(crate) fn union(&mut self, a: u64, b: u64) {
        if a == b {
            return;
        }
        let (na, nb) = (self.number(a), self.number(b));
        if self.sets.join(na, nb) {
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
