//! LSH banding over MinHash signatures: choosing bands and rows for a Jaccard threshold, and
//! batch candidate pairs, each pair once.
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
//! # Cost
//!
//! Each band sorts `n` `(hash, document)` entries (16 bytes each for `u64`, one band at a
//! time), and
//! every group of `g` documents sharing a band hash costs `g (g - 1) / 2` ownership checks:
//! the work is the sum over bands of the squared group sizes. Near-identical documents by
//! the thousand make quadratic work in every band; [`for_each_band_group`] lets a caller
//! treat such groups specially (verify each member against one representative, say).

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;

/// The error for an invalid LSH configuration.
///
/// Its [`Display`](fmt::Display) says what is wrong, in lowercase with no trailing period.
#[derive(Clone, Debug, PartialEq)]
pub struct LshError {
    kind: LshErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LshErrorKind {
    Threshold { threshold: f64 },
    NoPermutations,
    Weights { false_positive: f64, false_negative: f64 },
    Empty { bands: usize, rows: usize },
}

impl fmt::Display for LshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LshErrorKind::Threshold { threshold } => {
                write!(f, "threshold ({threshold}) must be strictly between 0 and 1")
            }
            LshErrorKind::NoPermutations => f.write_str("num_perm must be at least 1"),
            LshErrorKind::Weights { false_positive, false_negative } => write!(
                f,
                "weights ({false_positive}, {false_negative}) must be finite, non-negative \
                 and not both zero"
            ),
            LshErrorKind::Empty { bands, rows } => {
                write!(f, "bands ({bands}) and rows ({rows}) must both be at least 1")
            }
        }
    }
}

impl std::error::Error for LshError {}

/// How a signature is cut for LSH: `bands` bands of `rows` slots, using the first
/// `bands × rows` slots of the signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Banding {
    /// The number of bands.
    pub bands: usize,
    /// The number of slots per band.
    pub rows: usize,
}

/// Points of Simpson's rule for the error integrals (even).
const SIMPSON_STEPS: usize = 128;

impl Banding {
    /// A banding of `bands` bands of `rows` slots, both at least 1.
    pub fn new(bands: usize, rows: usize) -> Result<Banding, LshError> {
        if bands == 0 || rows == 0 {
            return Err(LshError { kind: LshErrorKind::Empty { bands, rows } });
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
    /// Errors: `threshold` not strictly between 0 and 1, `num_perm` 0, or weights negative,
    /// not finite, or both zero.
    pub fn for_threshold_weighted(
        threshold: f64,
        num_perm: usize,
        false_positive: f64,
        false_negative: f64,
    ) -> Result<Banding, LshError> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(LshError { kind: LshErrorKind::Threshold { threshold } });
        }
        if num_perm == 0 {
            return Err(LshError { kind: LshErrorKind::NoPermutations });
        }
        let valid = |w: f64| w.is_finite() && w >= 0.0;
        if !valid(false_positive)
            || !valid(false_negative)
            || false_positive + false_negative == 0.0
        {
            return Err(LshError {
                kind: LshErrorKind::Weights { false_positive, false_negative },
            });
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

/// Where the hashes of the bands before the one being scanned are read, to decide which
/// band owns a pair.
trait EarlierBands<H>: Sync {
    /// At least the first `band` hashes of `doc`.
    fn row(&self, doc: u32) -> &[H];
}

/// The whole row-major matrix.
struct Matrix<'a, H> {
    hashes: &'a [H],
    bands: usize,
}

impl<H: Sync> EarlierBands<H> for Matrix<'_, H> {
    fn row(&self, doc: u32) -> &[H] {
        let d = doc as usize;
        &self.hashes[d * self.bands..(d + 1) * self.bands]
    }
}

/// The earlier bands of the documents in this band's groups only, loaded for the band.
struct Loaded<H> {
    /// Sorted, unique.
    docs: Vec<u32>,
    /// `width` hashes per document of `docs`.
    rows: Vec<H>,
    width: usize,
}

impl<H: Sync> EarlierBands<H> for Loaded<H> {
    fn row(&self, doc: u32) -> &[H] {
        match self.docs.binary_search(&doc) {
            Ok(i) => &self.rows[i * self.width..(i + 1) * self.width],
            Err(_) => unreachable!("document {doc} is in no group of this band"),
        }
    }
}

/// Emits the pairs of `rows` of one group (sorted by document) that `band` owns.
fn pair_rows<H: Copy + Ord + Send + Sync>(
    earlier: &impl EarlierBands<H>,
    band: usize,
    group: &[(H, u32)],
    rows: Range<usize>,
    out: &mut Vec<Candidate>,
) {
    for r in rows {
        let a = group[r].1;
        let ra = &earlier.row(a)[..band];
        for &(_, b) in &group[r + 1..] {
            let rb = &earlier.row(b)[..band];
            if ra.iter().zip(rb).all(|(x, y)| x != y) {
                out.push(Candidate { a, b });
            }
        }
    }
}

/// Emits the candidate pairs that `band` owns, from its sorted entries, in batches to `sink`
/// (the same batches at any thread count).
fn scan_band<H: Copy + Ord + Send + Sync>(
    band: usize,
    entries: &[(H, u32)],
    earlier: &impl EarlierBands<H>,
    sink: &mut impl FnMut(&[Candidate]),
) {
    let units = units(entries);
    for wave in units.chunks(WAVE_UNITS) {
        let outs: Vec<Vec<Candidate>> = wave
            .par_iter()
            .map(|unit| {
                let mut out = Vec::new();
                match unit {
                    Unit::Groups(range) => {
                        for group in entries[range.clone()].chunk_by(|x, y| x.0 == y.0) {
                            let rows = 0..group.len().saturating_sub(1);
                            pair_rows(earlier, band, group, rows, &mut out);
                        }
                    }
                    Unit::Rows { group, rows } => {
                        let group = &entries[group.clone()];
                        pair_rows(earlier, band, group, rows.clone(), &mut out);
                    }
                }
                out
            })
            .collect();
        for out in &outs {
            if !out.is_empty() {
                sink(out);
            }
        }
    }
}

/// Calls `sink` with batches of every pair of documents `(a, b)`, `a < b`, that share at
/// least one band hash, each pair exactly once (from the first band it shares).
///
/// `band_hashes` is row-major: document `d`'s hashes are `band_hashes[d * bands..(d + 1) *
/// bands]`, as `simhash_core::band_hashes` writes them. `sink` runs on the calling thread;
/// the work runs on rayon's current thread pool, and the batches and their order are the
/// same for any number of threads. Memory: the input, 16 bytes per document for the band
/// being scanned, and the pairs of a wave of work (a few million). Leave featureless
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
    mut sink: impl FnMut(&[Candidate]),
) {
    let n = documents(band_hashes, bands);
    if n < 2 {
        return;
    }
    let matrix = Matrix { hashes: band_hashes, bands };
    for band in 0..bands {
        let entries = sorted_band(band_hashes, bands, n, band);
        scan_band(band, &entries, &matrix, &mut sink);
    }
}

/// [`candidate_pairs_with`] for band hashes kept outside memory (in files, say), one band at
/// a time: the same pairs in the same batches.
///
/// `column(band)` returns that band's hash for each of the `n` documents. `earlier(docs,
/// band, out)` writes the first `band` hashes of each of `docs` (ascending, unique) to `out`
/// (cleared first), row after row; it is called once per band with `band > 0`, for the
/// documents that share that band's hash with another document. Memory: one band's column
/// and entries (`n` × (size of `H` + 4) bytes), the earlier bands of the documents in
/// groups, and the pairs of a wave of work. The first error either callback returns stops
/// the scan and is returned.
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
pub fn candidate_pairs_from_columns<H: Copy + Ord + Send + Sync, E>(
    n: usize,
    bands: usize,
    mut column: impl FnMut(usize) -> Result<Vec<H>, E>,
    mut earlier: impl FnMut(&[u32], usize, &mut Vec<H>) -> Result<(), E>,
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
        let mut docs: Vec<u32> = Vec::new();
        for group in entries.chunk_by(|x, y| x.0 == y.0) {
            if group.len() >= 2 {
                docs.extend(group.iter().map(|e| e.1));
            }
        }
        docs.par_sort_unstable();
        let mut rows = Vec::new();
        if band > 0 && !docs.is_empty() {
            earlier(&docs, band, &mut rows)?;
            assert_eq!(rows.len(), docs.len() * band, "earlier() wrote the wrong number of hashes");
        }
        let loaded = Loaded { docs, rows, width: band };
        scan_band(band, &entries, &loaded, &mut sink);
    }
    Ok(())
}

/// Every candidate pair, sorted by `(a, b)`; see [`candidate_pairs_with`].
///
/// ```
/// use simhash_core::{MinHasher, band_hashes};
/// use simhash_index::{Banding, Candidate, candidate_pairs};
///
/// let mh = MinHasher::new(128, 0)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_errors_stop_the_scan() {
        let m = [1u64, 2, 1, 2, 1, 2];
        let r = candidate_pairs_from_columns(
            3,
            2,
            |band| {
                if band == 1 { Err("disk") } else { Ok(vec![m[band], m[2 + band], m[4 + band]]) }
            },
            |_, _, _| Ok(()),
            |_| {},
        );
        assert_eq!(r, Err("disk"));
        let r = candidate_pairs_from_columns(
            3,
            2,
            |band| Ok(vec![m[band], m[2 + band], m[4 + band]]),
            |_, _, _| Err("rows"),
            |_| {},
        );
        assert_eq!(r, Err("rows"));
    }

    #[test]
    fn narrow_hashes_only_add_candidates() {
        // u64 hashes whose low bytes collide often when truncated to u8.
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 40 * 0x0101_0101_0101_0100 + x % 7
        };
        let (n, bands) = (300, 4);
        let wide: Vec<u64> = (0..n * bands).map(|_| next()).collect();
        let narrow: Vec<u8> = wide.iter().map(|&h| h as u8).collect();
        let (w, t) = (candidate_pairs(&wide, bands), candidate_pairs(&narrow, bands));
        assert!(t.len() > w.len(), "the test should make narrow collisions");
        assert!(w.iter().all(|c| t.binary_search(c).is_ok()));
        let mut unique = t.clone();
        unique.dedup();
        assert_eq!(unique.len(), t.len(), "a pair emitted twice");
    }

    fn brute(m: &[u64], bands: usize) -> Vec<Candidate> {
        let n = m.len() / bands;
        let mut out = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if first_common_band(m, bands, a, b).is_some() {
                    out.push(Candidate { a: a as u32, b: b as u32 });
                }
            }
        }
        out
    }

    /// Batches at 1 and 3 threads.
    fn batches(m: &[u64], bands: usize, threads: usize) -> Vec<Vec<Candidate>> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut out = Vec::new();
        pool.install(|| candidate_pairs_with(m, bands, |b| out.push(b.to_vec())));
        out
    }

    /// The batches of [`candidate_pairs_from_columns`] over the same matrix.
    fn column_batches(m: &[u64], bands: usize, threads: usize) -> Vec<Vec<Candidate>> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let n = m.len() / bands;
        let mut out = Vec::new();
        let mut asked = 0;
        pool.install(|| {
            candidate_pairs_from_columns(
                n,
                bands,
                |band| Ok::<_, ()>((0..n).map(|d| m[d * bands + band]).collect()),
                |docs, band, rows| {
                    asked += docs.len();
                    assert!(docs.windows(2).all(|w| w[0] < w[1]), "docs not ascending");
                    for &d in docs {
                        rows.extend_from_slice(&m[d as usize * bands..d as usize * bands + band]);
                    }
                    Ok(())
                },
                |b| out.push(b.to_vec()),
            )
        })
        .unwrap();
        assert!(asked <= n * bands);
        out
    }

    fn check(m: &[u64], bands: usize) {
        let one = batches(m, bands, 1);
        assert_eq!(one, batches(m, bands, 3), "output depends on the thread count");
        assert_eq!(one, column_batches(m, bands, 1), "columns and matrix differ");
        assert_eq!(one, column_batches(m, bands, 3), "columns and matrix differ");
        let mut all: Vec<Candidate> = one.concat();
        let emitted = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), emitted, "a pair emitted twice");
        assert_eq!(all, brute(m, bands));
        assert_eq!(candidate_pairs(m, bands), all);
        // The groups cover the same pairs.
        let mut from_groups = Vec::new();
        for_each_band_group(m, bands, |band, docs| {
            assert!(docs.windows(2).all(|w| w[0] < w[1]));
            for (i, &a) in docs.iter().enumerate() {
                for &b in &docs[i + 1..] {
                    if first_common_band(m, bands, a as usize, b as usize) == Some(band) {
                        from_groups.push(Candidate { a, b });
                    }
                }
            }
        });
        from_groups.sort_unstable();
        assert_eq!(from_groups, all);
    }

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn candidates_match_brute_force() {
        let mut rng = Rng(1);
        // Random hashes from small alphabets, so bands collide often.
        for (n, bands, alphabet) in
            [(200, 4, 20), (150, 8, 6), (60, 1, 3), (90, 3, 2), (40, 16, 40)]
        {
            let m: Vec<u64> = (0..n * bands).map(|_| rng.next() % alphabet).collect();
            check(&m, bands);
        }
        // Edge sizes.
        check(&[], 4);
        check(&[1, 2, 3, 4], 4);
        check(&[5, 5], 1);
        // All identical: every pair, owned by band 0.
        let m = vec![9u64; 50 * 5];
        check(&m, 5);
        assert_eq!(candidate_pairs(&m, 5).len(), 50 * 49 / 2);
        // Groups of duplicates plus near-duplicates that share only a later band.
        let mut m = Vec::new();
        for d in 0..120u64 {
            let group = d % 7;
            for band in 0..6u64 {
                let shared = band >= 4 || d % 3 == 0;
                m.push(if shared { group * 100 + band } else { rng.next() });
            }
        }
        check(&m, 6);
    }

    #[test]
    fn units_cover_every_row() {
        // One huge group, split by rows, with small groups around it.
        let mut entries: Vec<(u64, u32)> = (0..40).map(|d| (5, d)).collect();
        entries.insert(0, (1, 100));
        entries.extend([(7, 101), (7, 102), (9, 103)]);
        let units = units(&entries);
        let mut rows = 0;
        let mut covered = Vec::new();
        for u in &units {
            match u {
                Unit::Groups(r) => covered.push(r.clone()),
                Unit::Rows { group, rows: r } => {
                    assert_eq!(group.clone(), 1..41);
                    assert_eq!(r.start, rows);
                    rows = r.end;
                }
            }
        }
        assert_eq!(rows, 39);
        assert_eq!(covered, [0..1, 41..44]);
    }

    #[test]
    fn banding_for_thresholds() {
        // datasketch's _optimal_param at 128 permutations (0.5 / 0.5 weights).
        // (Computed with a fine numerical integral in place of scipy's quad.)
        let want = [(37, 3), (32, 4), (25, 5), (18, 7), (14, 9), (9, 13), (5, 25)];
        for (t, want) in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].into_iter().zip(want) {
            let b = Banding::for_threshold(t, 128).unwrap();
            assert_eq!((b.bands, b.rows), want, "threshold {t}");
            assert!(b.probability(t) > 0.2 && b.probability(t) < 0.8, "{t}: {b:?}");
        }
        for t in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] {
            let b = Banding::for_threshold(t, 128).unwrap();
            // The curve is steep around the threshold.
            assert!(b.probability((t + 0.2).min(1.0)) > 0.9, "{t}: {b:?}");
            assert!(b.probability((t - 0.2).max(0.0)) < 0.1, "{t}: {b:?}");
        }
        // Weighting false negatives more moves the curve left.
        let even = Banding::for_threshold(0.5, 128).unwrap();
        let recall = Banding::for_threshold_weighted(0.5, 128, 0.1, 0.9).unwrap();
        assert!(recall.probability(0.5) > even.probability(0.5));
        assert_eq!(Banding::for_threshold(0.5, 1).unwrap(), Banding { bands: 1, rows: 1 });
    }

    #[test]
    fn bad_configurations_are_errors() {
        for t in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            let e = Banding::for_threshold(t, 128).unwrap_err();
            assert!(e.to_string().contains("strictly between 0 and 1"), "{e}");
        }
        let e = Banding::for_threshold(0.5, 0).unwrap_err();
        assert_eq!(e.to_string(), "num_perm must be at least 1");
        for (fp, fnr) in [(0.0, 0.0), (-1.0, 1.0), (f64::NAN, 1.0), (1.0, f64::INFINITY)] {
            assert!(Banding::for_threshold_weighted(0.5, 128, fp, fnr).is_err());
        }
        assert!(Banding::new(0, 3).is_err());
        assert_eq!(Banding::new(4, 3).unwrap().num_perm(), 12);
    }

    #[test]
    #[should_panic(expected = "not a multiple of bands")]
    fn ragged_matrix_panics() {
        candidate_pairs(&[1, 2, 3], 2);
    }
}
