//! What the page shows, gathered during the run without holding texts: every matched pair
//! counted in a similarity histogram and a deterministic sample of them kept per bucket,
//! the clusters' size histogram and the largest clusters with a sample of members, and
//! the counts per input shard. The samples are chosen by a hash of the records' ids, so
//! the page is the same at any thread count and whatever order the pairs come in.

use std::collections::BinaryHeap;

use simhash_cluster::Clusters;
use simhash_index::lsh::Relation;
use simhash_io::Score;

use super::Documents;
use crate::corpus::Corpus;

/// Pairs kept per similarity bucket unless told otherwise (`--report-sample`).
pub const PAIRS_PER_BUCKET: usize = 30;
/// Jaccard buckets: 20 of width 0.05.
pub(super) const JACCARD_BUCKETS: usize = 20;
/// The largest clusters shown.
pub(super) const LARGEST_CLUSTERS: usize = 20;
/// Members shown for each of the largest clusters (besides its kept record).
pub(super) const MEMBERS_SHOWN: usize = 5;

/// The scale of the run's scores on the page: the measure of a pair
/// ([`simhash_io::Measure`]) with its range, which make the histogram's buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Hamming distance in bits (simhash); the most a pair may have.
    Distance(u32),
    /// Jaccard similarity (minhash), as `--removed` prints it times 10 000.
    Jaccard,
}

impl Scale {
    /// How many buckets the histogram has.
    pub fn buckets(self) -> usize {
        match self {
            Scale::Distance(k) => k as usize + 1,
            Scale::Jaccard => JACCARD_BUCKETS,
        }
    }

    /// The bucket of a score's code (see [`Score::code`]).
    pub fn bucket(self, code: u32) -> usize {
        match self {
            Scale::Distance(k) => code.min(k) as usize,
            Scale::Jaccard => ((code as usize * JACCARD_BUCKETS) / 10_000).min(JACCARD_BUCKETS - 1),
        }
    }
}

/// One sampled pair: `a` removed (or the first of a pair), `b` kept (or the second),
/// the score's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Pair {
    /// The first document.
    pub a: u32,
    /// The second.
    pub b: u32,
    /// The score's code ([`Score::code`](simhash_io::Score::code)).
    pub code: u32,
    /// What the pair is (minhash).
    pub relation: Option<Relation>,
}

/// The similarity histogram of every pair seen and a sample of each bucket.
pub(super) struct PairSample {
    /// Distance or Jaccard similarity: what the buckets are of.
    pub measure: Scale,
    /// Pairs seen in each bucket.
    pub counts: Vec<u64>,
    /// Of those, per bucket, the pairs counted but never sampled (matches of the index).
    pub unsampled: Vec<u64>,
    /// Pairs seen of each relation (minhash), in [`Relation::ALL`]'s order.
    pub relations: [u64; 3],
    /// Pairs kept per bucket.
    pub per_bucket: usize,
    /// Per bucket, the pairs with the smallest keys (a max-heap of at most `per_bucket`).
    heaps: Vec<BinaryHeap<(u64, Pair)>>,
}

impl PairSample {
    /// An empty sample with the buckets of `measure`, keeping `per_bucket` pairs of each.
    pub(super) fn new(measure: Scale, per_bucket: usize) -> PairSample {
        let n = measure.buckets();
        PairSample {
            measure,
            counts: vec![0; n],
            unsampled: vec![0; n],
            relations: [0; 3],
            per_bucket,
            heaps: (0..n).map(|_| BinaryHeap::new()).collect(),
        }
    }

    /// Counts a pair, and keeps it if its key is among the smallest of its bucket. The key
    /// is a hash of both ids, so which pairs are kept depends on the pairs, not their order.
    pub(super) fn add(&mut self, docs: &dyn Documents, pair: Pair) {
        let bucket = self.measure.bucket(pair.code);
        self.counts[bucket] += 1;
        if let Some(r) = pair.relation {
            self.relations[usize::from(r.code())] += 1;
        }
        let key = id_key(&docs.id(pair.a as usize), &docs.id(pair.b as usize));
        let heap = &mut self.heaps[bucket];
        if heap.len() < self.per_bucket {
            heap.push((key, pair));
        } else if heap.peek().is_some_and(|top| (key, pair) < *top) {
            heap.pop();
            heap.push((key, pair));
        }
    }

    /// Counts a pair that is never shown (a match of the index, whose kept record is not
    /// in the run's input): in the histogram and the relations, not in the sample.
    pub(super) fn count(&mut self, score: Score, relation: Option<Relation>) {
        let bucket = self.measure.bucket(score.code());
        self.counts[bucket] += 1;
        self.unsampled[bucket] += 1;
        if let Some(r) = relation {
            self.relations[usize::from(r.code())] += 1;
        }
    }

    /// Counts a pair scored as the run scores it, with its relation (minhash).
    pub(super) fn add_score(
        &mut self,
        docs: &dyn Documents,
        (a, b): (u32, u32),
        score: Score,
        relation: Option<Relation>,
    ) {
        self.add(docs, Pair { a, b, code: score.code(), relation });
    }

    /// Every pair seen.
    pub(super) fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The sampled pairs, those nearest the threshold first (lowest Jaccard, or largest
    /// distance), then by the pair.
    pub(super) fn sample(&self) -> Vec<Pair> {
        let mut all: Vec<Pair> =
            self.heaps.iter().flat_map(|h| h.iter().map(|&(_, p)| p)).collect();
        match self.measure {
            Scale::Jaccard => all.sort_unstable_by_key(|p| (p.code, p.a, p.b)),
            Scale::Distance(_) => {
                all.sort_unstable_by_key(|p| (std::cmp::Reverse(p.code), p.a, p.b));
            }
        }
        all
    }

    /// The order in which a person labels `sample` (as [`sample`](Self::sample) gives it):
    /// the buckets in turn, each one's pairs by their sampling key, which is a hash, so the
    /// first pairs labelled of a bucket are a uniform sample of it and the similarity is
    /// not given away by the order. Positions in `sample`.
    pub(super) fn labelling_order(&self, sample: &[Pair]) -> Vec<usize> {
        let position: std::collections::HashMap<Pair, usize> =
            sample.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let mut ranked: Vec<(usize, usize, usize)> = Vec::with_capacity(sample.len());
        for (bucket, heap) in self.heaps.iter().enumerate() {
            let mut keyed: Vec<(u64, Pair)> = heap.iter().copied().collect();
            keyed.sort_unstable();
            for (rank, (_, pair)) in keyed.into_iter().enumerate() {
                if let Some(&at) = position.get(&pair) {
                    ranked.push((rank, bucket, at));
                }
            }
        }
        ranked.sort_unstable();
        ranked.into_iter().map(|(_, _, at)| at).collect()
    }
}

/// A hash of two ids: the sampling key.
fn id_key(a: &str, b: &str) -> u64 {
    let mut bytes = Vec::with_capacity(a.len() + b.len() + 1);
    bytes.extend_from_slice(a.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(b.as_bytes());
    simhash_io::line_hash(&bytes)
}

/// One of the largest clusters: its size, kept record and a sample of the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BigCluster {
    /// Documents in the cluster.
    pub size: usize,
    /// The kept document.
    pub kept: u32,
    /// A sample of the others.
    pub members: Vec<u32>,
}

/// The clusters as the page shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ClusterView {
    /// Clusters of each size class: `[2]`, `[3, 4]`, `[5, 8]`, … (class `i` holds sizes
    /// `2^i + 1 ..= 2^(i+1)`, class 0 the size 2).
    pub size_classes: Vec<u64>,
    /// The largest clusters, largest first.
    pub largest: Vec<BigCluster>,
}

/// The size classes and the largest clusters (ties: the cluster listed first), each
/// with [`MEMBERS_SHOWN`] members chosen by a hash of their ids.
pub(super) fn cluster_view(docs: &dyn Documents, clusters: &Clusters) -> ClusterView {
    let mut view = ClusterView::default();
    let mut sizes: Vec<(usize, u32)> = Vec::new();
    for c in 0..clusters.len() as u32 {
        let size = clusters.size(c);
        if size < 2 {
            continue;
        }
        let class = (usize::BITS - (size - 1).leading_zeros()) as usize - 1;
        if view.size_classes.len() <= class {
            view.size_classes.resize(class + 1, 0);
        }
        view.size_classes[class] += 1;
        sizes.push((size, c));
    }
    sizes.sort_unstable_by_key(|&(size, c)| (std::cmp::Reverse(size), c));
    sizes.truncate(LARGEST_CLUSTERS);
    for (size, c) in sizes {
        let kept = clusters.representative(c);
        let mut members: Vec<(u64, u32)> = clusters
            .members(c)
            .iter()
            .filter(|&&d| d != kept)
            .map(|&d| (id_key(&docs.id(d as usize), ""), d))
            .collect();
        members.sort_unstable();
        members.truncate(MEMBERS_SHOWN);
        let mut members: Vec<u32> = members.into_iter().map(|(_, d)| d).collect();
        members.sort_unstable();
        view.largest.push(BigCluster { size, kept, members });
    }
    view
}

/// Each document's input shard (file), from the lines of each file.
pub(super) fn shard_of_docs(corpus: &Corpus) -> Vec<u32> {
    let mut ends = Vec::with_capacity(corpus.shard_lines().len());
    let mut end = 0u64;
    for &lines in corpus.shard_lines() {
        end += lines;
        ends.push(end);
    }
    (0..corpus.len())
        .map(|d| {
            let line = corpus.line(d);
            ends.partition_point(|&e| e < line).min(ends.len().saturating_sub(1)) as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(Scale::Jaccard.bucket(10_000), 19);
        assert_eq!(Scale::Jaccard.bucket(9_499), 18);
        assert_eq!(Scale::Jaccard.bucket(0), 0);
        assert_eq!(Scale::Distance(3).bucket(7), 3);
        assert_eq!(Scale::Distance(3).buckets(), 4);
    }
}
