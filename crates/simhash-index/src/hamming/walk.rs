//! The simhash dedup walk: documents in priority order, each kept unless a document kept
//! before it is within the tables' distance, then it joins the first such in priority order.
//!
//! Only kept fingerprints are indexed, and a document is looked up among them: the pairs
//! within the distance are never enumerated, so a flood of `N` near-identical fingerprints
//! with `K` kept costs about `N` lookups in an index of `K`. Documents are decided in
//! chunks of at least [`WALK_CHUNK`]: each document of a chunk is looked up in parallel
//! among the documents kept before the chunk, then the chunk is settled among its own
//! (`hamming::settle`, in parallel but for one cheap pass in order), so the outcome does
//! not depend on the thread count. A chunk is also at least a quarter of the documents
//! kept so far (up to about a million): each chunk's kept documents are merged into every
//! table of the index, a pass over the index, so with chunks that grow with it the merges
//! cost a few passes over the final index in all rather than one per [`WALK_CHUNK`]
//! documents.

use rayon::prelude::*;

use crate::hamming::settle::settle;
use crate::{Fingerprint, Index, Tables};

/// The fewest documents decided together by the walk: each is looked up in parallel among
/// the documents kept before the chunk, then the chunk is settled among its own. A chunk
/// is also at least a quarter of the documents kept before it.
pub const WALK_CHUNK: usize = 8192;

/// A chunk holds at least `1 / GROWTH` of the documents kept before it, up to
/// [`MAX_CHUNK`].
const GROWTH: usize = 4;
/// The most documents a chunk grows to: a chunk holds 16 bytes per document and table
/// and about 80 more per document while it is settled, so this bounds the walk's memory
/// beside the index (about 200 MB with 8 tables).
const MAX_CHUNK: usize = 1 << 20;

/// Documents with identical fingerprints, collapsed: see [`collapse_identical`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identical {
    /// One document per distinct fingerprint (its member of lowest rank), ascending.
    pub representatives: Vec<u32>,
    /// `(doc, representative)` for every other document with a fingerprint, ascending.
    pub duplicates: Vec<(u32, u32)>,
}

/// The documents that have a fingerprint, with identical fingerprints collapsed. A
/// group's representative is its member of lowest `rank` (equal ranks: the first; without
/// ranks: the first in document order). Documents without a fingerprint are in neither
/// list. Sorts in parallel (rayon).
///
/// # Panics
///
/// When `rank` is given and is not one rank per document, or when there are more than
/// `u32::MAX` documents.
pub fn collapse_identical(fps: &[Option<Fingerprint>], rank: Option<&[u32]>) -> Identical {
    /// No representative: the document has no fingerprint.
    const NONE: u32 = u32::MAX;
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX documents");
    if let Some(rank) = rank {
        assert_eq!(rank.len(), fps.len(), "one rank per document");
    }
    let rank_of = |d: usize| rank.map_or(d as u32, |r| r[d]);
    let mut by_fp: Vec<(u64, u32, u32)> = fps
        .iter()
        .enumerate()
        .filter_map(|(d, fp)| fp.map(|fp| (fp.get(), rank_of(d), d as u32)))
        .collect();
    by_fp.par_sort_unstable();
    // Each document's representative (`NONE` without a fingerprint), then both lists in
    // document order in one pass: no second sort of either list.
    let mut rep_of = vec![NONE; fps.len()];
    let mut distinct = 0;
    for group in by_fp.chunk_by(|x, y| x.0 == y.0) {
        let rep = group[0].2;
        distinct += 1;
        for &(_, _, doc) in group {
            rep_of[doc as usize] = rep;
        }
    }
    let mut representatives = Vec::with_capacity(distinct);
    let mut duplicates = Vec::with_capacity(by_fp.len() - distinct);
    for (doc, &rep) in rep_of.iter().enumerate() {
        let doc = doc as u32;
        if rep == doc {
            representatives.push(doc);
        } else if rep != NONE {
            duplicates.push((doc, rep));
        }
    }
    Identical { representatives, duplicates }
}

/// What the walk decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkOutcome {
    /// The kept document each document joins (itself when kept; documents without a
    /// fingerprint are kept).
    pub center: Vec<u32>,
    /// Documents whose fingerprint equals that of a document of lower rank.
    pub exact_duplicates: u64,
    /// Documents with a distinct fingerprint that joined a kept document within the
    /// distance.
    pub matched: u64,
}

/// The dedup walk over `fps` (a document's fingerprint, `None` when featureless), ready
/// to run once the tables are chosen: its [`distinct`](DedupWalk::distinct) count is what
/// a planner needs ([`Blocks::tables`](crate::Blocks::tables)).
///
/// ```
/// use simhash_index::{DedupWalk, Fingerprint, Tables};
///
/// let fps = [Some(Fingerprint(0b1011)), Some(Fingerprint(0b1011)), Some(Fingerprint(0b1)),
///            Some(Fingerprint(u64::MAX)), None];
/// let rank = [0, 1, 2, 3, 4]; // input order: the first of a group is kept
/// let walk = DedupWalk::new(&fps, &rank);
/// assert_eq!(walk.distinct(), 3);
/// let tables = Tables::new(4, 2).unwrap();
/// let outcome = walk.run(&tables, |_kept, _distinct| {});
/// assert_eq!(outcome.center, [0, 0, 0, 3, 4]);
/// assert_eq!((outcome.exact_duplicates, outcome.matched), (1, 1));
/// ```
#[derive(Clone, Debug)]
pub struct DedupWalk<'a> {
    fps: &'a [Option<Fingerprint>],
    rank: &'a [u32],
    identical: Identical,
}

impl<'a> DedupWalk<'a> {
    /// Collapses identical fingerprints (each group follows its member of lowest `rank`).
    /// `rank[d]` is document `d`'s place in the priority order, lowest first; equal ranks
    /// go in document order.
    ///
    /// # Panics
    ///
    /// When `rank` is not one rank per document.
    pub fn new(fps: &'a [Option<Fingerprint>], rank: &'a [u32]) -> DedupWalk<'a> {
        DedupWalk { fps, rank, identical: collapse_identical(fps, Some(rank)) }
    }

    /// The number of distinct fingerprints: what the walk indexes at most.
    pub fn distinct(&self) -> usize {
        self.identical.representatives.len()
    }

    /// Runs the walk with `tables` (their distance is the walk's), calling `progress(kept,
    /// distinct)` after each chunk. Parallel within the current rayon pool.
    pub fn run(self, tables: &Tables, progress: impl FnMut(usize, usize)) -> WalkOutcome {
        self.run_chunked(tables, WALK_CHUNK, progress)
    }

    /// [`run`](DedupWalk::run) with chunks of at least `first` documents (tests choose it
    /// small, so that many chunks follow one another and grow).
    pub(crate) fn run_chunked(
        self,
        tables: &Tables,
        first: usize,
        mut progress: impl FnMut(usize, usize),
    ) -> WalkOutcome {
        let DedupWalk { fps, rank, identical } = self;
        let Identical { representatives: mut reps, duplicates } = identical;
        reps.par_sort_unstable_by_key(|&d| (rank[d as usize], d));
        let fp_of = |d: u32| fps[d as usize].unwrap_or_default();
        let mut center: Vec<u32> = (0..fps.len() as u32).collect();
        // Kept documents by ordinal (priority order), and the index of their fingerprints.
        let mut kept: Vec<u32> = Vec::new();
        let mut index = Index::<u32>::new(tables.clone());
        let mut matched = 0u64;
        let mut done = 0;
        while done < reps.len() {
            let grown = (kept.len() / GROWTH).min(MAX_CHUNK);
            let size = first.max(grown).max(1).min(reps.len() - done);
            let chunk = &reps[done..done + size];
            done += size;
            // The kept document each joins among those kept before the chunk, if any.
            let before: Vec<Option<u32>> = chunk
                .par_iter()
                .map_init(Vec::new, |hits, &d| {
                    index.find_all_into(fp_of(d), hits);
                    hits.iter().map(|h| h.id).min().map(|ordinal| kept[ordinal as usize])
                })
                .collect();
            // Settle the documents not matched before the chunk among themselves (in
            // parallel; see `settle`): one may match one kept earlier in the chunk.
            let open: Vec<u32> =
                chunk.iter().zip(&before).filter(|(_, b)| b.is_none()).map(|(&d, _)| d).collect();
            let open_fps: Vec<Fingerprint> = open.iter().map(|&d| fp_of(d)).collect();
            let settled = settle(&open_fps, tables);
            let mut new_kept = Vec::with_capacity(open.len());
            for (&d, joins) in chunk.iter().zip(before) {
                if let Some(c) = joins {
                    center[d as usize] = c;
                    matched += 1;
                }
            }
            for (&d, joins) in open.iter().zip(settled) {
                if let Some(j) = joins {
                    center[d as usize] = open[j as usize];
                    matched += 1;
                } else {
                    let ordinal = kept.len() as u32;
                    kept.push(d);
                    new_kept.push((ordinal, fp_of(d)));
                }
            }
            // Ids not recorded: they are the ordinals, and the walk only queries the index.
            index.merge_in(new_kept, false);
            progress(kept.len(), reps.len());
        }
        for &(doc, rep) in &duplicates {
            center[doc as usize] = center[rep as usize];
        }
        WalkOutcome { center, exact_duplicates: duplicates.len() as u64, matched }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The walk's definition, one document at a time against every kept one: each
    /// document's center, and how many documents were not kept.
    fn naive(fps: &[Option<Fingerprint>], rank: &[u32], k: u32) -> (Vec<u32>, u64) {
        let mut order: Vec<u32> = (0..fps.len() as u32).collect();
        order.sort_by_key(|&d| (rank[d as usize], d));
        let mut center: Vec<u32> = (0..fps.len() as u32).collect();
        let mut kept: Vec<u32> = Vec::new();
        let mut removed = 0;
        for &d in &order {
            let Some(fp) = fps[d as usize] else { continue };
            let hit = kept.iter().find(|&&c| fps[c as usize].is_some_and(|f| f.distance(fp) <= k));
            match hit {
                Some(&c) => {
                    center[d as usize] = c;
                    removed += 1;
                }
                None => kept.push(d),
            }
        }
        (center, removed)
    }

    fn check(fps: &[Option<Fingerprint>], rank: &[u32], k: u32, blocks: usize) {
        let tables = Tables::new(blocks, k).unwrap();
        let expected = naive(fps, rank, k);
        for threads in [1, 2, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = pool.install(|| DedupWalk::new(fps, rank).run(&tables, |_, _| {}));
            assert_eq!(got.center, expected.0, "{threads} threads, k {k}");
            assert_eq!(got.exact_duplicates + got.matched, expected.1);
        }
    }

    /// Families around a few centers at exactly k and k + 1 bits, some identical, some
    /// featureless, in a shuffled priority order.
    fn families(rng: &mut Rng, n: usize, k: u32) -> (Vec<Option<Fingerprint>>, Vec<u32>) {
        let centers: Vec<u64> = (0..8).map(|_| rng.next()).collect();
        let fps = (0..n)
            .map(|_| {
                let c = centers[(rng.next() % 8) as usize];
                match rng.next() % 6 {
                    0 => None,
                    1 => Some(Fingerprint(c)),
                    2 => Some(Fingerprint(rng.flip(c, k))),
                    3 => Some(Fingerprint(rng.flip(c, k + 1))),
                    4 => Some(Fingerprint(rng.flip(c, 1))),
                    _ => Some(Fingerprint(rng.next())),
                }
            })
            .collect();
        let rank = (0..n).map(|_| (rng.next() % n as u64) as u32).collect();
        (fps, rank)
    }

    /// Adversarial inputs against the naive walk at 1, 2 and 4 threads, in small chunks
    /// that grow: families at exactly k and k + 1 bits, identical fingerprints, a flood of
    /// one fingerprint and a flood of near-copies (more neighbours than a document lists).
    #[test]
    fn agrees_with_the_naive_walk_in_growing_chunks() {
        let mut rng = Rng(21);
        let k = 3;
        let (mut fps, mut rank) = families(&mut rng, 1500, k);
        let base = rng.next();
        for i in 0..900u32 {
            fps.push(Some(Fingerprint(match i % 3 {
                0 => 0xF00D,
                1 => rng.flip(base, 1 + i % k),
                _ => rng.flip(base, k + 1),
            })));
            rank.push(rng.next() as u32 % 3000);
        }
        let tables = Tables::new(5, k).unwrap();
        let expected = naive(&fps, &rank, k);
        for first in [1, 7, 64, 5000] {
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let walk = || DedupWalk::new(&fps, &rank).run_chunked(&tables, first, |_, _| {});
                let got = pool.install(walk);
                assert_eq!(got.center, expected.0, "first chunk {first}, {threads} threads");
                assert_eq!(got.exact_duplicates + got.matched, expected.1);
            }
        }
    }

    #[test]
    fn agrees_with_the_naive_walk_on_random_fingerprints() {
        let mut rng = Rng(1);
        let fps: Vec<Option<Fingerprint>> =
            (0..3000).map(|_| Some(Fingerprint(rng.next() & rng.next()))).collect();
        let rank: Vec<u32> = (0..3000).collect();
        check(&fps, &rank, 3, 6);
    }

    #[test]
    fn agrees_with_the_naive_walk_at_exactly_k_and_k_plus_one_bits() {
        let mut rng = Rng(7);
        for k in [1, 3, 5] {
            let (fps, rank) = families(&mut rng, 2000, k);
            check(&fps, &rank, k, k as usize + 2);
        }
    }

    #[test]
    fn a_flood_of_identical_fingerprints_keeps_one() {
        // More than a chunk, so that the flood spans chunks.
        let n = WALK_CHUNK * 2 + 17;
        let fps = vec![Some(Fingerprint(0xDEAD_BEEF)); n];
        let rank: Vec<u32> = (0..n as u32).rev().collect();
        check(&fps, &rank, 3, 4);
        let outcome = DedupWalk::new(&fps, &rank).run(&Tables::new(4, 3).unwrap(), |_, _| {});
        assert!(outcome.center.iter().all(|&c| c == n as u32 - 1));
        assert_eq!((outcome.exact_duplicates, outcome.matched), (n as u64 - 1, 0));
    }

    #[test]
    fn a_flood_of_near_duplicates_spanning_chunks() {
        let mut rng = Rng(3);
        let base = rng.next();
        let n = WALK_CHUNK + 500;
        let fps: Vec<Option<Fingerprint>> =
            (0..n).map(|_| Some(Fingerprint(rng.flip(base, 2)))).collect();
        let rank: Vec<u32> = (0..n as u32).collect();
        check(&fps, &rank, 3, 5);
    }

    /// Each group's representative by brute force: its member of lowest (rank, doc).
    fn naive_identical(fps: &[Option<Fingerprint>], rank: Option<&[u32]>) -> Identical {
        let key = |d: usize| (rank.map_or(d as u32, |r| r[d]), d);
        let mut out = Identical::default();
        for (d, fp) in fps.iter().enumerate() {
            let Some(fp) = fp else { continue };
            let rep = (0..fps.len()).filter(|&e| fps[e] == Some(*fp)).min_by_key(|&e| key(e));
            let rep = rep.expect("d itself") as u32;
            if rep == d as u32 {
                out.representatives.push(rep);
            } else {
                out.duplicates.push((d as u32, rep));
            }
        }
        out
    }

    #[test]
    fn collapse_identical_agrees_with_brute_force() {
        let mut rng = Rng(11);
        for round in 0..20 {
            let n = 1 + (rng.next() % 400) as usize;
            // Few distinct values, so that groups are large; some documents without one.
            let values = 1 + rng.next() % (1 + round * 10);
            let fps: Vec<Option<Fingerprint>> = (0..n)
                .map(|_| (!rng.next().is_multiple_of(7)).then(|| Fingerprint(rng.next() % values)))
                .collect();
            // Ranks with ties (ties go in document order), and none.
            let rank: Vec<u32> = (0..n).map(|_| (rng.next() % (n as u64 / 2 + 1)) as u32).collect();
            assert_eq!(collapse_identical(&fps, Some(&rank)), naive_identical(&fps, Some(&rank)));
            assert_eq!(collapse_identical(&fps, None), naive_identical(&fps, None));
        }
        assert_eq!(collapse_identical(&[], None), Identical::default());
        assert_eq!(collapse_identical(&[None, None], None), Identical::default());
    }

    #[test]
    fn progress_reports_each_chunk() {
        let fps: Vec<Option<Fingerprint>> =
            (0..=WALK_CHUNK as u64).map(|i| Some(Fingerprint(i * 0x0101_0101_0101))).collect();
        let rank: Vec<u32> = (0..fps.len() as u32).collect();
        let mut calls = Vec::new();
        DedupWalk::new(&fps, &rank).run(&Tables::new(4, 0).unwrap(), |kept, distinct| {
            calls.push((kept, distinct));
        });
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1], (fps.len(), fps.len()));
    }
}
