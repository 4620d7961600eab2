//! The dedup walk: records in priority order, each kept unless it verifies against a record
//! already kept.

use std::collections::HashMap;

use rayon::prelude::*;

use super::buffers::{reserve_within, trim};
use super::own::{KeptWindows, Owned};
use super::scan::{
    Collapsed, FirstByKey, SETS, candidate_components, collapse_identical, component_rows,
};
use super::small::{Lookup, MixHasher, PROBE_MAX, SmallSets, is_flood};
use super::{
    ADDED_WORDS, EngineError, EngineErrorKind, MatchStats, OWN_WORDS, Prepared, Relation,
    SketchStore, Templates,
};

/// A removed document, the kept one it duplicates, their Jaccard similarity and relation.
type Removal = (u32, u32, f64, Relation);

/// What the dedup walk decided: for each document, the kept record it duplicates
/// (`center[d] == d` when `d` is kept) and, when removed, the Jaccard similarity to it
/// (0 for kept documents) and their [`Relation`] ([`Relation::Same`] for kept documents).
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    /// The kept document each document duplicates (itself when kept).
    pub center: Vec<u32>,
    /// The Jaccard similarity of each removed document to its kept one.
    pub jaccard: Vec<f64>,
    /// The relation of each removed document to its kept one: [`Relation::Same`] or,
    /// unless template siblings are kept, [`Relation::Template`].
    pub relation: Vec<Relation>,
}

/// One band's buckets: by band hash, the last link of the bucket's chain in the band's
/// links (one allocation for all buckets, not a vector each).
type Buckets = HashMap<u32, u32, std::hash::BuildHasherDefault<MixHasher>>;

/// One band of a [`Kept`]'s index: its buckets, and their members (a kept ordinal and the
/// link of the bucket's previous member, [`NO_LINK`] for its first).
type BandIndex = (Buckets, Vec<(u32, u32)>);

/// The end of a bucket's chain.
const NO_LINK: u32 = u32::MAX;

/// The dedup walk: documents in priority order (`rank[d]`, lowest first; equal ranks in
/// document order), each kept unless an already kept document shares a band hash with it,
/// has a Jaccard similarity of at least `threshold` to it, and is in a [`Relation`] to it
/// that `templates` acts on ([`Templates::acts_on`]: never [`Relation::Overlap`], a
/// document with content of its own); then it is removed as a duplicate of the first such
/// kept document in priority order. Documents with identical shingle sets and tokens
/// follow the first of them in priority order (they would be decided alike). No two kept
/// documents that share a band hash verify in a relation acted on, and every removed
/// document verifies against its kept one. Documents without a sketch are kept.
///
/// Each candidate component is walked on its own (in parallel, the largest first; the
/// outcome does not depend on the thread count), with an index of its kept documents' band hashes: a
/// document is compared with the kept documents it shares a band with, in priority order,
/// until one verifies. A flood of `N` near-duplicates with `K` kept costs about `N × K`.
/// In a large component, small sets find the kept documents they share a band with and
/// can verify against through a prefix index instead (see the [module](super)'s "Cost"),
/// so short documents sharing a phrase stay near-linear; the decisions are the same.
///
/// The store must be [finished](SketchStore::finish). Errors: `rank` not one per document
/// ([`EngineErrorKind::Mismatch`]), or the store's.
pub fn walk<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    rank: &[u32],
    templates: Templates,
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
    let pool = Pool::new(KEPT_SET_WORDS);
    let walk = |docs: &[u32]| walk_component(sketches, docs, rank, threshold, templates, &pool);
    let results = largest_first(&components, walk);
    let mut center: Vec<u32> = (0..n as u32).collect();
    let mut jaccard = vec![0.0; n];
    let mut relation = vec![Relation::Same; n];
    let mut stats = MatchStats { duplicates: duplicates.len() as u64, ..MatchStats::default() };
    for result in results {
        let (removed, s) = result?;
        stats.add(&s);
        for (doc, kept, j, r) in removed {
            center[doc as usize] = kept;
            jaccard[doc as usize] = j;
            relation[doc as usize] = r;
        }
    }
    // A document identical to its group's representative is decided as it is (the same
    // text, when the representative is kept).
    for (doc, rep) in duplicates {
        let (c, j, r) = (center[rep as usize], jaccard[rep as usize], relation[rep as usize]);
        if c == rep {
            center[doc as usize] = rep;
            jaccard[doc as usize] = 1.0;
        } else {
            center[doc as usize] = c;
            jaccard[doc as usize] = j;
            relation[doc as usize] = r;
        }
    }
    Ok((Walk { center, jaccard, relation }, stats))
}

/// `walk` of every component, the largest first, each taken by the next thread free: the
/// largest components, which bound the walk's time, start at once and the small ones fill
/// the other threads (within a component, its parallel passes take the threads left idle).
/// In the components' order; the outcome does not depend on which thread walked what.
fn largest_first<T: Send + Sync>(
    components: &[Vec<u32>],
    walk: impl Fn(&[u32]) -> Result<T, EngineError> + Sync,
) -> Vec<Result<T, EngineError>> {
    let mut order: Vec<usize> = (0..components.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(components[i].len()), i));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::OnceLock<Result<T, EngineError>>> =
        components.iter().map(|_| std::sync::OnceLock::new()).collect();
    let threads = rayon::current_num_threads().clamp(1, components.len().max(1));
    rayon::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|_| {
                loop {
                    let taken = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&i) = order.get(taken) else { break };
                    // Each component is taken once: its slot is empty.
                    let _ = slots[i].set(walk(&components[i]));
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner().unwrap_or_else(|| {
                Err(EngineError::other(EngineErrorKind::Mismatch, "a component was not walked"))
            })
        })
        .collect()
}

/// Records of a candidate component decided together by the walk: each is compared in
/// parallel with the records kept before the chunk, then the chunk is settled in order
/// among the records kept within it. 1,024: the ordered pass is then a small part of a
/// large component's time, and the sets a chunk holds (below) stay small while several
/// large components are walked at once. Small in tests, so that they cover many chunks.
const WALK_CHUNK: usize = if cfg!(test) { 7 } else { 1024 };

/// The largest set of an undecided record that the parallel pass of a chunk hands to the
/// ordered pass (larger ones are read again there): with [`WALK_CHUNK`] records, at most
/// 8 MiB a chunk and a quarter more for their bitmaps. Small in tests, so that they cover
/// both.
const HELD_SET_WORDS: usize = if cfg!(test) { 6 } else { 1024 };

/// What the parallel pass of a chunk finds for a record: its match among the records kept
/// before the chunk, the counts, and its set and bitmap when it is undecided and small
/// enough.
struct Early {
    found: Option<Match>,
    stats: MatchStats,
    held: Option<(Vec<u64>, Bits)>,
    /// The size of the record's set.
    len: usize,
    /// Its band candidates, when it is small and was looked up in the band buckets.
    band_candidates: usize,
    /// Whether it was known to be kept without listing its candidates (see
    /// [`LINKS_BEFORE_OWN`]).
    unlisted: bool,
}

/// A record's bitmap ([`simhash_core::set_bits`]), made when first needed.
#[derive(Default)]
struct Bits {
    words: Vec<u64>,
    crowded: Option<usize>,
}

impl Bits {
    /// The bitmap of `set` (the record's, made from it the first time).
    fn of(&mut self, set: &[u64]) -> simhash_core::SetBits<'_> {
        let crowded = *self.crowded.get_or_insert_with(|| {
            self.words.clear();
            simhash_core::set_bits(set, &mut self.words)
        });
        simhash_core::SetBits { words: &self.words, crowded }
    }
}

/// A kept record (component position) that a record verifies against, their Jaccard
/// similarity and their relation.
type Match = (usize, f64, Relation);

/// A component's documents and their band hashes, as the walk reads them.
struct Component<'a, S: ?Sized> {
    sketches: &'a S,
    docs: &'a [u32],
    rows: Vec<u32>,
    bands: usize,
    threshold: f64,
    templates: Templates,
}

impl<S: SketchStore + ?Sized> Component<'_, S> {
    /// The relation of record `i` to kept record `k` (component positions), `mine` holding
    /// `i`'s tokens once read and prepared (for all of its candidates); `runs`, when
    /// given, as [`Prepared::relation_runs`] gives them.
    fn relation(
        &self,
        i: usize,
        k: usize,
        mine: &mut Option<Prepared>,
        runs: Option<&mut Vec<std::ops::Range<usize>>>,
    ) -> Result<Relation, EngineError> {
        if mine.is_none() {
            let mut tokens = Vec::new();
            self.sketches.read_tokens(self.docs[i] as usize, &mut tokens)?;
            *mine = Some(Prepared::new(tokens));
        }
        let mine = mine.get_or_insert_with(Prepared::default);
        KEPT_TOKENS.with(|cell| {
            let mut kept = cell.borrow_mut();
            self.sketches.read_tokens(self.docs[k] as usize, &mut kept)?;
            let r = match runs {
                Some(runs) => mine.relation_runs(&kept, runs),
                None => mine.relation(&kept),
            };
            trim(&mut kept);
            Ok(r)
        })
    }

    fn row(&self, i: usize) -> &[u32] {
        &self.rows[i * self.bands..(i + 1) * self.bands]
    }

    /// Whether records `i` and `j` of the component share a band hash (in the same band).
    fn share_band(&self, i: usize, j: usize) -> bool {
        self.row(i).iter().zip(self.row(j)).any(|(a, b)| a == b)
    }
}

/// The candidates of record `i` of the component (whose set is `set`) among the kept
/// ordinals from `from` on, ascending and distinct, into `out`: those sharing a band hash
/// with it (`bands` lists them from the band buckets) that can verify. A small set's are
/// found through the component's [`SmallSets`], when it has one, which holds every kept
/// set that can reach the threshold with a small one; every kept set is in the band
/// buckets, for the others. True when found through the [`SmallSets`].
#[allow(clippy::too_many_arguments)]
fn candidates_of<S: SketchStore + ?Sized>(
    c: &Component<'_, S>,
    small: Option<&SmallSets>,
    kept: &Kept,
    i: usize,
    set: &[u64],
    from: u32,
    bands: impl FnOnce(&mut Vec<u32>),
    out: &mut Vec<u32>,
) -> bool {
    if let Some(small) = small.filter(|small| small.lookup(set.len()) == Lookup::Prefix) {
        let mut scratch = Vec::new();
        small.candidates(set, from, true, &mut scratch, out);
        out.retain(|&k| c.share_band(i, kept.docs[k as usize]));
        true
    } else {
        bands(out);
        false
    }
}

/// Which kept ordinals [`Kept::candidates`] has listed for the record it is listing them
/// for: the number of its call, per ordinal, the last call that listed it (4 bytes a kept
/// record of the largest component a thread has walked, kept for the next).
#[derive(Default)]
struct Listed {
    call: u32,
    at: Vec<u32>,
}

impl Listed {
    /// A new call, for ordinals below `ordinals` (others are always listed).
    fn start(&mut self, ordinals: usize) {
        self.call = self.call.wrapping_add(1);
        if self.call == 0 {
            self.at.fill(0);
            self.call = 1;
        }
        if self.at.len() < ordinals {
            self.at.resize(ordinals, 0);
        }
    }

    /// Whether `ordinal` is listed for the first time in this call.
    fn first(&mut self, ordinal: u32) -> bool {
        match self.at.get_mut(ordinal as usize) {
            Some(last) if *last == self.call => false,
            Some(last) => {
                *last = self.call;
                true
            }
            None => true,
        }
    }
}

thread_local! {
    /// The kept ordinals listed by [`Kept::candidates`], reused.
    static LISTED: std::cell::RefCell<Listed> = std::cell::RefCell::new(Listed::default());
    /// The tokens of a kept record read for a relation, reused.
    static KEPT_TOKENS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The bitmap of the record being compared that is tested value by value against sets
    /// read from the store, reused.
    static FILTER: std::cell::RefCell<simhash_core::SetFilter> =
        std::cell::RefCell::new(simhash_core::SetFilter::default());
}

/// Words of kept records' sets and their bitmaps that the [`Kept`]s of the components
/// walked at once hold in memory together (56 MiB, a [`Pool`]), so that the records
/// compared with them are not read back again and again (past it, sets are read from the
/// store for each comparison). Small in tests, so that they cover both.
const KEPT_SET_WORDS: usize = if cfg!(test) { 40 } else { 7 << 20 };

/// The words a [`Kept`] takes from its [`Pool`] at a time (512 KiB), or what a set needs
/// when more.
const GRANT_WORDS: usize = if cfg!(test) { 8 } else { 1 << 16 };

/// The words of [`KEPT_SET_WORDS`] not held by a component's [`Kept`]: the components
/// walked at once (the largest first, on every thread) share it, so that together they
/// hold no more than one would alone. Which sets are held, and so read again from the
/// store, depends on the threads' timing; the decisions do not.
struct Pool(std::sync::atomic::AtomicUsize);

impl Pool {
    fn new(words: usize) -> Pool {
        Pool(std::sync::atomic::AtomicUsize::new(words))
    }

    /// Takes `words` from the pool: false, and nothing taken, when fewer are left.
    fn take(&self, words: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.fetch_update(Relaxed, Relaxed, |left| left.checked_sub(words)).is_ok()
    }

    /// Gives `words` back.
    fn give(&self, words: usize) {
        self.0.fetch_add(words, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Words of the sets of records kept within a chunk that a [`Recent`] holds (8 MiB) when
/// the [`Kept`] holds no more: with [`KEPT_SET_WORDS`], at most 64 MiB for one component.
/// Small in tests, so that they cover both.
const RECENT_SET_WORDS: usize = if cfg!(test) { 40 } else { 1 << 20 };

/// Records times bands below which [`Kept::index_new`] and [`ChunkIndex::new`] work on
/// the calling thread (most components are a few records). Small in tests, so that they
/// cover both.
const PARALLEL_BAND_WORK: usize = if cfg!(test) { 40 } else { 1 << 12 };

/// Kept records (component positions, in the order they were kept, which is priority
/// order); an index of the band hashes of those kept before the current chunk, one map
/// per band, listing kept ordinals; the size of each one's shingle set, and the set
/// itself with its bitmap ([`simhash_core::set_bits`], a quarter of the set's memory)
/// while its [`Pool`] allows (what it took is given back when it is dropped).
#[derive(Default)]
struct Kept<'p> {
    /// The budget its sets and bitmaps are held within, and the words taken from it.
    pool: Option<&'p Pool>,
    granted: usize,
    docs: Vec<usize>,
    /// Per band, its index.
    bands: Vec<BandIndex>,
    /// The kept ordinals in `bands`: those kept before the current chunk.
    indexed: usize,
    lens: Vec<usize>,
    /// Where each kept record's set starts in `sets`, when it is held.
    starts: Vec<Option<usize>>,
    sets: Vec<u64>,
    /// Where each kept record's bitmap starts in `bits` and its set's crowded values
    /// ([`simhash_core::set_bits`]'s count; with a bitmap only when the set is held).
    bit_starts: Vec<(usize, usize)>,
    bits: Vec<u64>,
}

/// The sets of the records kept within the current chunk (kept ordinals from `from` on)
/// that the [`Kept`] does not hold, while they fit in [`RECENT_SET_WORDS`] (read from the
/// store past it).
#[derive(Default)]
struct Recent {
    from: usize,
    sets: Vec<Option<Vec<u64>>>,
    words: usize,
}

impl Recent {
    /// The set of kept ordinal `k`, when held here.
    fn set(&self, k: usize) -> Option<&[u64]> {
        self.sets.get(k.checked_sub(self.from)?)?.as_deref()
    }

    /// Keeps the set of the next kept ordinal, unless the [`Kept`] holds it or the budget
    /// is spent.
    fn push(&mut self, set: Vec<u64>, held_by_kept: bool) {
        let held = !held_by_kept && self.words + set.len() <= RECENT_SET_WORDS;
        if held {
            self.words += set.len();
        }
        self.sets.push(held.then_some(set));
    }
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if let Some(pool) = self.pool {
            pool.give(self.granted);
        }
    }
}

impl Kept<'_> {
    /// Whether `words` more fit in what this [`Kept`] took from its pool, taking more (a
    /// grant of [`GRANT_WORDS`], or what `words` needs) when they do not.
    fn fits(&mut self, words: usize) -> bool {
        let needed = (self.sets.len() + self.bits.len() + words).saturating_sub(self.granted);
        if needed == 0 {
            return true;
        }
        let Some(pool) = self.pool else { return false };
        for grant in [needed.max(GRANT_WORDS), needed] {
            if pool.take(grant) {
                self.granted += grant;
                return true;
            }
        }
        false
    }

    /// The kept ordinals in the index (kept before the current chunk) that share a band
    /// hash with record `i` of the component, ascending and distinct, into `out`; false,
    /// and `out` empty, when their bands' buckets hold more than `links` links (a kept
    /// record counts once in each bucket it shares with the record).
    fn candidates<S: SketchStore + ?Sized>(
        &self,
        c: &Component<'_, S>,
        i: usize,
        out: &mut Vec<u32>,
        links: usize,
    ) -> bool {
        out.clear();
        let mut left = links;
        // A kept record sharing many bands (a large component's records share most of
        // their boilerplate) is in many buckets: listed once, so that only distinct
        // ordinals are sorted.
        let listed_all = LISTED.with(|cell| {
            let listed = &mut *cell.borrow_mut();
            listed.start(self.indexed);
            for ((buckets, chain), h) in self.bands.iter().zip(c.row(i)) {
                let mut link = buckets.get(h).copied().unwrap_or(NO_LINK);
                while link != NO_LINK {
                    let Some(fewer) = left.checked_sub(1) else { return false };
                    left = fewer;
                    let (ordinal, previous) = chain[link as usize];
                    if listed.first(ordinal) {
                        out.push(ordinal);
                    }
                    link = previous;
                }
            }
            true
        });
        if !listed_all {
            out.clear();
            return false;
        }
        out.sort_unstable();
        out.dedup();
        true
    }

    /// The first of `candidates` (kept ordinals, ascending: priority order) whose Jaccard
    /// similarity to `set` (record `i`'s) is at least the threshold and whose relation to it
    /// the walk acts on; counts into `stats` (with the verified pairs it does not act on).
    ///
    /// Each candidate counts as verified; those whose set sizes rule them out
    /// ([`simhash_core::jaccard_min_common`]) are not read, and the others are compared by
    /// [`simhash_core::jaccard_at_least`] (the exact similarity when it is reached). With
    /// several candidates, a bound on the shared count rules out most of those that fall
    /// short first: from the two bitmaps ([`simhash_core::common_at_most`]) for a set held
    /// here, from the record's bitmap ([`simhash_core::SetFilter`]) for another.
    ///
    /// `tokens`: the record's, when already read ([`Prepared`]; read at its first
    /// relation otherwise). `own`, when given, holds the windows of every candidate: after
    /// the first relation not acted on, a record with content of its own that none of them
    /// has ([`Prepared::own_beyond`](super::relation::Prepared::own_beyond)) is compared no
    /// further (no candidate can act on it); otherwise, when that relation found runs of
    /// content of its own, a later candidate whose windows cannot hold enough of them
    /// ([`Prepared::overlaps`](super::relation::Prepared::overlaps)) is not compared
    /// (counted in [`MatchStats::own_skipped`]).
    #[allow(clippy::too_many_arguments)]
    fn first_match<S: SketchStore + ?Sized>(
        &self,
        c: &Component<'_, S>,
        i: usize,
        set: &[u64],
        bits: &mut Bits,
        candidates: &[u32],
        recent: &Recent,
        own: Option<&Owned>,
        mut tokens: Option<Prepared>,
        stats: &mut MatchStats,
    ) -> Result<Option<Match>, EngineError> {
        stats.candidates += candidates.len() as u64;
        if candidates.is_empty() {
            return Ok(None);
        }
        SETS.with(|cell| {
            FILTER.with(|filter| {
                let mut guard = cell.borrow_mut();
                let (_, other) = &mut *guard;
                let filter = &mut *filter.borrow_mut();
                // Only with several candidates are the bitmaps worth making; each is made
                // when first needed.
                let filtered = candidates.len() > 1;
                let mut filter_made = false;
                let mut found = None;
                let mut first_spared = true;
                // The record's own runs against the first kept record it overlaps, when its
                // own words made that relation.
                let mut runs = Vec::new();
                for &k in candidates {
                    let k = k as usize;
                    stats.verified += 1;
                    let Some(needed) =
                        simhash_core::jaccard_min_common(set.len(), self.lens[k], c.threshold)
                    else {
                        continue;
                    };
                    let kept_set =
                        if let (Some(kept_set), Some(kept_bits)) = (self.set(k), self.bits(k)) {
                            if filtered {
                                let most = simhash_core::common_at_most(bits.of(set), kept_bits);
                                if most < needed {
                                    continue;
                                }
                            }
                            if !first_spared && own_overlaps(own, tokens.as_ref(), &runs, k) {
                                stats.own_skipped += 1;
                                continue;
                            }
                            kept_set
                        } else {
                            if !first_spared && own_overlaps(own, tokens.as_ref(), &runs, k) {
                                stats.own_skipped += 1;
                                continue;
                            }
                            let kept_set = if let Some(kept_set) = recent.set(k) {
                                kept_set
                            } else {
                                c.sketches.read_set(c.docs[self.docs[k]] as usize, other)?;
                                &other[..]
                            };
                            if filtered {
                                if !filter_made {
                                    filter.fill(set);
                                    filter_made = true;
                                }
                                if !filter.may_share(kept_set, needed) {
                                    continue;
                                }
                            }
                            kept_set
                        };
                    if let Some(j) = simhash_core::jaccard_at_least(set, kept_set, c.threshold) {
                        // Only the first overlap's runs are kept.
                        let runs_out = first_spared.then_some(&mut runs);
                        let relation = c.relation(i, self.docs[k], &mut tokens, runs_out)?;
                        if c.templates.acts_on(relation) {
                            found = Some((self.docs[k], j, relation));
                            break;
                        }
                        stats.spared += 1;
                        if std::mem::take(&mut first_spared)
                            && let Some(own) = own
                            && tokens
                                .as_ref()
                                .is_some_and(|mine| mine.known_to_overlap(&own.all, &own.ends))
                        {
                            stats.known_kept += 1;
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

    /// The bitmap of kept ordinal `k`'s set, when the set is held.
    fn bits(&self, k: usize) -> Option<simhash_core::SetBits<'_>> {
        self.starts[k].map(|_| {
            let (start, crowded) = self.bit_starts[k];
            let words = &self.bits[start..start + simhash_core::set_bits_words(self.lens[k])];
            simhash_core::SetBits { words, crowded }
        })
    }

    /// Keeps record `i` of the component with its set (held while the budget allows; its
    /// band hashes join the index at the next [`Kept::index_new`]); true when the set is
    /// held.
    fn push(&mut self, i: usize, set: &[u64], bits: &mut Bits) -> bool {
        let start = self.sets.len();
        let words = set.len() + simhash_core::set_bits_words(set.len());
        let held = self.fits(words);
        let bit_start = self.bits.len();
        let mut crowded = 0;
        if held {
            // Within the whole budget, not doubled past it (what is not written is not
            // memory used).
            let whole = KEPT_SET_WORDS.max(self.granted);
            reserve_within(&mut self.sets, set.len(), whole.saturating_sub(self.bits.len()));
            self.sets.extend_from_slice(set);
            let record = bits.of(set);
            let left = whole.saturating_sub(self.sets.len());
            reserve_within(&mut self.bits, record.words.len(), left);
            self.bits.extend_from_slice(record.words);
            crowded = record.crowded;
        }
        self.bit_starts.push((bit_start, crowded));
        self.docs.push(i);
        self.lens.push(set.len());
        self.starts.push(held.then_some(start));
        held
    }

    /// Adds the band hashes of the records kept since the last call to the index: a band
    /// at a time, the bands in parallel (each band's chains in kept order).
    fn index_new<S: SketchStore + ?Sized>(
        &mut self,
        c: &Component<'_, S>,
    ) -> Result<(), EngineError> {
        let Kept { docs, bands, indexed, .. } = self;
        if bands.is_empty() {
            bands.resize_with(c.bands, Default::default);
        }
        let first = *indexed;
        let new = &docs[first..];
        let index_band = |(band, (buckets, links)): (usize, &mut BandIndex)| {
            for (o, &i) in new.iter().enumerate() {
                let link = u32::try_from(links.len()).map_err(|_| {
                    EngineError::other(EngineErrorKind::TooManyDocuments, "too many band links")
                })?;
                let previous = buckets.insert(c.row(i)[band], link).unwrap_or(NO_LINK);
                links.push(((first + o) as u32, previous));
            }
            Ok::<(), EngineError>(())
        };
        if new.len() * c.bands < PARALLEL_BAND_WORK {
            bands.iter_mut().enumerate().try_for_each(index_band)?;
        } else {
            bands.par_iter_mut().enumerate().try_for_each(index_band)?;
        }
        *indexed = docs.len();
        Ok(())
    }
}

/// The band hashes of a chunk's undecided records (numbered in chunk order), grouped, and
/// the records kept so far in each group: the ordered pass finds the records kept within
/// the chunk that share a band hash with a record through it, without a map.
struct ChunkIndex {
    records: usize,
    bands: usize,
    /// `group[band * records + r]`: the group of record `r` in `band`, numbered by the
    /// band and the group's first record (`band * records + first`).
    group: Vec<u32>,
    /// Per group, the last link of its chain in `links` ([`NO_LINK`] when empty).
    heads: Vec<u32>,
    /// A kept ordinal and the link of its group's previous one.
    links: Vec<(u32, u32)>,
}

impl ChunkIndex {
    /// Groups the band hashes of `undecided` (component positions), a band at a time,
    /// the bands in parallel.
    fn new<S: SketchStore + ?Sized>(c: &Component<'_, S>, undecided: &[usize]) -> ChunkIndex {
        let (records, bands) = (undecided.len(), c.bands);
        let mut group = vec![0u32; bands * records];
        if records > 0 {
            let group_band = |first: &mut FirstByKey, (band, out): (usize, &mut [u32])| {
                first.clear();
                for (r, &i) in undecided.iter().enumerate() {
                    // At most WALK_CHUNK records and MAX_PERM bands: within u32.
                    out[r] = (band * records) as u32 + first.first(c.row(i)[band], r as u32);
                }
            };
            if records * bands < PARALLEL_BAND_WORK {
                let mut first = FirstByKey::new(records);
                group.chunks_mut(records).enumerate().for_each(|x| group_band(&mut first, x));
            } else {
                group
                    .par_chunks_mut(records)
                    .enumerate()
                    .for_each_init(|| FirstByKey::new(records), group_band);
            }
        }
        ChunkIndex {
            records,
            bands,
            group,
            heads: vec![NO_LINK; bands * records],
            links: Vec::new(),
        }
    }

    /// The kept ordinals in record `r`'s groups, ascending and distinct, into `out`.
    fn candidates(&self, r: usize, out: &mut Vec<u32>) {
        out.clear();
        for band in 0..self.bands {
            let mut link = self.heads[self.group[band * self.records + r] as usize];
            while link != NO_LINK {
                let (ordinal, previous) = self.links[link as usize];
                out.push(ordinal);
                link = previous;
            }
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Record `r` is kept, as kept ordinal `ordinal`.
    fn keep(&mut self, r: usize, ordinal: u32) {
        for band in 0..self.bands {
            let g = self.group[band * self.records + r] as usize;
            // At most WALK_CHUNK records a chunk, each linked once a band: within u32.
            let link = self.links.len() as u32;
            self.links.push((ordinal, self.heads[g]));
            self.heads[g] = link;
        }
    }
}

/// [`walk`] in one candidate component (`docs` ascending): the removed documents with the
/// kept document each duplicates and the similarity.
fn walk_component<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    rank: &[u32],
    threshold: f64,
    templates: Templates,
    pool: &Pool,
) -> Result<(Vec<Removal>, MatchStats), EngineError> {
    let bands = sketches.bands();
    let rows = component_rows(sketches, docs)?;
    let c = Component { sketches, docs, rows, bands, threshold, templates };
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_unstable_by_key(|&i| (rank[docs[i] as usize], i));
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    // Small sets find their candidates through a prefix index once their band candidates
    // show a flood (see `Flood`).
    let mut small: Option<SmallSets> = None;
    let mut flood = Flood::default();
    let mut scratch = Vec::new();
    let mut kept = Kept::default();
    kept.pool = Some(pool);
    let mut removed = Vec::new();
    let no_recent = Recent::default();
    // The kept records' windows, once relations spare records (see `own`).
    let mut own: Option<Owned> = None;
    let mut tokens = Vec::new();
    for chunk in order.chunks(WALK_CHUNK) {
        // Each record's set, read in parallel, then compared with the records kept before
        // the chunk (none in the first); the sets of records left undecided come back
        // (up to HELD_SET_WORDS each), so the ordered pass below does not read them again.
        let before: Vec<Result<Early, EngineError>> = chunk
            .par_iter()
            .map(|&i| early(&c, &kept, small.as_ref(), &no_recent, own.as_ref(), i))
            .collect();
        let before: Vec<Early> = before.into_iter().collect::<Result<_, _>>()?;
        let undecided: Vec<usize> =
            chunk.iter().zip(&before).filter(|(_, e)| e.found.is_none()).map(|(&i, _)| i).collect();
        // Then in order, against the records kept within the chunk: every one of those
        // comes after every record kept before it.
        let mut index = ChunkIndex::new(&c, &undecided);
        let mut recent = Recent { from: kept.docs.len(), ..Recent::default() };
        let (mut read, mut candidates) = (Vec::new(), Vec::new());
        let mut r = 0;
        for (&i, early) in chunk.iter().zip(before) {
            let Early { mut found, stats: s, held, len, band_candidates, unlisted } = early;
            stats.add(&s);
            flood.record(len, band_candidates, true);
            // A record known to be kept against the records kept before the chunk counts
            // once, whatever the comparisons with those kept within it find.
            let known_before = s.known_kept;
            if found.is_none() {
                let (set, mut bits) = if let Some(held) = held {
                    held
                } else {
                    c.sketches.read_set(c.docs[i] as usize, &mut read)?;
                    (std::mem::take(&mut read), Bits::default())
                };
                // A record kept unlisted against the records kept before the chunk is asked
                // again, against those kept within it too, before they are listed.
                let mut mine = None;
                let known_within = match &own {
                    Some(own) if unlisted => {
                        c.sketches.read_tokens(c.docs[i] as usize, &mut tokens)?;
                        mine.insert(Prepared::new(std::mem::take(&mut tokens)))
                            .known_to_overlap(&own.all, &own.ends)
                    }
                    _ => false,
                };
                if !known_within {
                    let (from, bands) =
                        (recent.from as u32, |out: &mut Vec<u32>| index.candidates(r, out));
                    let small = small.as_ref();
                    if !candidates_of(&c, small, &kept, i, &set, from, bands, &mut candidates) {
                        flood.record(set.len(), candidates.len(), false);
                    }
                    let known = stats.known_kept;
                    found = kept.first_match(
                        &c,
                        i,
                        &set,
                        &mut bits,
                        &candidates,
                        &recent,
                        own.as_ref(),
                        mine.take(),
                        &mut stats,
                    )?;
                    if known_before > 0 && stats.known_kept > known {
                        stats.known_kept = known;
                    }
                }
                if found.is_none() {
                    let ordinal = kept.docs.len() as u32;
                    index.keep(r, ordinal);
                    if let Some(small) = &mut small {
                        small.insert(&set, ordinal, &mut scratch)?;
                    }
                    if let Some(own) = &mut own {
                        if let Some(mine) = &mine {
                            own.keep(mine.tokens());
                        } else {
                            c.sketches.read_tokens(c.docs[i] as usize, &mut tokens)?;
                            own.keep(&tokens);
                        }
                    }
                    let held_by_kept = kept.push(i, &set, &mut bits);
                    recent.push(set, held_by_kept);
                    if let Some(own) = &mut own {
                        if stats.unlisted >= UNLISTED_SPARSE && !own.all.is_sparse() {
                            own.all.make_sparse();
                        }
                        if own.all.crowded() {
                            own.all = grown_windows(&c, &kept, own.all.grown(), &mut tokens)?;
                        }
                    }
                }
                r += 1;
            }
            if let Some((k, j, relation)) = found {
                stats.pairs += 1;
                removed.push((docs[i], docs[k], j, relation));
            }
            if own.is_none() && stats.spared >= OWN_AFTER_SPARED {
                own = Some(kept_windows(&c, &kept, &mut tokens)?);
            }
        }
        kept.index_new(&c)?;
        if small.is_none() && flood.starts() {
            small = small_sets(&c, &kept, &mut scratch)?;
        }
    }
    Ok((removed, stats))
}

/// Whether a record (`mine`, after its first relation not acted on, whose own runs there
/// are `runs`) is known to overlap kept ordinal `k` from its filter of windows: from those
/// runs first, then from all of its tokens ([`Prepared::overlaps`]).
fn own_overlaps(
    own: Option<&Owned>,
    mine: Option<&Prepared>,
    runs: &[std::ops::Range<usize>],
    k: usize,
) -> bool {
    let (Some(own), Some(mine)) = (own, mine) else {
        return false;
    };
    let Some(filter) = own.each.get(k) else {
        return false;
    };
    // OWN_WORDS make content of its own against a kept text with a token alone; one that may
    // lie wholly within this record needs ADDED_WORDS (a shorter sentence added is a variant's).
    let within = own.may_lie_within_one(k, |h| mine.has_window(h));
    let words = if within { ADDED_WORDS } else { OWN_WORDS };
    let all = 0..mine.len();
    (!runs.is_empty() && mine.overlaps(runs, filter, words))
        || mine.overlaps(std::slice::from_ref(&all), filter, words)
}

/// Links of a record's band buckets (kept records, once in each bucket they share with
/// it) past which the walk, once it keeps the windows of the component's kept records,
/// asks whether the record has content of its own none of them shares before listing its
/// candidates: such a record overlaps every kept record and is kept, so a flood of records
/// that share a boilerplate but each have content of their own (all kept) costs about one
/// look a record, not one per kept record. Below it the listing is cheaper than reading
/// the record's tokens. Small in tests, so that they cover both.
const LINKS_BEFORE_OWN: usize = if cfg!(test) { 8 } else { 4096 };

/// Records of a component known to be kept without listing their candidates (see
/// [`LINKS_BEFORE_OWN`]) past which its filter of kept windows gives each window 32 bits,
/// not 8 ([`KeptWindows::make_sparse`]): a flood of records each kept for content of its
/// own. Small in tests, so that they cover both.
const UNLISTED_SPARSE: u64 = if cfg!(test) { 4 } else { 1024 };

/// Verified pairs not acted on in a component after which the walk keeps the windows of
/// its kept records ([`KeptWindows`]), so that records with content none of them has are
/// compared no further. Small in tests, so that they cover both.
const OWN_AFTER_SPARED: u64 = if cfg!(test) { 2 } else { 64 };

/// The windows of the records kept so far in the component, in a filter sized for all of
/// its records' shingles, and each one's.
fn kept_windows<S: SketchStore + ?Sized>(
    c: &Component<'_, S>,
    kept: &Kept,
    tokens: &mut Vec<u32>,
) -> Result<Owned, EngineError> {
    let mut windows = 0usize;
    for &doc in c.docs {
        windows = windows.saturating_add(c.sketches.set_len(doc as usize)?);
    }
    let mut own = Owned::new(windows);
    for &i in &kept.docs {
        c.sketches.read_tokens(c.docs[i] as usize, tokens)?;
        own.keep(tokens);
    }
    Ok(own)
}

/// `all` (an empty [`KeptWindows`], larger than the crowded one it replaces) with the
/// windows of every record kept so far in the component.
fn grown_windows<S: SketchStore + ?Sized>(
    c: &Component<'_, S>,
    kept: &Kept,
    mut all: KeptWindows,
    tokens: &mut Vec<u32>,
) -> Result<KeptWindows, EngineError> {
    for &i in &kept.docs {
        c.sketches.read_tokens(c.docs[i] as usize, tokens)?;
        all.insert_text(tokens);
    }
    Ok(all)
}

/// The parallel pass's look at record `i` of a chunk: its set read and compared with the
/// records kept before the chunk (`small`: the component's [`SmallSets`], if it has one;
/// `own`: their windows, if kept).
fn early<S: SketchStore + ?Sized>(
    c: &Component<'_, S>,
    kept: &Kept,
    small: Option<&SmallSets>,
    no_recent: &Recent,
    own: Option<&Owned>,
    i: usize,
) -> Result<Early, EngineError> {
    let mut set = Vec::new();
    c.sketches.read_set(c.docs[i] as usize, &mut set)?;
    let (len, mut band_candidates, mut unlisted) = (set.len(), 0, false);
    let mut s = MatchStats::default();
    let mut bits = Bits::default();
    let found = if kept.docs.is_empty() {
        None
    } else {
        let mut candidates = Vec::new();
        // With the kept records' windows at hand, a record whose bands' buckets hold many
        // kept records is first asked whether it has content of its own that none of them
        // shares: then it is kept without listing them (see `LINKS_BEFORE_OWN`).
        let links = if own.is_some() { LINKS_BEFORE_OWN } else { usize::MAX };
        let mut listed_all = true;
        let bands = |out: &mut Vec<u32>| listed_all = kept.candidates(c, i, out, links);
        let banded = !candidates_of(c, small, kept, i, &set, 0, bands, &mut candidates);
        let mut mine = None;
        let known = match own {
            Some(own) if !listed_all => {
                let mut tokens = Vec::new();
                c.sketches.read_tokens(c.docs[i] as usize, &mut tokens)?;
                let prepared = mine.insert(Prepared::new(tokens));
                prepared.known_to_overlap(&own.all, &own.ends)
            }
            _ => false,
        };
        if known {
            s.known_kept += 1;
            s.unlisted += 1;
            unlisted = true;
            None
        } else {
            if !listed_all {
                kept.candidates(c, i, &mut candidates, usize::MAX);
            }
            if banded {
                band_candidates = candidates.len();
            }
            kept.first_match(c, i, &set, &mut bits, &candidates, no_recent, own, mine, &mut s)?
        }
    };
    let held = found.is_none() && set.len() <= HELD_SET_WORDS;
    if held {
        // Made here, in parallel, for the ordered pass and the Kept.
        bits.of(&set);
    }
    let held = held.then_some((set, bits));
    Ok(Early { found, stats: s, held, len, band_candidates, unlisted })
}

/// The component's [`SmallSets`], made once its small sets make a flood (none when it
/// declines), with every record kept so far inserted.
fn small_sets<S: SketchStore + ?Sized>(
    c: &Component<'_, S>,
    kept: &Kept,
    scratch: &mut Vec<(u32, u64)>,
) -> Result<Option<SmallSets>, EngineError> {
    let mut small = SmallSets::new(c.sketches, c.docs, c.threshold)?;
    if let Some(small) = &mut small {
        // Every record kept so far, as though it had been there all along.
        let mut read = Vec::new();
        for k in 0..kept.docs.len() {
            if !small.indexes(kept.lens[k]) {
                continue;
            }
            let set = if let Some(set) = kept.set(k) {
                set
            } else {
                c.sketches.read_set(c.docs[kept.docs[k]] as usize, &mut read)?;
                &read[..]
            };
            small.insert(set, k as u32, scratch)?;
        }
    }
    Ok(small)
}

/// The band candidates of a component's small sets so far: when they make a flood
/// ([`is_flood`]), the walk goes on with a [`SmallSets`] (asked once: it declines with too
/// few small sets).
#[derive(Default)]
struct Flood {
    small_sets: usize,
    candidates: usize,
    asked: bool,
}

impl Flood {
    /// A record of `len` shingles walked, looked up in the band buckets (`candidates`
    /// found there) or not; `walked` once per record.
    fn record(&mut self, len: usize, candidates: usize, walked: bool) {
        if (1..=PROBE_MAX).contains(&len) {
            self.small_sets += usize::from(walked);
            self.candidates += candidates;
        }
    }

    /// Whether to ask for a [`SmallSets`] now.
    fn starts(&mut self) -> bool {
        let start = !self.asked && is_flood(self.candidates, self.small_sets);
        self.asked |= start;
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each call lists an ordinal once, calls after the counter wraps too; ordinals past
    /// those it was started for are always listed (the caller drops repeats).
    #[test]
    fn listed_once_per_call() {
        let mut listed = Listed { call: u32::MAX - 1, at: vec![u32::MAX - 1; 2] };
        listed.start(3);
        assert!(listed.first(0) && !listed.first(0) && listed.first(2) && !listed.first(2));
        assert!(listed.first(7) && listed.first(7));
        // The counter wraps: earlier marks are cleared, not taken for this call's.
        listed.start(3);
        assert_eq!(listed.call, 1);
        assert!(listed.first(0) && !listed.first(0) && listed.first(1));
        listed.start(3);
        assert!(listed.first(0) && listed.first(1) && !listed.first(1));
    }

    /// Walked largest first, each component's result still comes back in its place,
    /// whatever the thread that walked it.
    #[test]
    fn largest_first_keeps_the_components_order() {
        let components: Vec<Vec<u32>> =
            vec![vec![1], vec![2, 3, 4], vec![5, 6], vec![], vec![7, 8, 9, 10], vec![11]];
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = pool
                .install(|| largest_first(&components, |docs| Ok::<_, EngineError>(docs.to_vec())));
            let got: Vec<Vec<u32>> = got.into_iter().map(Result::unwrap).collect();
            assert_eq!(got, components, "{threads} threads");
        }
        assert!(largest_first(&[], |_| Ok::<_, EngineError>(())).is_empty());
    }

    /// The kept sets of components walked at once come out of one budget: what one holds
    /// another cannot, a set that does not fit is not held, and each gives back what it
    /// took when dropped.
    #[test]
    fn kept_sets_share_one_pool_and_give_it_back() {
        let pool = Pool::new(100);
        let set: Vec<u64> = (0..24).collect();
        let words = set.len() + simhash_core::set_bits_words(set.len());
        {
            let (mut a, mut b) = (Kept::default(), Kept::default());
            (a.pool, b.pool) = (Some(&pool), Some(&pool));
            let held_a: Vec<bool> = (0..3).map(|i| a.push(i, &set, &mut Bits::default())).collect();
            let held_b = b.push(0, &set, &mut Bits::default());
            // 100 words hold three sets of `words` between the two, not four.
            assert!(3 * words <= 100 && 4 * words > 100, "{words} words a set");
            assert_eq!(held_a.iter().filter(|&&h| h).count() + usize::from(held_b), 3);
            assert_eq!(a.set(0), Some(&set[..]));
            assert!(a.granted + b.granted <= 100);
        }
        assert!(pool.take(100), "the budget was not given back whole");
        assert!(!pool.take(1));
    }
}
