use crate::clusters::Clusters;
use crate::error::{ClusterError, check_documents};
use crate::policy::Representative;
use crate::star::star;
use crate::union_find::UnionFind;

/// How pairs of near-duplicates become clusters.
///
/// Both modes are deterministic: the result depends only on the set of pairs (and the
/// [`Representative`] policy), never on their order or on the number of threads.
/// With the `clap` feature, a `clap::ValueEnum`: every front end's `--mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Mode {
    /// Connected components: two documents share a cluster when a chain of pairs links
    /// them (single-linkage clustering; simhash-cpp's `find_clusters`).
    ///
    /// Every near-duplicate pair ends up in one cluster, and no two representatives are
    /// paired. But chains merge too much: A ~ B ~ C puts A and C together even when they
    /// are far apart, so a dropped document can be many times `k` bits from the one kept
    /// for it, and on a large corpus a few chains can grow one giant component of
    /// unrelated documents. [`Stats::largest`](crate::Stats::largest) and
    /// [`Stats::oversized`](crate::Stats::oversized) show when that happens.
    ///
    /// Pairs are not stored: memory is 8 bytes per document while pairs stream in.
    #[default]
    #[cfg_attr(
        feature = "clap",
        value(help = "Connected components of the near-duplicate graph (simhash-cpp's \
                      find-clusters)")
    )]
    Components,
    /// Center (star) clustering: documents are taken in the policy's priority order (input
    /// order for [`Representative::First`]; longest first for
    /// [`Longest`](Representative::Longest); lowest key first for
    /// [`Lowest`](Representative::Lowest); ties in input order). A document not yet in a
    /// cluster becomes a center, and every document paired with it that is not yet in a
    /// cluster joins it. The center is the cluster's representative.
    ///
    /// So every member is within `k` bits of its center and within `2k` of every other
    /// member, and no chain can grow a cluster. Exactly: the centers are the greedy maximal
    /// independent set of the graph in priority order, and every other document joins the
    /// first center, in priority order, it is paired with. The center is also the member
    /// the policy prefers. When each cluster keeps its center, no two kept documents are
    /// paired, and every dropped document is paired with the one kept for it.
    ///
    /// The price: a pair of near-duplicates can land in two clusters (when neither is the
    /// other's center), so there are more clusters and fewer documents dropped than with
    /// components, and the result depends on the priority order. It also needs all pairs
    /// in memory (up to about 24 bytes per pair, plus 16 bytes per document) before it starts.
    #[cfg_attr(
        feature = "clap",
        value(help = "Center clustering: members match the kept record directly")
    )]
    Star,
}

/// Configures and builds [`Clusters`]. Created by [`Clusters::builder`].
///
/// `build` can be called any number of times, with different documents and pairs.
///
/// # Example
///
/// ```
/// use simhash_cluster::{Clusters, Mode, Representative};
///
/// // A chain 0 ~ 1 ~ 2 ~ 3 and a pair 4 ~ 5.
/// let pairs = [(0, 1), (1, 2), (2, 3), (4, 5)];
/// let components = Clusters::builder().build(6, pairs)?;
/// assert_eq!(components.len(), 2);
///
/// let star = Clusters::builder().mode(Mode::Star).build(6, pairs)?;
/// let all: Vec<&[u32]> = star.iter().collect();
/// assert_eq!(all, [&[0, 1][..], &[2, 3], &[4, 5]]);
/// assert_eq!(star.representatives(), &[0, 2, 4]);
///
/// // Taking the longest document first changes the centers.
/// let lengths = [1, 9, 1, 1, 1, 1];
/// let star = Clusters::builder()
///     .mode(Mode::Star)
///     .representative(Representative::Longest(&lengths))
///     .build(6, pairs)?;
/// let all: Vec<&[u32]> = star.iter().collect();
/// assert_eq!(all, [&[0, 1, 2][..], &[3], &[4, 5]]);
/// assert_eq!(star.representatives(), &[1, 3, 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ClustersBuilder<'a> {
    mode: Mode,
    representative: Representative<'a>,
}

impl<'a> ClustersBuilder<'a> {
    /// A builder with the default settings.
    pub fn new() -> ClustersBuilder<'a> {
        ClustersBuilder::default()
    }

    /// How pairs become clusters.
    ///
    /// By default, [`Mode::Components`].
    pub fn mode(&mut self, mode: Mode) -> &mut ClustersBuilder<'a> {
        self.mode = mode;
        self
    }

    /// Which member represents each cluster (and, in [`Mode::Star`], the order in which
    /// documents become centers).
    ///
    /// By default, [`Representative::First`].
    pub fn representative(&mut self, policy: Representative<'a>) -> &mut ClustersBuilder<'a> {
        self.representative = policy;
        self
    }

    /// Clusters `documents` documents, positions `0..documents`, given the `pairs` of
    /// near-duplicates. Pairs may come in any order, either way round, repeated, or as
    /// self-loops.
    ///
    /// Fails if a pair names a document `>= documents`, if `documents` exceeds
    /// [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS), or if the policy's keys do not match the
    /// number of documents.
    pub fn build<I>(&self, documents: usize, pairs: I) -> Result<Clusters, ClusterError>
    where
        I: IntoIterator,
        I::Item: Into<(u32, u32)>,
    {
        check_documents(documents)?;
        self.representative.check(documents)?;
        match self.mode {
            Mode::Components => {
                let mut uf = UnionFind::try_new(documents)?;
                uf.union_all(pairs)?;
                uf.into_clusters_with(&self.representative)
            }
            Mode::Star => star(documents, pairs, &self.representative),
        }
    }
}

/// The constructors of [`Clusters`] through a [`ClustersBuilder`].
impl Clusters {
    /// A builder, to choose the [`Mode`] and the [`Representative`] policy.
    pub fn builder<'a>() -> ClustersBuilder<'a> {
        ClustersBuilder::new()
    }

    /// The connected components of the graph on `documents` documents whose edges are
    /// `pairs`: two documents are in one cluster when a chain of pairs links them. The
    /// representative is the first member. Self-loops and repeated pairs are allowed.
    ///
    /// Fails if a pair names a document `>= documents`, or if `documents` exceeds
    /// [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS).
    pub fn components<I>(documents: usize, pairs: I) -> Result<Clusters, ClusterError>
    where
        I: IntoIterator,
        I::Item: Into<(u32, u32)>,
    {
        Clusters::builder().build(documents, pairs)
    }

    /// Center (star) clustering: every member of a cluster is paired directly with the
    /// cluster's center, which is its representative. See [`Mode::Star`] for the exact
    /// rule and the trade-off against [`components`](Clusters::components).
    ///
    /// Fails if a pair names a document `>= documents`, if `documents` exceeds
    /// [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS), or if the policy's keys do not match the
    /// number of documents.
    pub fn star<I>(
        documents: usize,
        pairs: I,
        policy: &Representative<'_>,
    ) -> Result<Clusters, ClusterError>
    where
        I: IntoIterator,
        I::Item: Into<(u32, u32)>,
    {
        Clusters::builder().mode(Mode::Star).representative(*policy).build(documents, pairs)
    }
}
