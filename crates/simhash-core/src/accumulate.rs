//! The per-bit vote: add ±weight for each feature hash, keep the sign.

use crate::Fingerprint;

/// For each byte value, the eight ±1 votes of its bits (bit 0 first). Adding a row times the
/// weight to eight counters is a handful of SIMD instructions, where testing 64 bits one by one
/// costs 64 branches per feature.
static SIGNS: [[i32; 8]; 256] = {
    let mut t = [[0i32; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut bit = 0;
        while bit < 8 {
            t[byte][bit] = if (byte >> bit) & 1 == 1 { 1 } else { -1 };
            bit += 1;
        }
        byte += 1;
    }
    t
};

/// Adds up weighted per-bit votes of 64-bit feature hashes and keeps the sign of each bit.
///
/// Bit `i` of the result is 1 exactly when the total weight of the features with bit `i` set
/// is strictly greater than the total weight of those with it clear; a tie gives 0. With unit
/// weights this is the seeds' `compute` (strict majority).
///
/// Weights are integers so that the result never depends on floating-point rounding. The
/// accumulator never allocates and can be [reset](Accumulator::reset) and reused.
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
    /// Fast 32-bit counters, folded into `totals` before they could overflow.
    lanes: [i32; 64],
    totals: [i64; 64],
    /// Sum of the weights added to `lanes` since the last fold: bounds `|lanes[i]|`.
    pending: u64,
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
        Accumulator { lanes: [0; 64], totals: [0; 64], pending: 0, features: 0 }
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
        let w = u64::from(weight);
        if w > i32::MAX as u64 {
            // Too heavy for the fast lanes: vote directly in 64 bits.
            for (i, t) in self.totals.iter_mut().enumerate() {
                *t += if (hash >> i) & 1 == 1 { w as i64 } else { -(w as i64) };
            }
            return;
        }
        if self.pending + w > i32::MAX as u64 {
            self.fold();
        }
        self.pending += w;
        let w = w as i32;
        let bytes = hash.to_le_bytes();
        for (chunk, byte) in self.lanes.chunks_exact_mut(8).zip(bytes) {
            let signs = &SIGNS[byte as usize];
            for (lane, sign) in chunk.iter_mut().zip(signs) {
                *lane += sign * w;
            }
        }
    }

    /// Adds one feature with weight 1 (the seeds' unweighted vote).
    #[inline]
    pub fn add_unit(&mut self, hash: u64) {
        self.features += 1;
        if self.pending == i32::MAX as u64 {
            self.fold();
        }
        self.pending += 1;
        let bytes = hash.to_le_bytes();
        for (chunk, byte) in self.lanes.chunks_exact_mut(8).zip(bytes) {
            let signs = &SIGNS[byte as usize];
            for (lane, sign) in chunk.iter_mut().zip(signs) {
                *lane += sign;
            }
        }
    }

    fn fold(&mut self) {
        for (t, l) in self.totals.iter_mut().zip(&mut self.lanes) {
            *t += i64::from(*l);
            *l = 0;
        }
        self.pending = 0;
    }

    /// The fingerprint of the votes so far, or `None` if no feature was added.
    pub fn finish(&self) -> Option<Fingerprint> {
        if self.features == 0 {
            return None;
        }
        let mut out = 0u64;
        for (i, (t, l)) in self.totals.iter().zip(&self.lanes).enumerate() {
            if t + i64::from(*l) > 0 {
                out |= 1 << i;
            }
        }
        Some(Fingerprint(out))
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
