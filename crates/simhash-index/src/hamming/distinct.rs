//! Identical fingerprints collapsed in place, at 12 bytes per fingerprint: the distinct
//! fingerprints (what the all-pairs engine needs), each one's first position, and the
//! positions of those held more than once.

use rayon::prelude::*;
use simhash_core::Fingerprint;

/// Buckets of one radix pass: 8 bits of the fingerprint.
const RADIX_BITS: u32 = 8;
const RADIX: usize = 1 << RADIX_BITS;
/// A bucket this small is finished by insertion sort rather than another radix pass.
const SMALL: usize = 48;

/// The distinct fingerprints of a slice, ascending, with the positions that hold each one:
/// what [`Distinct::new`] makes of a vector of fingerprints without copying it.
///
/// Memory: the input vector is reused for the distinct fingerprints, plus 4 bytes per
/// fingerprint for positions while sorting (then per distinct fingerprint, and a bit), plus
/// 4 bytes for every position of a fingerprint held more than once. The sort is an in-place radix
/// sort (8 bits a pass, most significant first; the buckets of the first pass are sorted
/// in parallel on rayon's current pool), so its time grows linearly with the input: a
/// flood of one fingerprint costs a scan per pass and a sort of its positions.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::Distinct;
///
/// let fps = vec![Fingerprint(7), Fingerprint(3), Fingerprint(7), Fingerprint(9), Fingerprint(7)];
/// let distinct = Distinct::new(fps);
/// assert_eq!(distinct.fingerprints(), [Fingerprint(3), Fingerprint(7), Fingerprint(9)]);
/// assert_eq!(distinct.first(), [1, 0, 3]);
/// assert_eq!(distinct.positions(1), [0, 2, 4]);
/// assert_eq!(distinct.positions(2), [3]);
/// assert_eq!(distinct.position_after(1, 2), Some(4));
/// assert_eq!(distinct.repeated().collect::<Vec<_>>(), [1]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Distinct {
    /// The distinct fingerprints, ascending.
    fps: Vec<Fingerprint>,
    /// Each distinct fingerprint's first (lowest) position in the input.
    first: Vec<u32>,
    /// The indexes (in `fps`) of the fingerprints held at more than one position, ascending.
    repeated: Vec<u32>,
    /// A bit per distinct fingerprint, set for the repeated ones: most lookups of
    /// [`Distinct::positions`] end here, without a search of `repeated`.
    is_repeated: Vec<u64>,
    /// Where each repeated fingerprint's positions start in `positions` (one more entry at
    /// the end).
    starts: Vec<usize>,
    /// The positions of each repeated fingerprint, ascending, one fingerprint after another.
    positions: Vec<u32>,
}

impl Distinct {
    /// Collapses identical fingerprints of `fps`, reusing its memory.
    ///
    /// # Panics
    ///
    /// If `fps` has more than `u32::MAX` fingerprints.
    pub fn new(mut fps: Vec<Fingerprint>) -> Distinct {
        assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
        let mut pos: Vec<u32> = (0..fps.len() as u32).collect();
        sort_top(&mut fps, &mut pos);
        let (mut repeated, mut starts, mut positions) = (Vec::new(), Vec::new(), Vec::new());
        let n = fps.len();
        let (mut kept, mut i) = (0, 0);
        while i < n {
            let fp = fps[i];
            let mut j = i + 1;
            while j < n && fps[j] == fp {
                j += 1;
            }
            if j - i > 1 {
                repeated.push(kept as u32);
                starts.push(positions.len());
                positions.extend_from_slice(&pos[i..j]);
            }
            // `kept <= i`: the entries moved down were all read already.
            fps[kept] = fp;
            pos[kept] = pos[i];
            kept += 1;
            i = j;
        }
        starts.push(positions.len());
        let mut is_repeated = vec![0u64; kept.div_ceil(64)];
        for &r in &repeated {
            is_repeated[r as usize / 64] |= 1 << (r % 64);
        }
        fps.truncate(kept);
        fps.shrink_to_fit();
        pos.truncate(kept);
        pos.shrink_to_fit();
        Distinct { fps, first: pos, repeated, is_repeated, starts, positions }
    }

    /// The distinct fingerprints, ascending.
    pub fn fingerprints(&self) -> &[Fingerprint] {
        &self.fps
    }

    /// The distinct fingerprints, ascending, without the rest.
    pub fn into_fingerprints(self) -> Vec<Fingerprint> {
        self.fps
    }

    /// Each distinct fingerprint's first position in the input.
    pub fn first(&self) -> &[u32] {
        &self.first
    }

    /// How many distinct fingerprints there are.
    pub fn len(&self) -> usize {
        self.fps.len()
    }

    /// Whether the input was empty.
    pub fn is_empty(&self) -> bool {
        self.fps.is_empty()
    }

    /// The input's positions that are not the first of their fingerprint.
    pub fn duplicates(&self) -> usize {
        self.positions.len() - self.repeated.len()
    }

    /// The indexes of the fingerprints held at more than one position, ascending.
    pub fn repeated(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.repeated.iter().map(|&r| r as usize)
    }

    /// Every position of distinct fingerprint `index`, ascending.
    ///
    /// # Panics
    ///
    /// If `index` is not below [`Distinct::len`].
    pub fn positions(&self, index: usize) -> &[u32] {
        if self.is_repeated[index / 64] & (1 << (index % 64)) == 0 {
            return std::slice::from_ref(&self.first[index]);
        }
        match self.repeated.binary_search(&(index as u32)) {
            Ok(g) => &self.positions[self.starts[g]..self.starts[g + 1]],
            Err(_) => std::slice::from_ref(&self.first[index]),
        }
    }

    /// The first position of distinct fingerprint `index` after `position`, if any.
    ///
    /// # Panics
    ///
    /// If `index` is not below [`Distinct::len`].
    pub fn position_after(&self, index: usize, position: u32) -> Option<u32> {
        let positions = self.positions(index);
        positions.get(positions.partition_point(|&p| p <= position)).copied()
    }
}

/// Sorts `fps` (and `pos` with it) by fingerprint, then position: one radix pass on the top
/// byte, then each of its buckets on rayon's pool.
fn sort_top(fps: &mut [Fingerprint], pos: &mut [u32]) {
    if fps.len() <= SMALL {
        insertion_sort(fps, pos);
        return;
    }
    let shift = 64 - RADIX_BITS;
    let bounds = radix_pass(fps, pos, shift);
    buckets(fps, pos, &bounds).into_par_iter().for_each(|(f, p)| sort_from(f, p, shift));
}

/// The buckets of two or more entries that `bounds` cuts `fps` and `pos` into.
fn buckets<'a>(
    mut fps: &'a mut [Fingerprint],
    mut pos: &'a mut [u32],
    bounds: &[usize; RADIX + 1],
) -> Vec<(&'a mut [Fingerprint], &'a mut [u32])> {
    let mut parts = Vec::with_capacity(RADIX);
    for w in bounds.windows(2) {
        let (f, rest_fps) = std::mem::take(&mut fps).split_at_mut(w[1] - w[0]);
        let (p, rest_pos) = std::mem::take(&mut pos).split_at_mut(w[1] - w[0]);
        (fps, pos) = (rest_fps, rest_pos);
        if f.len() > 1 {
            parts.push((f, p));
        }
    }
    parts
}

/// Sorts a bucket whose fingerprints agree above bit `shift` (and on it: every fingerprint
/// of the bucket has the same bits from `shift` up).
fn sort_from(fps: &mut [Fingerprint], pos: &mut [u32], mut shift: u32) {
    loop {
        if fps.len() <= SMALL {
            insertion_sort(fps, pos);
            return;
        }
        if shift == 0 {
            // Every fingerprint is the same: order the positions.
            if pos.len() > 1 << 16 {
                pos.par_sort_unstable();
            } else {
                pos.sort_unstable();
            }
            return;
        }
        shift -= RADIX_BITS;
        let bounds = radix_pass(fps, pos, shift);
        if bounds[1..RADIX].iter().all(|&b| b == 0 || b == fps.len()) {
            // One bucket holds everything: go on to the next byte without recursing.
            continue;
        }
        for (f, p) in buckets(fps, pos, &bounds) {
            sort_from(f, p, shift);
        }
        return;
    }
}

/// The byte of `fp` at `shift`.
#[inline]
fn digit(fp: Fingerprint, shift: u32) -> usize {
    ((fp.0 >> shift) as usize) & (RADIX - 1)
}

/// One in-place pass (American flag sort): moves every entry into its bucket by the byte at
/// `shift`; returns the buckets' bounds.
fn radix_pass(fps: &mut [Fingerprint], pos: &mut [u32], shift: u32) -> [usize; RADIX + 1] {
    let mut counts = [0usize; RADIX];
    for &fp in fps.iter() {
        counts[digit(fp, shift)] += 1;
    }
    let mut bounds = [0usize; RADIX + 1];
    for b in 0..RADIX {
        bounds[b + 1] = bounds[b] + counts[b];
    }
    if counts.contains(&fps.len()) {
        return bounds;
    }
    let mut heads: [usize; RADIX] = std::array::from_fn(|b| bounds[b]);
    for b in 0..RADIX {
        let end = bounds[b + 1];
        while heads[b] < end {
            let (mut fp, mut p) = (fps[heads[b]], pos[heads[b]]);
            let mut d = digit(fp, shift);
            // Follow the cycle: put the entry in hand at its bucket's head, take what was
            // there, until an entry of bucket `b` comes back.
            while d != b {
                let at = heads[d];
                heads[d] += 1;
                std::mem::swap(&mut fp, &mut fps[at]);
                std::mem::swap(&mut p, &mut pos[at]);
                d = digit(fp, shift);
            }
            fps[heads[b]] = fp;
            pos[heads[b]] = p;
            heads[b] += 1;
        }
    }
    bounds
}

/// Sorts a few entries by (fingerprint, position).
fn insertion_sort(fps: &mut [Fingerprint], pos: &mut [u32]) {
    for i in 1..fps.len() {
        let (fp, p) = (fps[i], pos[i]);
        let mut j = i;
        while j > 0 && (fps[j - 1], pos[j - 1]) > (fp, p) {
            fps[j] = fps[j - 1];
            pos[j] = pos[j - 1];
            j -= 1;
        }
        fps[j] = fp;
        pos[j] = p;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::hamming::tests::splitmix;

    /// The reference: a map from each fingerprint to its positions.
    fn check(fps: &[Fingerprint]) {
        let mut expected: BTreeMap<Fingerprint, Vec<u32>> = BTreeMap::new();
        for (i, &fp) in fps.iter().enumerate() {
            expected.entry(fp).or_default().push(i as u32);
        }
        let distinct = Distinct::new(fps.to_vec());
        let keys: Vec<Fingerprint> = expected.keys().copied().collect();
        assert_eq!(distinct.fingerprints(), keys);
        assert_eq!(distinct.len(), keys.len());
        assert_eq!(distinct.is_empty(), fps.is_empty());
        let firsts: Vec<u32> = expected.values().map(|p| p[0]).collect();
        assert_eq!(distinct.first(), firsts);
        let repeated: Vec<usize> =
            expected.values().enumerate().filter(|(_, p)| p.len() > 1).map(|(i, _)| i).collect();
        assert_eq!(distinct.repeated().collect::<Vec<_>>(), repeated);
        assert_eq!(distinct.duplicates(), fps.len() - keys.len());
        for (i, positions) in expected.values().enumerate() {
            assert_eq!(distinct.positions(i), positions.as_slice());
            // After a position of its own, one before all, one after all.
            for probe in positions.iter().copied().chain([0, u32::MAX]) {
                let after = positions.iter().copied().find(|&p| p > probe);
                assert_eq!(distinct.position_after(i, probe), after, "index {i} after {probe}");
            }
        }
    }

    #[test]
    fn agrees_with_a_map_on_random_and_adversarial_inputs() {
        let mut next = splitmix(7);
        check(&[]);
        check(&[Fingerprint(5)]);
        check(&[Fingerprint(5), Fingerprint(5)]);
        check(&[Fingerprint(u64::MAX), Fingerprint(0), Fingerprint(u64::MAX)]);
        for n in [2, 3, 47, 48, 49, 100, 255, 256, 257, 1000, 5000, 70_000] {
            // All distinct, random.
            let fps: Vec<Fingerprint> = (0..n).map(|_| Fingerprint(next())).collect();
            check(&fps);
            // Few values: many repeats of each.
            let fps: Vec<Fingerprint> =
                (0..n).map(|_| Fingerprint(next() % 7 * 0x0101_0101_0101_0101)).collect();
            check(&fps);
            // Values that differ only in the lowest byte, or only in the top byte.
            let fps: Vec<Fingerprint> =
                (0..n).map(|_| Fingerprint(0xdead_beef_0000_0000 | (next() % 300))).collect();
            check(&fps);
            let fps: Vec<Fingerprint> = (0..n).map(|_| Fingerprint(next() << 56)).collect();
            check(&fps);
            // Descending and ascending runs, with repeats.
            let fps: Vec<Fingerprint> = (0..n).rev().map(|i| Fingerprint(i as u64 / 3)).collect();
            check(&fps);
            let fps: Vec<Fingerprint> = (0..n).map(|i| Fingerprint(i as u64 / 2)).collect();
            check(&fps);
        }
    }

    #[test]
    fn a_flood_of_one_fingerprint_keeps_every_position_in_order() {
        // More than the parallel sort's threshold, so both sorts of positions run.
        for n in [1000, 100_000] {
            let mut fps = vec![Fingerprint(0x1234_5678_9abc_def0); n];
            fps[n / 2] = Fingerprint(1);
            let distinct = Distinct::new(fps);
            assert_eq!(
                distinct.fingerprints(),
                [Fingerprint(1), Fingerprint(0x1234_5678_9abc_def0)]
            );
            assert_eq!(distinct.first(), [n as u32 / 2, 0]);
            let expected: Vec<u32> = (0..n as u32).filter(|&p| p != n as u32 / 2).collect();
            assert_eq!(distinct.positions(1), expected.as_slice());
            assert_eq!(distinct.duplicates(), n - 2);
        }
    }
}
