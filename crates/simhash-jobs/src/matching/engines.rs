//! The matching steps over what a front end holds of its documents ([`Features`]): which
//! engine each method runs for the pairs, the connected components and the dedup walk, and
//! the figures each notes in the summary. The binary's jobs over a file-read
//! [`Corpus`](crate::Corpus) (the parent module) and the Python package's in-memory texts
//! both run these, so that the two cannot pick other engines or keep other documents.

use simhash_cluster::UnionFind;
use simhash_core::Fingerprint;
use simhash_index::lsh::{self, Masked, Relation, SketchStore};
use simhash_index::settings::Matching;
use simhash_index::{AllPairs, Blocks, DedupWalk, Tables};
use simhash_io::Score;

use crate::error::{Context, Result, bail};
use crate::reporter::Reporter;
use crate::summary::Summary;

/// What matching reads of the documents, numbered from 0: the fingerprints (simhash; `None`
/// for a text without features) or the MinHash sketches, finished
/// ([`SketchStore::finish`]).
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)]
pub enum Features<'a> {
    /// Each document's fingerprint, for [`Matching::Simhash`].
    Fingerprints(&'a [Option<Fingerprint>]),
    /// The documents' sketches, for [`Matching::Minhash`].
    Sketches(&'a dyn SketchStore),
}

impl Features<'_> {
    /// The number of documents.
    pub fn len(&self) -> usize {
        match self {
            Features::Fingerprints(fps) => fps.len(),
            Features::Sketches(store) => store.len(),
        }
    }

    /// True when there are no documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a matching step runs and what it tells: the front end's thread pool (none: the
/// current one), its progress (none: nothing shown), the memory budget of all pairs, and
/// the summary that the step's figures go in. A [`Session`](crate::Session) lends its own
/// ([`Session::steps`](crate::Session::steps)); an embedding without one makes it with
/// [`Steps::new`].
#[allow(missing_debug_implementations)]
pub struct Steps<'a> {
    /// The figures of the run: tables, exact duplicates, pairs, candidates.
    pub summary: &'a mut Summary,
    /// Phases and messages, when a front end shows them.
    pub reporter: Option<&'a mut Reporter>,
    /// The pool the engines run on (none: the current one).
    pub pool: Option<&'a rayon::ThreadPool>,
    /// The memory budget of all pairs within `k` bits (`--memory`; none: the default).
    pub memory: Option<u64>,
}

impl<'a> Steps<'a> {
    /// Steps on the current thread pool that show nothing and note their figures in
    /// `summary`.
    pub fn new(summary: &'a mut Summary) -> Steps<'a> {
        Steps { summary, reporter: None, pool: None, memory: None }
    }

    /// Runs `f` on the pool (or here, on the current one).
    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    fn phase(&mut self, name: &'static str) {
        if let Some(reporter) = self.reporter.as_deref_mut() {
            reporter.phase(name, None);
        }
    }

    /// The tables for `n` fingerprints (the planner's choice for `--blocks auto`), noted
    /// in the summary.
    fn tables(&mut self, k: u32, blocks: Blocks, n: usize) -> Result<Tables> {
        let tables = simhash_index::settings::tables(k, blocks, n)?;
        let s = &mut *self.summary;
        s.blocks = Some(tables.blocks());
        s.distance = Some(k);
        s.tables = Some(tables.len());
        Ok(tables)
    }
}

/// The sketches for a MinHash step, the fingerprints for a simhash one: an error (internal)
/// when a front end passes the other.
fn sketches(features: Features<'_>) -> Result<&dyn SketchStore> {
    match features {
        Features::Sketches(store) => Ok(store),
        Features::Fingerprints(_) => bail!(Internal, "internal error: no MinHash sketches"),
    }
}

fn fingerprints(features: Features<'_>) -> Result<&[Option<Fingerprint>]> {
    match features {
        Features::Fingerprints(fps) => Ok(fps),
        Features::Sketches(_) => bail!(Internal, "internal error: no fingerprints"),
    }
}

/// Finds the matching pairs of documents and calls `sink` with each pair `(a, b, score,
/// relation)`, `a < b`, once, in no set order. Documents with identical fingerprints
/// (simhash) or identical shingle sets (minhash) are collapsed first: each is listed once
/// with the first of its group, and the pairs of distinct texts are listed between the
/// groups' first members only (every other pair they imply is not repeated), so a flood of
/// identical documents gives one pair per document, not one per pair. With minhash, each
/// pair comes with its relation, and only the pairs `templates` acts on (never two that
/// both have content of their own: [`lsh::related_matches`]).
pub fn pairs(
    steps: &mut Steps<'_>,
    features: Features<'_>,
    matching: &Matching,
    mut sink: impl FnMut(u32, u32, Score, Option<Relation>) + Send,
) -> Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks } => {
            let fps = fingerprints(features)?;
            let identical = simhash_index::collapse_identical(fps, None);
            let (reps, duplicates) = (identical.representatives, identical.duplicates);
            for &(doc, rep) in &duplicates {
                sink(rep, doc, Score::Distance(0), None);
            }
            let rep_fps: Vec<Fingerprint> =
                reps.iter().map(|&d| fps[d as usize].unwrap_or_default()).collect();
            let found = fingerprint_pairs(steps, &rep_fps, distance, blocks, |a, b, d| {
                sink(reps[a as usize], reps[b as usize], Score::Distance(d), None);
            })?;
            steps.summary.exact_duplicates = Some(duplicates.len() as u64);
            steps.summary.pairs = found + duplicates.len() as u64;
            Ok(())
        }
        Matching::Minhash { jaccard, templates, .. } => {
            let store = sketches(features)?;
            steps.phase("matching");
            let (found, stats) =
                steps.install(|| lsh::related_matches(store, jaccard, templates))?;
            for (a, b, j, relation) in found {
                sink(a, b, Score::Jaccard(j), Some(relation));
            }
            note_match_stats(steps.summary, &stats);
            Ok(())
        }
    }
}

/// Runs the block-permutation tables over `fps` and calls `sink` with each pair of
/// positions `(a, b, distance)`, `a < b`, each pair once; returns the number of pairs.
/// Errors: a memory budget too small for one table.
pub fn fingerprint_pairs(
    steps: &mut Steps<'_>,
    fps: &[Fingerprint],
    distance: u32,
    blocks: Blocks,
    mut sink: impl FnMut(u32, u32, u32) + Send,
) -> Result<u64> {
    let tables = steps.tables(distance, blocks, fps.len())?;
    steps.phase("matching");
    let mut count = 0u64;
    let reporter = steps.reporter.as_deref();
    let (n, total) = (fps.len(), tables.len());
    steps
        .install(|| {
            let all = AllPairs::new(&tables).budget(steps.memory).progress(|t| {
                if let Some(reporter) = reporter {
                    reporter.message(format!("{n} fingerprints, table {} of {total}", t + 1));
                }
            });
            all.run(fps, |batch| {
                count += batch.len() as u64;
                for p in batch {
                    sink(p.a, p.b, p.distance);
                }
            })
        })
        .context("invalid --memory")?;
    Ok(count)
}

/// The connected components of the matches ([`pairs`]; for minhash, the engine's own
/// components search, which verifies fewer pairs), as a union-find over the documents.
pub fn components(
    steps: &mut Steps<'_>,
    features: Features<'_>,
    matching: &Matching,
) -> Result<UnionFind> {
    let mut uf = UnionFind::try_new(features.len()).context("too many documents")?;
    match *matching {
        Matching::Minhash { jaccard, templates, .. } => {
            let store = sketches(features)?;
            steps.phase("matching");
            let (edges, stats) = steps.install(|| lsh::components(store, jaccard, templates))?;
            note_match_stats(steps.summary, &stats);
            uf.union_all(edges).context("clustering failed")?;
        }
        Matching::Simhash { .. } => {
            // Copies join their group's first; the other pairs join the firsts.
            let mut error = None;
            pairs(steps, features, matching, |a, b, _, _| {
                if let Err(e) = uf.union(a, b) {
                    error.get_or_insert(e);
                }
            })?;
            if let Some(e) = error {
                return Err(e).context("clustering failed");
            }
        }
    }
    Ok(uf)
}

/// What the dedup walk decided: each document's center (itself when kept), and with
/// minhash each removed document's Jaccard similarity and relation to it.
#[derive(Clone, Debug)]
pub struct Walked {
    /// Each document's kept document (itself when kept).
    pub center: Vec<u32>,
    /// With minhash: each removed document's Jaccard similarity to its kept one.
    pub jaccard: Option<Vec<f64>>,
    /// With minhash: each removed document's relation to its kept one.
    pub relation: Option<Vec<Relation>>,
}

/// The dedup walk: documents in priority order (`rank[d]`, 0 first), each kept unless an
/// already kept one matches it. The `hidden` documents are passed over as if they had no
/// features (each is kept, alone): `dedup --against` hides the records that matched the
/// index, which are removed whatever the walk finds.
pub fn walk(
    steps: &mut Steps<'_>,
    features: Features<'_>,
    matching: &Matching,
    rank: &[u32],
    hidden: Option<&[bool]>,
) -> Result<Walked> {
    match *matching {
        Matching::Minhash { jaccard, templates, .. } => {
            let store = sketches(features)?;
            steps.phase("matching");
            let (walk, stats) = steps.install(|| match hidden {
                None => lsh::walk(store, jaccard, rank, templates),
                Some(hidden) => {
                    let masked = Masked { inner: store, hidden };
                    lsh::walk(&masked, jaccard, rank, templates)
                }
            })?;
            note_match_stats(steps.summary, &stats);
            Ok(Walked {
                center: walk.center,
                jaccard: Some(walk.jaccard),
                relation: Some(walk.relation),
            })
        }
        Matching::Simhash { distance, blocks } => {
            let fps = fingerprints(features)?;
            let center = match hidden {
                None => simhash_walk(steps, fps, distance, blocks, rank)?,
                Some(hidden) => {
                    let fps: Vec<Option<Fingerprint>> =
                        fps.iter().zip(hidden).map(|(&fp, &h)| if h { None } else { fp }).collect();
                    simhash_walk(steps, &fps, distance, blocks, rank)?
                }
            };
            Ok(Walked { center, jaccard: None, relation: None })
        }
    }
}

/// The simhash dedup walk ([`DedupWalk`]): documents in priority order, each kept unless
/// an already kept one is within `distance` bits. Returns each document's center.
fn simhash_walk(
    steps: &mut Steps<'_>,
    fps: &[Option<Fingerprint>],
    distance: u32,
    blocks: Blocks,
    rank: &[u32],
) -> Result<Vec<u32>> {
    let walk = steps.install(|| DedupWalk::new(fps, rank));
    let tables = steps.tables(distance, blocks, walk.distinct())?;
    steps.phase("matching");
    let reporter = steps.reporter.as_deref();
    let outcome = steps.install(|| {
        walk.run(&tables, |kept, distinct| {
            if let Some(reporter) = reporter {
                reporter.message(format!("{kept} of {distinct} fingerprints"));
            }
        })
    });
    steps.summary.exact_duplicates = Some(outcome.exact_duplicates);
    steps.summary.pairs = outcome.matched + outcome.exact_duplicates;
    Ok(outcome.center)
}

/// The MinHash search's counts in the summary: matches are exact duplicates and verified
/// pairs.
fn note_match_stats(s: &mut Summary, stats: &lsh::MatchStats) {
    s.exact_duplicates = Some(stats.duplicates);
    s.candidates = Some(stats.candidates);
    s.verified = Some(stats.verified);
    s.pairs = stats.duplicates + stats.pairs;
    s.spared = Some(stats.spared);
    if stats.largest_component > 0 {
        s.largest_candidate_component = Some(stats.largest_component);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(x: u64) -> Fingerprint {
        Fingerprint::from(x)
    }

    /// The steps run without a session (as Python runs them): pairs with the copies
    /// collapsed, the walk with and without hidden documents, and the components.
    #[test]
    fn simhash_steps_over_fingerprints() {
        let fps = [Some(fp(0)), Some(fp(0b1)), Some(fp(u64::MAX)), Some(fp(0)), None];
        let matching = Matching::Simhash { distance: 3, blocks: Blocks::Auto };
        let mut summary = Summary::default();
        let mut steps = Steps::new(&mut summary);
        let features = Features::Fingerprints(&fps);
        let mut found = Vec::new();
        pairs(&mut steps, features, &matching, |a, b, s, r| found.push((a, b, s, r))).unwrap();
        found.sort_by_key(|&(a, b, _, _)| (a, b));
        assert_eq!(found, [(0, 1, Score::Distance(1), None), (0, 3, Score::Distance(0), None)]);
        let rank: Vec<u32> = (0..5).collect();
        let walked = walk(&mut steps, features, &matching, &rank, None).unwrap();
        assert_eq!(walked.center, [0, 0, 2, 0, 4]);
        assert!(walked.jaccard.is_none() && walked.relation.is_none());
        let hidden = [true, false, false, false, false];
        let walked = walk(&mut steps, features, &matching, &rank, Some(&hidden)).unwrap();
        assert_eq!(walked.center, [0, 1, 2, 1, 4]);
        let mut uf = components(&mut steps, features, &matching).unwrap();
        let roots: Vec<u32> = (0..5).map(|d| uf.root(d)).collect();
        assert_eq!(roots[0], roots[1]);
        assert_eq!(roots[0], roots[3]);
        assert_ne!(roots[0], roots[2]);
        assert!(summary.tables.is_some());
    }

    /// A MinHash step given fingerprints is an internal error, not a panic.
    #[test]
    fn the_wrong_features_are_an_error() {
        let matching = Matching::Minhash {
            jaccard: 0.5,
            lsh_threshold: 0.3,
            num_perm: 64,
            band_keys: lsh::BandKeyWidth::default(),
            templates: lsh::Templates::default(),
        };
        let mut summary = Summary::default();
        let e =
            walk(&mut Steps::new(&mut summary), Features::Fingerprints(&[]), &matching, &[], None)
                .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Internal);
    }
}
