//! MinHash signatures (one-permutation hashing with optimal densification), LSH band
//! hashes, and exact Jaccard similarity of sorted 64-bit shingle sets.
//!
//! # The method, and why
//!
//! A document's features are the 64-bit shingle hashes that
//! [`Fingerprinter::for_each_feature`](crate::Fingerprinter::for_each_feature) yields. A
//! [`MinHasher`] with `K = num_perm` slots mixes each feature once (one 64-bit mix), puts it
//! in slot `bin(m)` (the low 32 bits of the mix) and keeps the smallest `value(m)` (the high
//! 32 bits) per slot: *one-permutation hashing* (Li, Owen and Zhang, 2012). Slots that no
//! feature reached are filled by *optimal densification* (Shrivastava, 2017): empty slot `i`
//! copies the filled slot that comes first in a fixed pseudo-random order of the slots for
//! `i`. For two sets, a slot agrees with probability equal to their Jaccard similarity, like
//! classic MinHash with `K` independent permutations.
//!
//! Measured against the per-permutation family (`K` multiply + xor-shift mixes of every
//! feature, the cheap alternative to rehashing text) at `K = 128`, with 1,500 random set
//! pairs per cell: mean absolute error of the estimate 0.030–0.035 for both with 100 to
//! 5,000 features (one-permutation hashing is slightly better: it samples without
//! replacement), about 0.040 against 0.035 for 3 to 30 features; and 3 ns per feature
//! against 59 ns, so signatures cost little next to tokenizing. The per-slot probe orders
//! are precomputed (two `K × K` tables of `u16`: 64 KiB at `K = 128`), so densifying a
//! small document is cheap too: at most about `K^1.5` table reads however few its features.
//!
//! # Values
//!
//! Slot values are 32 bits, which halves memory against 64. Two different minima agree by
//! chance with probability 2^-32 per slot, so an estimate is high by at most about
//! `(1 - J) × 2^-32`: nothing next to the `1/sqrt(K)` sampling error. A value is at most
//! `u32::MAX - 1`; [`EMPTY`] (`u32::MAX`) marks the signature of a set with no features.
//!
//! # Definition
//!
//! Exactly, in wrapping 64-bit arithmetic, with `K = num_perm` after clamping, `mix` the
//! splitmix64 finalizer (`z ^= z >> 30; z *= 0xbf58476d1ce4e5b9; z ^= z >> 27;
//! z *= 0x94d049bb133111eb; z ^= z >> 31`), `lo` and `hi` a word's low and high 32 bits,
//! and the salts the ASCII names `MINHASH1`, `DENSIFY1` and `LSHBAND1` read as big-endian
//! `u64`s:
//!
//! 1. `key = mix(seed ^ MINHASH1)`. Feature `h` has `m = mix(h ^ key)`, bin
//!    `floor(lo(m) × K / 2^32)` and value `min(hi(m), 2^32 - 2)`.
//! 2. Slot `i` holds the least value of the features in bin `i`; a bin with none is empty.
//! 3. If every slot is empty, so is the set: no signature. Otherwise each empty slot `i`
//!    takes the value of the filled slot `j` (filled in step 2) with the least
//!    `mix((i × 2^32 + j) + mix(key ^ DENSIFY1))`: distinct for distinct `j`, so no ties.
//! 4. [`band_hashes`]: band `b` of `r` rows is the slots `s = sig[b r..(b + 1) r]`. Start with
//!    `acc = mix(LSHBAND1 ^ b)`; for each pair `s[2t], s[2t + 1]` (with `s[r] = 0` when `r` is
//!    odd), `acc = fold(acc ^ (s[2t] + 2^32 × s[2t + 1]), 0x9e3779b97f4a7c15)`, where
//!    `fold(a, c)` XORs the two halves of the 128-bit product `a × c`. The hash is
//!    `mix(acc ^ r)`.
//!
//! # Stability contract
//!
//! A signature is a function of `(num_perm, seed)` and the feature hashes (as a set: order
//! and repetition do not matter), and of nothing else: not the machine, the thread or the
//! release. Changing the definition would break stored signatures and LSH band hashes, so
//! it will not change; the tests pin golden values. The same holds for [`band_hashes`] and
//! [`shingle_set`].

use std::fmt;

use crate::hash::folded_multiply;

/// The largest `num_perm` a [`MinHasher`] uses (its probe tables take `4 × num_perm²`
/// bytes: 4 MiB at this bound); a larger request is clamped to it.
pub const MAX_PERM: usize = 1024;

/// The value of every slot of the signature of a set with no features. No slot of a
/// non-empty set's signature has this value.
pub const EMPTY: u32 = u32::MAX;

/// Makes MinHash signatures of `num_perm` 32-bit slots.
///
/// Immutable, `Send + Sync` and meant to be shared by all threads; a signature allocates
/// nothing ([`signature_into`](MinHasher::signature_into)). Construction builds the probe
/// tables (`4 × num_perm²` bytes), so build one and reuse it.
///
/// ```
/// use simhash_core::{Fingerprinter, MinHasher, estimate_jaccard};
///
/// let fp = Fingerprinter::new();
/// let mh = MinHasher::new(128, 0);
/// let features = |text: &str| {
///     let mut hashes = Vec::new();
///     fp.for_each_feature(text, |h, _| hashes.push(h));
///     hashes
/// };
/// let a = mh.signature(features("the quick brown fox jumps over the lazy dog")).unwrap();
/// let b = mh.signature(features("the quick brown fox jumps over the lazy cat")).unwrap();
/// let j = estimate_jaccard(&a, &b); // exact: 6 of 8 shingles shared, 0.75
/// assert!((0.5..=0.95).contains(&j));
/// assert_eq!(mh.signature(features("... !!!")), None); // no features
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct MinHasher {
    num_perm: usize,
    seed: u64,
    key: u64,
    /// Row `i`: the slots in the order in which empty slot `i` probes them.
    order: Box<[u16]>,
    /// Row `i`: the position of each slot in `order`'s row `i`.
    rank: Box<[u16]>,
}

impl fmt::Debug for MinHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MinHasher")
            .field("num_perm", &self.num_perm)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

/// splitmix64's finalizer: a bijective 64-bit mix.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// "MINHASH1": keys the feature mix.
const FEATURE_SALT: u64 = 0x4d49_4e48_4153_4831;
/// "DENSIFY1": keys the probe orders.
const ORDER_SALT: u64 = 0x4445_4e53_4946_5931;
/// "LSHBAND1": keys the band hashes.
const BAND_SALT: u64 = 0x4c53_4842_414e_4431;

impl MinHasher {
    /// A hasher of `num_perm` slots keyed by `seed`. Like every size setting of this crate
    /// (the [window](crate::FingerprinterBuilder::window) too), `num_perm` is clamped to its
    /// range, `1..=`[`MAX_PERM`]; [`num_perm`](MinHasher::num_perm) reads back the value in use.
    ///
    /// ```
    /// use simhash_core::{MAX_PERM, MinHasher};
    ///
    /// assert_eq!(MinHasher::new(128, 0).num_perm(), 128);
    /// assert_eq!(MinHasher::new(0, 0).num_perm(), 1);
    /// assert_eq!(MinHasher::new(MAX_PERM + 1, 0).num_perm(), MAX_PERM);
    /// ```
    pub fn new(num_perm: usize, seed: u64) -> MinHasher {
        let num_perm = num_perm.clamp(1, MAX_PERM);
        let key = mix64(seed ^ FEATURE_SALT);
        let order_key = mix64(key ^ ORDER_SALT);
        let k = num_perm;
        let mut order = vec![0u16; k * k].into_boxed_slice();
        let mut rank = vec![0u16; k * k].into_boxed_slice();
        let mut row: Vec<(u64, u16)> = Vec::with_capacity(k);
        for i in 0..k {
            row.clear();
            // Slot i probes slot j in the order of g(i, j), ties (never seen) by j.
            row.extend((0..k).map(|j| {
                (mix64((((i as u64) << 32) | j as u64).wrapping_add(order_key)), j as u16)
            }));
            row.sort_unstable();
            for (pos, &(_, j)) in row.iter().enumerate() {
                order[i * k + pos] = j;
                rank[i * k + usize::from(j)] = pos as u16;
            }
        }
        MinHasher { num_perm, seed, key, order, rank }
    }

    /// The number of slots (after clamping).
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The signature of the set of `features` (order and repetition do not matter), or
    /// `None` when there are none: as with
    /// [`Fingerprinter::fingerprint`](crate::Fingerprinter::fingerprint), featureless
    /// documents must not all look alike, so skip them before LSH.
    pub fn signature(&self, features: impl IntoIterator<Item = u64>) -> Option<Vec<u32>> {
        let mut out = vec![0; self.num_perm];
        self.signature_into(features, &mut out).then_some(out)
    }

    /// Writes the signature of the set of `features` to `out` and returns `true`; with no
    /// features, fills `out` with [`EMPTY`] and returns `false`.
    ///
    /// Callers must not band or match the [`EMPTY`] signature: every featureless document
    /// has it, so LSH would call them all similar ([`estimate_jaccard`] scores it 0).
    ///
    /// # Panics
    ///
    /// If `out.len()` is not [`num_perm`](MinHasher::num_perm).
    pub fn signature_into(&self, features: impl IntoIterator<Item = u64>, out: &mut [u32]) -> bool {
        let k = self.num_perm;
        assert_eq!(out.len(), k, "signature buffer length must be num_perm");
        out.fill(EMPTY);
        for h in features {
            let m = mix64(h ^ self.key);
            let bin = ((u64::from(m as u32) * k as u64) >> 32) as usize;
            let value = ((m >> 32) as u32).min(EMPTY - 1);
            let slot = &mut out[bin];
            *slot = (*slot).min(value);
        }
        self.densify(out)
    }

    /// Fills the empty slots of `out` (optimal densification). Returns whether any slot
    /// was filled to begin with.
    fn densify(&self, out: &mut [u32]) -> bool {
        let k = self.num_perm;
        // Most signatures have every slot filled: nothing to do (and no tables to clear).
        if !out.contains(&EMPTY) {
            return k != 0;
        }
        let mut filled_bits = [0u64; MAX_PERM / 64];
        for (j, &v) in out.iter().enumerate() {
            filled_bits[j / 64] |= u64::from(v != EMPTY) << (j % 64);
        }
        let f = filled_bits.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        if f == 0 || f == k {
            return f != 0;
        }
        // The filled slots in ascending order, needed only for a scan (then f * f <= k, so
        // f <= 32).
        let scan = f * f <= k;
        let mut filled = [0u16; 32];
        if scan {
            let slots = (0..k).filter(|&j| filled_bits[j / 64] >> (j % 64) & 1 == 1);
            for (n, j) in slots.enumerate() {
                filled[n] = j as u16;
            }
        }
        let filled = &filled[..if scan { f } else { 0 }];
        // Slot i takes the filled slot of smallest rank in row i. Walking the row finds it
        // in about k / f reads; scanning the filled slots' ranks takes f: pick the cheaper.
        for i in 0..k {
            if filled_bits[i / 64] >> (i % 64) & 1 == 1 {
                continue;
            }
            let j = if scan {
                let rank = &self.rank[i * k..(i + 1) * k];
                let mut best = filled[0];
                for &j in &filled[1..] {
                    if rank[usize::from(j)] < rank[usize::from(best)] {
                        best = j;
                    }
                }
                usize::from(best)
            } else {
                self.order[i * k..(i + 1) * k]
                    .iter()
                    .map(|&j| usize::from(j))
                    .find(|&j| filled_bits[j / 64] >> (j % 64) & 1 == 1)
                    .expect("some slot is filled")
            };
            out[i] = out[j];
        }
        true
    }
}

/// The estimated Jaccard similarity of the sets behind two signatures of one
/// [`MinHasher`]: the fraction of slots that agree. [`EMPTY`] slots never agree, so a
/// featureless set scores 0 against anything, itself included (as in [`jaccard`]).
///
/// The standard error is `sqrt(J (1 - J) / num_perm)`: 0.044 at `J = 0.5` with 128 slots.
///
/// # Panics
///
/// If the signatures differ in length.
///
/// ```
/// use simhash_core::{MinHasher, estimate_jaccard};
///
/// let mh = MinHasher::new(64, 7);
/// let a = mh.signature(0..100u64).unwrap();
/// let b = mh.signature(50..150u64).unwrap(); // exact Jaccard: 50 / 150
/// assert!((estimate_jaccard(&a, &b) - 1.0 / 3.0).abs() < 0.2);
/// assert_eq!(estimate_jaccard(&a, &a), 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn estimate_jaccard(a: &[u32], b: &[u32]) -> f64 {
    assert_eq!(a.len(), b.len(), "signatures of different lengths");
    if a.is_empty() {
        return 0.0;
    }
    let agree = a.iter().zip(b).filter(|&(&x, &y)| x == y && x != EMPTY).count();
    agree as f64 / a.len() as f64
}

/// Writes to `out` a well-mixed 64-bit hash of each of the `bands` bands of `rows`
/// consecutive slots of `sig` (band `i` is `sig[i * rows..(i + 1) * rows]`), with the band
/// index mixed in, so equal rows in two bands hash differently. Two signatures share band
/// `i`'s hash exactly when they agree on its rows (up to a 2^-64 chance).
///
/// Bands and rows come from the LSH configuration (`simhash_index::lsh::Banding`). Do not band
/// the [`EMPTY`] signature (see [`MinHasher::signature_into`]). Part of the stability
/// contract.
///
/// # Panics
///
/// If `bands * rows > sig.len()` or `out.len() != bands`.
///
/// ```
/// use simhash_core::{MinHasher, band_hashes};
///
/// let mh = MinHasher::new(8, 0);
/// let a = mh.signature([1, 2, 3]).unwrap();
/// let (mut ha, mut hb) = ([0u64; 4], [0u64; 4]);
/// band_hashes(&a, 4, 2, &mut ha);
/// band_hashes(&mh.signature([3, 2, 1, 1]).unwrap(), 4, 2, &mut hb);
/// assert_eq!(ha, hb);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn band_hashes(sig: &[u32], bands: usize, rows: usize, out: &mut [u64]) {
    assert!(
        bands.checked_mul(rows).is_some_and(|n| n <= sig.len()),
        "bands × rows ({bands} × {rows}) exceeds the signature length ({})",
        sig.len()
    );
    assert_eq!(out.len(), bands, "band hash buffer length must be bands");
    for (band, h) in out.iter_mut().enumerate() {
        let mut acc = mix64(BAND_SALT ^ band as u64);
        for pair in sig[band * rows..(band + 1) * rows].chunks(2) {
            let word = u64::from(pair[0]) | pair.get(1).map_or(0, |&v| u64::from(v) << 32);
            acc = folded_multiply(acc ^ word, 0x9e37_79b9_7f4a_7c15);
        }
        *h = mix64(acc ^ rows as u64);
    }
}

/// The sorted, deduplicated 64-bit feature hashes of `features`: a shingle set for exact
/// verification with [`jaccard`] (8 bytes per distinct shingle).
///
/// The full 64-bit hashes are kept, so that two different texts are called identical only
/// if every shingle of one collides with a shingle of the other. For two documents of one
/// shingle each (the worst case) that happens with probability 2^-64 per pair: among a
/// billion such documents, about `n² / 2^65 ≈ 0.03` false matches in all. (Sets of 32-bit
/// truncations made one false match per ~2^32 pairs: hundreds among two million one-word
/// documents.) Part of the stability contract.
///
/// ```
/// use simhash_core::{jaccard, shingle_set};
///
/// let a = shingle_set([10, 20, 30, 20]);
/// let b = shingle_set([30, 40, 10]);
/// assert_eq!(a.len(), 3);
/// assert_eq!(jaccard(&a, &b), 0.5);
/// // Hashes equal in their low or high 32 bits are still different shingles.
/// assert_eq!(jaccard(&shingle_set([1 << 32]), &shingle_set([1])), 0.0);
/// ```
pub fn shingle_set(features: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut out = Vec::new();
    shingle_set_into(features, &mut out);
    out
}

/// [`shingle_set`] into a reused buffer (cleared first).
pub fn shingle_set_into(features: impl IntoIterator<Item = u64>, out: &mut Vec<u64>) {
    out.clear();
    out.extend(features);
    out.sort_unstable();
    out.dedup();
}

/// The number of values in both sorted, deduplicated slices (as [`shingle_set`] makes
/// them).
///
/// A branch-free merge when the sizes are close; when one is more than 16 times the other,
/// each value of the small one is found by galloping (exponential, then binary search) in
/// the large one. Unsorted input gives a meaningless count, never a panic.
///
/// ```
/// assert_eq!(simhash_core::intersection_size(&[1, 3, 5, 7], &[3, 4, 5]), 2);
/// ```
pub fn intersection_size<T: Ord + Copy>(a: &[T], b: &[T]) -> usize {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0;
    }
    if large.len() / small.len() > 16 {
        return gallop_intersection(small, large);
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < small.len() && j < large.len() {
        let (x, y) = (small[i], large[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

fn gallop_intersection<T: Ord + Copy>(small: &[T], large: &[T]) -> usize {
    let mut rest = large;
    let mut n = 0;
    for &x in small {
        // Exponential search for the first position not below x, then binary search.
        let mut hi = 1;
        while hi < rest.len() && rest[hi - 1] < x {
            hi *= 2;
        }
        let lo = hi / 2;
        let hi = hi.min(rest.len());
        let at = lo + rest[lo..hi].partition_point(|&y| y < x);
        rest = &rest[at..];
        match rest.first() {
            Some(&y) if y == x => n += 1,
            Some(_) => {}
            None => break,
        }
    }
    n
}

/// The Jaccard similarity `|A ∩ B| / |A ∪ B|` of two sorted, deduplicated slices (as
/// [`shingle_set`] makes them), by [`intersection_size`].
///
/// Two empty sets score 0, not 1: featureless documents are never near-duplicates, as in
/// [`estimate_jaccard`] and `Fingerprinter::fingerprint`'s `None`.
///
/// ```
/// use simhash_core::jaccard;
///
/// assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
/// assert_eq!(jaccard::<u64>(&[], &[]), 0.0);
/// ```
pub fn jaccard<T: Ord + Copy>(a: &[T], b: &[T]) -> f64 {
    jaccard_of_counts(a.len(), b.len(), intersection_size(a, b))
}

/// [`jaccard`]'s value for a common count: `common / (a_len + b_len - common)`, 0 for two
/// empty sets.
fn jaccard_of_counts(a_len: usize, b_len: usize, common: usize) -> f64 {
    let union = a_len + b_len - common;
    if union == 0 { 0.0 } else { common as f64 / union as f64 }
}

/// The fewest values two sets of `a_len` and `b_len` values must share for their
/// [`jaccard`] similarity to be at least `threshold` (compared as `jaccard(a, b) >=
/// threshold` compares it, in `f64`); none when even `min(a_len, b_len)` is too few. A
/// size filter before reading a set: sets of very different sizes cannot match.
///
/// ```
/// use simhash_core::jaccard_min_common;
///
/// assert_eq!(jaccard_min_common(10, 10, 0.5), Some(7)); // 7 / 13 >= 0.5, 6 / 14 < 0.5
/// assert_eq!(jaccard_min_common(10, 100, 0.5), None); // at most 10 / 100
/// ```
#[inline]
pub fn jaccard_min_common(a_len: usize, b_len: usize, threshold: f64) -> Option<usize> {
    // The ratio grows with the count (correctly rounded division is monotonic): the first
    // count that reaches the threshold. `c / (s - c) >= t` is `c >= t s / (1 + t)`; that
    // estimate is then moved to the exact answer of the f64 comparison. Usually two
    // comparisons settle it (the estimate reaches, the count below does not); the walk
    // asks this of every candidate pair.
    let most = a_len.min(b_len);
    let reaches = |c: usize| jaccard_of_counts(a_len, b_len, c) >= threshold;
    let sum = (a_len + b_len) as f64;
    let estimate = threshold * sum / (1.0 + threshold);
    // NaN, negative and huge estimates are clamped (a NaN threshold never reaches). Rounded
    // up by hand: `f64::ceil` is a call into libm on the baseline x86-64 target, a tenth of
    // this function's time.
    let mut c = if estimate >= 0.0 {
        let down = estimate as usize;
        (if (down as f64) < estimate { down.saturating_add(1) } else { down }).min(most)
    } else {
        0
    };
    if reaches(c) {
        while c > 0 && reaches(c - 1) {
            c -= 1;
        }
        return Some(c);
    }
    while c < most {
        c += 1;
        if reaches(c) {
            return Some(c);
        }
    }
    None
}

/// [`jaccard`] when it is at least `threshold` (the same value, bit for bit), none
/// otherwise; for sorted, deduplicated slices. Faster when the answer is no: sets of
/// sizes that cannot reach the threshold are not read, and the merge stops as soon as
/// the values left cannot make up the shared count needed ([`jaccard_min_common`]).
///
/// ```
/// use simhash_core::{jaccard, jaccard_at_least};
///
/// let (a, b) = ([1, 2, 3, 4], [2, 3, 4, 5]);
/// assert_eq!(jaccard_at_least(&a, &b, 0.6), Some(jaccard(&a, &b))); // 3 / 5
/// assert_eq!(jaccard_at_least(&a, &b, 0.61), None);
/// ```
pub fn jaccard_at_least<T: Ord + Copy>(a: &[T], b: &[T], threshold: f64) -> Option<f64> {
    let needed = jaccard_min_common(a.len(), b.len(), threshold)?;
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let common = if small.is_empty() || large.len() / small.len() > 16 {
        intersection_size(small, large)
    } else {
        bounded_intersection(small, large, needed)?
    };
    (common >= needed).then(|| jaccard_of_counts(a.len(), b.len(), common))
}

/// A bitmap of one shingle set's values, to rule out sets that cannot share enough with it
/// before merging: a value of another set that misses the bitmap is not in the set, so the
/// other set's hits bound the shared count from above. Built once per set and tested
/// against many (as the dedup walk compares a record with the kept ones).
///
/// ```
/// use simhash_core::{SetFilter, jaccard_min_common};
///
/// let a: Vec<u64> = (0..100u64).map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// let mut filter = SetFilter::default();
/// filter.fill(&a);
/// assert!(filter.may_share(&a, a.len())); // a set shares all of itself
/// let b: Vec<u64> = (100..200u64).map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// assert!(!filter.may_share(&b, jaccard_min_common(100, 100, 0.5).unwrap()));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SetFilter {
    bits: Vec<u64>,
    /// Bits to shift a mixed value right by to get its bit (64 minus the bitmap's log2
    /// size).
    shift: u32,
}

impl SetFilter {
    /// Bitmap bits per value of the set (about 1 in 16 of another set's values is a false
    /// hit).
    const BITS_PER_VALUE: usize = 16;

    /// A value's bit in a bitmap of `64 - shift` address bits.
    fn bit(x: u64, shift: u32) -> usize {
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    /// Makes the bitmap of `set` (the previous one is cleared).
    pub fn fill(&mut self, set: &[u64]) {
        let bits = (set.len() * Self::BITS_PER_VALUE).next_power_of_two().max(1 << 10);
        self.shift = 64 - bits.trailing_zeros();
        self.bits.clear();
        self.bits.resize(bits / 64, 0);
        for &x in set {
            let b = Self::bit(x, self.shift);
            self.bits[b / 64] |= 1 << (b % 64);
        }
    }

    /// False when `other` cannot share `needed` values with the filled set (fewer of its
    /// values hit the bitmap); true when it may.
    pub fn may_share(&self, other: &[u64], needed: usize) -> bool {
        if self.bits.is_empty() {
            return needed == 0;
        }
        // Enough values hit when at most `len - needed` miss; checked every 16 values (the
        // same answer as after each, with fewer branches).
        let Some(allowed) = other.len().checked_sub(needed) else {
            return false;
        };
        let mut misses = 0;
        for block in other.chunks(16) {
            for &x in block {
                let b = Self::bit(x, self.shift);
                misses += usize::from(self.bits[b / 64] >> (b % 64) & 1 == 0);
            }
            if misses > allowed {
                return false;
            }
        }
        true
    }
}

/// [`intersection_size`]'s merge that gives up (none) once fewer than `needed` common
/// values remain possible.
fn bounded_intersection<T: Ord + Copy>(small: &[T], large: &[T], needed: usize) -> Option<usize> {
    /// Merge steps between two checks of the bound.
    const STEPS: usize = 32;
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < small.len() && j < large.len() {
        // At most one common value a step, and at most the shorter rest.
        if n + (small.len() - i).min(large.len() - j) < needed {
            return None;
        }
        let steps = STEPS.min(small.len() - i).min(large.len() - j);
        for _ in 0..steps {
            let (x, y) = (small[i], large[j]);
            n += usize::from(x == y);
            i += usize::from(x <= y);
            j += usize::from(y <= x);
        }
    }
    Some(n)
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact ratios of small integers
mod tests {
    use super::*;

    /// splitmix64, for reproducible random sets.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(self.0)
        }
    }

    /// Densification as it was written before its fast paths: every filled slot listed,
    /// every slot visited.
    fn densify_reference(m: &MinHasher, out: &mut [u32]) -> bool {
        let k = m.num_perm;
        let filled: Vec<usize> = (0..k).filter(|&j| out[j] != EMPTY).collect();
        let f = filled.len();
        if f == 0 || f == k {
            return f != 0;
        }
        let is_filled = |j: usize| filled.binary_search(&j).is_ok();
        for i in 0..k {
            if is_filled(i) {
                continue;
            }
            let j = if f * f <= k {
                let rank = &m.rank[i * k..(i + 1) * k];
                let mut best = filled[0];
                for &j in &filled[1..] {
                    if rank[j] < rank[best] {
                        best = j;
                    }
                }
                best
            } else {
                m.order[i * k..(i + 1) * k]
                    .iter()
                    .map(|&j| usize::from(j))
                    .find(|&j| is_filled(j))
                    .unwrap()
            };
            out[i] = out[j];
        }
        true
    }

    #[test]
    fn densify_equals_the_reference() {
        let mut rng = Rng(99);
        for k in [1, 2, 7, 64, 111, 128, 129, 1000, MAX_PERM] {
            let m = MinHasher::new(k, 3);
            for n in [0, 1, 2, 3, 5, 10, 31, 32, 33, 60, 100, 300, 1000, 5000] {
                let features: Vec<u64> = (0..n).map(|_| rng.next()).collect();
                let mut raw = vec![EMPTY; k];
                for &h in &features {
                    let x = mix64(h ^ m.key);
                    let bin = ((u64::from(x as u32) * k as u64) >> 32) as usize;
                    raw[bin] = raw[bin].min(((x >> 32) as u32).min(EMPTY - 1));
                }
                let mut want = raw.clone();
                let filled = densify_reference(&m, &mut want);
                let mut got = vec![0; k];
                assert_eq!(m.signature_into(features.iter().copied(), &mut got), filled);
                assert_eq!(got, want, "k {k}, {n} features");
            }
        }
    }

    /// Two random sets of `size` features with `common` in common.
    fn pair(rng: &mut Rng, size: usize, common: usize) -> (Vec<u64>, Vec<u64>) {
        let shared: Vec<u64> = (0..common).map(|_| rng.next()).collect();
        let mut a = shared.clone();
        let mut b = shared;
        for _ in common..size {
            a.push(rng.next());
            b.push(rng.next());
        }
        (a, b)
    }

    #[test]
    fn thread_safe() {
        fn assert_all<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
        assert_all::<MinHasher>();
    }

    #[test]
    fn num_perm_is_clamped() {
        assert_eq!(MinHasher::new(0, 1).num_perm(), 1);
        assert_eq!(MinHasher::new(1, 1).num_perm(), 1);
        assert_eq!(MinHasher::new(MAX_PERM + 1, 1).num_perm(), MAX_PERM);
        assert_eq!(MinHasher::new(usize::MAX, 1).num_perm(), MAX_PERM);
        assert_eq!(MinHasher::new(MAX_PERM, 1).num_perm(), MAX_PERM);
    }

    #[test]
    fn probe_tables_are_permutations() {
        for k in [1, 2, 3, 17, 128] {
            let mh = MinHasher::new(k, 3);
            for i in 0..k {
                let mut row: Vec<u16> = mh.order[i * k..(i + 1) * k].to_vec();
                for (pos, &j) in row.iter().enumerate() {
                    assert_eq!(usize::from(mh.rank[i * k + usize::from(j)]), pos);
                }
                row.sort_unstable();
                assert!(row.iter().enumerate().all(|(p, &j)| usize::from(j) == p));
            }
        }
    }

    #[test]
    fn golden_signatures() {
        // The stability contract: these values never change.
        let mh = MinHasher::new(8, 42);
        assert_eq!(mh.signature([1, 2, 3, 4, 5]).unwrap(), GOLDEN_SMALL);
        assert_eq!(mh.signature(0..1000).unwrap(), GOLDEN_LARGE);
        let mh = MinHasher::new(4, 0);
        assert_eq!(mh.signature([0xdead_beef]).unwrap(), GOLDEN_ONE);
        let mut bands = [0u64; 4];
        band_hashes(&GOLDEN_LARGE, 4, 2, &mut bands);
        assert_eq!(bands, GOLDEN_BANDS);
        // Full 64-bit hashes: no folding.
        assert_eq!(shingle_set([0x1_0000_0002, 5, 3, 5]), [3, 5, 0x1_0000_0002]);
    }

    const GOLDEN_SMALL: [u32; 8] = [
        1938037894, 2475232718, 632138553, 1938037894, 2475232718, 1938037894, 632138553,
        2475232718,
    ];
    const GOLDEN_LARGE: [u32; 8] =
        [46593700, 53545115, 9492240, 5077955, 13472121, 20628783, 3987473, 57791236];
    const GOLDEN_ONE: [u32; 4] = [4195447516; 4];
    const GOLDEN_BANDS: [u64; 4] =
        [0x2f6983acf7020c42, 0xf7a70972d6749451, 0x52f6f24cc627c2fe, 0x2be6d87b80d9a134];

    #[test]
    fn empty_and_singleton_sets() {
        let mh = MinHasher::new(16, 9);
        assert_eq!(mh.signature(std::iter::empty()), None);
        let mut out = [0u32; 16];
        assert!(!mh.signature_into([], &mut out));
        assert_eq!(out, [EMPTY; 16]);
        assert_eq!(estimate_jaccard(&out, &out), 0.0);
        // One feature fills every slot with its value.
        let one = mh.signature([77]).unwrap();
        assert!(one.iter().all(|&v| v == one[0] && v != EMPTY));
        assert_eq!(estimate_jaccard(&one, &mh.signature([77, 77]).unwrap()), 1.0);
        assert!(estimate_jaccard(&one, &mh.signature([78]).unwrap()) < 1.0);
        // k = 1 works.
        let mh = MinHasher::new(1, 0);
        assert_eq!(mh.signature([5, 6]).unwrap().len(), 1);
    }

    #[test]
    fn order_and_repetition_do_not_matter() {
        let mut rng = Rng(5);
        for (k, size) in [(128, 3), (128, 11), (128, 40), (128, 300), (64, 5), (7, 2)] {
            let mh = MinHasher::new(k, 11);
            let set: Vec<u64> = (0..size).map(|_| rng.next()).collect();
            let want = mh.signature(set.iter().copied()).unwrap();
            let mut shuffled: Vec<u64> = set.iter().chain(&set).copied().collect();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, (rng.next() % (i as u64 + 1)) as usize);
            }
            assert_eq!(mh.signature(shuffled).unwrap(), want, "k {k}, size {size}");
            assert!(want.iter().all(|&v| v != EMPTY));
            // Deterministic: a fresh hasher with the same parameters agrees; another seed not.
            assert_eq!(MinHasher::new(k, 11).signature(set.iter().copied()), Some(want.clone()));
            if size > 2 {
                assert_ne!(MinHasher::new(k, 12).signature(set.iter().copied()), Some(want));
            }
        }
    }

    #[test]
    fn densification_scan_and_walk_agree() {
        // Both ways of finding the first filled slot give the same answer.
        let mh = MinHasher::new(64, 2);
        let mut rng = Rng(8);
        for f in [1, 2, 3, 5, 8, 9, 20, 40] {
            let set: Vec<u64> = (0..f).map(|_| rng.next()).collect();
            let sig = mh.signature(set.iter().copied()).unwrap();
            let mut raw = [EMPTY; 64];
            for &h in &set {
                let m = mix64(h ^ mh.key);
                let bin = ((u64::from(m as u32) * 64) >> 32) as usize;
                raw[bin] = raw[bin].min(((m >> 32) as u32).min(EMPTY - 1));
            }
            for i in 0..64 {
                let want = if raw[i] == EMPTY {
                    let j = mh.order[i * 64..(i + 1) * 64]
                        .iter()
                        .map(|&j| usize::from(j))
                        .find(|&j| raw[j] != EMPTY)
                        .unwrap();
                    raw[j]
                } else {
                    raw[i]
                };
                assert_eq!(sig[i], want, "f {f}, slot {i}");
            }
        }
    }

    #[test]
    fn estimates_track_exact_jaccard() {
        // Mean absolute error over random pairs, for small and large sets. The standard
        // error of one estimate is sqrt(J (1 - J) / k) <= 0.044 at k = 128, so the mean
        // absolute error is about 0.035; a broken permutation (correlated slots, or a
        // biased densification) is far off, and so is any bias over 200 pairs.
        let k = 128;
        let mh = MinHasher::new(k, 1);
        let mut rng = Rng(99);
        for size in [4, 10, 50, 400] {
            let (mut abs, mut bias, mut n) = (0.0, 0.0, 0.0);
            for t in 0..200 {
                let common = t * size / 200;
                let (a, b) = pair(&mut rng, size, common);
                let exact = common as f64 / (2 * size - common) as f64;
                let est = estimate_jaccard(&mh.signature(a).unwrap(), &mh.signature(b).unwrap());
                abs += (est - exact).abs();
                bias += est - exact;
                n += 1.0;
            }
            let (mae, bias) = (abs / n, bias / n);
            assert!(mae < 1.0 / (k as f64).sqrt(), "size {size}: mean abs error {mae}");
            assert!(bias.abs() < 0.015, "size {size}: bias {bias}");
        }
        // Disjoint sets never agree (but for 2^-32 chances); equal sets always do.
        let (a, b) = pair(&mut rng, 300, 0);
        assert_eq!(
            estimate_jaccard(&mh.signature(a.clone()).unwrap(), &mh.signature(b).unwrap()),
            0.0
        );
        let sa = mh.signature(a.clone()).unwrap();
        assert_eq!(estimate_jaccard(&sa, &mh.signature(a).unwrap()), 1.0);
    }

    #[test]
    fn band_hashes_follow_rows() {
        let sig: Vec<u32> = (0..12).collect();
        let mut h = [0u64; 4];
        band_hashes(&sig, 4, 3, &mut h);
        let mut other = sig.clone();
        other[4] = 99; // band 1
        let mut h2 = [0u64; 4];
        band_hashes(&other, 4, 3, &mut h2);
        assert_eq!((h[0], h[2], h[3]), (h2[0], h2[2], h2[3]));
        assert_ne!(h[1], h2[1]);
        // Equal rows in different bands hash differently.
        let flat = [5u32; 12];
        band_hashes(&flat, 4, 3, &mut h);
        assert!(h.windows(2).all(|w| w[0] != w[1]));
        // Fewer slots used than the signature has; zero rows.
        let mut one = [0u64; 1];
        band_hashes(&sig, 1, 5, &mut one);
        band_hashes(&sig, 1, 0, &mut one);
        let mut none: [u64; 0] = [];
        band_hashes(&sig, 0, 3, &mut none);
    }

    #[test]
    #[should_panic(expected = "exceeds the signature length")]
    fn band_hashes_reject_too_many_rows() {
        band_hashes(&[1, 2, 3], 2, 2, &mut [0, 0]);
    }

    /// The intersection by a plain set, for comparison.
    fn naive<T: Ord>(a: &[T], b: &[T]) -> usize {
        a.iter().filter(|x| b.binary_search(x).is_ok()).count()
    }

    #[test]
    fn exact_jaccard() {
        assert_eq!(jaccard::<u64>(&[], &[]), 0.0);
        assert_eq!(jaccard::<u64>(&[1], &[]), 0.0);
        assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
        assert_eq!(intersection_size::<u64>(&[], &[1, 2]), 0);
        let mut rng = Rng(3);
        for (na, nb, range) in
            [(10, 10, 20), (50, 2000, 3000), (3, 900, 1000), (1000, 1, 10), (0, 5, 5)]
        {
            let a = shingle_set((0..na).map(|_| rng.next() % range));
            let b = shingle_set((0..nb).map(|_| rng.next() % range));
            let want = naive(&a, &b);
            assert_eq!(intersection_size(&a, &b), want);
            assert_eq!(intersection_size(&b, &a), want);
            let union = a.len() + b.len() - want;
            let j = if union == 0 { 0.0 } else { want as f64 / union as f64 };
            assert_eq!(jaccard(&a, &b), j);
        }
        // Galloping past the end, and at every position.
        let large: Vec<u32> = (0..1000).map(|x| x * 2).collect();
        for small in [vec![1998, 1999, 5000], vec![0], vec![1999], vec![0, 500, 1000, 1998]] {
            assert_eq!(intersection_size(&small, &large), naive(&small, &large));
        }
    }

    /// The fewest shared values, against a linear scan, for every pair of sizes up to 60
    /// and thresholds on both sides of the ratios those sizes make (and out of range).
    #[test]
    fn min_common_is_the_first_count_that_reaches() {
        let thresholds = [
            0.0,
            0.1,
            0.2,
            0.25,
            0.3,
            1.0 / 3.0,
            0.4,
            0.5,
            0.6,
            2.0 / 3.0,
            0.7,
            0.75,
            0.8,
            0.9,
            0.95,
            1.0,
            1.5,
            -0.1,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ];
        for a in 0..=60usize {
            for b in 0..=60usize {
                let ratios = (0..=a.min(b)).map(|c| jaccard_of_counts(a, b, c));
                let mut ts: Vec<f64> = thresholds.to_vec();
                for r in ratios {
                    ts.extend([r, f64::from_bits(r.to_bits() + 1), r.next_down()]);
                }
                for t in ts {
                    let scan = (0..=a.min(b)).find(|&c| jaccard_of_counts(a, b, c) >= t);
                    assert_eq!(jaccard_min_common(a, b, t), scan, "{a} {b} {t}");
                }
            }
        }
    }

    /// `jaccard_at_least` as the simple path says it: the exact similarity when it reaches
    /// the threshold.
    fn check_at_least(a: &[u64], b: &[u64], t: f64) {
        let j = jaccard(a, b);
        let want = (j >= t).then_some(j);
        let got = jaccard_at_least(a, b, t);
        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{a:?} {b:?} at {t}");
        assert_eq!(jaccard_at_least(b, a, t).map(f64::to_bits), want.map(f64::to_bits));
        // The bound is the least shared count that reaches t, by a linear scan.
        let scan = (0..=a.len().min(b.len())).find(|&c| {
            let union = a.len() + b.len() - c;
            (if union == 0 { 0.0 } else { c as f64 / union as f64 }) >= t
        });
        assert_eq!(jaccard_min_common(a.len(), b.len(), t), scan, "{} {} {t}", a.len(), b.len());
    }

    /// Sets of `na` and `nb` values sharing exactly `common`, the shared ones placed by
    /// `rng` among the others (or all first, or all last).
    fn with_common(
        rng: &mut Rng,
        na: usize,
        nb: usize,
        common: usize,
        place: u8,
    ) -> (Vec<u64>, Vec<u64>) {
        let shared: Vec<u64> = (0..common).map(|_| rng.next() | 1).collect();
        let only = |n: usize, rng: &mut Rng| -> Vec<u64> {
            (0..n - common)
                .map(|_| match place {
                    0 => rng.next() & !1,
                    1 => (rng.next() >> 1) & !1, // low: before the shared values
                    _ => (rng.next() | (1 << 63)) & !1, // high: after them
                })
                .collect()
        };
        let shared: Vec<u64> = match place {
            0 => shared,
            _ => shared.iter().map(|x| (x >> 2) | (1 << 62) | 1).collect(),
        };
        let a = shingle_set(shared.iter().copied().chain(only(na, rng)));
        let b = shingle_set(shared.iter().copied().chain(only(nb, rng)));
        (a, b)
    }

    #[test]
    fn jaccard_at_least_agrees_with_jaccard() {
        let mut rng = Rng(17);
        let sizes = [0, 1, 2, 3, 5, 8, 31, 32, 33, 64, 100, 257, 700];
        for &na in &sizes {
            for &nb in &sizes {
                let most = na.min(nb);
                let commons: Vec<usize> = if most <= 10 {
                    (0..=most).collect()
                } else {
                    vec![0, 1, most / 3, most / 2, most * 4 / 7, most - 1, most]
                };
                for &c in &commons {
                    for place in 0..3 {
                        let (a, b) = with_common(&mut rng, na, nb, c, place);
                        if a.len() != na || b.len() != nb {
                            continue; // a 64-bit collision: never in practice
                        }
                        let union = na + nb - c;
                        // At the exact similarity of c, c - 1 and c + 1 shared values,
                        // just around them, and at the usual thresholds.
                        let mut ts = vec![0.0, -1.0, 0.4, 0.5, 0.8, 1.0, 1.5, f64::NAN];
                        for k in [c.saturating_sub(1), c, c + 1] {
                            if union > 0 && k <= most {
                                let r = k as f64 / (na + nb - k) as f64;
                                ts.extend([r, r.next_up(), r.next_down()]);
                            }
                        }
                        ts.push(rng.next() as f64 / u64::MAX as f64);
                        for t in ts {
                            check_at_least(&a, &b, t);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn jaccard_at_least_on_identical_disjoint_and_floods() {
        let mut rng = Rng(5);
        let a = shingle_set((0..2000).map(|_| rng.next()));
        for t in [0.0, 0.4, 0.99, 1.0] {
            check_at_least(&a, &a, t); // identical
        }
        let b: Vec<u64> = a.iter().map(|x| x ^ 1).collect();
        let b = shingle_set(b);
        check_at_least(&a, &b, 0.4); // disjoint, interleaved
        check_at_least(&a, &b, 0.0);
        // A flood: one large set against many that differ from it in one value each, or
        // in a run at the front, the middle or the back (where the merge can give up).
        for k in 0..200 {
            let mut c = a.clone();
            let at = (k * 37) % c.len();
            let run = k % 50 * 20;
            let end = (at + run).min(c.len());
            for x in &mut c[at..end] {
                *x ^= 1 << 40;
            }
            c[at] = rng.next();
            let c = shingle_set(c);
            for t in [0.4, 0.5, 0.9, 0.98, 0.999] {
                check_at_least(&a, &c, t);
            }
        }
        // Very different sizes (the galloping path).
        let small: Vec<u64> = a.iter().step_by(40).copied().collect();
        for t in [0.0, 0.01, 0.02, 0.025, 0.03] {
            check_at_least(&small, &a, t);
        }
    }

    #[test]
    fn set_filter_never_rules_out_a_match() {
        let mut rng = Rng(23);
        let mut filter = SetFilter::default();
        let mut ruled_out = 0;
        for &(na, nb) in &[(0, 5), (1, 1), (3, 40), (50, 50), (300, 280), (700, 900), (2000, 64)] {
            let most = na.min(nb);
            for common in [0, 1, most / 3, most / 2, most].into_iter().filter(|&c| c <= most) {
                for place in 0..3 {
                    let (a, b) = with_common(&mut rng, na, nb, common, place);
                    filter.fill(&a);
                    let shared = intersection_size(&a, &b);
                    // Up to the true count it may share; past it, often not.
                    for needed in [0, shared.saturating_sub(1), shared] {
                        assert!(filter.may_share(&b, needed), "{na} {nb} {shared} {needed}");
                    }
                    for t in [0.1, 0.4, 0.8] {
                        if let Some(needed) = jaccard_min_common(a.len(), b.len(), t) {
                            let may = filter.may_share(&b, needed);
                            assert!(may || jaccard(&a, &b) < t);
                            ruled_out += usize::from(!may);
                        }
                    }
                    assert!(!filter.may_share(&b, b.len() + 1));
                    // The answer of counting every hit, at every count needed.
                    let hits = b
                        .iter()
                        .filter(|&&x| {
                            let bit = SetFilter::bit(x, filter.shift);
                            filter.bits[bit / 64] >> (bit % 64) & 1 == 1
                        })
                        .count();
                    for needed in 0..=b.len() + 1 {
                        assert_eq!(filter.may_share(&b, needed), hits >= needed);
                    }
                }
            }
        }
        // It does its work: most pairs far below the thresholds are ruled out.
        assert!(ruled_out > 40, "{ruled_out}");
        // An empty filter: only nothing needed.
        filter.fill(&[]);
        assert!(filter.may_share(&[1, 2], 0));
        assert!(!filter.may_share(&[1, 2], 1));
    }
}
