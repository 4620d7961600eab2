//! [`MinHashDedup`]: the engine in a few lines, from texts or shingle sets to verified pairs,
//! clusters or keep/remove decisions.

use std::ops::Range;

use rayon::prelude::*;
use simhash_cluster::UnionFind;
use simhash_core::{Fingerprinter, MinHasher};

use super::{
    Banding, DocSketch, EngineError, EngineErrorKind, MatchStats, MemoryStore, Relation,
    SketchStore, Sketcher, SpillStore, Templates,
};

/// The default minimum Jaccard similarity of a match (the `simhash` command's `--jaccard`).
pub const DEFAULT_JACCARD: f64 = 0.4;
/// The default similarity the LSH bands are tuned for (`--lsh-threshold`): below
/// [`DEFAULT_JACCARD`], for recall; exact verification keeps precision.
pub const DEFAULT_LSH_THRESHOLD: f64 = 0.3;
/// The default number of MinHash signature slots (`--num-perm`).
pub const DEFAULT_NUM_PERM: usize = 128;
/// The default MinHash seed (the `simhash` command's, which has no flag for it).
pub const DEFAULT_SEED: u64 = 0;

/// Documents sketched per parallel step of the bulk adds.
const EXTEND_CHUNK: usize = 4096;

/// What [`MinHashDedup::dedup`] decided for a document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Kept: no document kept before it matches it.
    Keep,
    /// Removed as a near-duplicate of the kept document `of`, with their Jaccard similarity
    /// and relation.
    Duplicate {
        /// The kept document (its insertion position).
        of: usize,
        /// The exact Jaccard similarity of the two shingle sets.
        jaccard: f64,
        /// What the pair is: the same document, or (unless template siblings are kept)
        /// template siblings.
        relation: Relation,
    },
}

impl Decision {
    /// True for [`Decision::Keep`].
    pub fn is_keep(&self) -> bool {
        matches!(self, Decision::Keep)
    }
}

/// A verified pair of documents (insertion positions, `a < b`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimilarPair {
    /// The earlier document.
    pub a: usize,
    /// The later document.
    pub b: usize,
    /// The exact Jaccard similarity of their shingle sets (at least the threshold).
    pub jaccard: f64,
    /// What the pair is ([`pair_relation`](super::pair_relation): the lesser of its two
    /// directions).
    pub relation: Relation,
}

/// Settings for a [`MinHashDedup`]; every default is the `simhash` command's.
#[derive(Clone, Debug)]
pub struct MinHashDedupBuilder {
    jaccard: f64,
    lsh_threshold: f64,
    num_perm: usize,
    seed: u64,
    fingerprinter: Option<Fingerprinter>,
    spill: bool,
    templates: Templates,
}

impl Default for MinHashDedupBuilder {
    fn default() -> MinHashDedupBuilder {
        MinHashDedupBuilder {
            jaccard: DEFAULT_JACCARD,
            lsh_threshold: DEFAULT_LSH_THRESHOLD,
            num_perm: DEFAULT_NUM_PERM,
            seed: DEFAULT_SEED,
            fingerprinter: None,
            spill: false,
            templates: Templates::Remove,
        }
    }
}

impl MinHashDedupBuilder {
    /// The minimum exact Jaccard similarity of a match, more than 0 and at most 1
    /// ([`DEFAULT_JACCARD`]).
    pub fn jaccard(&mut self, jaccard: f64) -> &mut MinHashDedupBuilder {
        self.jaccard = jaccard;
        self
    }

    /// The similarity the LSH bands are tuned for, strictly between 0 and 1
    /// ([`DEFAULT_LSH_THRESHOLD`]); lower finds more candidates (slower), each verified.
    pub fn lsh_threshold(&mut self, threshold: f64) -> &mut MinHashDedupBuilder {
        self.lsh_threshold = threshold;
        self
    }

    /// MinHash signature slots, clamped to `1..=MAX_PERM` like every size setting. By
    /// default, [`DEFAULT_NUM_PERM`].
    pub fn num_perm(&mut self, num_perm: usize) -> &mut MinHashDedupBuilder {
        self.num_perm = num_perm;
        self
    }

    /// The MinHash seed ([`DEFAULT_SEED`]).
    pub fn seed(&mut self, seed: u64) -> &mut MinHashDedupBuilder {
        self.seed = seed;
        self
    }

    /// How texts become shingles ([`Fingerprinter::new`] unless given).
    pub fn fingerprinter(&mut self, fingerprinter: Fingerprinter) -> &mut MinHashDedupBuilder {
        self.fingerprinter = Some(fingerprinter);
        self
    }

    /// Keeps the sketches in temporary files ([`SpillStore`]) rather than in memory
    /// ([`MemoryStore`]): for corpora whose shingle sets do not fit in memory. Off by
    /// default.
    pub fn spill_to_disk(&mut self, spill: bool) -> &mut MinHashDedupBuilder {
        self.spill = spill;
        self
    }

    /// Which verified pairs [`dedup`](MinHashDedup::dedup) removes,
    /// [`pairs`](MinHashDedup::pairs) lists and [`clusters`](MinHashDedup::clusters) joins:
    /// same documents and template siblings ([`Templates::Remove`], the default) or same
    /// documents only. A document with content of its own ([`Relation::Overlap`]) never.
    pub fn templates(&mut self, templates: Templates) -> &mut MinHashDedupBuilder {
        self.templates = templates;
        self
    }

    /// The engine. Errors ([`EngineErrorKind::Config`]): a threshold out of range; or the spill store's temporary files.
    pub fn build(&self) -> Result<MinHashDedup, EngineError> {
        if !(self.jaccard > 0.0 && self.jaccard <= 1.0) {
            return Err(EngineError::other(
                EngineErrorKind::Config,
                format!("jaccard ({}) must be more than 0 and at most 1", self.jaccard),
            ));
        }
        // num_perm is clamped to 1..=MAX_PERM like every size setting (MinHasher::new).
        let minhasher = MinHasher::new(self.num_perm, self.seed);
        let banding = Banding::for_threshold(self.lsh_threshold, minhasher.num_perm())?;
        let sketcher = Sketcher::new(minhasher, banding)?;
        let store: Box<dyn SketchStore> = if self.spill {
            Box::new(SpillStore::new(banding.bands)?)
        } else {
            Box::new(MemoryStore::new(banding.bands))
        };
        Ok(MinHashDedup {
            fingerprinter: self.fingerprinter.clone().unwrap_or_default(),
            sketcher,
            jaccard: self.jaccard,
            templates: self.templates,
            store,
            stats: MatchStats::default(),
        })
    }
}

/// MinHash near-duplicate detection with exact verification, from texts or shingle sets:
/// add documents, then ask for keep/remove decisions ([`dedup`](MinHashDedup::dedup)),
/// verified pairs ([`pairs`](MinHashDedup::pairs)) or clusters
/// ([`clusters`](MinHashDedup::clusters)). Documents are numbered by insertion, from 0.
///
/// Candidates come from LSH bands over MinHash signatures; each is kept only if the exact
/// Jaccard similarity of the two shingle sets reaches the threshold, so there are no false
/// positives, and the results do not depend on the number of threads. Searches run on
/// rayon's current thread pool. A document without shingles (an empty text) matches
/// nothing.
///
/// ```
/// use simhash_index::lsh::{Decision, MinHashDedup};
///
/// let mut dedup = MinHashDedup::builder().jaccard(0.5).build()?;
/// dedup.add_text("the quick brown fox jumps over the lazy dog by the river bank")?;
/// dedup.add_text("a completely different sentence about cooking pasta at home")?;
/// dedup.add_text("the quick brown fox jumps over the lazy dog by the river bank!")?;
/// let decisions = dedup.dedup()?;
/// assert_eq!(decisions[0], Decision::Keep);
/// assert_eq!(decisions[1], Decision::Keep);
/// assert!(matches!(decisions[2], Decision::Duplicate { of: 0, .. }));
/// assert_eq!(dedup.clusters()?, [vec![0, 2], vec![1]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MinHashDedup {
    fingerprinter: Fingerprinter,
    sketcher: Sketcher,
    jaccard: f64,
    templates: Templates,
    store: Box<dyn SketchStore>,
    stats: MatchStats,
}

impl std::fmt::Debug for MinHashDedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinHashDedup")
            .field("sketcher", &self.sketcher)
            .field("jaccard", &self.jaccard)
            .field("documents", &self.store.len())
            .finish_non_exhaustive()
    }
}

impl MinHashDedup {
    /// Settings, with the `simhash` command's defaults.
    pub fn builder() -> MinHashDedupBuilder {
        MinHashDedupBuilder::default()
    }

    /// The engine with the default settings, in memory.
    pub fn new() -> Result<MinHashDedup, EngineError> {
        MinHashDedup::builder().build()
    }

    /// Documents added.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// True when no document was added.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// The sketcher (for sketching documents elsewhere).
    pub fn sketcher(&self) -> &Sketcher {
        &self.sketcher
    }

    /// The counts of the last search.
    pub fn stats(&self) -> &MatchStats {
        &self.stats
    }

    /// Adds a text; returns its position.
    pub fn add_text(&mut self, text: &str) -> Result<usize, EngineError> {
        let (_, sketch) = self.sketcher.sketch(&self.fingerprinter, text);
        self.add_sketch(sketch.as_ref())
    }

    /// Adds a document given as shingle hashes (order and repeats do not matter); returns
    /// its position.
    pub fn add_shingles(
        &mut self,
        shingles: impl IntoIterator<Item = u64>,
    ) -> Result<usize, EngineError> {
        let sketch = self.sketcher.sketch_shingles(shingles);
        self.add_sketch(sketch.as_ref())
    }

    /// Adds a sketch made by [`sketcher`](MinHashDedup::sketcher) (none for a document
    /// without shingles); returns its position.
    pub fn add_sketch(&mut self, sketch: Option<&DocSketch>) -> Result<usize, EngineError> {
        self.store.push(sketch)?;
        Ok(self.store.len() - 1)
    }

    /// Adds `texts`, sketched in parallel on rayon's current pool and added in order;
    /// returns their positions.
    pub fn extend_texts<T: AsRef<str> + Sync>(
        &mut self,
        texts: &[T],
    ) -> Result<Range<usize>, EngineError> {
        let (sketcher, fingerprinter) = (&self.sketcher, &self.fingerprinter);
        extend(&mut *self.store, texts, |t| sketcher.sketch(fingerprinter, t.as_ref()).1)
    }

    /// Adds documents given as shingle hashes, sketched in parallel and added in order;
    /// returns their positions.
    pub fn extend_shingles<T: AsRef<[u64]> + Sync>(
        &mut self,
        docs: &[T],
    ) -> Result<Range<usize>, EngineError> {
        let sketcher = &self.sketcher;
        extend(&mut *self.store, docs, |d| sketcher.sketch_shingles(d.as_ref().iter().copied()))
    }

    /// Keep/remove decisions, one per document, with documents in insertion order as their
    /// priority: each is kept unless it matches a document kept before it, and then is a
    /// duplicate of the first of those ([`walk`](fn@super::walk)).
    pub fn dedup(&mut self) -> Result<Vec<Decision>, EngineError> {
        let rank: Vec<u32> = (0..self.len() as u32).collect();
        self.dedup_by_rank(&rank)
    }

    /// [`dedup`](MinHashDedup::dedup) with a priority per document: `rank[d]`, lowest
    /// first (equal ranks in insertion order). Errors ([`EngineErrorKind::Mismatch`]):
    /// not one rank per document.
    pub fn dedup_by_rank(&mut self, rank: &[u32]) -> Result<Vec<Decision>, EngineError> {
        self.store.finish()?;
        let (walked, stats) = super::walk(&*self.store, self.jaccard, rank, self.templates)?;
        self.stats = stats;
        Ok((0..walked.center.len())
            .map(|d| {
                let c = walked.center[d] as usize;
                if c == d {
                    Decision::Keep
                } else {
                    let (jaccard, relation) = (walked.jaccard[d], walked.relation[d]);
                    Decision::Duplicate { of: c, jaccard, relation }
                }
            })
            .collect())
    }

    /// The verified pairs, sorted: each document whose shingle set and tokens equal an
    /// earlier one's is paired with the first of them (Jaccard 1), and the other pairs are
    /// between such first documents only (the pairs they imply for the copies are not
    /// repeated, so a flood of identical documents gives one pair per document, not one per
    /// pair). Only the pairs whose relation the engine's [`Templates`] acts on (never two
    /// that overlap).
    pub fn pairs(&mut self) -> Result<Vec<SimilarPair>, EngineError> {
        self.store.finish()?;
        let (found, stats) = super::related_matches(&*self.store, self.jaccard, self.templates)?;
        self.stats = stats;
        let mut pairs: Vec<SimilarPair> = found
            .into_iter()
            .map(|(a, b, jaccard, relation)| SimilarPair {
                a: a as usize,
                b: b as usize,
                jaccard,
                relation,
            })
            .collect();
        pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
        Ok(pairs)
    }

    /// The clusters: connected components of the verified pairs, as a partition of the
    /// documents (every document in one cluster, documents without a match alone), each
    /// ascending, in order of first member ([`components`](fn@super::components)).
    pub fn clusters(&mut self) -> Result<Vec<Vec<usize>>, EngineError> {
        self.store.finish()?;
        let (edges, stats) = super::components(&*self.store, self.jaccard, self.templates)?;
        self.stats = stats;
        let n = self.len();
        let mut forest = UnionFind::new(n);
        for (a, b) in edges {
            forest.join(a, b);
        }
        let mut first_of_root = vec![usize::MAX; n];
        let mut clusters: Vec<Vec<usize>> = Vec::new();
        for d in 0..n {
            let root = forest.root(d as u32) as usize;
            if first_of_root[root] == usize::MAX {
                first_of_root[root] = clusters.len();
                clusters.push(Vec::new());
            }
            clusters[first_of_root[root]].push(d);
        }
        Ok(clusters)
    }
}

/// Sketches `items` in parallel, a chunk at a time, and pushes them in order.
fn extend<T: Sync>(
    store: &mut dyn SketchStore,
    items: &[T],
    sketch: impl Fn(&T) -> Option<DocSketch> + Sync,
) -> Result<Range<usize>, EngineError> {
    let start = store.len();
    for chunk in items.chunks(EXTEND_CHUNK) {
        let sketches: Vec<Option<DocSketch>> = chunk.par_iter().map(&sketch).collect();
        for s in &sketches {
            store.push(s.as_ref())?;
        }
    }
    Ok(start..store.len())
}
