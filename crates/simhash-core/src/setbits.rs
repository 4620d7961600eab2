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

/// A set's bitmap ([`set_bits`]) as [`common_at_most`] reads it: its words, and how many
/// of the set's values share their bit with another of its values (what [`set_bits`]
/// returns).
#[derive(Clone, Copy, Debug)]
pub struct SetBits<'a> {
    /// The bitmap's words.
    pub words: &'a [u64],
    /// The set's values less the bits they set.
    pub crowded: usize,
}

/// Appends the bitmap of `set` (distinct values) to `out`: [`set_bits_words`]`(set.len())`
/// words, one bit set for each value; returns how many values share their bit with
/// another (the set's size less the bits set). Two bitmaps bound the values their sets
/// share ([`common_at_most`]).
///
/// ```
/// use simhash_core::{SetBits, common_at_most, intersection_size, set_bits};
///
/// let a: Vec<u64> = (0..500).map(|x: u64| x.wrapping_mul(0x2545_f491_4f6c_dd1d)).collect();
/// let b: Vec<u64> = (300..700).map(|x: u64| x.wrapping_mul(0x2545_f491_4f6c_dd1d)).collect();
/// let (mut bits_a, mut bits_b) = (Vec::new(), Vec::new());
/// let crowded_a = set_bits(&a, &mut bits_a);
/// let crowded_b = set_bits(&b, &mut bits_b);
/// let bound = common_at_most(
///     SetBits { words: &bits_a, crowded: crowded_a },
///     SetBits { words: &bits_b, crowded: crowded_b },
/// );
/// assert!(bound >= intersection_size(&a, &b)); // 200 shared: never less
/// assert!(bound < 260); // and not much more
/// ```
pub fn set_bits(set: &[u64], out: &mut Vec<u64>) -> usize {
    let words = set_bits_words(set.len());
    let start = out.len();
    out.resize(start + words, 0);
    let map = &mut out[start..];
    for &x in set {
        let b = bit(x, words * 64);
        map[b / 64] |= 1 << (b % 64);
    }
    let bits: usize = map.iter().map(|w| w.count_ones() as usize).sum();
    set.len() - bits
}

/// An upper bound on the values two sets of distinct values share, from their
/// [`set_bits`] bitmaps. The larger bitmap is folded to the smaller's size (its halves
/// OR-ed); each shared value sets a bit in both, and the shared values beyond the bits
/// they set are at most the crowded values of the set whose bitmap is not folded (of
/// either when both are the same size). So the bound is the bits both have plus those.
/// Uses the CPU's vector and popcount instructions where it has them.
pub fn common_at_most(a: SetBits<'_>, b: SetBits<'_>) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            // SAFETY: the CPU has these instructions.
            return unsafe { common_at_most_avx512(a, b) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has these instructions.
            return unsafe { common_at_most_avx2(a, b) };
        }
    }
    common_at_most_impl(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
fn common_at_most_avx512(a: SetBits<'_>, b: SetBits<'_>) -> usize {
    common_at_most_impl(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn common_at_most_avx2(a: SetBits<'_>, b: SetBits<'_>) -> usize {
    common_at_most_impl(a, b)
}

/// Words folded at a time (on the stack) when the larger bitmap is folded.
const FOLD_BLOCK: usize = 64;

#[inline(always)]
fn common_at_most_impl(a: SetBits<'_>, b: SetBits<'_>) -> usize {
    let (small, large) = if a.words.len() <= b.words.len() { (a, b) } else { (b, a) };
    let words = small.words.len();
    if words == 0 || !words.is_power_of_two() || large.words.len() % words != 0 {
        // Not two bitmaps of set_bits: no bound.
        return usize::MAX;
    }
    let both: u64 = if large.words.len() == words {
        small.words.iter().zip(large.words).map(|(s, l)| u64::from((s & l).count_ones())).sum()
    } else {
        let mut both = 0;
        let mut folded = [0u64; FOLD_BLOCK];
        for (block, s) in small.words.chunks(FOLD_BLOCK).enumerate() {
            let start = block * FOLD_BLOCK;
            let folded = &mut folded[..s.len()];
            folded.copy_from_slice(&large.words[start..start + s.len()]);
            for half in large.words.chunks_exact(words).skip(1) {
                for (f, l) in folded.iter_mut().zip(&half[start..start + s.len()]) {
                    *f |= l;
                }
            }
            both +=
                s.iter().zip(&*folded).map(|(s, l)| u64::from((s & l).count_ones())).sum::<u64>();
        }
        both
    };
    let crowded =
        if large.words.len() == words { small.crowded.min(large.crowded) } else { small.crowded };
    both as usize + crowded
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

    /// `common_at_most` as its documentation defines it, counted with sets of bit indices
    /// instead of bitmaps: the bits both sets set in a bitmap of the smaller size (folding
    /// keeps an index's low bits), plus the crowded values of the set whose bitmap is not
    /// folded (the fewer of the two when both are the same size).
    fn brute_force_bound(a: &[u64], b: &[u64]) -> usize {
        use std::collections::HashSet;
        let indices = |set: &[u64], bits: usize| -> HashSet<usize> {
            set.iter().map(|&x| bit(x, bits)).collect()
        };
        let (wa, wb) = (set_bits_words(a.len()), set_bits_words(b.len()));
        let bits = wa.min(wb) * 64;
        let both = indices(a, bits).intersection(&indices(b, bits)).count();
        let crowded_a = a.len() - indices(a, wa * 64).len();
        let crowded_b = b.len() - indices(b, wb * 64).len();
        let crowded = match wa.cmp(&wb) {
            std::cmp::Ordering::Less => crowded_a,
            std::cmp::Ordering::Greater => crowded_b,
            std::cmp::Ordering::Equal => crowded_a.min(crowded_b),
        };
        both + crowded
    }

    fn bound(a: &[u64], b: &[u64]) -> usize {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let x = SetBits { crowded: set_bits(a, &mut x), words: &x };
        let y = SetBits { crowded: set_bits(b, &mut y), words: &y };
        assert_eq!(x.words.len(), set_bits_words(a.len()));
        assert_eq!(y.words.len(), set_bits_words(b.len()));
        let bound = common_at_most(x, y);
        let want = brute_force_bound(a, b);
        assert_eq!(bound, want, "{} and {} values: the brute-force count", a.len(), b.len());
        assert_eq!(common_at_most(y, x), want, "symmetric");
        // The portable code, which `common_at_most` skips on a CPU with AVX2 or AVX-512.
        assert_eq!(common_at_most_impl(x, y), want, "without vector instructions");
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
            for &(na, nb) in &[
                (0, 0),
                (0, 5),
                (1, 1),
                (3, 40),
                (50, 50),
                (300, 280),
                (700, 900),
                (2000, 64),
                // Bitmaps of 512 and 1024 words: the larger is folded in several blocks.
                (1200, 3000),
            ] {
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
                    // Never more than the smaller set: its values set a bit or are crowded.
                    assert!(bound <= most, "{na} {nb} {shared} {bound}");
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
        assert_eq!(set_bits(&same_bit, &mut words), 299);
        assert_eq!(words.iter().map(|w| w.count_ones()).sum::<u32>(), 1);
        assert_eq!(bound(&same_bit, &same_bit), 300);
        // Values that share bits only once the larger bitmap is folded: the smaller set's
        // 8 values set 4 bits of its 2 words; the larger (16 words) has none crowded.
        let small: Vec<u64> = (0..8).map(|k| with_bit(k % 4 + 128 * (k / 4), k)).collect();
        let mut large = small.clone();
        large.extend((300..340).map(|k| with_bit(k, k)));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        assert_eq!((set_bits(&small, &mut x), set_bits(&large, &mut y)), (4, 0));
        assert_eq!((x.len(), y.len()), (2, 16));
        let (mut small, mut large) = (small, large);
        small.sort_unstable();
        large.sort_unstable();
        assert_eq!(bound(&small, &large), 8);
        // Not bitmaps of set_bits: no bound.
        let bits = |words| SetBits { words, crowded: 0 };
        assert_eq!(common_at_most(bits(&[]), bits(&[1])), usize::MAX);
        assert_eq!(common_at_most(bits(&[1, 2, 3]), bits(&[1, 2, 3, 4, 5, 6])), usize::MAX);
        // The largest bitmap.
        assert_eq!(set_bits_words(usize::MAX), MAX_WORDS);
        assert_eq!(set_bits_words(0), 1);
        assert_eq!(set_bits_words(4), 1);
        assert_eq!(set_bits_words(5), 2);
    }
}
