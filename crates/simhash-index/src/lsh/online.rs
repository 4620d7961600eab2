//! The online MinHash index: insert, remove and query feature sets one at a time, with
//! candidates from LSH banding and exact Jaccard verification (datasketch's and gaoya's
//! `MinHashLSH`, verified).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use simhash_core::{MinHasher, jaccard};

use crate::lsh::{Banding, LshError, Sketcher};

/// A match of [`MinHashIndex::query`]: a stored id and its exact Jaccard similarity to the
/// query.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JaccardHit<I = u64> {
    /// The id the set was inserted with.
    pub id: I,
    /// The exact Jaccard similarity `|A ∩ B| / |A ∪ B|` of the query's and the stored set.
    pub jaccard: f64,
}

/// A stored set: its id, its shingle set (sorted, deduplicated) and its band hashes
/// (empty for an empty set, which is in no bucket).
#[derive(Clone)]
struct Stored<I> {
    id: I,
    set: Box<[u64]>,
    bands: Box<[u32]>,
}

/// A mutable MinHash LSH index over sets of 64-bit features (shingle hashes): insert,
/// remove, and find the stored sets whose Jaccard similarity to a query is at least the
/// threshold.
///
/// # What a query returns
///
/// Candidates come from LSH exactly as in the batch engine
/// ([`MinHashDedup`](crate::lsh::MinHashDedup), with the same [`Sketcher`]): each set's [`MinHasher`]
/// signature is cut into [`Banding`]`.bands` bands of `rows` slots, each band hashed and
/// folded to 32 bits, and the stored sets sharing at least one band hash with the query (at
/// the same band) are its candidates (a chance collision of the folded hashes only adds a
/// candidate, which verification drops). Each candidate is then
/// verified by its **exact** Jaccard similarity, computed from the stored shingle sets. So
/// [`query`](MinHashIndex::query) returns exactly the stored sets that share a band bucket
/// with the query **and** have Jaccard similarity `>=` the threshold: never a false
/// positive. A set of similarity `j` shares a bucket with probability
/// [`Banding::probability`]`(j)`, `1 - (1 - j^rows)^bands`; that is the recall, and the
/// banding [`new`](MinHashIndex::new) picks makes it close to 1 above the threshold (0.9999
/// at `j = 0.8` for threshold 0.5 and 128 slots). A set with no features is stored but
/// matches nothing, itself included.
///
/// Ids are any `Clone + Eq + Hash + Ord` type, as for the Hamming [`Index`](crate::Index);
/// inserting an id again replaces its set. Hits come by similarity (highest first), then id.
///
/// # Costs
///
/// Insert and remove cost the signature (`O(features)`), one hash-map update per band, and
/// for remove a scan of each of the set's buckets. A query costs the signature, one lookup
/// per band, and one exact Jaccard (a merge of two sorted sets) per distinct candidate.
/// Memory per set: 8 bytes per distinct feature, 12 per band, and the id twice.
///
/// ```
/// use simhash_core::Fingerprinter;
/// use simhash_index::lsh::MinHashIndex;
///
/// let fingerprinter = Fingerprinter::new();
/// let features = |text: &str| {
///     let mut hashes = Vec::new();
///     fingerprinter.for_each_feature(text, |h, _| hashes.push(h));
///     hashes
/// };
/// let mut seen: MinHashIndex<&str> = MinHashIndex::new(0.5, 128)?;
/// seen.insert("a", features("the quick brown fox jumps over the lazy dog by the river bank"));
/// seen.insert("b", features("an entirely different sentence about cooking pasta at home"));
/// let hits = seen.query(features("the quick brown fox jumps over the lazy dog by the river"));
/// assert_eq!(hits.len(), 1);
/// assert_eq!(hits[0].id, "a");
/// assert!(hits[0].jaccard >= 0.5);
/// seen.remove("a");
/// assert!(seen.query(features("the quick brown fox jumps over the lazy dog")).is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct MinHashIndex<I = u64> {
    /// The batch engine's sketcher, so that both find the same candidates.
    sketcher: Sketcher,
    threshold: f64,
    slots: Vec<Option<Stored<I>>>,
    free: Vec<u32>,
    by_id: HashMap<I, u32>,
    /// One map per band: band hash -> the slots whose set has it.
    buckets: Vec<HashMap<u32, Vec<u32>>>,
}

/// A summary, not the entries.
#[allow(clippy::missing_fields_in_debug)] // on purpose: the entries are what it leaves out
impl<I> fmt::Debug for MinHashIndex<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MinHashIndex")
            .field("len", &self.by_id.len())
            .field("threshold", &self.threshold)
            .field("num_perm", &self.sketcher.minhasher().num_perm())
            .field("bands", &self.sketcher.banding().bands)
            .field("rows", &self.sketcher.banding().rows)
            .finish()
    }
}

/// The seed of the [`MinHasher`] that [`MinHashIndex::new`] builds.
pub const MINHASH_INDEX_SEED: u64 = 0;

impl<I: Clone + Eq + Hash + Ord> MinHashIndex<I> {
    /// An empty index returning the sets of Jaccard similarity `>= threshold`, over
    /// signatures of `num_perm` slots (clamped to `1..=MAX_PERM`, as [`MinHasher::new`]
    /// clamps it; seed [`MINHASH_INDEX_SEED`]), banded by
    /// [`Banding::for_threshold`]`(threshold, num_perm)`.
    ///
    /// Errors if `threshold` is not strictly between 0 and 1.
    pub fn new(threshold: f64, num_perm: usize) -> Result<MinHashIndex<I>, LshError> {
        let banding = Banding::for_threshold(threshold, num_perm)?;
        MinHashIndex::with_parts(MinHasher::new(num_perm, MINHASH_INDEX_SEED), banding, threshold)
    }

    /// An empty index with a given hasher and banding (to trade recall for speed, or to
    /// match signatures made elsewhere), verifying at `threshold`.
    ///
    /// Errors if `threshold` is not strictly between 0 and 1, or if the banding uses more
    /// slots than the hasher makes.
    pub fn with_parts(
        minhasher: MinHasher,
        banding: Banding,
        threshold: f64,
    ) -> Result<MinHashIndex<I>, LshError> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(LshError::threshold(threshold));
        }
        Banding::new(banding.bands, banding.rows)?;
        if banding.num_perm() > minhasher.num_perm() {
            return Err(LshError::too_long_for(banding, minhasher.num_perm()));
        }
        let buckets = vec![HashMap::new(); banding.bands];
        let sketcher = Sketcher::new(minhasher, banding)
            .map_err(|_| LshError::too_long_for(banding, banding.num_perm()))?;
        Ok(MinHashIndex {
            sketcher,
            threshold,
            slots: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
            buckets,
        })
    }

    /// The verification threshold.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The banding that picks candidates.
    pub fn banding(&self) -> Banding {
        self.sketcher.banding()
    }

    /// The hasher that makes the signatures.
    pub fn minhasher(&self) -> &MinHasher {
        self.sketcher.minhasher()
    }

    /// The sketcher: the same as the batch engine's ([`MinHashDedup`](crate::lsh::MinHashDedup))
    /// for the same hasher and banding, so both find the same candidates.
    pub fn sketcher(&self) -> &Sketcher {
        &self.sketcher
    }

    /// The number of stored sets (distinct ids).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// True if `id` is stored.
    pub fn contains<Q>(&self, id: &Q) -> bool
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.by_id.contains_key(id)
    }

    /// The shingle set stored under `id` (sorted, deduplicated), if any.
    pub fn get<Q>(&self, id: &Q) -> Option<&[u64]>
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = *self.by_id.get(id)?;
        self.slots[slot as usize].as_ref().map(|s| &*s.set)
    }

    /// The shingle set and band hashes of `features` (the batch engine's sketch; both
    /// empty for no features).
    fn sketch(&self, features: impl IntoIterator<Item = u64>) -> (Vec<u64>, Vec<u32>) {
        match self.sketcher.sketch_shingles(features) {
            Some(sketch) => (sketch.set, sketch.bands),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Stores the set of `features` (order and repetition do not matter) under `id`;
    /// returns true if `id` was already stored (its set is replaced).
    ///
    /// # Panics
    ///
    /// With `2^32` ids stored at once.
    pub fn insert(&mut self, id: I, features: impl IntoIterator<Item = u64>) -> bool {
        let replaced = self.remove(&id);
        let (set, bands) = self.sketch(features);
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 stored sets")
        });
        for (bucket, &h) in self.buckets.iter_mut().zip(&bands) {
            bucket.entry(h).or_default().push(slot);
        }
        self.by_id.insert(id.clone(), slot);
        self.slots[slot as usize] =
            Some(Stored { id, set: set.into_boxed_slice(), bands: bands.into_boxed_slice() });
        replaced
    }

    /// [`insert`](MinHashIndex::insert) for each `(id, features)`.
    pub fn insert_many<F: IntoIterator<Item = u64>>(
        &mut self,
        items: impl IntoIterator<Item = (I, F)>,
    ) {
        for (id, features) in items {
            self.insert(id, features);
        }
    }

    /// Removes `id`; returns true if it was stored.
    pub fn remove<Q>(&mut self, id: &Q) -> bool
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(slot) = self.by_id.remove(id) else {
            return false;
        };
        let stored = self.slots[slot as usize].take().expect("a mapped slot is filled");
        for (bucket, h) in self.buckets.iter_mut().zip(stored.bands.iter()) {
            if let Some(slots) = bucket.get_mut(h) {
                slots.retain(|&s| s != slot);
                if slots.is_empty() {
                    bucket.remove(h);
                }
            }
        }
        self.free.push(slot);
        true
    }

    /// Removes every id of `ids` that is stored; returns how many were.
    pub fn remove_many<'q, Q>(&mut self, ids: impl IntoIterator<Item = &'q Q>) -> usize
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized + 'q,
    {
        ids.into_iter().filter(|id| self.remove(*id)).count()
    }

    /// The stored sets that share a band bucket with the set of `features` and have exact
    /// Jaccard similarity `>=` [`threshold`](MinHashIndex::threshold) to it, by similarity
    /// (highest first), then id. See the type's docs for the guarantee.
    pub fn query(&self, features: impl IntoIterator<Item = u64>) -> Vec<JaccardHit<I>> {
        let mut hits = Vec::new();
        self.query_into(features, &mut hits);
        hits
    }

    /// Like [`query`](MinHashIndex::query), but clears `hits` and fills it.
    pub fn query_into(
        &self,
        features: impl IntoIterator<Item = u64>,
        hits: &mut Vec<JaccardHit<I>>,
    ) {
        hits.clear();
        let (set, bands) = self.sketch(features);
        let mut candidates: Vec<u32> = Vec::new();
        for (bucket, h) in self.buckets.iter().zip(&bands) {
            if let Some(slots) = bucket.get(h) {
                candidates.extend_from_slice(slots);
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        for slot in candidates {
            let stored = self.slots[slot as usize].as_ref().expect("a bucketed slot is filled");
            let j = jaccard(&set, &stored.set);
            if j >= self.threshold {
                hits.push(JaccardHit { id: stored.id.clone(), jaccard: j });
            }
        }
        hits.sort_unstable_by(|a, b| b.jaccard.total_cmp(&a.jaccard).then_with(|| a.id.cmp(&b.id)));
    }

    /// The stored `(id, shingle set)` pairs, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&I, &[u64])> + '_ {
        self.slots.iter().flatten().map(|s| (&s.id, &*s.set))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use simhash_core::{MinHasher, band_hashes, jaccard, shingle_set};

    use super::*;
    use crate::lsh::LshErrorKind;

    /// The oracle: every stored set that shares a band hash (at the same band) with the
    /// query and has exact Jaccard `>= t`, computed from scratch for each stored set.
    fn brute(
        model: &BTreeMap<u16, Vec<u64>>,
        query: &[u64],
        mh: &MinHasher,
        b: Banding,
        t: f64,
    ) -> Vec<JaccardHit<u16>> {
        let bands = |set: &[u64]| {
            mh.signature(set.iter().copied()).map(|sig| {
                let mut out = vec![0; b.bands];
                band_hashes(&sig, b.bands, b.rows, &mut out);
                // Folded to 32 bits, as the batch engine keys its buckets.
                out.iter().map(|&h| (h ^ (h >> 32)) as u32).collect::<Vec<u32>>()
            })
        };
        let Some(q) = bands(query) else { return Vec::new() };
        let q_set = shingle_set(query.iter().copied());
        let mut hits: Vec<JaccardHit<u16>> = model
            .iter()
            .filter(|(_, set)| bands(set).is_some_and(|s| s.iter().zip(&q).any(|(x, y)| x == y)))
            .map(|(&id, set)| JaccardHit {
                id,
                jaccard: jaccard(&q_set, &shingle_set(set.iter().copied())),
            })
            .filter(|h| h.jaccard >= t)
            .collect();
        hits.sort_by(|a, b| b.jaccard.total_cmp(&a.jaccard).then(a.id.cmp(&b.id)));
        hits
    }

    /// A set near `base`: each feature kept unless `drop` says, plus `add` new ones.
    fn near(base: &[u64], drop: &[bool], add: &[u64]) -> Vec<u64> {
        let mut out: Vec<u64> = base
            .iter()
            .zip(drop.iter().chain(std::iter::repeat(&false)))
            .filter(|(_, d)| !**d)
            .map(|(f, _)| *f)
            .collect();
        out.extend_from_slice(add);
        out
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u16, usize, Vec<bool>, Vec<u64>),
        Remove(u16),
        RemoveMany(Vec<u16>),
        Query(usize, Vec<bool>, Vec<u64>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let drops = proptest::collection::vec(prop::bool::weighted(0.2), 0..40);
        let adds = proptest::collection::vec(0u64..4000, 0..12);
        prop_oneof![
            (0u16..30, 0usize..4, drops.clone(), adds.clone())
                .prop_map(|(id, b, d, a)| Op::Insert(id, b, d, a)),
            (0u16..30).prop_map(Op::Remove),
            proptest::collection::vec(0u16..30, 0..8).prop_map(Op::RemoveMany),
            (0usize..4, drops, adds).prop_map(|(b, d, a)| Op::Query(b, d, a)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The answer is exactly {stored sets sharing a band bucket with the query and of
        /// Jaccard >= t}, through inserts, replacements and removals, for several bandings
        /// (few rows: many candidates to verify; many rows: few).
        #[test]
        fn query_is_exactly_bucket_sharing_sets_above_the_threshold(
            ops in proptest::collection::vec(op(), 0..120),
            bases in proptest::collection::vec(proptest::collection::vec(0u64..4000, 0..40), 4),
            config in 0usize..4,
        ) {
            let (num_perm, bands, rows, t) =
                [(32, 8, 4, 0.5), (16, 16, 1, 0.3), (64, 4, 16, 0.7), (128, 25, 5, 0.5)][config];
            let mh = MinHasher::new(num_perm, 7);
            let banding = Banding::new(bands, rows).unwrap();
            let mut index: MinHashIndex<u16> = MinHashIndex::with_parts(mh.clone(), banding, t).unwrap();
            let mut model: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(id, b, d, a) => {
                        let set = near(&bases[b], &d, &a);
                        prop_assert_eq!(index.insert(id, set.iter().copied()), model.insert(id, set).is_some());
                    }
                    Op::Remove(id) => prop_assert_eq!(index.remove(&id), model.remove(&id).is_some()),
                    Op::RemoveMany(ids) => {
                        let want = ids.iter().filter(|id| model.remove(id).is_some()).count();
                        prop_assert_eq!(index.remove_many(&ids), want);
                    }
                    Op::Query(b, d, a) => {
                        let q = near(&bases[b], &d, &a);
                        prop_assert_eq!(index.query(q.iter().copied()), brute(&model, &q, &mh, banding, t));
                    }
                }
                prop_assert_eq!(index.len(), model.len());
            }
            for (id, set) in &model {
                prop_assert!(index.contains(id));
                let stored = shingle_set(set.iter().copied());
                prop_assert_eq!(index.get(id), Some(&stored[..]));
                prop_assert_eq!(index.query(set.iter().copied()), brute(&model, set, &mh, banding, t));
            }
        }
    }

    /// Near copies (Jaccard about 0.82) are found with the recall the banding promises
    /// (`P(0.82) > 0.9999` for 25 x 5): all of 300, where a miss of even a few would show
    /// a broken bucket path.
    #[test]
    fn near_copies_are_found() {
        let mut rng = 0x1234_5678_u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut index: MinHashIndex<u32> = MinHashIndex::new(0.5, 128).unwrap();
        assert_eq!(index.banding(), Banding { bands: 25, rows: 5 });
        let mut copies = Vec::new();
        for id in 0..300u32 {
            let base: Vec<u64> = (0..100).map(|_| next()).collect();
            // Drop 10, add 10: |A ∩ B| = 90, |A ∪ B| = 110.
            let mut copy = base[10..].to_vec();
            copy.extend((0..10).map(|_| next()));
            index.insert(id, base);
            copies.push(copy);
        }
        let mut found = 0;
        for (id, copy) in copies.iter().enumerate() {
            let hits = index.query(copy.iter().copied());
            assert!(hits.iter().all(|h| h.jaccard >= 0.5));
            if hits.first().is_some_and(|h| h.id == id as u32) {
                found += 1;
                assert!((hits[0].jaccard - 90.0 / 110.0).abs() < 1e-12);
            }
        }
        assert!(index.banding().probability(90.0 / 110.0) > 0.9999);
        assert_eq!(found, 300);
        // Random sets share nothing: no false positives survive verification.
        assert!(index.query((0..100).map(|_| next())).is_empty());
    }

    #[test]
    fn string_ids_empty_sets_and_settings() {
        let mut index: MinHashIndex<String> = MinHashIndex::new(0.5, 64).unwrap();
        assert!(!index.insert("empty".into(), []));
        assert!(index.query([]).is_empty());
        assert!(index.contains("empty"));
        assert!(!index.insert("x".into(), 0..50));
        assert!(index.insert("x".into(), 0..60));
        let hits = index.query(0..60);
        assert_eq!(hits, [JaccardHit { id: "x".to_string(), jaccard: 1.0 }]);
        assert_eq!(index.len(), 2);
        assert_eq!(index.iter().count(), 2);
        assert!(index.remove("x") && !index.remove("x"));
        assert!(index.query(0..60).is_empty());
        assert_eq!(
            format!("{index:?}"),
            "MinHashIndex { len: 1, threshold: 0.5, num_perm: 64, bands: 14, rows: 4 }"
        );
        for t in [0.0, 1.0, f64::NAN] {
            let e = MinHashIndex::<u8>::new(t, 64).unwrap_err();
            assert_eq!(e.kind(), LshErrorKind::Threshold);
        }
        let e =
            MinHashIndex::<u8>::with_parts(MinHasher::new(16, 0), Banding::new(4, 5).unwrap(), 0.5)
                .unwrap_err();
        assert_eq!(e.kind(), LshErrorKind::TooLong);
        assert_eq!(e.to_string(), "bands (4) × rows (5) must be at most 16, the signature length");
    }
}
