use crate::clusters::Clusters;

/// Summary numbers for [`Clusters`], from [`Clusters::stats`].
///
/// A "cluster" here has at least two members; singletons (documents with no
/// near-duplicate) are counted apart.
///
/// # Example
///
/// ```
/// use simhash_cluster::Clusters;
///
/// let clusters = Clusters::components(8, [(0, 1), (1, 2), (2, 3), (5, 6)])?;
/// let stats = clusters.stats(3);
/// assert_eq!(stats.clusters, 2);
/// assert_eq!(stats.clustered, 6);
/// assert_eq!(stats.duplicates(), 4);
/// assert_eq!(stats.singletons, 2);
/// assert_eq!(stats.largest, 4);
/// assert_eq!(stats.oversized, 1);
/// assert_eq!(stats.histogram, [(1, 2), (2, 1), (4, 1)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Stats {
    /// The number of documents.
    pub documents: usize,
    /// The number of clusters with at least two members.
    pub clusters: usize,
    /// The number of documents in those clusters.
    pub clustered: usize,
    /// The number of documents alone in their cluster.
    pub singletons: usize,
    /// The size of the largest cluster (1 when no document has a near-duplicate, 0 when
    /// there are no documents).
    pub largest: usize,
    /// The size threshold the stats were computed with.
    pub big: usize,
    /// The number of clusters with more than `big` members (singletons included when `big`
    /// is 0).
    pub oversized: usize,
    /// The number of clusters of each size, as `(size, clusters)` in increasing order of
    /// size, singletons included; see [`Clusters::histogram`].
    pub histogram: Vec<(usize, usize)>,
}

impl Stats {
    pub(crate) fn new(clusters: &Clusters, big: usize) -> Stats {
        let histogram = clusters.histogram();
        let mut stats = Stats {
            documents: clusters.documents(),
            largest: histogram.last().map_or(0, |&(size, _)| size),
            big,
            ..Stats::default()
        };
        for &(size, count) in &histogram {
            if size == 1 {
                stats.singletons += count;
            } else {
                stats.clusters += count;
                stats.clustered += size * count;
            }
            if size > big {
                stats.oversized += count;
            }
        }
        stats.histogram = histogram;
        stats
    }

    /// The number of documents that are dropped when each cluster keeps only its
    /// representative.
    pub fn duplicates(&self) -> usize {
        self.clustered - self.clusters
    }
}

impl Clusters {
    /// Summary numbers, with `big` as the size above which a cluster counts as
    /// [oversized](Stats::oversized) (a sign of chains merging unrelated documents).
    pub fn stats(&self, big: usize) -> Stats {
        Stats::new(self, big)
    }
}

#[cfg(test)]
mod tests {
    use crate::clusters::Clusters;

    #[test]
    fn empty() {
        let none: [(u32, u32); 0] = [];
        let stats = Clusters::components(0, none).unwrap().stats(10);
        assert_eq!(stats, super::Stats { big: 10, ..Default::default() });
    }

    #[test]
    fn singletons_only() {
        let stats = Clusters::components(3, [(1, 1)]).unwrap().stats(0);
        assert_eq!(stats.clusters, 0);
        assert_eq!(stats.singletons, 3);
        assert_eq!(stats.largest, 1);
        assert_eq!(stats.oversized, 3); // big = 0 counts every cluster
        assert_eq!(stats.duplicates(), 0);
    }

    #[test]
    fn giant_chain() {
        let n = 1000u32;
        let clusters = Clusters::components(n as usize + 2, (1..n).map(|i| (i - 1, i))).unwrap();
        let stats = clusters.stats(100);
        assert_eq!(stats.largest, 1000);
        assert_eq!(stats.oversized, 1);
        assert_eq!(stats.clusters, 1);
        assert_eq!(stats.clustered, 1000);
        assert_eq!(stats.singletons, 2);
        assert_eq!(stats.histogram, [(1, 2), (1000, 1)]);
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use crate::{Clusters, Mode, Stats};

    #[test]
    fn settings_and_stats_round_trip() {
        assert_eq!(serde_json::to_string(&Mode::Star).unwrap(), r#""star""#);
        assert_eq!(serde_json::from_str::<Mode>(r#""components""#).unwrap(), Mode::Components);
        let stats = Clusters::components(4, [(0, 1)]).unwrap().stats(1);
        let back: Stats = serde_json::from_str(&serde_json::to_string(&stats).unwrap()).unwrap();
        assert_eq!(back, stats);
    }
}
