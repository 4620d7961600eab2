//! MinHash near-duplicate detection with exact verification ([`MinHashDedup`] and the
//! pieces it is made of), and the LSH banding under it: choosing bands and rows for a
//! Jaccard threshold, and batch candidate pairs, each pair once.
//!
//! # Near-duplicates in a few lines
//!
//! ```
//! use simhash_index::lsh::{Decision, MinHashDedup};
//!
//! let texts = [
//!     "MinHash estimates the Jaccard similarity of two shingle sets",
//!     "a recipe for bread: flour, water, salt and a little yeast",
//!     "MinHash estimates the Jaccard similarity of two shingle sets quickly",
//! ];
//! let mut dedup = MinHashDedup::builder().jaccard(0.5).build()?; // defaults: the CLI's
//! dedup.extend_texts(&texts)?; // in parallel; or add_text / add_shingles one at a time
//! let decisions = dedup.dedup()?; // insertion order is the priority (or dedup_by_rank)
//! assert!(decisions[0].is_keep() && decisions[1].is_keep());
//! assert!(matches!(decisions[2], Decision::Duplicate { of: 0, jaccard } if jaccard >= 0.5));
//! let pairs = dedup.pairs()?; // verified pairs with their exact Jaccard similarity
//! assert_eq!((pairs[0].a, pairs[0].b), (0, 2));
//! assert_eq!(dedup.clusters()?, [vec![0, 2], vec![1]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The engine's pieces
//!
//! [`MinHashDedup`] is a [`Sketcher`] and a [`SketchStore`] behind a builder. Front ends
//! with their own reading pipeline use the pieces: workers call [`Sketcher::sketch`] (pure,
//! `Send + Sync`) on documents in any order, one thread pushes the [`DocSketch`]es into a
//! store in document order ([`MemoryStore`], or [`SpillStore`] for corpora larger than
//! memory: band hashes and shingle sets in temporary files), then one of the searches runs
//! on rayon's current pool, with the same result at any thread count:
//!
//! - [`find_matches`]: every verified pair, to a [`MatchSink`];
//! - [`walk`]: the dedup walk, records in priority order, each kept unless it verifies
//!   against a record already kept (the first such kept record is the one it duplicates);
//! - [`components`]: the connected components of the verified pairs, as spanning edges.
//!
//! All three first collapse documents with identical shingle sets (compared whole, never by
//! a hash), and the last two work per *candidate component* (documents linked by shared
//! band hashes, found with one union per band group, so never a pair per group member
//! pair): a flood of `N` near-identical documents costs about `N × kept`, not `N²`.
//! Candidates are verified by their exact Jaccard similarity ([`similarity`]), so there are
//! no false positives. Errors are [`EngineError`]s (with the [`std::io::Error`] of a spill
//! file as their source).
//!
//! Memory per document is 17 bytes in a store (set hash, set offset, flag), and about 30
//! to 40 more while matching (the identical-set pass; a union-find, one band's column and
//! a table of its keys' first members for the candidate components; then the walk's
//! decisions: 12 bytes a document and 16 a removal); a [`SpillStore`] keeps the band hashes (32-bit, a file of per-band column
//! blocks and one of rows) and the shingle sets (8 bytes a shingle) on disk, so the LSH
//! sorts one band at a time.
//!
//! # Banding
//!
//! A signature of `bands × rows` slots (from `simhash_core::MinHasher`) is cut into `bands`
//! bands of `rows` slots, and each band is hashed (`simhash_core::band_hashes`). Two
//! documents are *candidates* when they share at least one band hash. With Jaccard
//! similarity `j`, a band agrees with probability `j^rows`, so a pair is a candidate with
//! probability `1 - (1 - j^rows)^bands` ([`Banding::probability`]), an S-curve whose steep
//! part sits near `(1 / bands)^(1 / rows)`. Candidates are then verified (by estimated or
//! exact Jaccard); LSH only decides which pairs are compared.
//!
//! # Each pair once
//!
//! A pair that shares several bands is *owned* by the first of them: the batch functions
//! emit pair `(a, b)` while scanning band `j` only if no band `i < j` has equal hashes for
//! `a` and `b`, which each band checks on its own from the band-hash matrix (no global set
//! of pairs seen). [`first_common_band`] is the same test for callers who walk the groups
//! themselves ([`for_each_band_group`]).
//!
//! # Band hashes of any width
//!
//! The batch functions take any `Copy + Ord` hash type: `u64` as `simhash_core::band_hashes`
//! writes them, or narrower truncations to save memory (`u32`: 4 bytes a band). Narrower
//! hashes only add candidates (pairs whose truncated hashes collide by chance, about
//! `n² / 2^33` per band for `u32`), never remove one: grouping and ownership use the same
//! values, so a pair is still emitted once, from the first band whose values agree. Verify
//! candidates, as any LSH user must.
//!
//! # Band keys of 32 or 64 bits
//!
//! A [`DocSketch`] holds one 32-bit key per band (its 64-bit band hash folded) and, unless
//! its [`Sketcher`] is limited to [`BandKeyWidth::Bits32`], the hashes' high halves. A
//! store chooses the width its searches group by once it knows how many documents it holds
//! ([`SketchStore::band_key_bits`]): [`band_key_bits`] of the documents and bands (64 from
//! about 1.3 billion documents at 37 bands, where 32-bit keys' chance collisions cost more
//! to verify than wider keys cost to keep), or a width forced with
//! [`MemoryStore::with_band_keys`] / [`SpillStore::with_band_keys`]. The searches see
//! 64-bit keys as 32-bit values equal exactly when the keys are (their ranks), so both
//! widths give the same verified pairs; only the candidates differ. `simhash-dist` makes the
//! same choice with the same function.
//!
//! # Cost
//!
//! Each band sorts `n` `(hash, document)` entries (16 bytes each for `u64`, one band at a
//! time), and
//! every group of `g` documents sharing a band hash costs `g (g - 1) / 2` ownership checks:
//! the work is the sum over bands of the squared group sizes. Near-identical documents by
//! the thousand make quadratic work in every band; [`for_each_band_group`] lets a caller
//! treat such groups specially (verify each member against one representative, say).
//!
//! Short documents that share a phrase do too, and they need not be near-identical: two
//! 4-shingle sets with one shingle in common (Jaccard 1/7) share a band about one time in
//! ten at the default thresholds. So [`find_matches`], [`walk`] and [`components`] find
//! the candidates of small sets (32 shingles or fewer, in a candidate component of 2,048
//! documents or more for the last two) through a prefix index instead (a shingle of the
//! other's prefix in the component's rarest-first order, as exact set-similarity joins
//! do), keeping those that share a band: the same verified pairs and decisions, without
//! listing the pairs that cannot verify. 200,000 such documents cost seconds, not minutes.
//! The prefix index holds each distinct shingle of the small sets with its count (about 20
//! bytes), and 8 bytes per prefix shingle of each indexed set (0.6 of its shingles at the
//! default threshold, sets of up to 80 shingles); it lives
//! while its component (or, for [`find_matches`], the search) does.

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;
use simhash_core::MAX_PERM;

mod components;
mod engine;
mod error;
mod keys;
mod masked;
mod scan;
mod sink;
mod sketch;
mod small;
mod store;
mod walk;

pub use components::components;
pub use engine::{
    DEFAULT_JACCARD, DEFAULT_LSH_THRESHOLD, DEFAULT_NUM_PERM, DEFAULT_SEED, Decision, MinHashDedup,
    MinHashDedupBuilder, SimilarPair,
};
pub use error::{EngineError, EngineErrorKind};
pub use keys::{BandKeyWidth, SPURIOUS_CANDIDATE_BYTES, band_key_bits};
pub use masked::Masked;
pub use scan::{find_matches, similarity};
pub use sink::{MatchSink, MatchStats};
pub use sketch::{DocSketch, Sketcher};
pub use store::{MemoryStore, SPILL_CACHE_BYTES, SetPlace, SetWriter, SketchStore, SpillStore};
pub use walk::{Walk, walk};

/// The error for an invalid LSH configuration.
///
/// Its [`Display`](fmt::Display) says what is wrong, in lowercase with no trailing period;
/// [`kind`](LshError::kind) says it as a value to match on.
#[derive(Clone, Debug, PartialEq)]
pub struct LshError {
    kind: Repr,
}

/// What is wrong with an LSH configuration; see [`LshError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LshErrorKind {
    /// The threshold is not strictly between 0 and 1.
    Threshold,
    /// The error weights are negative, not finite, or both zero.
    Weights,
    /// Bands or rows is 0.
    Empty,
    /// `bands × rows` is more than the signature holds: more than [`MAX_PERM`], the longest
    /// signature a `MinHasher` makes, or than the hasher it is paired with.
    TooLong,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Repr {
    Threshold { threshold: f64 },
    Weights { false_positive: f64, false_negative: f64 },
    Empty { bands: usize, rows: usize },
    TooLong { bands: usize, rows: usize },
    LongerThanSignature { bands: usize, rows: usize, num_perm: usize },
}

impl LshError {
    pub(crate) fn threshold(threshold: f64) -> LshError {
        LshError { kind: Repr::Threshold { threshold } }
    }

    pub(crate) fn too_long_for(banding: Banding, num_perm: usize) -> LshError {
        let Banding { bands, rows } = banding;
        LshError { kind: Repr::LongerThanSignature { bands, rows, num_perm } }
    }

    /// What is wrong.
    pub fn kind(&self) -> LshErrorKind {
        match self.kind {
            Repr::Threshold { .. } => LshErrorKind::Threshold,
            Repr::Weights { .. } => LshErrorKind::Weights,
            Repr::Empty { .. } => LshErrorKind::Empty,
            Repr::TooLong { .. } | Repr::LongerThanSignature { .. } => LshErrorKind::TooLong,
        }
    }
}

impl fmt::Display for LshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Repr::Threshold { threshold } => {
                write!(f, "threshold ({threshold}) must be strictly between 0 and 1")
            }
            Repr::Weights { false_positive, false_negative } => write!(
                f,
                "weights ({false_positive}, {false_negative}) must be finite, non-negative \
                 and not both zero"
            ),
            Repr::Empty { bands, rows } => {
                write!(f, "bands ({bands}) and rows ({rows}) must both be at least 1")
            }
            Repr::TooLong { bands, rows } => write!(
                f,
                "bands ({bands}) × rows ({rows}) must be at most {MAX_PERM}, the longest signature"
            ),
            Repr::LongerThanSignature { bands, rows, num_perm } => write!(
                f,
                "bands ({bands}) × rows ({rows}) must be at most {num_perm}, the signature length"
            ),
        }
    }
}

impl std::error::Error for LshError {}

/// How a signature is cut for LSH: `bands` bands of `rows` slots, using the first
/// `bands × rows` slots of the signature.
///
/// Build one with [`Banding::new`] or [`Banding::for_threshold`], which check that
/// `bands × rows` fits in a signature (`1..=`[`MAX_PERM`] slots); a `Banding` written as a
/// struct literal is not checked, and the batch functions panic if a signature is shorter
/// than [`num_perm`](Banding::num_perm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "BandingFields"))]
pub struct Banding {
    /// The number of bands.
    pub bands: usize,
    /// The number of slots per band.
    pub rows: usize,
}

/// What a deserialized [`Banding`] is checked from, as [`Banding::new`] checks it.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct BandingFields {
    bands: usize,
    rows: usize,
}

#[cfg(feature = "serde")]
impl TryFrom<BandingFields> for Banding {
    type Error = LshError;

    fn try_from(f: BandingFields) -> Result<Banding, LshError> {
        Banding::new(f.bands, f.rows)
    }
}

/// Points of Simpson's rule for the error integrals (even).
const SIMPSON_STEPS: usize = 128;

impl Banding {
    /// A banding of `bands` bands of `rows` slots, both at least 1, with `bands × rows` at
    /// most [`MAX_PERM`] (no `MinHasher` makes a longer signature).
    ///
    /// ```
    /// use simhash_index::{Banding, LshErrorKind};
    ///
    /// assert_eq!(Banding::new(16, 8)?.num_perm(), 128);
    /// assert_eq!(Banding::new(0, 8).unwrap_err().kind(), LshErrorKind::Empty);
    /// assert_eq!(Banding::new(1000, 1000).unwrap_err().kind(), LshErrorKind::TooLong);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(bands: usize, rows: usize) -> Result<Banding, LshError> {
        if bands == 0 || rows == 0 {
            return Err(LshError { kind: Repr::Empty { bands, rows } });
        }
        if bands.checked_mul(rows).is_none_or(|n| n > MAX_PERM) {
            return Err(LshError { kind: Repr::TooLong { bands, rows } });
        }
        Ok(Banding { bands, rows })
    }

    /// The banding with `bands × rows <= num_perm` that minimises the false-positive
    /// probability mass below `threshold` plus the false-negative mass above it, equally
    /// weighted (datasketch's `_optimal_param` with weights 0.5 and 0.5): see
    /// [`for_threshold_weighted`](Banding::for_threshold_weighted).
    ///
    /// ```
    /// use simhash_index::Banding;
    ///
    /// let b = Banding::for_threshold(0.5, 128)?;
    /// assert_eq!((b.bands, b.rows), (25, 5)); // as datasketch chooses
    /// assert!(b.probability(0.8) > 0.99 && b.probability(0.2) < 0.01);
    /// assert!(Banding::for_threshold(1.0, 128).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_threshold(threshold: f64, num_perm: usize) -> Result<Banding, LshError> {
        Banding::for_threshold_weighted(threshold, num_perm, 0.5, 0.5)
    }

    /// The banding with `bands × rows <= num_perm` that minimises
    /// `false_positive × ∫₀ᵗ P(j) dj + false_negative × ∫ₜ¹ (1 - P(j)) dj`, where `t` is
    /// `threshold` and `P` is [`probability`](Banding::probability): weight false negatives
    /// more for recall (verification removes false positives, at the cost of comparing
    /// them). Ties go to fewer bands, then fewer rows.
    ///
    /// `num_perm` is clamped to `1..=`[`MAX_PERM`], as `MinHasher::new` clamps it, so the
    /// banding always fits the signatures of a `MinHasher` built with the same `num_perm`.
    ///
    /// Errors: `threshold` not strictly between 0 and 1, or weights negative, not finite, or
    /// both zero.
    pub fn for_threshold_weighted(
        threshold: f64,
        num_perm: usize,
        false_positive: f64,
        false_negative: f64,
    ) -> Result<Banding, LshError> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(LshError { kind: Repr::Threshold { threshold } });
        }
        let num_perm = num_perm.clamp(1, MAX_PERM);
        let valid = |w: f64| w.is_finite() && w >= 0.0;
        if !valid(false_positive)
            || !valid(false_negative)
            || false_positive + false_negative == 0.0
        {
            return Err(LshError { kind: Repr::Weights { false_positive, false_negative } });
        }
        let mut best = Banding { bands: 1, rows: 1 };
        let mut best_error = f64::INFINITY;
        for bands in 1..=num_perm {
            for rows in 1..=num_perm / bands {
                let b = Banding { bands, rows };
                let fp = simpson(|j| b.probability(j), 0.0, threshold);
                let fnr = simpson(|j| 1.0 - b.probability(j), threshold, 1.0);
                let error = false_positive * fp + false_negative * fnr;
                if error < best_error {
                    best_error = error;
                    best = b;
                }
            }
        }
        Ok(best)
    }

    /// The probability that two documents of Jaccard similarity `j` share at least one band
    /// hash: `1 - (1 - j^rows)^bands`.
    pub fn probability(&self, j: f64) -> f64 {
        let rows = i32::try_from(self.rows).unwrap_or(i32::MAX);
        let bands = i32::try_from(self.bands).unwrap_or(i32::MAX);
        1.0 - (1.0 - j.powi(rows)).powi(bands)
    }

    /// The number of signature slots used: `bands × rows`.
    pub fn num_perm(&self) -> usize {
        self.bands * self.rows
    }
}

/// `∫ₐᵇ f` by Simpson's rule.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    let h = (b - a) / SIMPSON_STEPS as f64;
    let mut sum = f(a) + f(b);
    for i in 1..SIMPSON_STEPS {
        sum += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

/// A candidate pair of document positions that share a band hash: `a < b`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Candidate {
    /// The smaller position.
    pub a: u32,
    /// The larger position.
    pub b: u32,
}

/// The first band in which documents `a` and `b` have equal hashes, if any. `band_hashes`
/// is row-major, `bands` hashes per document.
///
/// ```
/// use simhash_index::first_common_band;
///
/// let m = [1, 2, 3, /* doc 1 */ 9, 2, 3];
/// assert_eq!(first_common_band(&m, 3, 0, 1), Some(1));
/// ```
pub fn first_common_band<H: Copy + Ord + Send + Sync>(
    band_hashes: &[H],
    bands: usize,
    a: usize,
    b: usize,
) -> Option<usize> {
    let ra = &band_hashes[a * bands..(a + 1) * bands];
    let rb = &band_hashes[b * bands..(b + 1) * bands];
    ra.iter().zip(rb).position(|(x, y)| x == y)
}

/// Whether the band after `earlier_a` and `earlier_b` *owns* the pair of documents that
/// share a hash in it: true when none of their earlier bands agree (`earlier_a[i] !=
/// earlier_b[i]` for every `i`). The one rule every pair search applies, so that each pair
/// is emitted once, by the first band the two documents share: [`candidate_pairs_with`] and
/// [`find_matches`] on one machine, and `simhash-dist`, whose workers each hold one band
/// group and the earlier bands of its members.
///
/// # Panics
///
/// If the two slices differ in length.
///
/// ```
/// use simhash_index::band_owns;
///
/// // Two documents sharing band 2: band 2 owns the pair unless band 0 or 1 agrees.
/// assert!(band_owns(&[1u32, 2], &[3, 4]));
/// assert!(!band_owns(&[1u32, 2], &[3, 2]));
/// assert!(band_owns::<u32>(&[], &[])); // band 0 owns every pair it groups
/// ```
pub fn band_owns<H: PartialEq>(earlier_a: &[H], earlier_b: &[H]) -> bool {
    assert_eq!(earlier_a.len(), earlier_b.len(), "rows of different bands");
    earlier_a.iter().zip(earlier_b).all(|(x, y)| x != y)
}

/// Checks the shape of a band-hash matrix; returns the number of documents.
fn documents<H: Copy + Ord + Send + Sync>(band_hashes: &[H], bands: usize) -> usize {
    assert!(bands > 0, "bands must be at least 1");
    assert!(band_hashes.len().is_multiple_of(bands), "band hashes not a multiple of bands");
    let n = band_hashes.len() / bands;
    assert!(u32::try_from(n).is_ok(), "more than u32::MAX documents");
    n
}

/// One band's `(hash, document)` entries, sorted.
fn sorted_band<H: Copy + Ord + Send + Sync>(
    band_hashes: &[H],
    bands: usize,
    n: usize,
    band: usize,
) -> Vec<(H, u32)> {
    let mut entries: Vec<(H, u32)> =
        (0..n).into_par_iter().map(|d| (band_hashes[d * bands + band], d as u32)).collect();
    entries.par_sort_unstable();
    entries
}

/// Calls `f(band, docs)` for each group of two or more documents that share a hash in one
/// band: bands in order, then groups by hash; `docs` are ascending positions. A pair
/// appears in one group per band it shares; [`first_common_band`] tells which band owns
/// it. Use it to treat huge groups specially; [`candidate_pairs_with`] does the rest.
///
/// # Panics
///
/// If `bands` is 0, `band_hashes.len()` is not a multiple of it, or there are more than
/// `u32::MAX` documents.
///
/// ```
/// use simhash_index::for_each_band_group;
///
/// // Three documents, two bands: 0 and 2 share band 0, all three share band 1.
/// let m = [7, 1, /* doc 1 */ 8, 1, /* doc 2 */ 7, 1];
/// let mut groups = Vec::new();
/// for_each_band_group(&m, 2, |band, docs| groups.push((band, docs.to_vec())));
/// assert_eq!(groups, [(0, vec![0, 2]), (1, vec![0, 1, 2])]);
/// ```
pub fn for_each_band_group<H: Copy + Ord + Send + Sync>(
    band_hashes: &[H],
    bands: usize,
    mut f: impl FnMut(usize, &[u32]),
) {
    let n = documents(band_hashes, bands);
    if n < 2 {
        return;
    }
    let mut docs = Vec::new();
    for band in 0..bands {
        let entries = sorted_band(band_hashes, bands, n, band);
        for group in entries.chunk_by(|x, y| x.0 == y.0) {
            if group.len() >= 2 {
                docs.clear();
                docs.extend(group.iter().map(|e| e.1));
                f(band, &docs);
            }
        }
    }
}

/// About how many candidate checks one unit of work does. Small in tests, so that they
/// split groups.
const UNIT_WORK: usize = if cfg!(test) { 7 } else { 1 << 16 };
/// Units per wave: the pairs of one wave are held before they are sunk.
const WAVE_UNITS: usize = if cfg!(test) { 3 } else { 64 };

/// A piece of one band's work: the entries of whole groups, or some rows of one big group
/// (each row pairs with the later members).
#[derive(Clone, Debug)]
enum Unit {
    Groups(Range<usize>),
    Rows { group: Range<usize>, rows: Range<usize> },
}

/// Splits the sorted entries of a band into units of about `UNIT_WORK` checks.
fn units<H: Copy + Ord + Send + Sync>(entries: &[(H, u32)]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut start = 0; // of the current run of small groups
    let mut work = 0;
    let mut at = 0;
    for group in entries.chunk_by(|x, y| x.0 == y.0) {
        let g = group.len();
        let pairs = g * (g - 1) / 2;
        let range = at..at + g;
        at += g;
        if pairs > UNIT_WORK {
            if start < range.start {
                units.push(Unit::Groups(start..range.start));
            }
            // Rows of about UNIT_WORK pairs each: row r has g - 1 - r partners.
            let mut lo = 0;
            while lo + 1 < g {
                let mut hi = lo;
                let mut w = 0;
                while hi + 1 < g && w < UNIT_WORK {
                    w += g - 1 - hi;
                    hi += 1;
                }
                units.push(Unit::Rows { group: range.clone(), rows: lo..hi });
                lo = hi;
            }
            start = range.end;
            work = 0;
        } else {
            work += g + pairs;
            if work >= UNIT_WORK {
                units.push(Unit::Groups(start..range.end));
                start = range.end;
                work = 0;
            }
        }
    }
    if start < entries.len() {
        units.push(Unit::Groups(start..entries.len()));
    }
    units
}

/// The earlier bands' hashes of some entries of a band, in the order of those entries, so
/// that the ownership test reads them by position.
struct Loaded<H> {
    /// `width` hashes per entry.
    rows: Vec<H>,
    width: usize,
}

impl<H: Copy> Loaded<H> {
    /// Loads the rows of `docs` (in entry order) through `earlier`, which takes them in
    /// ascending order.
    fn load<E>(
        docs: &[u32],
        band: usize,
        earlier: &impl Fn(&[u32], usize, &mut Vec<H>) -> Result<(), E>,
    ) -> Result<Loaded<H>, E> {
        if band == 0 || docs.is_empty() {
            return Ok(Loaded { rows: Vec::new(), width: band });
        }
        let mut order: Vec<u32> = (0..docs.len() as u32).collect();
        order.sort_unstable_by_key(|&i| docs[i as usize]);
        let sorted: Vec<u32> = order.iter().map(|&i| docs[i as usize]).collect();
        let mut by_doc = Vec::with_capacity(docs.len() * band);
        earlier(&sorted, band, &mut by_doc)?;
        assert_eq!(by_doc.len(), docs.len() * band, "earlier() wrote the wrong number of hashes");
        let mut rank = vec![0usize; docs.len()];
        for (k, &i) in order.iter().enumerate() {
            rank[i as usize] = k;
        }
        let mut rows = Vec::with_capacity(by_doc.len());
        for &k in &rank {
            rows.extend_from_slice(&by_doc[k * band..(k + 1) * band]);
        }
        Ok(Loaded { rows, width: band })
    }

    fn row(&self, i: usize) -> &[H] {
        &self.rows[i * self.width..(i + 1) * self.width]
    }
}

/// Emits the pairs of `rows` of one group (sorted by document) that `band` owns; the
/// group's entry `i` has its earlier bands at `loaded.row(base + i)`.
fn pair_rows<H: Copy + Ord + Send + Sync>(
    loaded: &Loaded<H>,
    base: usize,
    group: &[(H, u32)],
    rows: Range<usize>,
    out: &mut Vec<Candidate>,
) {
    for r in rows {
        let a = group[r].1;
        let ra = loaded.row(base + r);
        for (j, &(_, b)) in group.iter().enumerate().skip(r + 1) {
            let rb = loaded.row(base + j);
            if band_owns(ra, rb) {
                out.push(Candidate { a, b });
            }
        }
    }
}

/// Emits the candidate pairs that `band` owns, from its sorted entries, in batches to `sink`
/// (the same batches at any thread count). The earlier bands' hashes are loaded per unit of
/// work, for the documents of its groups only, and once for each group too big for one
/// unit (whose units are consecutive), so memory stays bounded by the units in flight.
fn scan_band<H: Copy + Ord + Send + Sync, E: Send>(
    band: usize,
    entries: &[(H, u32)],
    earlier: &(impl Fn(&[u32], usize, &mut Vec<H>) -> Result<(), E> + Sync),
    sink: &mut impl FnMut(&[Candidate]),
) -> Result<(), E> {
    let units = units(entries);
    // Huge groups loaded so far, kept while their units last.
    let mut huge: Vec<(Range<usize>, Loaded<H>)> = Vec::new();
    for wave in units.chunks(WAVE_UNITS) {
        let in_wave = |r: &Range<usize>| {
            wave.iter().any(|u| matches!(u, Unit::Rows { group, .. } if group == r))
        };
        huge.retain(|(r, _)| in_wave(r));
        for unit in wave {
            if let Unit::Rows { group, .. } = unit
                && !huge.iter().any(|(r, _)| r == group)
            {
                let docs: Vec<u32> = entries[group.clone()].iter().map(|e| e.1).collect();
                huge.push((group.clone(), Loaded::load(&docs, band, earlier)?));
            }
        }
        let outs: Vec<Result<Vec<Candidate>, E>> = wave
            .par_iter()
            .map(|unit| {
                let mut out = Vec::new();
                match unit {
                    Unit::Groups(range) => {
                        let groups = || {
                            entries[range.clone()]
                                .chunk_by(|x, y| x.0 == y.0)
                                .filter(|g| g.len() > 1)
                        };
                        let docs: Vec<u32> = groups().flatten().map(|e| e.1).collect();
                        let loaded = Loaded::load(&docs, band, earlier)?;
                        let mut base = 0;
                        for group in groups() {
                            pair_rows(&loaded, base, group, 0..group.len() - 1, &mut out);
                            base += group.len();
                        }
                    }
                    Unit::Rows { group, rows } => {
                        let loaded = huge
                            .iter()
                            .find(|(r, _)| r == group)
                            .map(|(_, l)| l)
                            .expect("huge groups of the wave are loaded");
                        pair_rows(loaded, 0, &entries[group.clone()], rows.clone(), &mut out);
                    }
                }
                Ok(out)
            })
            .collect();
        for out in outs {
            let out = out?;
            if !out.is_empty() {
                sink(&out);
            }
        }
    }
    Ok(())
}

/// Calls `sink` with batches of every pair of documents `(a, b)`, `a < b`, that share at
/// least one band hash, each pair exactly once (from the first band it shares).
///
/// `band_hashes` is row-major: document `d`'s hashes are `band_hashes[d * bands..(d + 1) *
/// bands]`, as `simhash_core::band_hashes` writes them. `sink` runs on the calling thread;
/// the work runs on rayon's current thread pool, and the batches and their order are the
/// same for any number of threads. Memory: the input, and what
/// [`candidate_pairs_from_columns`] needs (it runs the same scan). Leave featureless
/// documents out (or give them unique hashes): their signatures all agree.
///
/// # Panics
///
/// If `bands` is 0, `band_hashes.len()` is not a multiple of it, or there are more than
/// `u32::MAX` documents.
///
/// ```
/// use simhash_index::candidate_pairs_with;
///
/// let m = [7, 1, /* doc 1 */ 8, 1, /* doc 2 */ 7, 1];
/// let mut pairs = Vec::new();
/// candidate_pairs_with(&m, 2, |batch| pairs.extend(batch.iter().map(|c| (c.a, c.b))));
/// assert_eq!(pairs, [(0, 2), (0, 1), (1, 2)]); // (0, 2) once, from band 0
/// ```
pub fn candidate_pairs_with<H: Copy + Ord + Send + Sync>(
    band_hashes: &[H],
    bands: usize,
    sink: impl FnMut(&[Candidate]),
) {
    let n = documents(band_hashes, bands);
    let row = |d: u32| &band_hashes[d as usize * bands..(d as usize + 1) * bands];
    let scan: Result<(), std::convert::Infallible> = candidate_pairs_from_columns(
        n,
        bands,
        |band| Ok((0..n).into_par_iter().map(|d| band_hashes[d * bands + band]).collect()),
        |docs, band, out| {
            for &d in docs {
                out.extend_from_slice(&row(d)[..band]);
            }
            Ok(())
        },
        sink,
    );
    match scan {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// [`candidate_pairs_with`] for band hashes kept outside memory (in files, say), one band at
/// a time: the same pairs in the same batches.
///
/// `column(band)` returns that band's hash for each of the `n` documents. `earlier(docs,
/// band, out)` appends the first `band` hashes of each of `docs` (ascending, unique) to
/// `out` (empty on entry), row after row: it is called for the documents that share a hash
/// with another in the band being scanned (`band > 0`), one unit of work at a time, from
/// rayon's worker threads. The first error a callback returns stops the scan and is
/// returned.
///
/// Memory: one band's column and entries (`n` × (2 × size of `H` + 4) bytes at the peak,
/// with padding), the earlier bands of the documents of the units in flight (a few tens of
/// thousands of documents each, but all `g` members of a group too big for one unit, `g ×
/// band` hashes), and the pairs of a wave of work: a few million, except with groups of more
/// than about 65,000 documents, where a unit is one member's `g - 1` pairs and a wave 64 of
/// them (512 MB at `g` = 1M). Such groups cost `g² / 2` checks anyway: collapse exact
/// duplicates before banding.
///
/// # Panics
///
/// If `bands` is 0, a column is not `n` long, `earlier` writes a wrong number of hashes, or
/// `n` exceeds `u32::MAX`.
///
/// ```
/// use simhash_index::{candidate_pairs_from_columns, candidate_pairs_with};
///
/// let m: [u64; 6] = [7, 1, /* doc 1 */ 8, 1, /* doc 2 */ 7, 1];
/// let (n, bands) = (3, 2);
/// let mut pairs = Vec::new();
/// candidate_pairs_from_columns(
///     n,
///     bands,
///     |band| Ok::<_, std::io::Error>((0..n).map(|d| m[d * bands + band]).collect()),
///     |docs, band, out| {
///         for &d in docs {
///             out.extend_from_slice(&m[d as usize * bands..d as usize * bands + band]);
///         }
///         Ok(())
///     },
///     |batch| pairs.extend(batch.iter().map(|c| (c.a, c.b))),
/// )?;
/// let mut from_matrix = Vec::new();
/// candidate_pairs_with(&m, bands, |batch| from_matrix.extend(batch.iter().map(|c| (c.a, c.b))));
/// assert_eq!(pairs, from_matrix);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn candidate_pairs_from_columns<H: Copy + Ord + Send + Sync, E: Send>(
    n: usize,
    bands: usize,
    mut column: impl FnMut(usize) -> Result<Vec<H>, E>,
    earlier: impl Fn(&[u32], usize, &mut Vec<H>) -> Result<(), E> + Sync,
    mut sink: impl FnMut(&[Candidate]),
) -> Result<(), E> {
    assert!(bands > 0, "bands must be at least 1");
    assert!(u32::try_from(n).is_ok(), "more than u32::MAX documents");
    if n < 2 {
        return Ok(());
    }
    for band in 0..bands {
        let hashes = column(band)?;
        assert_eq!(hashes.len(), n, "band {band}: the column must hold one hash per document");
        let mut entries: Vec<(H, u32)> =
            hashes.into_iter().enumerate().map(|(d, h)| (h, d as u32)).collect();
        entries.par_sort_unstable();
        scan_band(band, &entries, &earlier, &mut sink)?;
    }
    Ok(())
}

/// Every candidate pair, sorted by `(a, b)`; see [`candidate_pairs_with`].
///
/// ```
/// use simhash_core::{MinHasher, band_hashes};
/// use simhash_index::{Banding, Candidate, candidate_pairs};
///
/// let mh = MinHasher::new(128, 0);
/// let banding = Banding::for_threshold(0.5, mh.num_perm())?;
/// let sets = [0..100u64, 5..100, 1000..1100];
/// let mut matrix = vec![0u64; sets.len() * banding.bands];
/// for (set, row) in sets.iter().zip(matrix.chunks_mut(banding.bands)) {
///     let sig = mh.signature(set.clone()).unwrap();
///     band_hashes(&sig, banding.bands, banding.rows, row);
/// }
/// assert_eq!(candidate_pairs(&matrix, banding.bands), [Candidate { a: 0, b: 1 }]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn candidate_pairs<H: Copy + Ord + Send + Sync>(
    band_hashes: &[H],
    bands: usize,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    candidate_pairs_with(band_hashes, bands, |batch| out.extend_from_slice(batch));
    out.par_sort_unstable();
    out
}

mod online;

pub use online::{JaccardHit, MINHASH_INDEX_SEED, MinHashIndex};

#[cfg(test)]
mod dedup_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;
