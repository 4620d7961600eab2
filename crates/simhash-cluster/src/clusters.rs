use std::iter::FusedIterator;
use std::ops::Range;

use crate::error::ClusterError;
use crate::policy::Representative;

/// "No value" in the `u32` arrays: never a valid position, since positions are below
/// [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS).
pub(crate) const NONE: u32 = u32::MAX;

/// A partition of documents `0..n` into clusters, in a canonical order.
///
/// * Every document is in exactly one cluster; a document with no near-duplicate is a
///   cluster of one (a singleton), so `len()` counts singletons too.
/// * Clusters are numbered densely from 0 in order of their first member, and the members
///   of each cluster are listed in input order (ascending position).
/// * Each cluster has a [`representative`](Clusters::representative), the document to
///   keep, chosen by a [`Representative`] policy when the clusters were built.
///
/// This order depends only on the partition (and the policy), never on the order of the
/// pairs or the number of threads, so two builds of the same pairs compare equal and
/// print byte-identical output.
///
/// Memory: two `u32` per document (its cluster id, its place in a member list) plus two per
/// cluster (where its members start, its representative).
///
/// # Example
///
/// ```
/// use simhash_cluster::Clusters;
///
/// let clusters = Clusters::components(6, [(4, 1), (1, 0), (3, 5)])?;
/// assert_eq!(clusters.len(), 3);
/// assert_eq!(clusters.cluster_ids(), &[0, 0, 1, 2, 0, 2]);
/// assert_eq!(clusters.members(0), &[0, 1, 4]);
/// assert_eq!(clusters.representative(2), 3);
/// assert!(clusters.is_representative(0) && !clusters.is_representative(4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// With the `serde` feature it serializes as `{"cluster_ids": [...], "representatives":
/// [...]}` and deserializing checks that layout (dense ids in order of first member, each
/// representative a member of its cluster).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "ClustersFields", try_from = "ClustersFields"))]
pub struct Clusters {
    /// The cluster id of each document.
    cluster_of: Vec<u32>,
    /// Cluster `c` is `members[offsets[c]..offsets[c + 1]]`.
    offsets: Vec<u32>,
    /// All documents, grouped by cluster, each group in input order.
    members: Vec<u32>,
    /// The representative of each cluster.
    representatives: Vec<u32>,
}

impl Clusters {
    /// Builds the canonical layout from a dense cluster id per document, where ids are
    /// numbered in order of first member, and picks representatives with `policy` (whose
    /// keys have been checked).
    pub(crate) fn from_cluster_ids(
        cluster_of: Vec<u32>,
        count: usize,
        policy: &Representative<'_>,
    ) -> Clusters {
        let mut clusters = Clusters::layout(cluster_of, count);
        clusters.representatives = clusters
            .iter()
            .map(|members| {
                let mut best = members[0];
                for &doc in &members[1..] {
                    if policy.beats_earlier(doc, best) {
                        best = doc;
                    }
                }
                best
            })
            .collect();
        clusters
    }

    /// Builds the canonical layout from a dense cluster id per document (numbered in order
    /// of first member) and the representative of each cluster.
    /// The clusters of a center assignment: `centers[d]` is the center of document `d`,
    /// and a center is its own center. Each center is its cluster's representative; the
    /// clusters are numbered in order of first member, as always.
    ///
    /// This is how a caller that finds centers itself (a dedup walk that keeps a record
    /// unless it matches an already kept one) gets the same `Clusters` as
    /// [`star`](Clusters::star) would build from all the pairs.
    ///
    /// Fails if a center is not a document (`>= centers.len()`), is not its own center,
    /// or if there are more than [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS) documents.
    ///
    /// ```
    /// use simhash_cluster::Clusters;
    ///
    /// let clusters = Clusters::from_centers(vec![0, 0, 2, 2, 0])?;
    /// assert_eq!(clusters.members(0), &[0, 1, 4]);
    /// assert_eq!(clusters.representatives(), &[0, 2]);
    /// assert!(Clusters::from_centers(vec![1, 0]).is_err()); // 1 is not its own center
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_centers(centers: Vec<u32>) -> Result<Clusters, ClusterError> {
        crate::error::check_documents(centers.len())?;
        for &c in &centers {
            crate::error::check_document(c, centers.len())?;
            if centers[c as usize] != c {
                return Err(ClusterError::not_a_center(c));
            }
        }
        Ok(Clusters::from_centers_unchecked(centers))
    }

    /// [`from_centers`](Clusters::from_centers) for a checked assignment.
    pub(crate) fn from_centers_unchecked(centers: Vec<u32>) -> Clusters {
        let n = centers.len();
        let mut label = vec![NONE; n];
        let mut representatives = Vec::new();
        let mut cluster_of = centers;
        for slot in &mut cluster_of {
            let c = *slot as usize;
            if label[c] == NONE {
                label[c] = representatives.len() as u32;
                representatives.push(*slot);
            }
            *slot = label[c];
        }
        Clusters::from_parts(cluster_of, representatives)
    }

    pub(crate) fn from_parts(cluster_of: Vec<u32>, representatives: Vec<u32>) -> Clusters {
        let mut clusters = Clusters::layout(cluster_of, representatives.len());
        clusters.representatives = representatives;
        clusters
    }

    /// Checks a layout given as parts (from a deserializer): ids dense in order of first
    /// member, one representative per cluster, each a member of its cluster.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn try_from_parts(
        cluster_of: Vec<u32>,
        representatives: Vec<u32>,
    ) -> Result<Clusters, ClusterError> {
        crate::error::check_documents(cluster_of.len())?;
        let mut next = 0u32;
        for &c in &cluster_of {
            if c > next {
                return Err(ClusterError::malformed("cluster ids not numbered by first member"));
            }
            if c == next {
                next += 1;
            }
        }
        if representatives.len() != next as usize {
            return Err(ClusterError::malformed("not one representative per cluster"));
        }
        for (c, &r) in representatives.iter().enumerate() {
            if cluster_of.get(r as usize) != Some(&(c as u32)) {
                return Err(ClusterError::malformed("a representative is not in its cluster"));
            }
        }
        Ok(Clusters::from_parts(cluster_of, representatives))
    }

    /// A counting sort of the documents by cluster id; representatives left empty.
    fn layout(cluster_of: Vec<u32>, count: usize) -> Clusters {
        let n = cluster_of.len();
        // offsets[c] = the size of c, then the end of c, then (after placing the members
        // from the last document down) the start of c.
        let mut offsets = vec![0u32; count + 1];
        for &c in &cluster_of {
            offsets[c as usize] += 1;
        }
        let mut end = 0u32;
        for slot in &mut offsets[..count] {
            end += *slot;
            *slot = end;
        }
        offsets[count] = n as u32;
        let mut members = vec![0u32; n];
        for (doc, &c) in cluster_of.iter().enumerate().rev() {
            let slot = &mut offsets[c as usize];
            *slot -= 1;
            members[*slot as usize] = doc as u32;
        }
        Clusters { cluster_of, offsets, members, representatives: Vec::new() }
    }

    /// The number of clusters, singletons included.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no clusters (there were no documents).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of documents.
    pub fn documents(&self) -> usize {
        self.cluster_of.len()
    }

    /// The dense id (`0..len()`) of the cluster holding `doc`.
    ///
    /// # Panics
    ///
    /// If `doc >= documents()`.
    pub fn cluster_of(&self, doc: u32) -> u32 {
        self.cluster_of[doc as usize]
    }

    /// The compact representation: the cluster id of every document, indexed by position.
    pub fn cluster_ids(&self) -> &[u32] {
        &self.cluster_of
    }

    fn range(&self, cluster: u32) -> Range<usize> {
        let c = cluster as usize;
        self.offsets[c] as usize..self.offsets[c + 1] as usize
    }

    /// The members of a cluster, in input order.
    ///
    /// # Panics
    ///
    /// If `cluster >= len()`; [`get`](Clusters::get) returns `None` instead.
    pub fn members(&self, cluster: u32) -> &[u32] {
        &self.members[self.range(cluster)]
    }

    /// The members of a cluster, or `None` if there is no such cluster.
    pub fn get(&self, cluster: u32) -> Option<&[u32]> {
        ((cluster as usize) < self.len()).then(|| self.members(cluster))
    }

    /// The number of members of a cluster.
    ///
    /// # Panics
    ///
    /// If `cluster >= len()`.
    pub fn size(&self, cluster: u32) -> usize {
        self.range(cluster).len()
    }

    /// The size of every cluster, in cluster order.
    pub fn sizes(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.offsets.windows(2).map(|w| (w[1] - w[0]) as usize)
    }

    /// The representative (the document to keep) of a cluster.
    ///
    /// # Panics
    ///
    /// If `cluster >= len()`.
    pub fn representative(&self, cluster: u32) -> u32 {
        self.representatives[cluster as usize]
    }

    /// The representative of every cluster, in cluster order.
    pub fn representatives(&self) -> &[u32] {
        &self.representatives
    }

    /// Whether `doc` is the representative of its cluster: the documents to keep when
    /// dropping near-duplicates are exactly those for which this is true.
    ///
    /// # Panics
    ///
    /// If `doc >= documents()`.
    pub fn is_representative(&self, doc: u32) -> bool {
        self.representatives[self.cluster_of(doc) as usize] == doc
    }

    /// The clusters in order, each as its members in input order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { clusters: self, range: 0..self.len() as u32 }
    }

    /// The number of clusters of each size, as `(size, clusters)` pairs in increasing
    /// order of size, sizes that occur only. Singletons are the entry of size 1.
    pub fn histogram(&self) -> Vec<(usize, usize)> {
        let mut sizes: Vec<usize> = self.sizes().collect();
        sizes.sort_unstable();
        let mut histogram: Vec<(usize, usize)> = Vec::new();
        for size in sizes {
            match histogram.last_mut() {
                Some((last, count)) if *last == size => *count += 1,
                _ => histogram.push((size, 1)),
            }
        }
        histogram
    }
}

impl<'a> IntoIterator for &'a Clusters {
    type Item = &'a [u32];
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// An iterator over the clusters of [`Clusters`] in order, each as its members in input
/// order. Created by [`Clusters::iter`].
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    clusters: &'a Clusters,
    range: Range<u32>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u32];

    fn next(&mut self) -> Option<&'a [u32]> {
        self.range.next().map(|c| self.clusters.members(c))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|c| self.clusters.members(c))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl FusedIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(clusters: &Clusters) -> Vec<Vec<u32>> {
        clusters.iter().map(<[u32]>::to_vec).collect()
    }

    macro_rules! t {
        ($n:expr, $pairs:expr, $want:expr) => {
            let clusters = Clusters::components($n, $pairs).unwrap();
            let want: Vec<Vec<u32>> = $want.iter().map(|c: &&[u32]| c.to_vec()).collect();
            assert_eq!(all(&clusters), want, "pairs {:?}", $pairs);
            for (id, members) in clusters.iter().enumerate() {
                for &doc in members {
                    assert_eq!(clusters.cluster_of(doc), id as u32);
                }
                assert_eq!(clusters.representative(id as u32), members[0]);
            }
        };
    }

    #[test]
    fn canonical_order() {
        let none: [(u32, u32); 0] = [];
        t!(0, none, [] as [&[u32]; 0]);
        t!(3, none, [&[0][..], &[1], &[2]]);
        t!(3, [(2, 0)], [&[0, 2][..], &[1]]);
        t!(3, [(1, 1), (2, 2)], [&[0][..], &[1], &[2]]);
        t!(5, [(4, 3), (3, 4), (4, 3), (1, 2)], [&[0][..], &[1, 2], &[3, 4]]);
        t!(6, [(5, 0), (4, 1), (1, 5)], [&[0, 1, 4, 5][..], &[2], &[3]]);
        t!(4, [(3, 2), (2, 1), (1, 0)], [&[0, 1, 2, 3][..]]);
    }

    #[test]
    fn accessors() {
        let clusters = Clusters::components(7, [(6, 2), (0, 5), (2, 3)]).unwrap();
        assert_eq!(clusters.len(), 4);
        assert_eq!(clusters.documents(), 7);
        assert_eq!(clusters.cluster_ids(), &[0, 1, 2, 2, 3, 0, 2]);
        assert_eq!(clusters.sizes().collect::<Vec<_>>(), [2, 1, 3, 1]);
        assert_eq!(clusters.size(2), 3);
        assert_eq!(clusters.get(2), Some(&[2, 3, 6][..]));
        assert_eq!(clusters.get(4), None);
        assert_eq!(clusters.representatives(), &[0, 1, 2, 4]);
        assert_eq!(clusters.histogram(), [(1, 2), (2, 1), (3, 1)]);
        let keep: Vec<u32> = (0..7).filter(|&d| clusters.is_representative(d)).collect();
        assert_eq!(keep, [0, 1, 2, 4]);
        let back: Vec<&[u32]> = clusters.iter().rev().collect();
        assert_eq!(back[0], &[4]);
        assert_eq!(clusters.iter().len(), 4);
        assert_eq!((&clusters).into_iter().count(), 4);
    }

    #[test]
    fn out_of_range_is_an_error() {
        let err = Clusters::components(3, [(0, 1), (2, 3)]).unwrap_err();
        assert_eq!(err.out_of_range_document(), Some(3));
        assert!(Clusters::components(0, [(0, 0)]).is_err());
        assert!(Clusters::star(3, [(5, 1)], &Representative::First).is_err());
    }

    #[test]
    fn representatives_by_policy() {
        let lengths = [10, 30, 20, 30, 5, 1];
        let ids = [9, 8, 7, 7, 1, 2];
        let pairs = [(0, 1), (1, 2), (2, 3), (4, 5)];
        let build = |policy| Clusters::builder().representative(policy).build(6, pairs).unwrap();
        assert_eq!(build(Representative::First).representatives(), &[0, 4]);
        assert_eq!(build(Representative::Longest(&lengths)).representatives(), &[1, 4]);
        assert_eq!(build(Representative::Lowest(&ids)).representatives(), &[2, 4]);
        let err = Clusters::builder()
            .representative(Representative::Longest(&lengths[..5]))
            .build(6, pairs)
            .unwrap_err();
        assert_eq!(err.to_string(), "representative policy has 5 keys for 6 documents");
    }
}

/// The serialized form of [`Clusters`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct ClustersFields {
    cluster_ids: Vec<u32>,
    representatives: Vec<u32>,
}

#[cfg(feature = "serde")]
impl From<Clusters> for ClustersFields {
    fn from(c: Clusters) -> ClustersFields {
        ClustersFields { cluster_ids: c.cluster_of, representatives: c.representatives }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<ClustersFields> for Clusters {
    type Error = ClusterError;

    fn try_from(f: ClustersFields) -> Result<Clusters, ClusterError> {
        Clusters::try_from_parts(f.cluster_ids, f.representatives)
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;
    use crate::ClusterErrorKind;

    #[test]
    fn clusters_round_trip_and_malformed_input_is_refused() {
        let c = Clusters::components(6, [(4, 1), (1, 0), (3, 5)]).unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"cluster_ids":[0,0,1,2,0,2],"representatives":[0,2,3]}"#);
        assert_eq!(serde_json::from_str::<Clusters>(&json).unwrap(), c);
        for bad in [
            r#"{"cluster_ids":[1,0],"representatives":[1,0]}"#,
            r#"{"cluster_ids":[0,0],"representatives":[0,1]}"#,
            r#"{"cluster_ids":[0,1],"representatives":[1,0]}"#,
            r#"{"cluster_ids":[0,2],"representatives":[0,1,1]}"#,
        ] {
            let e = serde_json::from_str::<Clusters>(bad).unwrap_err();
            assert!(e.to_string().contains("malformed clusters"), "{bad}: {e}");
        }
        assert_eq!(
            Clusters::try_from_parts(vec![0, 1], vec![0]).unwrap_err().kind(),
            ClusterErrorKind::Malformed
        );
        let empty = Clusters::components(0, std::iter::empty::<(u32, u32)>()).unwrap();
        assert_eq!(
            serde_json::from_str::<Clusters>(&serde_json::to_string(&empty).unwrap()).unwrap(),
            empty
        );
    }
}
