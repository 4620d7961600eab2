//! A naive MinHash, written from the definition in `simhash_core`'s `minhash` module docs
//! ("Definition") and the band key of `simhash_index::lsh::DocSketch::bands`, not from their
//! code: plain loops, a map per slot, 128-bit arithmetic for the bins, densification by
//! trying every filled slot for every empty one. Slow (`K²` mixes for a small set) and
//! meant to be: the tests compare the engine's fast paths with it.
//!
//! Shared by `simhash-core`'s `minhash_reference` and `simhash-index`'s `lsh_reference`
//! tests (each includes it with `#[path]`).

use std::collections::{BTreeMap, BTreeSet};

/// The value of every slot of a featureless set's signature (never a filled slot's).
pub(crate) const EMPTY: u32 = u32::MAX;

/// The most slots a signature has; more are clamped to it, fewer than 1 to 1.
pub(crate) const MAX_PERM: usize = 1024;

/// The odd constant of the band hash's folded multiplications.
const BAND_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's finalizer, as the definition spells it out.
pub(crate) fn mix(z: u64) -> u64 {
    let mut z = z;
    z ^= z >> 30;
    z = z.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z
}

/// The inverse of [`mix`] (a bijection): to make features whose mix is chosen.
pub(crate) fn unmix(z: u64) -> u64 {
    let mut z = unshift(z, 31);
    z = z.wrapping_mul(inverse(0x94d0_49bb_1331_11eb));
    z = unshift(z, 27);
    z = z.wrapping_mul(inverse(0xbf58_476d_1ce4_e5b9));
    unshift(z, 30)
}

/// The `x` with `x ^ (x >> s) == y`, one more correct bit group per round.
fn unshift(y: u64, s: u32) -> u64 {
    let mut x = y;
    for _ in 0..=64 / s {
        x = y ^ (x >> s);
    }
    x
}

/// The multiplicative inverse of odd `a` modulo 2^64 (Newton: each round doubles the
/// correct bits, from 3).
fn inverse(a: u64) -> u64 {
    let mut x = a;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    assert_eq!(a.wrapping_mul(x), 1);
    x
}

/// An eight-letter ASCII name read as a big-endian `u64`.
fn salt(name: [u8; 8]) -> u64 {
    u64::from_be_bytes(name)
}

/// `fold(a, c)`: the XOR of the two halves of the 128-bit product.
pub(crate) fn fold(a: u64, c: u64) -> u64 {
    let p = u128::from(a) * u128::from(c);
    let low = (p % (1u128 << 64)) as u64;
    let high = (p / (1u128 << 64)) as u64;
    low ^ high
}

/// The low and high 32 bits of a word.
fn lo(x: u64) -> u64 {
    x % (1 << 32)
}

fn hi(x: u64) -> u64 {
    x / (1 << 32)
}

/// The definition's MinHash of `k` slots keyed by a seed.
#[derive(Debug)]
pub(crate) struct Naive {
    k: usize,
    key: u64,
    densify_key: u64,
}

impl Naive {
    pub(crate) fn new(num_perm: usize, seed: u64) -> Naive {
        let k = num_perm.clamp(1, MAX_PERM);
        let key = mix(seed ^ salt(*b"MINHASH1"));
        Naive { k, key, densify_key: mix(key ^ salt(*b"DENSIFY1")) }
    }

    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// The bin of a feature whose mix is `m`: `floor(lo(m) × K / 2^32)`.
    pub(crate) fn bin(&self, m: u64) -> usize {
        (u128::from(lo(m)) * self.k as u128 / (1u128 << 32)) as usize
    }

    /// The value of a feature whose mix is `m`: `min(hi(m), 2^32 - 2)`.
    pub(crate) fn value(m: u64) -> u32 {
        hi(m).min((1 << 32) - 2) as u32
    }

    /// The bin of feature `h`.
    pub(crate) fn bin_of(&self, h: u64) -> usize {
        self.bin(mix(h ^ self.key))
    }

    /// A feature whose mix is `m`.
    pub(crate) fn feature_with_mix(&self, m: u64) -> u64 {
        unmix(m) ^ self.key
    }

    /// The signature of the set of `features`; none for no features.
    pub(crate) fn signature(&self, features: impl IntoIterator<Item = u64>) -> Option<Vec<u32>> {
        let set: BTreeSet<u64> = features.into_iter().collect();
        // Step 2: each bin's least value.
        let mut least: BTreeMap<usize, u32> = BTreeMap::new();
        for &h in &set {
            let m = mix(h ^ self.key);
            let (bin, value) = (self.bin(m), Naive::value(m));
            let slot = least.entry(bin).or_insert(value);
            if value < *slot {
                *slot = value;
            }
        }
        // Step 3.
        if least.is_empty() {
            return None;
        }
        let mut sig = Vec::with_capacity(self.k);
        for i in 0..self.k {
            if let Some(&v) = least.get(&i) {
                sig.push(v);
                continue;
            }
            let mut best: Option<(u64, usize)> = None;
            for &j in least.keys() {
                let probe = mix(((i as u64) * (1 << 32) + j as u64).wrapping_add(self.densify_key));
                if best.is_none_or(|(p, _)| probe < p) {
                    best = Some((probe, j));
                }
            }
            let (_, j) = best.expect("some slot is filled");
            sig.push(least[&j]);
        }
        Some(sig)
    }
}

/// Step 4: the hash of band `b` of `r` rows of `sig`.
pub(crate) fn band_hash(sig: &[u32], b: usize, r: usize) -> u64 {
    let mut s: Vec<u64> = sig[b * r..(b + 1) * r].iter().map(|&v| u64::from(v)).collect();
    if r % 2 == 1 {
        s.push(0);
    }
    let mut acc = mix(salt(*b"LSHBAND1") ^ b as u64);
    for t in 0..s.len() / 2 {
        acc = fold(acc ^ (s[2 * t] + (1 << 32) * s[2 * t + 1]), BAND_MULTIPLIER);
    }
    mix(acc ^ r as u64)
}

/// All band hashes of `sig`, `bands` bands of `rows` rows.
pub(crate) fn band_hashes(sig: &[u32], bands: usize, rows: usize) -> Vec<u64> {
    (0..bands).map(|b| band_hash(sig, b, rows)).collect()
}

/// A band hash's 32-bit key: the XOR of its halves.
pub(crate) fn band_key(h: u64) -> u32 {
    (lo(h) ^ hi(h)) as u32
}

/// The slots two signatures agree on ([`EMPTY`] never agrees).
pub(crate) fn agreeing_slots(a: &[u32], b: &[u32]) -> usize {
    (0..a.len()).filter(|&i| a[i] == b[i] && a[i] != EMPTY).count()
}

/// `|A ∩ B| / |A ∪ B|`, 0 for two empty sets.
pub(crate) fn jaccard(a: &BTreeSet<u64>, b: &BTreeSet<u64>) -> f64 {
    let common = a.intersection(b).count();
    let union = a.len() + b.len() - common;
    if union == 0 { 0.0 } else { common as f64 / union as f64 }
}

/// splitmix64 as a generator, for reproducible random inputs.
#[derive(Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (n > 0), near enough for tests.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
