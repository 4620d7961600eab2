//! The online index's merges of new entries into a table's sorted arrays, split over the
//! threads by key range: the dedup walk merges each chunk's kept fingerprints into every
//! table, so a merge on one thread per table would bound the walk's speed-up by the
//! number of tables.

use rayon::prelude::*;

/// Entries merged on one thread at least: below this, splitting costs more than it saves.
const PIECE: usize = if cfg!(test) { 64 } else { 1 << 16 };

/// Merges two sorted sequences into one sorted sequence (ties: `a` first).
pub(crate) fn merge_sorted<T: Ord + Copy>(
    a: impl Iterator<Item = T>,
    b: impl Iterator<Item = T>,
) -> impl Iterator<Item = T> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) => {
            if x <= y {
                a.next()
            } else {
                b.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

/// The sorted `(key, slot)` entries of `keys`/`slots` (sorted, no two alike) and `extra`
/// (sorted, none alike any of them), merged, as two arrays: the same as one merge in
/// order, computed in pieces split at entries of the longer input on rayon's current pool.
pub(crate) fn par_merge(keys: &[u64], slots: &[u32], extra: &[(u64, u32)]) -> (Vec<u64>, Vec<u32>) {
    let len = keys.len() + extra.len();
    let pieces = (len / PIECE).clamp(1, rayon::current_num_threads() * 4);
    // Piece p holds the entries below pivot p + 1 and not below pivot p: pivots are
    // entries of the longer input, spaced evenly.
    let bounds: Vec<(usize, usize)> = (0..=pieces)
        .map(|p| {
            if p == 0 {
                (0, 0)
            } else if p == pieces {
                (keys.len(), extra.len())
            } else if keys.len() >= extra.len() {
                let i = p * keys.len() / pieces;
                let pivot = (keys[i], slots[i]);
                (i, extra.partition_point(|&e| e < pivot))
            } else {
                let j = p * extra.len() / pieces;
                (rank(keys, slots, extra[j]), j)
            }
        })
        .collect();
    let (mut out_keys, mut out_slots) = (vec![0u64; len], vec![0u32; len]);
    let mut key_parts = Vec::with_capacity(pieces);
    let mut slot_parts = Vec::with_capacity(pieces);
    let (mut rest_k, mut rest_s) = (&mut out_keys[..], &mut out_slots[..]);
    for w in bounds.windows(2) {
        let n = (w[1].0 - w[0].0) + (w[1].1 - w[0].1);
        let (k, tail_k) = std::mem::take(&mut rest_k).split_at_mut(n);
        let (s, tail_s) = std::mem::take(&mut rest_s).split_at_mut(n);
        (rest_k, rest_s) = (tail_k, tail_s);
        key_parts.push(k);
        slot_parts.push(s);
    }
    key_parts.into_par_iter().zip(slot_parts).zip(bounds.par_windows(2)).for_each(
        |((out_k, out_s), w)| {
            let old =
                keys[w[0].0..w[1].0].iter().copied().zip(slots[w[0].0..w[1].0].iter().copied());
            let new = extra[w[0].1..w[1].1].iter().copied();
            for ((k, s), (key, slot)) in
                out_k.iter_mut().zip(out_s.iter_mut()).zip(merge_sorted(old, new))
            {
                *k = key;
                *s = slot;
            }
        },
    );
    (out_keys, out_slots)
}

/// How many entries of `keys`/`slots` (sorted) are below `pivot`.
fn rank(keys: &[u64], slots: &[u32], pivot: (u64, u32)) -> usize {
    let (mut lo, mut hi) = (0, keys.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if (keys[mid], slots[mid]) < pivot {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The directory of sorted `keys` on their top `bits` bits (`bits >= 1`): `dir[t]` is the
/// number of keys whose top bits are below `t`, for `t` in `0..=2^bits`; computed in
/// pieces of the directory on rayon's current pool.
pub(crate) fn par_dir(keys: &[u64], bits: u32) -> Vec<u32> {
    let top = |key: u64| (key >> (64 - bits)) as usize;
    let mut dir = vec![0u32; (1 << bits) + 1];
    dir.par_chunks_mut(PIECE).enumerate().for_each(|(c, out)| {
        let t0 = c * PIECE;
        let mut i = keys.partition_point(|&k| top(k) < t0);
        for (o, t) in out.iter_mut().zip(t0..) {
            while i < keys.len() && top(keys[i]) < t {
                i += 1;
            }
            *o = i as u32;
        }
    });
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_merge_is_one_merge_in_order() {
        let mut x = 9u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (n_old, n_new) in
            [(0usize, 0usize), (0, 300), (300, 0), (1000, 7), (5, 2000), (3000, 3000)]
        {
            // Few distinct keys, so that ties are broken by the slot.
            let mut all: Vec<(u64, u32)> =
                (0..n_old + n_new).map(|s| ((next() % 50) << 58, s as u32)).collect();
            let mut old: Vec<(u64, u32)> = all[..n_old].to_vec();
            let mut extra: Vec<(u64, u32)> = all[n_old..].to_vec();
            old.sort_unstable();
            extra.sort_unstable();
            all.sort_unstable();
            let keys: Vec<u64> = old.iter().map(|e| e.0).collect();
            let slots: Vec<u32> = old.iter().map(|e| e.1).collect();
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (k, s) = pool.install(|| par_merge(&keys, &slots, &extra));
                let got: Vec<(u64, u32)> = k.into_iter().zip(s).collect();
                assert_eq!(got, all, "{n_old} + {n_new}, {threads} threads");
                for bits in [1, 3, 8] {
                    let dir = pool.install(|| par_dir(&keys, bits));
                    for (t, &d) in dir.iter().enumerate() {
                        let below = keys.iter().filter(|&&k| ((k >> (64 - bits)) as usize) < t);
                        assert_eq!(d as usize, below.count());
                    }
                }
            }
        }
    }
}
