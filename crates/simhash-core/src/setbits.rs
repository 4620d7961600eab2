//! Bitmaps of shingle sets that bound how many values two sets share, a word at a time.

/// Bitmap bits per value of a set: about 1 in 16 of another set's values is a false hit.
const BITS_PER_VALUE: usize = 16;

/// The most words a bitmap has (2^24 bits: past a million values, fewer bits a value).
const MAX_WORDS: usize = 1 << 18;

/// A value's bit in a bitmap of `bits` bits (a power of two): the low bits of a 24-bit
/// mix, so that halving the bitmap (OR-ing its halves) drops the top bit of every index.
fn bit(x: u64, bits: usize) -> usize {
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize & (bits - 1)
}

/// The words of the bitmap [`set_bits`] makes of a set of `len` values: a power of two,
/// at least one, at most 2^18.
pub fn set_bits_words(len: usize) -> usize {
    (len.saturating_mul(BITS_PER_VALUE).div_ceil(64)).next_power_of_two().clamp(1, MAX_WORDS)
}

/// Appends the bitmap of `set` (distinct values) to `out`: [`set_bits_words`]`(set.len())`
/// words, one bit set for each value. Two bitmaps bound the values their sets share
/// ([`common_at_most`]).
///
/// ```
/// use simhash_core::{common_at_most, intersection_size, set_bits};
///
/// let a: Vec<u64> = (0..500).map(|x: u64| x.wrapping_mul(0x2545_f491_4f6c_dd1d)).collect();
/// let b: Vec<u64> = (300..700).map(|x: u64| x.wrapping_mul(0x2545_f491_4f6c_dd1d)).collect();
/// let (mut bits_a, mut bits_b) = (Vec::new(), Vec::new());
/// set_bits(&a, &mut bits_a);
/// set_bits(&b, &mut bits_b);
/// let bound = common_at_most(&bits_a, a.len(), &bits_b, b.len());
/// assert!(bound >= intersection_size(&a, &b)); // 200 shared: never less
/// assert!(bound < 260); // and not much more
/// ```
pub fn set_bits(set: &[u64], out: &mut Vec<u64>) {
    let words = set_bits_words(set.len());
    let start = out.len();
    out.resize(start + words, 0);
    let map = &mut out[start..];
    for &x in set {
        let b = bit(x, words * 64);
        map[b / 64] |= 1 << (b % 64);
    }
}

/// An upper bound on the values two sets of distinct values share, from their
/// [`set_bits`] bitmaps (`a` of a set of `a_len` values, `b` of `b_len`). The larger
/// bitmap is folded to the smaller's size; each shared value sets a bit in both, and
/// values beyond the bits they set are at most the values of either set that share a
/// bit with another of its own. So the bound is the bits both have plus the fewer of
/// those. Uses the popcnt instruction where the CPU has it.
pub fn common_at_most(a: &[u64], a_len: usize, b: &[u64], b_len: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the popcnt instruction.
        return unsafe { common_at_most_popcnt(a, a_len, b, b_len) };
    }
    common_at_most_impl(a, a_len, b, b_len)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn common_at_most_popcnt(a: &[u64], a_len: usize, b: &[u64], b_len: usize) -> usize {
    common_at_most_impl(a, a_len, b, b_len)
}

#[inline(always)]
fn common_at_most_impl(a: &[u64], a_len: usize, b: &[u64], b_len: usize) -> usize {
    let (small, small_len, large, large_len) =
        if a.len() <= b.len() { (a, a_len, b, b_len) } else { (b, b_len, a, a_len) };
    let words = small.len();
    if words == 0 || !words.is_power_of_two() || large.len() % words != 0 {
        // Not two bitmaps of set_bits: no bound better than the smaller set.
        return a_len.min(b_len);
    }
    let (mut both, mut small_bits, mut large_bits) = (0usize, 0usize, 0usize);
    for (i, &s) in small.iter().enumerate() {
        let mut l = large[i];
        for fold in large[i..].iter().step_by(words).skip(1) {
            l |= fold;
        }
        both += (s & l).count_ones() as usize;
        small_bits += s.count_ones() as usize;
        large_bits += l.count_ones() as usize;
    }
    let crowded = small_len.saturating_sub(small_bits).min(large_len.saturating_sub(large_bits));
    (both + crowded).min(a_len.min(b_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intersection_size;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Two sorted sets of `na` and `nb` values sharing `common`, drawn from `values`.
    fn pair(
        rng: &mut u64,
        na: usize,
        nb: usize,
        common: usize,
        value: &dyn Fn(u64) -> u64,
    ) -> (Vec<u64>, Vec<u64>) {
        let mut seen = std::collections::HashSet::new();
        let mut pool: Vec<u64> = Vec::new();
        while pool.len() < na + nb - common {
            let x = value(splitmix(rng));
            if seen.insert(x) {
                pool.push(x);
            }
        }
        // Shuffle so that the shared values are spread.
        for i in (1..pool.len()).rev() {
            pool.swap(i, (splitmix(rng) % (i as u64 + 1)) as usize);
        }
        let mut a: Vec<u64> = pool[..na].to_vec();
        let mut b: Vec<u64> = pool[na - common..na - common + nb].to_vec();
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    /// A value whose 24-bit bit index is `index`, with `low`'s low 40 bits below it.
    fn with_bit(index: u64, low: u64) -> u64 {
        // The multiplier's inverse modulo 2^64 (Newton's iteration).
        let k: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut inverse = k;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(k.wrapping_mul(inverse)));
        }
        ((index << 40) | (low & ((1 << 40) - 1))).wrapping_mul(inverse)
    }

    fn bound(a: &[u64], b: &[u64]) -> usize {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        set_bits(a, &mut x);
        set_bits(b, &mut y);
        assert_eq!(x.len(), set_bits_words(a.len()));
        let bound = common_at_most(&x, a.len(), &y, b.len());
        assert_eq!(bound, common_at_most(&y, b.len(), &x, a.len()), "symmetric");
        assert_eq!(bound, common_at_most_impl(&x, a.len(), &y, b.len()), "popcnt or not");
        bound
    }

    #[test]
    fn never_below_the_shared_count() {
        let mut rng = 7;
        let mut tight = 0;
        let mut cases = 0;
        // Uniform values, and crowded ones: distinct values that set one of 64 bits only.
        let uniform = |x: u64| x;
        let crowded = |x: u64| with_bit(x % 64, x);
        assert_eq!(bit(crowded(12345), 1 << 24), 12345 % 64);
        let values: [&dyn Fn(u64) -> u64; 2] = [&uniform, &crowded];
        for (v, value) in values.into_iter().enumerate() {
            for &(na, nb) in
                &[(0, 0), (0, 5), (1, 1), (3, 40), (50, 50), (300, 280), (700, 900), (2000, 64)]
            {
                let most = na.min(nb);
                for common in [0, 1, most / 3, most / 2, most - most / 10, most] {
                    if common > most {
                        continue;
                    }
                    let (a, b) = pair(&mut rng, na, nb, common, value);
                    let shared = intersection_size(&a, &b);
                    assert_eq!(shared, common);
                    let bound = bound(&a, &b);
                    assert!(bound >= shared, "{na} {nb} {shared} {bound}");
                    assert!(bound <= most);
                    cases += 1;
                    // Uniform sets of fair size: within a few percent of the sets.
                    if v == 0 && most >= 50 && bound <= shared + (na + nb) / 12 {
                        tight += 1;
                    }
                }
            }
        }
        assert!(cases > 60, "{cases}");
        // It does its work: bounds close to the shared count.
        assert!(tight >= 20, "{tight}");
    }

    #[test]
    fn identical_sets_and_degenerate_bitmaps() {
        let mut rng = 3;
        let a: Vec<u64> = {
            let mut v: Vec<u64> = (0..1000).map(|_| splitmix(&mut rng)).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        assert_eq!(bound(&a, &a), a.len());
        // A set whose values all set one bit: the bound falls back to the set sizes.
        let same_bit: Vec<u64> = (0..300u64).map(|x| with_bit(77, x)).collect();
        let mut words = Vec::new();
        set_bits(&same_bit, &mut words);
        assert_eq!(words.iter().map(|w| w.count_ones()).sum::<u32>(), 1);
        assert_eq!(bound(&same_bit, &same_bit), 300);
        // Not bitmaps of set_bits: the smaller size.
        assert_eq!(common_at_most(&[], 5, &[1], 3), 3);
        assert_eq!(common_at_most(&[1, 2, 3], 5, &[1, 2, 3, 4, 5, 6], 9), 5);
        // The largest bitmap.
        assert_eq!(set_bits_words(usize::MAX), MAX_WORDS);
        assert_eq!(set_bits_words(0), 1);
        assert_eq!(set_bits_words(4), 1);
        assert_eq!(set_bits_words(5), 2);
    }
}
