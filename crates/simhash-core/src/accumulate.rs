//! The per-bit vote: add ±weight for each feature hash, keep the sign.

use crate::Fingerprint;

/// For each byte value `x`, a `u64` whose byte `j` is bit `j` of `x`. Adding these to eight
/// `u64`s counts the set bits of 64 positions in 64 byte-sized lanes (SIMD within a
/// register): 8 lookups and 8 additions per feature, where testing each bit costs 64
/// branches.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut x = 0;
    while x < 256 {
        let mut j = 0;
        while j < 8 {
            t[x] |= ((x as u64 >> j) & 1) << (8 * j);
            j += 1;
        }
        x += 1;
    }
    t
};

/// For each byte value, per bit: 0 when the bit is set, -1 (all ones) when it is clear.
static CLEAR_MASKS: [[i64; 8]; 256] = {
    let mut t = [[0i64; 8]; 256];
    let mut x = 0;
    while x < 256 {
        let mut j = 0;
        while j < 8 {
            t[x][j] = if (x >> j) & 1 == 1 { 0 } else { -1 };
            j += 1;
        }
        x += 1;
    }
    t
};

/// Byte lanes hold at most this many votes before they are folded into the wide counters.
const LANE_MAX: u32 = 255;

/// Adds up weighted per-bit votes of 64-bit feature hashes and keeps the sign of each bit.
///
/// Bit `i` of the result is 1 exactly when the total weight of the features with bit `i` set
/// is strictly greater than the total weight of those with it clear; a tie gives 0. With unit
/// weights this is simhash-cpp's `compute` (strict majority).
///
/// Weights are integers so that the result never depends on floating-point rounding. The
/// accumulator never allocates and can be [reset](Accumulator::reset) and reused. It is
/// fastest when most features share one weight (the first one added), as they do in every
/// preset: those only count set bits; other weights take a slower exact path.
///
/// ```
/// use simhash_core::{Accumulator, Fingerprint};
///
/// let mut acc = Accumulator::new();
/// assert_eq!(acc.finish(), None); // no features: no fingerprint
/// acc.add(0b011, 1);
/// acc.add(0b110, 1);
/// acc.add(0b010, 1);
/// assert_eq!(acc.finish(), Some(Fingerprint(0b010)));
/// acc.add(0b101, 3); // one heavy feature outvotes the rest
/// assert_eq!(acc.finish(), Some(Fingerprint(0b101)));
/// ```
#[derive(Clone, Debug)]
pub struct Accumulator {
    /// The weight most features are expected to have (the first weight added).
    common: Option<u32>,
    /// Features of the common weight: set-bit counts in byte lanes (bit `8b + j` in byte
    /// `j` of `lanes[b]`), folded into `ones` every `LANE_MAX` features.
    lanes: [u64; 8],
    in_lanes: u32,
    ones: [u64; 64],
    common_features: u64,
    /// Features of any other weight: exact signed sums.
    other: [i64; 64],
    features: u64,
}

impl Default for Accumulator {
    fn default() -> Accumulator {
        Accumulator::new()
    }
}

impl Accumulator {
    /// An empty accumulator.
    pub const fn new() -> Accumulator {
        Accumulator {
            common: None,
            lanes: [0; 8],
            in_lanes: 0,
            ones: [0; 64],
            common_features: 0,
            other: [0; 64],
            features: 0,
        }
    }

    /// Clears all votes so the accumulator can be reused for the next document.
    pub fn reset(&mut self) {
        *self = Accumulator::new();
    }

    /// How many features were added since the last reset.
    pub fn features(&self) -> u64 {
        self.features
    }

    /// Adds one feature: `+weight` to every bit set in `hash`, `-weight` to every bit clear.
    #[inline]
    pub fn add(&mut self, hash: u64, weight: u32) {
        self.features += 1;
        if *self.common.get_or_insert(weight) == weight {
            self.count(hash);
        } else {
            let w = i64::from(weight);
            for (sums, byte) in self.other.chunks_exact_mut(8).zip(hash.to_le_bytes()) {
                // Branch- and multiply-free: (w ^ m) - m is w when m = 0, -w when m = -1.
                for (sum, m) in sums.iter_mut().zip(&CLEAR_MASKS[byte as usize]) {
                    *sum += (w ^ m) - m;
                }
            }
        }
    }

    /// Adds one feature with weight 1 (simhash-cpp's and the fork's unweighted vote).
    #[inline]
    pub fn add_unit(&mut self, hash: u64) {
        self.add(hash, 1);
    }

    #[inline(always)]
    fn count(&mut self, hash: u64) {
        self.common_features += 1;
        for (lane, byte) in self.lanes.iter_mut().zip(hash.to_le_bytes()) {
            *lane += SPREAD[byte as usize];
        }
        self.in_lanes += 1;
        if self.in_lanes == LANE_MAX {
            self.fold();
        }
    }

    fn fold(&mut self) {
        for (b, lane) in self.lanes.iter_mut().enumerate() {
            for j in 0..8 {
                self.ones[8 * b + j] += (*lane >> (8 * j)) & 0xff;
            }
            *lane = 0;
        }
        self.in_lanes = 0;
    }

    /// The fingerprint of the votes so far, or `None` if no feature was added.
    pub fn finish(&self) -> Option<Fingerprint> {
        if self.features == 0 {
            return None;
        }
        let common = i128::from(self.common.unwrap_or(0));
        let n = i128::from(self.common_features);
        let mut out = 0u64;
        for i in 0..64 {
            let pending = (self.lanes[i / 8] >> (8 * (i % 8))) & 0xff;
            let ones = i128::from(self.ones[i] + pending);
            // Set bits vote +common, clear bits -common: common * (ones - (n - ones)).
            let total = common * (2 * ones - n) + i128::from(self.other[i]);
            out |= u64::from(total > 0) << i;
        }
        Some(Fingerprint(out))
    }
}

/// The unweighted vote in bulk: per bit position, how many of the added hashes have it set,
/// counted with carry-save adders (Harley-Seal). Eight hashes cost seven full adders of five
/// word operations instead of 64 counter updates each.
///
/// Its [`majority`](BitCounts::majority) is [`Accumulator`]'s `finish` with every weight 1:
/// bit `i` is set exactly when `2 * ones_i > hashes`.
#[derive(Clone, Debug)]
pub(crate) struct BitCounts {
    /// Hashes not yet reduced (the first `pending` of them).
    block: [u64; 8],
    pending: usize,
    /// Carry-save state: bit `i` of `ones`, `twos`, `fours` weighs 1, 2, 4 at position `i`.
    ones: u64,
    twos: u64,
    fours: u64,
    /// Vertical counters of the weight-8 carries: bit `i` of `eights[k]` is bit `k` of the
    /// count at position `i`. Five planes hold 31 carries; then they go to `counts`.
    eights: [u64; 5],
    in_eights: u32,
    /// Flushed counts (in units of one hash).
    counts: [u64; 64],
    hashes: u64,
}

/// A full adder on 64 lanes: returns (carry, sum) of `a + b + c`.
#[inline(always)]
fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

impl BitCounts {
    pub(crate) const fn new() -> BitCounts {
        BitCounts {
            block: [0; 8],
            pending: 0,
            ones: 0,
            twos: 0,
            fours: 0,
            eights: [0; 5],
            in_eights: 0,
            counts: [0; 64],
            hashes: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn add(&mut self, hash: u64) {
        self.block[self.pending] = hash;
        self.pending += 1;
        if self.pending == 8 {
            self.pending = 0;
            self.reduce();
        }
    }

    /// Folds the eight hashes of `block` into the carry-save state.
    #[inline(always)]
    fn reduce(&mut self) {
        let h = self.block;
        self.hashes += 8;
        let (twos_a, ones) = csa(self.ones, h[0], h[1]);
        let (twos_b, ones) = csa(ones, h[2], h[3]);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, h[4], h[5]);
        let (twos_b, ones) = csa(ones, h[6], h[7]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (mut carry, fours) = csa(self.fours, fours_a, fours_b);
        (self.ones, self.twos, self.fours) = (ones, twos, fours);
        for plane in &mut self.eights {
            let next = *plane & carry;
            *plane ^= carry;
            carry = next;
        }
        self.in_eights += 1;
        if self.in_eights == 31 {
            self.flush_eights();
        }
    }

    fn flush_eights(&mut self) {
        add_planes(&mut self.counts, &self.eights, 8);
        self.eights = [0; 5];
        self.in_eights = 0;
    }

    /// Adds `weight * n_i` to the count of position `i`, where `n_i` has bit `k` equal to bit
    /// `i` of `planes[k]` (at most 8 planes): counts made elsewhere (the wide gram path).
    /// Their hashes are counted with [`add_hash_count`](BitCounts::add_hash_count).
    pub(crate) fn add_planes(&mut self, planes: &[u64], weight: u64) {
        add_planes(&mut self.counts, planes, weight);
    }

    /// Adds `n` to the number of hashes voted (see [`add_planes`](BitCounts::add_planes)).
    pub(crate) fn add_hash_count(&mut self, n: u64) {
        self.hashes += n;
    }

    /// The strict per-bit majority of the hashes added, or `None` if there were none.
    pub(crate) fn majority(&self) -> Option<Fingerprint> {
        let hashes = self.hashes + self.pending as u64;
        if hashes == 0 {
            return None;
        }
        let mut counts = self.counts;
        add_planes(&mut counts, &self.eights, 8);
        // The pending hashes (at most 7) added to ones, twos, fours (at most 7) in a 4-bit
        // vertical counter, then spread once.
        let mut low = [self.ones, self.twos, self.fours, 0];
        for &h in &self.block[..self.pending] {
            let mut carry = h;
            for plane in &mut low {
                let next = *plane & carry;
                *plane ^= carry;
                carry = next;
            }
        }
        add_planes(&mut counts, &low, 1);
        let mut out = 0u64;
        for (i, ones) in counts.iter().enumerate() {
            out |= u64::from(2 * ones > hashes) << i;
        }
        Some(Fingerprint(out))
    }
}

/// Adds `weight * n_i` to `counts[i]`, where `n_i` has bit `k` equal to bit `i` of
/// `planes[k]` (at most 8 planes): the planes' bytes are spread into byte lanes with
/// [`SPREAD`], 8 positions per lookup.
fn add_planes(counts: &mut [u64; 64], planes: &[u64], weight: u64) {
    debug_assert!(planes.len() <= 8);
    for (j, counts) in counts.chunks_exact_mut(8).enumerate() {
        let mut lanes = 0u64;
        for (k, plane) in planes.iter().enumerate() {
            lanes += SPREAD[((plane >> (8 * j)) & 0xff) as usize] << k;
        }
        for (i, count) in counts.iter_mut().enumerate() {
            *count += weight * ((lanes >> (8 * i)) & 0xff);
        }
    }
}

/// simhash-py's `compute`: the strict per-bit majority of `hashes` (0 for no hashes).
///
/// ```
/// assert_eq!(simhash_core::compute([0xABCD, 0xBCDE, 0xCDEF]), 0xadcf);
/// assert_eq!(simhash_core::compute([]), 0);
/// ```
pub fn compute(hashes: impl IntoIterator<Item = u64>) -> u64 {
    let mut acc = Accumulator::new();
    for h in hashes {
        acc.add_unit(h);
    }
    acc.finish().map_or(0, Fingerprint::get)
}

/// Simhash of caller-weighted features, e.g. TF-IDF weights: bit `i` is 1 when the weights
/// of the features with bit `i` set add up to more than those with it clear.
///
/// Returns `None` when there are no features. Weights should be finite; a feature with a
/// negative weight votes for the opposite bits, and a NaN weight makes every bit it touches 0.
///
/// ```
/// use simhash_core::{compute_weighted, Fingerprint};
///
/// let fp = compute_weighted([(0b01, 0.5), (0b10, 2.0)]);
/// assert_eq!(fp, Some(Fingerprint(0b10)));
/// ```
pub fn compute_weighted(features: impl IntoIterator<Item = (u64, f64)>) -> Option<Fingerprint> {
    let mut sums = [0f64; 64];
    let mut any = false;
    for (hash, weight) in features {
        any = true;
        for (i, s) in sums.iter_mut().enumerate() {
            *s += if (hash >> i) & 1 == 1 { weight } else { -weight };
        }
    }
    any.then(|| {
        let mut out = 0u64;
        for (i, s) in sums.iter().enumerate() {
            if *s > 0.0 {
                out |= 1 << i;
            }
        }
        Fingerprint(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One branch per bit: the obvious definition the fast path must match.
    fn naive(features: &[(u64, u32)]) -> Option<u64> {
        if features.is_empty() {
            return None;
        }
        let mut v = [0i64; 64];
        for &(h, w) in features {
            for (i, c) in v.iter_mut().enumerate() {
                if (h >> i) & 1 == 1 {
                    *c += i64::from(w);
                } else {
                    *c -= i64::from(w);
                }
            }
        }
        Some(v.iter().enumerate().filter(|(_, c)| **c > 0).fold(0, |acc, (i, _)| acc | 1 << i))
    }

    #[test]
    fn compute_reference_vectors() {
        assert_eq!(compute([0xABCD, 0xBCDE, 0xCDEF]), 0xadcf);
        assert_eq!(compute([]), 0);
        assert_eq!(compute([u64::MAX]), u64::MAX);
        // A tie gives 0.
        assert_eq!(compute([u64::MAX, 0]), 0);
    }

    #[test]
    fn matches_naive_on_random_weights() {
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [1usize, 2, 3, 10, 101, 1000] {
            let features: Vec<(u64, u32)> =
                (0..n).map(|_| (next(), (next() % 5000) as u32)).collect();
            let mut acc = Accumulator::new();
            for &(h, w) in &features {
                acc.add(h, w);
            }
            assert_eq!(acc.finish().map(Fingerprint::get), naive(&features), "n = {n}");
        }
    }

    #[test]
    fn many_features_fold_lanes_exactly() {
        // Past the byte lanes' capacity several times, with a second weight mixed in.
        let mut x = 7u64;
        let features: Vec<(u64, u32)> = (0..2000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x, if i % 97 == 0 { 3 } else { 1 })
            })
            .collect();
        for n in [254, 255, 256, 509, 510, 511, 2000] {
            let mut acc = Accumulator::new();
            for &(h, w) in &features[..n] {
                acc.add(h, w);
            }
            assert_eq!(acc.finish().map(Fingerprint::get), naive(&features[..n]), "n = {n}");
        }
        // All-ones and all-zeros hashes 300 times: every lane at its limit.
        let mut acc = Accumulator::new();
        for _ in 0..300 {
            acc.add(u64::MAX, 1);
        }
        for _ in 0..299 {
            acc.add(0, 1);
        }
        assert_eq!(acc.finish(), Some(Fingerprint(u64::MAX)));
        acc.add(0, 1);
        assert_eq!(acc.finish(), Some(Fingerprint(0)), "a tie gives 0");
    }

    #[test]
    fn huge_weights_do_not_overflow() {
        let mut acc = Accumulator::new();
        acc.add(u64::MAX, u32::MAX);
        acc.add(0, u32::MAX - 1);
        for _ in 0..5 {
            acc.add(0, i32::MAX as u32);
        }
        for _ in 0..6 {
            acc.add(u64::MAX, i32::MAX as u32);
        }
        // Set: u32::MAX + 6 * (2^31 - 1); clear: u32::MAX - 1 + 5 * (2^31 - 1).
        assert_eq!(acc.finish(), Some(Fingerprint(u64::MAX)));
        let mut acc = Accumulator::new();
        acc.add(0b1, i32::MAX as u32);
        acc.add(0b1, i32::MAX as u32);
        acc.add(0b0, i32::MAX as u32);
        acc.add(0b0, i32::MAX as u32);
        acc.add(0b1, 1);
        assert_eq!(acc.finish(), Some(Fingerprint(0b1)));
    }

    #[test]
    fn reset_forgets_everything() {
        let mut acc = Accumulator::new();
        acc.add(u64::MAX, 7);
        acc.reset();
        assert_eq!(acc.features(), 0);
        assert_eq!(acc.finish(), None);
        acc.add(5, 1);
        assert_eq!(acc.finish(), Some(Fingerprint(5)));
    }

    #[test]
    fn weighted_floats() {
        assert_eq!(compute_weighted(std::iter::empty()), None);
        assert_eq!(compute_weighted([(0b1, 1.0), (0b0, 1.0)]), Some(Fingerprint(0)));
        // A negative weight votes for the opposite of every bit.
        assert_eq!(compute_weighted([(0b1, -1.0)]), Some(Fingerprint(!0b1)));
        assert_eq!(compute_weighted([(0b1, 1.0)]), Some(Fingerprint(1)));
    }
}
