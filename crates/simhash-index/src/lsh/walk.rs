//! The dedup walk: records in priority order, each kept unless it verifies against a record
//! already kept.

use std::collections::HashMap;

use rayon::prelude::*;

use super::scan::{Collapsed, SETS, candidate_components, collapse_identical, component_rows};
use super::store::trim;
use super::{EngineError, EngineErrorKind, MatchStats, SketchStore};

/// A removed document, the kept one it duplicates, and their Jaccard similarity.
type Removal = (u32, u32, f64);

/// What the dedup walk decided: for each document, the kept record it duplicates
/// (`center[d] == d` when `d` is kept) and, when removed, the Jaccard similarity to it
/// (0 for kept documents).
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    /// The kept document each document duplicates (itself when kept).
    pub center: Vec<u32>,
    /// The Jaccard similarity of each removed document to its kept one.
    pub jaccard: Vec<f64>,
}

/// Hashes the bucket keys of a walk (a band and its hash, already well mixed) with one
/// multiplication, not SipHash: only lookups, so no order depends on it.
#[derive(Clone, Copy, Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

/// Band-hash buckets: by [`bucket_key`], the last link of the bucket's chain in
/// [`Kept::links`] (one allocation for all buckets, not a vector each).
type Buckets = HashMap<u64, u32, std::hash::BuildHasherDefault<KeyHasher>>;

/// The end of a bucket's chain.
const NO_LINK: u32 = u32::MAX;

/// The key of a band hash in a per-component bucket map.
fn bucket_key(band: usize, hash: u32) -> u64 {
    ((band as u64) << 32) | u64::from(hash)
}

/// The dedup walk: documents in priority order (`rank[d]`, lowest first; equal ranks in
/// document order), each kept unless an already kept document shares a band hash with it
/// and has a Jaccard similarity of at least `threshold` to it; then it is removed as a
/// duplicate of the first such kept document in priority order. Documents with identical
/// shingle sets follow the first of them in priority order (they would be decided alike).
/// No two kept documents that share a band hash verify, and every removed document
/// verifies against its kept one. Documents without a sketch are kept.
///
/// Each candidate component is walked on its own (in parallel; the outcome does not
/// depend on the thread count), with an index of its kept documents' band hashes: a
/// document is compared with the kept documents it shares a band with, in priority order,
/// until one verifies. A flood of `N` near-duplicates with `K` kept costs about `N × K`.
///
/// The store must be [finished](SketchStore::finish). Errors: `rank` not one per document
/// ([`EngineErrorKind::Mismatch`]), or the store's.
pub fn walk<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    rank: &[u32],
) -> Result<(Walk, MatchStats), EngineError> {
    let n = sketches.len();
    if rank.len() != n {
        return Err(EngineError::other(
            EngineErrorKind::Mismatch,
            format!("{} ranks for {n} documents", rank.len()),
        ));
    }
    let Collapsed { reps, duplicates } = collapse_identical(sketches, Some(rank))?;
    let components = candidate_components(sketches, &reps)?;
    let results: Vec<Result<(Vec<Removal>, MatchStats), EngineError>> =
        components.par_iter().map(|docs| walk_component(sketches, docs, rank, threshold)).collect();
    let mut center: Vec<u32> = (0..n as u32).collect();
    let mut jaccard = vec![0.0; n];
    let mut stats = MatchStats { duplicates: duplicates.len() as u64, ..MatchStats::default() };
    for result in results {
        let (removed, s) = result?;
        stats.add(&s);
        for (doc, kept, j) in removed {
            center[doc as usize] = kept;
            jaccard[doc as usize] = j;
        }
    }
    // A document identical to its group's representative is decided as it is.
    for (doc, rep) in duplicates {
        let (c, j) = (center[rep as usize], jaccard[rep as usize]);
        if c == rep {
            center[doc as usize] = rep;
            jaccard[doc as usize] = 1.0;
        } else {
            center[doc as usize] = c;
            jaccard[doc as usize] = j;
        }
    }
    Ok((Walk { center, jaccard }, stats))
}

/// Records of a candidate component decided together by the walk: each is compared in
/// parallel with the records kept before the chunk, then the chunk is settled in order
/// among the records kept within it. Small in tests, so that they cover many chunks.
const WALK_CHUNK: usize = if cfg!(test) { 7 } else { 4096 };

/// The largest set of an undecided record that the parallel pass of a chunk hands to the
/// ordered pass (larger ones are read again there): with [`WALK_CHUNK`] records, at most
/// the memory of one [`Kept`]'s sets. Small in tests, so that they cover both.
const HELD_SET_WORDS: usize = if cfg!(test) { 6 } else { KEPT_SET_WORDS / WALK_CHUNK };

/// What the parallel pass of a chunk finds for a record: its match among the records kept
/// before the chunk, the counts, and its set when it is undecided and small enough.
type Early = (Option<Match>, MatchStats, Option<Vec<u64>>);

/// A kept record (component position) that a record verifies against, and their Jaccard
/// similarity.
type Match = (usize, f64);

/// A component's documents and their band hashes, as the walk reads them.
struct Component<'a, S: ?Sized> {
    sketches: &'a S,
    docs: &'a [u32],
    rows: Vec<u32>,
    bands: usize,
    threshold: f64,
}

impl<S: SketchStore + ?Sized> Component<'_, S> {
    fn row(&self, i: usize) -> &[u32] {
        &self.rows[i * self.bands..(i + 1) * self.bands]
    }
}

thread_local! {
    /// The bitmap of the record being compared, reused.
    static FILTER: std::cell::RefCell<simhash_core::SetFilter> =
        std::cell::RefCell::new(simhash_core::SetFilter::default());
}

/// Shingles of kept records' sets that one [`Kept`] holds in memory, so that the records
/// compared with them are not read back again and again (past it, sets are read from the
/// store for each comparison). Small in tests, so that they cover both.
const KEPT_SET_WORDS: usize = if cfg!(test) { 40 } else { 4 << 20 };

/// Kept records (component positions, in the order they were kept, which is priority
/// order) and an index of their band hashes, listing kept ordinals; the size of each
/// one's shingle set, and the set itself while [`KEPT_SET_WORDS`] allows.
#[derive(Default)]
struct Kept {
    docs: Vec<usize>,
    buckets: Buckets,
    /// The buckets' members: a kept ordinal and the link of the bucket's previous member
    /// ([`NO_LINK`] for its first).
    links: Vec<(u32, u32)>,
    lens: Vec<usize>,
    /// Where each kept record's set starts in `sets`, when it is held.
    starts: Vec<Option<usize>>,
    sets: Vec<u64>,
}

impl Kept {
    /// The first kept record, in priority order, that shares a band with record `i` of
    /// the component and whose Jaccard similarity to it is at least the threshold; counts
    /// into `stats`.
    ///
    /// Each candidate counts as verified; those whose set sizes rule them out
    /// ([`simhash_core::jaccard_min_common`]) are not read, and the others are compared by
    /// [`simhash_core::jaccard_at_least`] (the exact similarity when it is reached), after
    /// a bitmap of the record's set ([`simhash_core::SetFilter`]) when it has several.
    fn first_match<S: SketchStore + ?Sized>(
        &self,
        c: &Component<'_, S>,
        i: usize,
        set: &[u64],
        stats: &mut MatchStats,
    ) -> Result<Option<Match>, EngineError> {
        SETS.with(|cell| {
            FILTER.with(|filter| {
                let mut guard = cell.borrow_mut();
                let (_, other) = &mut *guard;
                let filter = &mut *filter.borrow_mut();
                let mut candidates: Vec<u32> = Vec::new();
                for (band, &h) in c.row(i).iter().enumerate() {
                    let mut link = self.buckets.get(&bucket_key(band, h)).copied();
                    while let Some(at) = link.filter(|&at| at != NO_LINK) {
                        let (ordinal, previous) = self.links[at as usize];
                        candidates.push(ordinal);
                        link = Some(previous);
                    }
                }
                candidates.sort_unstable();
                candidates.dedup();
                stats.candidates += candidates.len() as u64;
                let mut found = None;
                if !candidates.is_empty() {
                    // Only with several candidates is the bitmap worth making.
                    let filtered = candidates.len() > 1;
                    if filtered {
                        filter.fill(set);
                    }
                    for &k in &candidates {
                        let k = k as usize;
                        stats.verified += 1;
                        let Some(needed) =
                            simhash_core::jaccard_min_common(set.len(), self.lens[k], c.threshold)
                        else {
                            continue;
                        };
                        let kept_set = if let Some(kept_set) = self.set(k) {
                            kept_set
                        } else {
                            c.sketches.read_set(c.docs[self.docs[k]] as usize, other)?;
                            &other[..]
                        };
                        if filtered && !filter.may_share(kept_set, needed) {
                            continue;
                        }
                        if let Some(j) = simhash_core::jaccard_at_least(set, kept_set, c.threshold)
                        {
                            found = Some((self.docs[k], j));
                            break;
                        }
                    }
                }
                trim(other);
                Ok(found)
            })
        })
    }

    /// The set of kept ordinal `k`, when held.
    fn set(&self, k: usize) -> Option<&[u64]> {
        self.starts[k].map(|start| &self.sets[start..start + self.lens[k]])
    }

    /// Keeps record `i` of the component, with its set when given (or read here) and the
    /// budget allows.
    fn push<S: SketchStore + ?Sized>(
        &mut self,
        c: &Component<'_, S>,
        i: usize,
        set: Option<&[u64]>,
    ) -> Result<(), EngineError> {
        let ordinal = self.docs.len() as u32;
        let doc = c.docs[i] as usize;
        let len = match set {
            Some(set) => set.len(),
            None => c.sketches.set_len(doc)?,
        };
        let start = self.sets.len();
        let held = start + len <= KEPT_SET_WORDS;
        if held {
            match set {
                Some(set) => self.sets.extend_from_slice(set),
                None => SETS.with(|cell| {
                    let (read, _) = &mut *cell.borrow_mut();
                    c.sketches.read_set(doc, read)?;
                    self.sets.extend_from_slice(read);
                    trim(read);
                    Ok::<(), EngineError>(())
                })?,
            }
        }
        self.docs.push(i);
        self.lens.push(len);
        self.starts.push(held.then_some(start));
        for (band, &h) in c.row(i).iter().enumerate() {
            let link = u32::try_from(self.links.len()).map_err(|_| {
                EngineError::other(EngineErrorKind::TooManyDocuments, "too many band links")
            })?;
            let previous = self.buckets.insert(bucket_key(band, h), link).unwrap_or(NO_LINK);
            self.links.push((ordinal, previous));
        }
        Ok(())
    }
}

/// [`walk`] in one candidate component (`docs` ascending): the removed documents with the
/// kept document each duplicates and the similarity.
fn walk_component<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    rank: &[u32],
    threshold: f64,
) -> Result<(Vec<Removal>, MatchStats), EngineError> {
    let bands = sketches.bands();
    let c = Component { sketches, docs, rows: component_rows(sketches, docs)?, bands, threshold };
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_unstable_by_key(|&i| (rank[docs[i] as usize], i));
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    let mut kept = Kept::default();
    let mut removed = Vec::new();
    for chunk in order.chunks(WALK_CHUNK) {
        // Each record's set, read in parallel, then compared with the records kept before
        // the chunk (none in the first); the sets of records left undecided come back
        // (up to HELD_SET_WORDS each), so the ordered pass below does not read them again.
        let before: Vec<Result<Early, EngineError>> = chunk
            .par_iter()
            .map(|&i| {
                let mut set = Vec::new();
                c.sketches.read_set(c.docs[i] as usize, &mut set)?;
                let mut s = MatchStats::default();
                let found = if kept.docs.is_empty() {
                    None
                } else {
                    kept.first_match(&c, i, &set, &mut s)?
                };
                let held = found.is_none() && set.len() <= HELD_SET_WORDS;
                Ok((found, s, held.then_some(set)))
            })
            .collect();
        // Then in order, against the records kept within the chunk: every one of those
        // comes after every record kept before it.
        let mut within = Kept::default();
        let mut read = Vec::new();
        for (&i, result) in chunk.iter().zip(before) {
            let (mut found, s, held) = result?;
            stats.add(&s);
            let set = match (&found, held) {
                (Some(_), _) => Vec::new(),
                (None, Some(set)) => set,
                (None, None) => {
                    c.sketches.read_set(c.docs[i] as usize, &mut read)?;
                    std::mem::take(&mut read)
                }
            };
            if found.is_none() {
                found = within.first_match(&c, i, &set, &mut stats)?;
            }
            if let Some((k, j)) = found {
                stats.pairs += 1;
                removed.push((docs[i], docs[k], j));
            } else {
                within.push(&c, i, Some(&set))?;
            }
        }
        for (k, &i) in within.docs.iter().enumerate() {
            kept.push(&c, i, within.set(k))?;
        }
    }
    Ok((removed, stats))
}
