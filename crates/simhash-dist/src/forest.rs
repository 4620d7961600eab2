//! A spanning forest over sparse 64-bit positions: each worker filters the edges it finds
//! down to those that join two components, so that only they go on to the components'
//! rounds ([`crate::rounds::components`]). The union-find is `simhash_cluster`'s
//! [`UnionFind`]; this module only numbers the positions densely as they first appear.
//!
//! Those numbers are `u32`s: one worker's forest holds at most [`CAPACITY`] distinct
//! positions (about 4.3 billion, every record of the pairs the worker found, wherever read).
//! Past that, the forest stops growing and remembers it ([`Forest::check`]): the job fails
//! on every worker with [`ForestFull`]'s message, never with a panic or a wrong forest.

use std::collections::HashMap;

use simhash_cluster::UnionFind;

/// The most distinct positions one worker's forest numbers: [`simhash_cluster::MAX_DOCUMENTS`].
pub(crate) const CAPACITY: usize = simhash_cluster::MAX_DOCUMENTS;

/// One worker's forest met more distinct positions than its capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ForestFull {
    capacity: usize,
}

impl std::fmt::Display for ForestFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {} distinct records in one worker's spanning forest, its limit (records \
             are numbered with 32 bits there): run the job on more workers (-w, -n), each \
             then holds fewer",
            self.capacity
        )
    }
}

impl std::error::Error for ForestFull {}

/// The edges that joined two components of `u64` positions, created on first use.
#[derive(Debug)]
pub(crate) struct Forest {
    /// Each position's dense number in `sets`.
    numbers: HashMap<u64, u32>,
    /// The positions, by dense number.
    #[cfg(test)]
    positions: Vec<u64>,
    sets: UnionFind,
    /// The most positions numbered ([`CAPACITY`], less in tests).
    capacity: usize,
    /// Whether a position came past `capacity` (the forest is then incomplete).
    full: bool,
    /// The edges that joined two components, in the order found.
    pub(crate) edges: Vec<(u64, u64)>,
}

impl Default for Forest {
    fn default() -> Forest {
        Forest::with_capacity(CAPACITY)
    }
}

impl Forest {
    /// An empty forest that numbers at most `capacity` positions (at most [`CAPACITY`]).
    pub(crate) fn with_capacity(capacity: usize) -> Forest {
        Forest {
            numbers: HashMap::new(),
            #[cfg(test)]
            positions: Vec::new(),
            sets: UnionFind::new(0),
            capacity: capacity.min(CAPACITY),
            full: false,
            edges: Vec::new(),
        }
    }

    /// The dense number of `x`, numbering it if it is new; `None` (and the forest marked
    /// full) when it is new and the forest holds `capacity` positions already.
    fn number(&mut self, x: u64) -> Option<u32> {
        if let Some(&n) = self.numbers.get(&x) {
            return Some(n);
        }
        if self.numbers.len() >= self.capacity {
            self.full = true;
            return None;
        }
        let Ok(n) = self.sets.push() else {
            self.full = true;
            return None;
        };
        self.numbers.insert(x, n);
        #[cfg(test)]
        self.positions.push(x);
        Some(n)
    }

    /// Whether every edge given was taken in: an error once a position came past the
    /// capacity (the edges from then on that needed a new position were dropped).
    pub(crate) fn check(&self) -> Result<(), ForestFull> {
        if self.full { Err(ForestFull { capacity: self.capacity }) } else { Ok(()) }
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
    /// edge and adds no element. Past the capacity the edge is dropped and the forest
    /// remembers it ([`Forest::check`]).
    pub(crate) fn union(&mut self, a: u64, b: u64) {
        if a == b {
            return;
        }
        let (Some(na), Some(nb)) = (self.number(a), self.number(b)) else {
            return;
        };
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
        assert_eq!(f.check(), Ok(()));
    }

    /// At its capacity a forest still links the positions it holds; one position more is
    /// an error naming the limit, not a panic (it was `expect`, past `u32::MAX`).
    #[test]
    fn a_position_past_the_capacity_is_an_error() {
        let mut f = Forest::with_capacity(3);
        f.union(1, 2);
        f.union(2, 3);
        f.union(3, 1);
        assert_eq!(f.check(), Ok(()), "exactly the capacity");
        f.union(3, 4);
        let err = f.check().expect_err("a fourth position");
        assert_eq!(err, ForestFull { capacity: 3 });
        assert!(err.to_string().starts_with("more than 3 distinct records"), "{err}");
        // What it held is unchanged, and the error stays.
        assert_eq!(f.edges, [(1, 2), (2, 3)]);
        f.union(1, 2);
        assert!(f.check().is_err());
        // The real limit is the union-find's.
        assert_eq!(Forest::default().capacity, u32::MAX as usize);
        assert_eq!(Forest::with_capacity(usize::MAX).capacity, CAPACITY);
    }
}
