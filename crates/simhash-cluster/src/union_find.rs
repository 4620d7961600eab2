use crate::clusters::{Clusters, NONE};
use crate::error::{ClusterError, MAX_DOCUMENTS, check_document, check_documents};
use crate::policy::Representative;

/// Disjoint sets over documents `0..n`: union-find with path halving and union by size.
///
/// Feed it the pairs of near-duplicate documents with [`union`](UnionFind::union) or
/// [`union_all`](UnionFind::union_all), then turn it into [`Clusters`] with
/// [`into_clusters`](UnionFind::into_clusters). Each operation takes amortised
/// near-constant time (inverse Ackermann), and [`find`](UnionFind::find) never recurses,
/// so one chain of millions of documents is fine. Memory: 8 bytes per document.
///
/// # Several threads
///
/// Give each thread its own `UnionFind::new(n)` and a share of the pairs, then combine the
/// partial results with [`merge`](UnionFind::merge). Merging is associative and
/// commutative: the sets depend only on which pairs were seen, never on how they were split
/// or in which order the parts were merged, and [`Clusters`] lists them in a canonical
/// order. So the output is identical for any thread count. A merge costs one union per
/// document of `other`, so splitting pays off when there are many more pairs than documents.
///
/// # Example
///
/// ```
/// use simhash_cluster::UnionFind;
///
/// let pairs = [(0, 1), (2, 3), (1, 4), (5, 5)];
/// let (left, right) = pairs.split_at(2);
/// let (a, b) = std::thread::scope(|s| {
///     let a = s.spawn(|| {
///         let mut uf = UnionFind::new(6);
///         uf.union_all(left.iter().copied()).map(|()| uf)
///     });
///     let b = s.spawn(|| {
///         let mut uf = UnionFind::new(6);
///         uf.union_all(right.iter().copied()).map(|()| uf)
///     });
///     (a.join().unwrap(), b.join().unwrap())
/// });
/// let mut uf = a?;
/// uf.merge(&b?)?;
/// assert_eq!(uf.sets(), 3);
///
/// let clusters = uf.into_clusters();
/// let all: Vec<&[u32]> = clusters.iter().collect();
/// assert_eq!(all, [&[0, 1, 4][..], &[2, 3], &[5]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct UnionFind {
    /// One node per document: parent and size side by side, so that a union touches one
    /// cache line per node.
    nodes: Vec<Node>,
    /// The number of disjoint sets.
    sets: usize,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// A root is its own parent.
    parent: u32,
    /// The size of the set, valid at roots only.
    size: u32,
}

impl UnionFind {
    /// Every document in its own set.
    ///
    /// # Panics
    ///
    /// If `documents` exceeds [`MAX_DOCUMENTS`]; [`try_new`](UnionFind::try_new) returns an
    /// error instead.
    pub fn new(documents: usize) -> UnionFind {
        match UnionFind::try_new(documents) {
            Ok(uf) => uf,
            Err(err) => panic!("{err}"),
        }
    }

    /// Every document in its own set, or an error if `documents` exceeds
    /// [`MAX_DOCUMENTS`].
    pub fn try_new(documents: usize) -> Result<UnionFind, ClusterError> {
        check_documents(documents)?;
        debug_assert!(documents <= MAX_DOCUMENTS);
        Ok(UnionFind {
            nodes: (0..documents as u32).map(|parent| Node { parent, size: 1 }).collect(),
            sets: documents,
        })
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no documents.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of disjoint sets, singletons included.
    pub fn sets(&self) -> usize {
        self.sets
    }

    fn check(&self, doc: u32) -> Result<(), ClusterError> {
        check_document(doc, self.nodes.len())
    }

    /// Adds a document in a set of its own and returns it: the next position, [`len`]
    /// before the call. For elements met as they come (number them densely as they first
    /// appear, then union their numbers). Fails, with nothing changed, at [`MAX_DOCUMENTS`].
    ///
    /// [`len`]: UnionFind::len
    pub fn push(&mut self) -> Result<u32, ClusterError> {
        check_documents(self.nodes.len() + 1)?;
        let doc = self.nodes.len() as u32;
        self.nodes.push(Node { parent: doc, size: 1 });
        self.sets += 1;
        Ok(doc)
    }

    /// [`find`](UnionFind::find) without the range check, for hot loops over documents
    /// known to be in range: the root of `doc`'s set, halving the path on the way.
    ///
    /// # Panics
    ///
    /// If `doc` is out of range.
    #[inline]
    pub fn root(&mut self, mut doc: u32) -> u32 {
        loop {
            let parent = self.nodes[doc as usize].parent;
            if parent == doc {
                return doc;
            }
            let grandparent = self.nodes[parent as usize].parent;
            if grandparent == parent {
                return parent;
            }
            self.nodes[doc as usize].parent = grandparent;
            doc = grandparent;
        }
    }

    /// [`union`](UnionFind::union) without the range check, for hot loops over documents
    /// known to be in range: joins the sets of `a` and `b` (the larger set's root stays the
    /// root; on a tie, `a`'s) and returns whether they were apart.
    ///
    /// # Panics
    ///
    /// If `a` or `b` is out of range.
    #[inline]
    pub fn join(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return false;
        }
        let (sa, sb) = (self.nodes[ra as usize].size, self.nodes[rb as usize].size);
        let (big, small) = if sa < sb { (rb, ra) } else { (ra, rb) };
        self.nodes[small as usize].parent = big;
        self.nodes[big as usize].size = sa + sb;
        self.sets -= 1;
        true
    }

    /// [`join`](UnionFind::join), except that the smaller of the two roots stays the root,
    /// whatever the sets' sizes. When every union goes through `join_min`, each set's root
    /// ([`root`](UnionFind::root)) is its smallest document: a name that depends only on
    /// the partition, never on the order of the unions, for callers that sort or key by it.
    /// Trees stay shallow enough with path halving.
    ///
    /// # Panics
    ///
    /// If `a` or `b` is out of range.
    #[inline]
    pub fn join_min(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return false;
        }
        let (root, child) = if ra < rb { (ra, rb) } else { (rb, ra) };
        let size = self.nodes[ra as usize].size + self.nodes[rb as usize].size;
        self.nodes[child as usize].parent = root;
        self.nodes[root as usize].size = size;
        self.sets -= 1;
        true
    }

    /// A representative of `doc`'s set: two documents are in the same set exactly when
    /// their `find` is equal. Which member it is depends on the order of the unions, so
    /// use it only to compare; [`Clusters`] gives stable ids.
    pub fn find(&mut self, doc: u32) -> Result<u32, ClusterError> {
        self.check(doc)?;
        Ok(self.root(doc))
    }

    /// Whether `a` and `b` are in the same set.
    pub fn same(&mut self, a: u32, b: u32) -> Result<bool, ClusterError> {
        self.check(a)?;
        self.check(b)?;
        Ok(self.root(a) == self.root(b))
    }

    /// Puts `a` and `b` in the same set. Returns whether they were in different sets (a
    /// self-loop or a repeated pair returns `false`), or an error, with nothing changed, if
    /// either is out of range.
    pub fn union(&mut self, a: u32, b: u32) -> Result<bool, ClusterError> {
        self.check(a)?;
        self.check(b)?;
        Ok(self.join(a, b))
    }

    /// [`union`](UnionFind::union) for each pair. Stops at the first pair out of range and
    /// returns its error; the pairs before it have been applied.
    pub fn union_all<I>(&mut self, pairs: I) -> Result<(), ClusterError>
    where
        I: IntoIterator,
        I::Item: Into<(u32, u32)>,
    {
        for (a, b) in pairs.into_iter().map(Into::into) {
            self.union(a, b)?;
        }
        Ok(())
    }

    /// Adds every pair `other` has seen: afterwards two documents are in the same set when
    /// they were in the same set of `self` or of `other` (or are linked through both).
    /// Associative and commutative, so partial results built on several threads can be
    /// merged in any order. Fails, with nothing changed, if the document counts differ.
    pub fn merge(&mut self, other: &UnionFind) -> Result<(), ClusterError> {
        if self.len() != other.len() {
            return Err(ClusterError::size_mismatch(self.len(), other.len()));
        }
        // Each link doc -> parent of `other` joins two documents of one of its sets, and
        // together the links span all its sets: replaying them reproduces its partition.
        for (doc, node) in other.nodes.iter().enumerate() {
            let parent = node.parent;
            if parent != doc as u32 {
                self.join(doc as u32, parent);
            }
        }
        Ok(())
    }

    /// The sets as [`Clusters`]: clusters ordered by their first member, members in input
    /// order, and the first member as the representative.
    pub fn into_clusters(self) -> Clusters {
        self.into_clusters_unchecked(&Representative::First)
    }

    /// The sets as [`Clusters`] with representatives chosen by `policy`. Fails if the
    /// policy's keys do not match the number of documents.
    pub fn into_clusters_with(self, policy: &Representative<'_>) -> Result<Clusters, ClusterError> {
        policy.check(self.len())?;
        Ok(self.into_clusters_unchecked(policy))
    }

    fn into_clusters_unchecked(mut self, policy: &Representative<'_>) -> Clusters {
        let n = self.len();
        // A root's size is no longer needed: it becomes the root's cluster id, numbered
        // when the root's first member is met, so ids follow the order of first members.
        for (doc, node) in self.nodes.iter_mut().enumerate() {
            if node.parent == doc as u32 {
                node.size = NONE;
            }
        }
        let mut cluster_of = Vec::with_capacity(n);
        let mut count = 0u32;
        for doc in 0..n as u32 {
            let root = self.root(doc) as usize;
            if self.nodes[root].size == NONE {
                self.nodes[root].size = count;
                count += 1;
            }
            cluster_of.push(self.nodes[root].size);
        }
        drop(self);
        Clusters::from_cluster_ids(cluster_of, count as usize, policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty() {
        let uf = UnionFind::new(0);
        assert!(uf.is_empty());
        assert_eq!(uf.sets(), 0);
        let clusters = uf.into_clusters();
        assert!(clusters.is_empty());
        assert_eq!(clusters.iter().count(), 0);
    }

    #[test]
    fn union_and_find() {
        let mut uf = UnionFind::new(5);
        assert_eq!(uf.union(0, 1), Ok(true));
        assert_eq!(uf.union(1, 0), Ok(false));
        assert_eq!(uf.union(3, 3), Ok(false));
        assert_eq!(uf.union(3, 4), Ok(true));
        assert_eq!(uf.sets(), 3);
        assert_eq!(uf.same(0, 1), Ok(true));
        assert_eq!(uf.same(1, 3), Ok(false));
        assert_eq!(uf.find(4), uf.find(3));
        assert_eq!(uf.len(), 5);
    }

    #[test]
    fn out_of_range_changes_nothing() {
        let mut uf = UnionFind::new(3);
        let err = uf.union(0, 3).unwrap_err();
        assert_eq!(err.out_of_range_document(), Some(3));
        assert_eq!(err.to_string(), "document 3 out of range for 3 documents");
        assert_eq!(uf.sets(), 3);
        assert!(uf.union(u32::MAX, 0).is_err());
        assert!(uf.find(3).is_err());
        assert!(uf.same(1, 9).is_err());
        // union_all applies the prefix before the bad pair.
        assert!(uf.union_all([(0, 1), (1, 7), (1, 2)]).is_err());
        assert_eq!(uf.sets(), 2);
    }

    #[test]
    fn merge_sizes_must_match() {
        let mut a = UnionFind::new(3);
        let b = UnionFind::new(4);
        assert_eq!(
            a.merge(&b).unwrap_err().to_string(),
            "cannot merge partial results over 3 and 4 documents"
        );
    }

    #[test]
    fn merge_links_across_parts() {
        let mut a = UnionFind::new(6);
        let mut b = UnionFind::new(6);
        a.union_all([(0, 1), (2, 3)]).unwrap();
        b.union_all([(1, 2), (4, 5)]).unwrap();
        let mut ab = a.clone();
        ab.merge(&b).unwrap();
        let mut ba = b.clone();
        ba.merge(&a).unwrap();
        assert_eq!(ab.sets(), 2);
        assert_eq!(ab.into_clusters(), ba.into_clusters());
    }

    #[test]
    fn giant_chain_does_not_recurse() {
        let n = 200_000u32;
        let mut uf = UnionFind::new(n as usize);
        // Link in an order that builds tall trees without path compression.
        uf.union_all((1..n).rev().map(|i| (i - 1, i))).unwrap();
        assert_eq!(uf.sets(), 1);
        let clusters = uf.into_clusters();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters.members(0).len(), n as usize);
        assert!(clusters.members(0).windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn unchecked_forms_agree_with_checked() {
        let mut uf = UnionFind::new(6);
        assert!(uf.join(0, 1));
        assert!(!uf.join(1, 0));
        assert!(uf.join(4, 5));
        assert_eq!(uf.root(1), uf.find(0).unwrap());
        assert_eq!(uf.sets(), 4);
        // The larger set's root stays the root; on a tie, the first argument's.
        assert!(uf.join(2, 1));
        assert_eq!(uf.root(2), uf.root(0));
        assert_eq!(uf.root(3), 3);
    }

    #[test]
    fn join_min_names_sets_by_their_smallest_document() {
        let mut uf = UnionFind::new(8);
        for (a, b) in [(5, 6), (6, 7), (7, 2), (3, 4), (4, 6), (1, 1)] {
            uf.join_min(a, b);
        }
        let roots: Vec<u32> = (0..8).map(|d| uf.root(d)).collect();
        assert_eq!(roots, [0, 1, 2, 2, 2, 2, 2, 2]);
        assert_eq!(uf.sets(), 3);
        assert!(!uf.join_min(2, 7));
    }

    #[test]
    fn push_grows() {
        let mut uf = UnionFind::new(0);
        assert_eq!(uf.push(), Ok(0));
        assert_eq!(uf.push(), Ok(1));
        assert_eq!(uf.sets(), 2);
        assert!(uf.join(0, 1));
        assert_eq!(uf.push(), Ok(2));
        assert_eq!(uf.sets(), 2);
        assert_eq!(uf.len(), 3);
    }

    #[test]
    fn try_new_limit() {
        assert!(UnionFind::try_new(10).is_ok());
        #[cfg(target_pointer_width = "64")]
        assert!(UnionFind::try_new(MAX_DOCUMENTS + 1).is_err());
    }
}
