//! Near-duplicate clusters from pairs of documents, deterministic for any pair order and
//! thread count.
//!
//! Documents are positions `0..n` (`u32`), in input order. Given the pairs of documents
//! whose fingerprints are within `k` bits (from `simhash-index`, or anywhere), this crate
//! groups them into clusters and picks the document each cluster keeps. Pairs are anything
//! that converts into `(u32, u32)`: plain tuples, or `simhash-index`'s `Pair` as it comes. It does no I/O,
//! prints nothing and starts no threads; it depends on nothing.
//!
//! # Overview
//!
//! * [`Clusters`] is the result: a cluster id per document
//!   ([`cluster_ids`](Clusters::cluster_ids)), the members of each cluster
//!   ([`iter`](Clusters::iter), [`members`](Clusters::members)), sizes, a
//!   [`histogram`](Clusters::histogram), [`Stats`] and a
//!   [`representative`](Clusters::representative) per cluster. Build it with
//!   [`Clusters::components`], [`Clusters::star`] or [`Clusters::builder`].
//! * [`Mode`] says how pairs become clusters: [`Mode::Components`] (connected components,
//!   the default) or [`Mode::Star`] (center clustering, against chains that merge
//!   unrelated documents). Its docs spell out the trade-off.
//! * [`Representative`] says which member is kept: the first in input order (the
//!   default), the longest, or the one with the lowest key. Ties go to input order.
//! * [`UnionFind`] is the incremental engine behind components: feed pairs as they come,
//!   on one thread or several, [`merge`](UnionFind::merge) the partial results, and call
//!   [`into_clusters`](UnionFind::into_clusters).
//!
//! # Determinism
//!
//! Clusters are numbered densely in order of their first member, members are listed in
//! input order, and representatives are chosen by the policy with ties to input order.
//! Both modes depend only on the set of pairs, so any pair order, any orientation of a
//! pair, repeated pairs, self-loops, and any split of the pairs across threads give equal
//! [`Clusters`] (they implement `Eq`), and therefore byte-identical output.
//!
//! # Errors
//!
//! Errors are [`ClusterError`]s, with a lowercase message and a [`kind`](ClusterError::kind)
//! ([`ClusterErrorKind`], `#[non_exhaustive]`) to match on. A pair naming a document `>= n` is one, as is a policy whose keys do not
//! match `n`, or more than [`MAX_DOCUMENTS`] documents. Lookups by cluster or document id
//! on a built [`Clusters`] panic when out of range, like slice indexing
//! ([`Clusters::get`] does not).
//!
//! # Example
//!
//! ```
//! use simhash_cluster::{Clusters, Mode, Representative};
//!
//! // Pairs within k bits, as an index reports them: (a, b) with a < b.
//! let pairs = [(0, 1), (1, 2), (3, 5)];
//!
//! let clusters = Clusters::components(6, pairs)?;
//! let all: Vec<&[u32]> = clusters.iter().collect();
//! assert_eq!(all, [&[0, 1, 2][..], &[3, 5], &[4]]);
//! assert_eq!(clusters.cluster_of(5), 1);
//!
//! // Keep one document per cluster.
//! let kept: Vec<u32> = clusters.representatives().to_vec();
//! assert_eq!(kept, [0, 3, 4]);
//!
//! // Star mode does not chain: 2 is not paired with 0, so it starts its own cluster.
//! let star = Clusters::star(6, pairs, &Representative::First)?;
//! assert_eq!(star.members(0), &[0, 1]);
//! assert_eq!(star.members(1), &[2]);
//!
//! let stats = clusters.stats(2);
//! assert_eq!((stats.clusters, stats.largest, stats.oversized), (2, 3, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Pairs as they arrive, then the clusters once:
//!
//! ```
//! use simhash_cluster::UnionFind;
//!
//! let mut uf = UnionFind::new(4);
//! for (a, b) in [(3, 2), (2, 1)] {
//!     uf.union(a, b)?;
//! }
//! let clusters = uf.into_clusters();
//! assert_eq!(clusters.cluster_ids(), &[0, 1, 1, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod builder;
mod clusters;
mod error;
mod policy;
mod star;
mod stats;
mod union_find;

pub use crate::{
    builder::{ClustersBuilder, Mode},
    clusters::{Clusters, Iter},
    error::{ClusterError, ClusterErrorKind, MAX_DOCUMENTS},
    policy::{KeepKey, KeepPolicy, Representative},
    stats::Stats,
    union_find::UnionFind,
};

#[cfg(test)]
mod testoibits {
    use super::*;

    fn assert_all<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}

    #[test]
    fn thread_safe() {
        assert_all::<Clusters>();
        assert_all::<Iter<'_>>();
        assert_all::<UnionFind>();
        assert_all::<ClusterError>();
        assert_all::<Representative<'_>>();
        assert_all::<ClustersBuilder<'_>>();
        assert_all::<Mode>();
        assert_all::<Stats>();
    }
}
