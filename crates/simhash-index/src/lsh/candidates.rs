//! Batch candidate pairs from band hashes, each pair once (owned by the first band its two
//! documents share), and the band groups they come from.

use std::ops::Range;

use rayon::prelude::*;

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
/// use simhash_index::lsh::first_common_band;
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
/// [`find_matches`](super::find_matches) on one machine, and `simhash-dist`, whose workers each hold one band
/// group and the earlier bands of its members.
///
/// # Panics
///
/// If the two slices differ in length.
///
/// ```
/// use simhash_index::lsh::band_owns;
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
/// use simhash_index::lsh::for_each_band_group;
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
pub(super) enum Unit {
    Groups(Range<usize>),
    Rows { group: Range<usize>, rows: Range<usize> },
}

/// Splits the sorted entries of a band into units of about `UNIT_WORK` checks.
pub(super) fn units<H: Copy + Ord + Send + Sync>(entries: &[(H, u32)]) -> Vec<Unit> {
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
/// use simhash_index::lsh::candidate_pairs_with;
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
/// use simhash_index::lsh::{candidate_pairs_from_columns, candidate_pairs_with};
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
/// use simhash_index::lsh::{Banding, Candidate, candidate_pairs};
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
