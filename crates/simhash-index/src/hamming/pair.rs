//! The pairs the batch matching finds ([`AllPairs`](crate::AllPairs), [`cross_pairs_with`](crate::cross_pairs_with)): positions
//! and their Hamming distance.

/// A pair of positions in the input slice whose fingerprints are within the maximum
/// distance: `a < b`.
///
/// A pair converts into `(a, b)`, which is what `simhash-cluster`'s builders take, so pairs
/// go to `Clusters::components(n, pairs)` as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Pair {
    /// The smaller position.
    pub a: u32,
    /// The larger position.
    pub b: u32,
    /// The Hamming distance between the two fingerprints.
    pub distance: u32,
}

/// A query position and a corpus position whose fingerprints are within the maximum
/// distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CrossPair {
    /// The position in the query slice.
    pub query: u32,
    /// The position in the corpus slice.
    pub corpus: u32,
    /// The Hamming distance between the two fingerprints.
    pub distance: u32,
}

impl From<Pair> for (u32, u32) {
    /// The two positions, `(a, b)`.
    #[inline]
    fn from(p: Pair) -> (u32, u32) {
        (p.a, p.b)
    }
}

impl From<&Pair> for (u32, u32) {
    /// The two positions, `(a, b)`.
    #[inline]
    fn from(p: &Pair) -> (u32, u32) {
        (p.a, p.b)
    }
}
