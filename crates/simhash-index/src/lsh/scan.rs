//! The pair search over a [`SketchStore`]: identical sets collapsed, candidates from shared
//! band hashes (each pair once), each verified by its exact Jaccard similarity.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use simhash_cluster::UnionFind;

use super::buffers::trim;
use super::small::{Lookup, PROBE_MAX, SmallSets, floods};
use super::{
    EngineError, EngineErrorKind, MatchSink, MatchStats, Relation, SketchStore, Templates,
    pair_relation_in,
};

thread_local! {
    /// Two shingle sets read back, reused.
    pub(crate) static SETS: RefCell<(Vec<u64>, Vec<u64>)> =
        const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Candidate pairs verified together.
const VERIFY_CHUNK: usize = 4096;

/// Documents with identical shingle sets and tokens, collapsed: `reps` (ascending) stand
/// for every document with a sketch, and `duplicates` lists `(doc, rep)` for the others, in
/// document order. Each group's representative is its member of lowest `rank` (lowest
/// position without ranks, or among equal ranks). Equal set hashes are only a hint: sets
/// and tokens are compared whole. The tokens too: with a short window two texts can have
/// one set and still differ ("Alice pays Bob" and "Bob pays Alice" at `--window 1`, a text
/// and its words shuffled), and a duplicate is decided as its representative is, the same
/// text, without a relation read.
pub(crate) struct Collapsed {
    pub(crate) reps: Vec<u32>,
    pub(crate) duplicates: Vec<(u32, u32)>,
}

/// One run of equal set hashes settled: its representatives, and `(doc, rep)` for the
/// others.
type Run = (Vec<u32>, Vec<(u32, u32)>);

pub(crate) fn collapse_identical<S: SketchStore + ?Sized>(
    sketches: &S,
    rank: Option<&[u32]>,
) -> Result<Collapsed, EngineError> {
    let n = sketches.len();
    let rank_of = |d: usize| rank.map_or(d as u32, |r| r[d]);
    let mut by_hash: Vec<(u64, u32, u32)> = (0..n)
        .filter(|&d| sketches.has(d))
        .map(|d| (sketches.set_hash(d), rank_of(d), d as u32))
        .collect();
    by_hash.par_sort_unstable();
    // Runs of equal set hashes, each settled on its own (in parallel; a flood is one run).
    let mut is_rep = vec![false; n];
    let mut runs: Vec<&[(u64, u32, u32)]> = Vec::new();
    for run in by_hash.chunk_by(|x, y| x.0 == y.0) {
        if run.len() == 1 {
            is_rep[run[0].2 as usize] = true;
        } else {
            runs.push(run);
        }
    }
    let settled: Vec<Result<Run, EngineError>> = runs
        .par_iter()
        .map(|run| {
            // The representatives so far by a hash of their tokens: a flood of one text
            // is compared with its first copy, and a flood of texts that share a set but
            // not their order (one per representative) costs one lookup each, not one
            // comparison per representative.
            let mut reps: Vec<u32> = Vec::new();
            let mut by_tokens: HashMap<u64, Vec<u32>> = HashMap::new();
            let mut duplicates = Vec::new();
            let (mut set, mut other) = (Vec::new(), Vec::new());
            let (mut tokens, mut other_tokens) = (Vec::new(), Vec::new());
            for &(_, _, doc) in *run {
                sketches.read_set(doc as usize, &mut set)?;
                sketches.read_tokens(doc as usize, &mut tokens)?;
                let same_tokens = by_tokens.entry(tokens_hash(&tokens)).or_default();
                let mut found = None;
                for &rep in same_tokens.iter() {
                    sketches.read_set(rep as usize, &mut other)?;
                    sketches.read_tokens(rep as usize, &mut other_tokens)?;
                    if set == other && tokens == other_tokens {
                        found = Some(rep);
                        break;
                    }
                }
                if let Some(rep) = found {
                    duplicates.push((doc, rep));
                } else {
                    reps.push(doc);
                    same_tokens.push(doc);
                }
            }
            Ok((reps, duplicates))
        })
        .collect();
    drop(runs);
    let mut duplicates = Vec::new();
    for run in settled {
        let (reps, found) = run?;
        for rep in reps {
            is_rep[rep as usize] = true;
        }
        duplicates.extend(found);
    }
    drop(by_hash);
    duplicates.sort_unstable();
    let reps = (0..n as u32).filter(|&d| is_rep[d as usize]).collect();
    Ok(Collapsed { reps, duplicates })
}

/// A hash of a text's tokens ([`DocSketch::tokens`](super::DocSketch::tokens)): a hint to
/// group texts that may be the same (equal tokens have equal hashes; they are compared
/// whole), as the engine's collapse of identical sets and tokens groups them, and
/// `simhash-dist`'s.
pub fn tokens_hash(tokens: &[u32]) -> u64 {
    tokens.iter().fold(tokens.len() as u64, |h, &w| {
        (h ^ u64::from(w)).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
    })
}

/// A verified pair of [`related_matches`]: `a < b`, their Jaccard similarity and relation.
pub type RelatedMatch = (u32, u32, f64, Relation);

/// [`find_matches`] with each pair's relation ([`pair_relation_in`]: the lesser of its two
/// directions; a document with the shingle set and tokens of an earlier one is the same
/// text), only the pairs `templates` acts on, in the order found; the stats count the
/// others as [`spared`](MatchStats::spared) (not among the `pairs`). The relations are read in
/// parallel on rayon's current pool. What `simhash pairs` and `MinHashDedup::pairs` list.
pub fn related_matches<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    templates: Templates,
) -> Result<(Vec<RelatedMatch>, MatchStats), EngineError> {
    /// The matches as they come, and whether each is a copy; not the pairs of two records
    /// each with content no other record of their candidate component has (`alone`: both
    /// directions overlap, never listed), only counted.
    struct Collect {
        found: Vec<(u32, u32, f64, bool)>,
        alone: Vec<bool>,
        overlaps: u64,
    }
    impl MatchSink for Collect {
        fn duplicate(&mut self, doc: u32, of: u32) {
            self.found.push((of, doc, 1.0, true));
        }
        fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
            let alone = |d: u32| self.alone.get(d as usize).copied().unwrap_or(false);
            if alone(a) && alone(b) {
                self.overlaps += 1;
            } else {
                self.found.push((a, b, jaccard, false));
            }
        }
    }
    let collapsed = collapse_identical(sketches, None)?;
    let alone = alone_records(sketches, &collapsed.reps)?;
    let mut found = Collect { found: Vec::new(), alone, overlaps: 0 };
    let mut stats = find_collapsed_matches(sketches, threshold, collapsed, &mut found)?;
    stats.pairs = stats.pairs.saturating_sub(found.overlaps);
    stats.spared += found.overlaps;
    let found = found.found;
    let related: Vec<Relation> = found
        .par_iter()
        .map(|&(a, b, _, copy)| {
            if copy {
                Ok(Relation::Same)
            } else {
                pair_relation_in(sketches, a as usize, b as usize)
            }
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(found.len());
    for (&(a, b, j, copy), r) in found.iter().zip(related) {
        if templates.acts_on(r) {
            out.push((a, b, j, r));
        } else {
            // A copy is the same text, acted on: only verified pairs are spared.
            debug_assert!(!copy);
            stats.pairs = stats.pairs.saturating_sub(1);
            stats.spared += 1;
        }
    }
    Ok((out, stats))
}

/// For each document of `sketches`, whether its candidate component (of `reps`, the
/// representatives among identical sets) finds it [`alone`](super::alone::alone).
pub(super) fn alone_records<S: SketchStore + ?Sized>(
    sketches: &S,
    reps: &[u32],
) -> Result<Vec<bool>, EngineError> {
    let components = candidate_components(sketches, reps)?;
    let found: Vec<Result<Vec<bool>, EngineError>> =
        components.par_iter().map(|docs| super::alone::alone(sketches, docs)).collect();
    let mut alone = vec![false; sketches.len()];
    for (docs, found) in components.iter().zip(found) {
        for (&doc, is) in docs.iter().zip(found?) {
            alone[doc as usize] = is;
        }
    }
    Ok(alone)
}

/// Every pair of documents whose shingle sets reach `threshold` Jaccard similarity among
/// the LSH candidates: documents with equal sets are collapsed onto the first of them
/// (reported through [`MatchSink::duplicate`]), the others' band hashes give candidate
/// pairs, each once, and each candidate is verified by its exact Jaccard similarity (pairs
/// through [`MatchSink::pair`]). Runs on the current rayon pool; what the sink receives
/// does not depend on the thread count.
///
/// The store must be [finished](SketchStore::finish).
pub fn find_matches<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    sink: &mut dyn MatchSink,
) -> Result<MatchStats, EngineError> {
    find_collapsed_matches(sketches, threshold, collapse_identical(sketches, None)?, sink)
}

/// [`find_matches`] with its documents already collapsed
/// ([`collapse_identical`] without ranks).
fn find_collapsed_matches<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    collapsed: Collapsed,
    sink: &mut dyn MatchSink,
) -> Result<MatchStats, EngineError> {
    let mut stats = MatchStats::default();
    let Collapsed { reps: mut rep_docs, duplicates } = collapsed;
    stats.duplicates = duplicates.len() as u64;
    for (doc, rep) in duplicates {
        sink.duplicate(doc, rep);
    }
    // Small sets pair through a prefix index, not the band buckets, when they flood them
    // (see `small`).
    if let Some(mut small) = flood_index(sketches, &rep_docs, threshold)? {
        let (prefix_docs, band_docs) = split_by_lookup(sketches, &small, &rep_docs)?;
        prefix_pairs(sketches, &mut small, threshold, &prefix_docs, &mut stats, sink)?;
        rep_docs = band_docs;
    }
    // Candidates among the representatives, one band at a time from the store;
    // `rep_docs[i]` is the document of LSH position `i`.
    let mut error = None;
    // A failed verification stops the scan at its next read.
    let failed = AtomicBool::new(false);
    let stop = || {
        if failed.load(Ordering::Relaxed) {
            return Err(EngineError::other(EngineErrorKind::Io, "stopped after an error"));
        }
        Ok(())
    };
    let scan = super::candidate_pairs_from_columns(
        rep_docs.len(),
        sketches.bands(),
        |band| {
            stop()?;
            sketches.column(band, &rep_docs)
        },
        |positions, band, out| {
            stop()?;
            let docs: Vec<u32> = positions.iter().map(|&p| rep_docs[p as usize]).collect();
            sketches.rows(&docs, band, out)
        },
        |batch| {
            if error.is_some() {
                return;
            }
            stats.candidates += batch.len() as u64;
            for chunk in batch.chunks(VERIFY_CHUNK) {
                let verified: Result<Vec<Option<f64>>, EngineError> = chunk
                    .par_iter()
                    .map(|c| similarity(sketches, rep_docs[c.a as usize], rep_docs[c.b as usize]))
                    .map(|j| j.map(|j| (j >= threshold).then_some(j)))
                    .collect();
                stats.verified += chunk.len() as u64;
                match verified {
                    Ok(verified) => {
                        for (c, j) in chunk.iter().zip(verified) {
                            if let Some(j) = j {
                                stats.pairs += 1;
                                sink.pair(rep_docs[c.a as usize], rep_docs[c.b as usize], j);
                            }
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        failed.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            }
        },
    );
    // The verification's own error first: the scan's is then only "stopped".
    match error {
        Some(e) => Err(e),
        None => scan.map(|()| stats),
    }
}

/// A [`SmallSets`] over `docs` when their small sets flood the band buckets.
fn flood_index<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    threshold: f64,
) -> Result<Option<SmallSets>, EngineError> {
    let mut smalls = Vec::new();
    for &doc in docs {
        if (1..=PROBE_MAX).contains(&sketches.set_len(doc as usize)?) {
            smalls.push(doc);
        }
    }
    if !floods(smalls.len(), sketches.bands(), |band| sketches.column(band, &smalls))? {
        return Ok(None);
    }
    drop(smalls);
    SmallSets::new(sketches, docs, threshold)
}

/// Where each of `docs` finds its candidates (`(document, lookup)` for those looked up in
/// the prefix index, ascending), and the documents that the band buckets hold.
#[allow(clippy::type_complexity)]
fn split_by_lookup<S: SketchStore + ?Sized>(
    sketches: &S,
    small: &SmallSets,
    docs: &[u32],
) -> Result<(Vec<(u32, Lookup)>, Vec<u32>), EngineError> {
    let (mut prefix, mut bands) = (Vec::new(), Vec::with_capacity(docs.len()));
    for &doc in docs {
        let lookup = small.lookup(sketches.set_len(doc as usize)?);
        if lookup.prefix() {
            prefix.push((doc, lookup));
        }
        if lookup.bands() {
            bands.push(doc);
        }
    }
    Ok((prefix, bands))
}

/// The verified pairs with a small set (one the band buckets do not hold), to `sink`:
/// `docs` (those looked up in the prefix index, ascending) in order, each against the
/// earlier ones its prefix meets that share a band with it, as the band candidates
/// would have paired them. Pairs of two larger sets are left to the band buckets.
fn prefix_pairs<S: SketchStore + ?Sized>(
    sketches: &S,
    index: &mut SmallSets,
    threshold: f64,
    docs: &[(u32, Lookup)],
    stats: &mut MatchStats,
    sink: &mut dyn MatchSink,
) -> Result<(), EngineError> {
    let bands = sketches.bands();
    let ids: Vec<u32> = docs.iter().map(|&(doc, _)| doc).collect();
    let mut rows = Vec::with_capacity(ids.len() * bands);
    sketches.rows(&ids, bands, &mut rows)?;
    let row = |p: usize| &rows[p * bands..(p + 1) * bands];
    let (mut set, mut scratch, mut found) = (Vec::new(), Vec::new(), Vec::new());
    // Candidates `(earlier, doc)`, verified VERIFY_CHUNK at a time in parallel (in order).
    let mut batch: Vec<(u32, u32)> = Vec::with_capacity(VERIFY_CHUNK);
    let mut verify = |batch: &mut Vec<(u32, u32)>| -> Result<(), EngineError> {
        let verified: Vec<Option<f64>> = batch
            .par_iter()
            .map(|&(a, b)| similarity(sketches, a, b).map(|j| (j >= threshold).then_some(j)))
            .collect::<Result<_, _>>()?;
        stats.candidates += batch.len() as u64;
        stats.verified += batch.len() as u64;
        for (&(a, b), j) in batch.iter().zip(verified) {
            if let Some(j) = j {
                stats.pairs += 1;
                sink.pair(a, b, j);
            }
        }
        batch.clear();
        Ok(())
    };
    for (p, &(doc, lookup)) in docs.iter().enumerate() {
        sketches.read_set(doc as usize, &mut set)?;
        // A small set meets every earlier set indexed; a larger one only the small ones
        // (two larger sets pair through the band buckets).
        let small = lookup == Lookup::Prefix;
        index.candidates(&set, 0, small, &mut scratch, &mut found);
        for &q in &found {
            let earlier = docs[q as usize].0;
            if row(p).iter().zip(row(q as usize)).any(|(a, b)| a == b) {
                batch.push((earlier, doc));
                if batch.len() == VERIFY_CHUNK {
                    verify(&mut batch)?;
                }
            }
        }
        index.insert(&set, p as u32, &mut scratch)?;
    }
    verify(&mut batch)?;
    trim(&mut set);
    Ok(())
}

/// The exact Jaccard similarity of two documents' shingle sets (0 when either has none).
pub fn similarity<S: SketchStore + ?Sized>(
    sketches: &S,
    a: u32,
    b: u32,
) -> Result<f64, EngineError> {
    SETS.with(|cell| {
        let mut guard = cell.borrow_mut();
        let (set_a, set_b) = &mut *guard;
        sketches.read_set(a as usize, set_a)?;
        sketches.read_set(b as usize, set_b)?;
        let jaccard = simhash_core::jaccard(set_a, set_b);
        trim(set_a);
        trim(set_b);
        Ok(jaccard)
    })
}

/// The first position given with each 32-bit key: an open-addressing table (linear
/// probing, at most two thirds full), cleared between bands; 12 to 24 bytes a document.
pub(crate) struct FirstByKey {
    /// `(key, position)`, [`FirstByKey::FREE`] as position for a free slot.
    slots: Vec<(u32, u32)>,
    shift: u32,
}

impl FirstByKey {
    const FREE: u32 = u32::MAX;

    pub(crate) fn new(n: usize) -> FirstByKey {
        let size = (n + n / 2).max(2).next_power_of_two();
        FirstByKey { slots: vec![(0, Self::FREE); size], shift: 64 - size.trailing_zeros() }
    }

    pub(crate) fn clear(&mut self) {
        self.slots.fill((0, Self::FREE));
    }

    /// The first position given with `key`: `position` if it is the first.
    pub(crate) fn first(&mut self, key: u32, position: u32) -> u32 {
        let mask = self.slots.len() - 1;
        let mut at = (u64::from(key).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize;
        loop {
            let (k, p) = self.slots[at];
            if p == Self::FREE {
                self.slots[at] = (key, position);
                return position;
            }
            if k == key {
                return p;
            }
            at = (at + 1) & mask;
        }
    }
}

/// Band groups [`candidate_components`] reads in parallel at most (a forest and a key
/// table each: 20 to 32 bytes a document).
const COMPONENT_GROUPS: usize = 4;

/// The candidate components of `docs` (ascending): documents linked by chains of shared
/// band hashes. One union per member of each band group (never one per pair), found with
/// a table of each key's first member, so the cost is about `bands × n` whatever the
/// groups' sizes; the bands are read in up to [`COMPONENT_GROUPS`] groups in parallel,
/// each with its own forest, merged at the end. Components of two or more documents,
/// each ascending, in order of first member.
pub(crate) fn candidate_components<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
) -> Result<Vec<Vec<u32>>, EngineError> {
    // The bands in groups, one forest each, found in parallel and then merged: the
    // partition is the same whatever the order of the unions.
    let bands = sketches.bands();
    let groups = rayon::current_num_threads().clamp(1, COMPONENT_GROUPS).min(bands.max(1));
    let forests: Vec<Result<UnionFind, EngineError>> = (0..groups)
        .into_par_iter()
        .map(|g| {
            let mut uf = UnionFind::new(docs.len());
            let mut first = FirstByKey::new(docs.len());
            for band in (g..bands).step_by(groups) {
                let column = sketches.column(band, docs)?;
                first.clear();
                // Each position joins the first position with its key (the partition is
                // that of the band's groups, whatever the order of the unions).
                for (p, &h) in column.iter().enumerate() {
                    let f = first.first(h, p as u32);
                    if f != p as u32 {
                        uf.join(f, p as u32);
                    }
                }
            }
            Ok(uf)
        })
        .collect();
    let mut forests = forests.into_iter();
    let mut uf = match forests.next() {
        Some(first) => first?,
        None => UnionFind::new(docs.len()),
    };
    for other in forests {
        let mut other = other?;
        for p in 0..docs.len() as u32 {
            let root = other.root(p);
            if root != p {
                uf.join(root, p);
            }
        }
    }
    let mut by_root: Vec<(u32, u32)> = Vec::with_capacity(docs.len());
    for p in 0..docs.len() as u32 {
        by_root.push((uf.root(p), p));
    }
    drop(uf);
    by_root.par_sort_unstable();
    let mut components: Vec<Vec<u32>> = by_root
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|&(_, p)| docs[p as usize]).collect())
        .collect();
    components.sort_unstable_by_key(|c| c[0]);
    Ok(components)
}

/// The band hashes of `docs` (ascending): document `i` has `rows[i * bands..(i + 1) *
/// bands]`.
pub(crate) fn component_rows<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
) -> Result<Vec<u32>, EngineError> {
    let mut rows = Vec::with_capacity(docs.len() * sketches.bands());
    sketches.rows(docs, sketches.bands(), &mut rows)?;
    Ok(rows)
}
