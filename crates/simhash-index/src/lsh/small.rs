//! An exact search among the small shingle sets of a large candidate component, so that
//! many short documents sharing a phrase stay near-linear.
//!
//! Short documents that share a phrase share most of their few shingles' minima: at the
//! default thresholds two 4-shingle sets with one shingle in common (Jaccard 1/7) share a
//! band about one time in ten, so every band bucket holds a tenth of them and the band
//! candidates of `N` such documents are about `N² / 20` (1.24 billion for 200,000 short
//! documents), though none of them verifies.
//!
//! For a set of at most [`PROBE_MAX`] shingles, [`SmallSets`] finds instead the indexed
//! documents (the walk's kept ones; every earlier one for pairs and clusters) that can
//! reach the threshold at all, by a prefix filter (Chaudhuri, Ganti
//! and Kaushik, ICDE 2006; Bayardo, Ma and Srikant's All-Pairs, WWW 2007): order every
//! shingle by its count in the component (rarest first, ties by value), and keep of each
//! set its first `|x| - c(|x|) + 1` shingles, where `c(|x|)` is the fewest shingles any
//! set can share with it and still reach the threshold. Two sets that reach the threshold
//! share at least that many, so their prefixes share a shingle: every indexed set that
//! reaches the threshold is found by looking up the query's prefix shingles. Rare
//! shingles come first, so the lookups meet few sets; the shared phrase's shingles are
//! the most common and come last.
//!
//! Each search ([`walk`](fn@super::walk), [`find_matches`](super::find_matches),
//! [`components`](fn@super::components)) then keeps, of those, the ones that share a band
//! with the query (as the band buckets would have found them) and verifies them as it
//! verifies band candidates (the walk in priority order): the pairs and decisions are
//! exactly those of the band candidates, only found without listing the pairs that cannot
//! verify. A search turns to a [`SmallSets`] only when its small sets flood the band
//! buckets ([`is_flood`]).

use std::collections::HashMap;

use rayon::prelude::*;

use super::{EngineError, EngineErrorKind, SketchStore};

/// The largest shingle set whose matches are looked up here (in a component that
/// [`SmallSets::new`] makes one for); larger sets use the band buckets. Sets of this
/// size and less are what floods of short documents are made of.
pub(crate) const PROBE_MAX: usize = 32;

/// The fewest small sets (of [`PROBE_MAX`] shingles or fewer) a candidate component
/// needs for a [`SmallSets`]: fewer cost less than the counting pass. Small in tests, so
/// that they cover both.
const MIN_COMPONENT: usize = if cfg!(test) { 4 } else { 2048 };

/// Band pairs of small sets below which a search goes without a [`SmallSets`], and those
/// allowed each small set. Small in tests, so that they cover both.
pub(crate) const FLOOD_PAIRS: usize = if cfg!(test) { 8 } else { 1 << 20 };
/// See [`FLOOD_PAIRS`].
pub(crate) const FLOOD_PER_SET: usize = if cfg!(test) { 1 } else { 64 };

/// Whether `pairs` band pairs (or candidates) among `small_sets` small sets make a flood,
/// which a [`SmallSets`] is worth its counting pass for.
pub(crate) fn is_flood(pairs: usize, small_sets: usize) -> bool {
    pairs > FLOOD_PAIRS.saturating_add(FLOOD_PER_SET.saturating_mul(small_sets))
}

/// Whether the small sets of a search make a flood ([`is_flood`]): `small_sets` of them,
/// whose band keys `column(band)` gives (one per small set; equal keys, a shared band),
/// counted a band at a time until they do.
pub(crate) fn floods(
    small_sets: usize,
    bands: usize,
    mut column: impl FnMut(usize) -> Result<Vec<u32>, EngineError>,
) -> Result<bool, EngineError> {
    if small_sets < MIN_COMPONENT {
        return Ok(false);
    }
    let mut pairs = 0usize;
    for band in 0..bands {
        let mut keys = column(band)?;
        keys.par_sort_unstable();
        for run in keys.chunk_by(|a, b| a == b) {
            pairs = pairs.saturating_add(run.len() * (run.len() - 1) / 2);
        }
        if is_flood(pairs, small_sets) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Hashes keys that are already well mixed (shingles, band hashes) with one
/// multiplication, not SipHash: for lookups only, so no order depends on it.
#[derive(Clone, Copy, Default)]
pub(crate) struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

type Map<V> = HashMap<u64, V, std::hash::BuildHasherDefault<MixHasher>>;

/// Where a set's candidates are found ([`SmallSets::lookup`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// In the prefix index only; the set is not in the band buckets.
    Prefix,
    /// In both.
    Both,
    /// In the band buckets only.
    Bands,
}

impl Lookup {
    /// Whether the set is looked up in (and joins) the band buckets.
    pub(crate) fn bands(self) -> bool {
        self != Lookup::Prefix
    }

    /// Whether the set is looked up in the prefix index.
    pub(crate) fn prefix(self) -> bool {
        self != Lookup::Bands
    }
}

/// The end of a shingle's chain.
const NO_LINK: u32 = u32::MAX;

/// The prefix index of a candidate component's kept small sets (see the module's
/// documentation): each shingle's count in the component, and per shingle the kept
/// ordinals whose prefix holds it (a chain through `links`, newest first): one chain for the
/// small sets, one for the larger sets indexed, so that a larger set can look up the small
/// ones alone.
pub(crate) struct SmallSets {
    /// Per set size up to `index_max`, the length of its prefix.
    prefix_len: Vec<usize>,
    /// Kept sets of more shingles cannot reach the threshold with a set of [`PROBE_MAX`].
    index_max: usize,
    counts: Map<u32>,
    /// The last link of each shingle's chain: of the small sets, of the larger ones.
    heads: [Map<u32>; 2],
    /// A kept ordinal and the link of its shingle's previous one.
    links: Vec<(u32, u32)>,
}

/// The largest set that can reach `threshold` with one of [`PROBE_MAX`] shingles, and per
/// set size up to it the length of its prefix; none when sets can match with no shingle in
/// common (no prefix filter then).
fn prefix_lengths(threshold: f64) -> Option<(usize, Vec<usize>)> {
    let mut index_max = PROBE_MAX;
    while simhash_core::jaccard_min_common(PROBE_MAX, index_max + 1, threshold).is_some() {
        index_max += 1;
    }
    // A set of `len` shingles shares at least `fewest` with any set that reaches the
    // threshold with it: the fewest over the other's size (a larger other needs more, so
    // sizes up to `len` are enough).
    let mut prefix_len = vec![0; index_max + 1];
    for (len, prefix) in prefix_len.iter_mut().enumerate().skip(1) {
        let fewest = (1..=len)
            .filter_map(|other| simhash_core::jaccard_min_common(len, other, threshold))
            .min();
        match fewest {
            Some(0) => return None,
            Some(fewest) => *prefix = len - fewest + 1,
            None => *prefix = 0,
        }
    }
    Some((index_max, prefix_len))
}

impl SmallSets {
    /// The index for the component of `docs` (its documents' sets counted, none kept
    /// yet), or none when it has too few small sets to need one or the threshold lets
    /// sets match with no shingle in common.
    pub(crate) fn new<S: SketchStore + ?Sized>(
        sketches: &S,
        docs: &[u32],
        threshold: f64,
    ) -> Result<Option<SmallSets>, EngineError> {
        if docs.len() < MIN_COMPONENT {
            return Ok(None);
        }
        let small: Vec<Result<usize, EngineError>> = docs
            .par_chunks(4096)
            .map(|chunk| {
                let mut small = 0;
                for &doc in chunk {
                    small +=
                        usize::from((1..=PROBE_MAX).contains(&sketches.set_len(doc as usize)?));
                }
                Ok(small)
            })
            .collect();
        if small.into_iter().sum::<Result<usize, EngineError>>()? < MIN_COMPONENT {
            return Ok(None);
        }
        let Some((index_max, prefix_len)) = prefix_lengths(threshold) else {
            return Ok(None);
        };
        // Each shingle's count among the sets that can be indexed or looked up.
        let counted: Vec<Result<Map<u32>, EngineError>> = docs
            .par_chunks(4096)
            .map(|chunk| {
                let mut counts = Map::default();
                let mut set = Vec::new();
                for &doc in chunk {
                    if sketches.set_len(doc as usize)? > index_max {
                        continue;
                    }
                    sketches.read_set(doc as usize, &mut set)?;
                    for &shingle in &set {
                        *counts.entry(shingle).or_insert(0u32) += 1;
                    }
                }
                Ok(counts)
            })
            .collect();
        let mut counts: Map<u32> = Map::default();
        for part in counted {
            for (shingle, n) in part? {
                *counts.entry(shingle).or_insert(0) += n;
            }
        }
        Ok(Some(SmallSets {
            prefix_len,
            index_max,
            counts,
            heads: [Map::default(), Map::default()],
            links: Vec::new(),
        }))
    }

    /// The index for `sets` (the sets of [`index_max`] shingles or fewer that will be
    /// inserted, counted here for the shingles' order; none inserted yet), or none when
    /// the threshold lets sets match with no shingle in common. What the on-disk index
    /// builds over its small documents for queries that would meet a flood in its band
    /// buckets.
    pub(crate) fn of_sets<'a>(
        sets: impl IntoIterator<Item = &'a [u64]>,
        threshold: f64,
    ) -> Option<SmallSets> {
        let (index_max, prefix_len) = prefix_lengths(threshold)?;
        let mut counts: Map<u32> = Map::default();
        for set in sets {
            if set.len() <= index_max {
                for &shingle in set {
                    *counts.entry(shingle).or_insert(0) += 1;
                }
            }
        }
        Some(SmallSets {
            prefix_len,
            index_max,
            counts,
            heads: [Map::default(), Map::default()],
            links: Vec::new(),
        })
    }

    /// The largest set indexed: the largest that can reach the threshold with a set of
    /// [`PROBE_MAX`] shingles.
    pub(crate) fn index_max(&self) -> usize {
        self.index_max
    }

    /// Where the candidates of a set of `len` shingles are found: a small set's only here
    /// (it is not in the band buckets, where it would meet the flood), a larger one's that
    /// can still reach the threshold with a small set both here and in the band buckets,
    /// the others' only in the band buckets.
    pub(crate) fn lookup(&self, len: usize) -> Lookup {
        if (1..=PROBE_MAX).contains(&len) {
            Lookup::Prefix
        } else if len <= self.index_max {
            Lookup::Both
        } else {
            Lookup::Bands
        }
    }

    /// The prefix of `set` (see the module's documentation), into `out`: each shingle
    /// with its count.
    pub(crate) fn prefix(&self, set: &[u64], out: &mut Vec<(u32, u64)>) {
        out.clear();
        let len = self.prefix_len.get(set.len()).copied().unwrap_or(0);
        out.extend(set.iter().map(|&s| (self.counts.get(&s).copied().unwrap_or(0), s)));
        out.sort_unstable();
        out.truncate(len);
    }

    /// Whether a set of `len` shingles is indexed by [`insert`](SmallSets::insert) (it can
    /// reach the threshold with a small set).
    pub(crate) fn indexes(&self, len: usize) -> bool {
        (1..=self.index_max).contains(&len)
    }

    /// Indexes `set` as kept ordinal `ordinal` (ordinals given in ascending order), when
    /// it is small enough to reach the threshold with a looked-up set.
    pub(crate) fn insert(
        &mut self,
        set: &[u64],
        ordinal: u32,
        scratch: &mut Vec<(u32, u64)>,
    ) -> Result<(), EngineError> {
        if !self.indexes(set.len()) {
            return Ok(());
        }
        let chain = usize::from(set.len() > PROBE_MAX);
        self.prefix(set, scratch);
        for &(_, shingle) in scratch.iter() {
            let link = u32::try_from(self.links.len()).ok().filter(|&l| l != NO_LINK).ok_or_else(
                || EngineError::other(EngineErrorKind::TooManyDocuments, "too many prefix links"),
            )?;
            let previous = self.heads[chain].insert(shingle, link).unwrap_or(NO_LINK);
            self.links.push((ordinal, previous));
        }
        Ok(())
    }

    /// The kept ordinals from `from` on whose prefix shares a shingle with the prefix of
    /// `set` (whose [`lookup`](SmallSets::lookup) says so), ascending and distinct, into `out`:
    /// every kept set indexed here that reaches the threshold with `set` is among them (of
    /// the small sets only, unless `larger`).
    pub(crate) fn candidates(
        &self,
        set: &[u64],
        from: u32,
        larger: bool,
        scratch: &mut Vec<(u32, u64)>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        self.prefix(set, scratch);
        let chains = if larger { &self.heads[..] } else { &self.heads[..1] };
        for heads in chains {
            for &(_, shingle) in scratch.iter() {
                let mut link = heads.get(&shingle).copied().unwrap_or(NO_LINK);
                while link != NO_LINK {
                    let (ordinal, previous) = self.links[link as usize];
                    if ordinal < from {
                        break;
                    }
                    out.push(ordinal);
                    link = previous;
                }
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}
