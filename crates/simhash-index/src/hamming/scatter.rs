//! The scatter pass of the batch engine: a parallel, stable counting sort of `(permuted
//! fingerprint, position)` entries into buckets by the top bits of a table's prefix.
//!
//! It runs in two steps so that a table can be processed a range of buckets at a time (the
//! partitioned path of [`AllPairs::budget`](crate::AllPairs::budget)): a
//! [`Histogram`] of the whole input, then one [`scatter_range`] per range of buckets, which
//! reads the whole input and writes only the entries of its buckets. Because the sort is
//! stable and the bucket offsets come from the one histogram, scattering the buckets in
//! several ranges puts every entry exactly where a single pass over all buckets would.

use std::ops::Range;

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::hamming::kernel::Entry;
use crate::hamming::tables::Table;

/// A piece of the input for the parallel passes: `(side, start, end)`, a range of positions
/// of one input.
pub(crate) type Chunk = (usize, usize, usize);

/// Where the batch engine reads fingerprints from: one or two slices (queries and corpus),
/// or documents some of which have no fingerprint.
pub(crate) trait Source: Sync {
    /// How many fingerprints there are (the `None`s of an optional input not counted).
    fn count(&self) -> usize;
    /// How many bytes the input holds, for the memory budget.
    fn bytes(&self) -> u64;
    /// The pieces of the input for the parallel passes, in input order.
    fn chunks(&self) -> Vec<Chunk>;
    /// Calls `f(position, fingerprint)` for each fingerprint of `chunk`, in position order.
    fn each(&self, chunk: Chunk, f: impl FnMut(u32, Fingerprint));
}

/// Slices of fingerprints: the side of an entry is the index of its slice.
pub(crate) struct Sides<'a>(pub(crate) &'a [&'a [Fingerprint]]);

impl Source for Sides<'_> {
    fn count(&self) -> usize {
        self.0.iter().map(|s| s.len()).sum()
    }

    fn bytes(&self) -> u64 {
        (self.count() * size_of::<Fingerprint>()) as u64
    }

    fn chunks(&self) -> Vec<Chunk> {
        chunk_inputs(self.0)
    }

    #[inline(always)]
    fn each(&self, (side, lo, hi): Chunk, mut f: impl FnMut(u32, Fingerprint)) {
        for (pos, &fp) in (lo..hi).zip(&self.0[side][lo..hi]) {
            f(pos as u32, fp);
        }
    }
}

/// Documents that may lack a fingerprint: positions count the `None`s, which are skipped.
pub(crate) struct Optional<'a>(pub(crate) &'a [Option<Fingerprint>]);

impl Source for Optional<'_> {
    fn count(&self) -> usize {
        self.0.par_iter().filter(|f| f.is_some()).count()
    }

    fn bytes(&self) -> u64 {
        std::mem::size_of_val(self.0) as u64
    }

    fn chunks(&self) -> Vec<Chunk> {
        chunk_lengths(&[self.0.len()])
    }

    #[inline(always)]
    fn each(&self, (_, lo, hi): Chunk, mut f: impl FnMut(u32, Fingerprint)) {
        for (pos, fp) in (lo..hi).zip(&self.0[lo..hi]) {
            if let Some(fp) = *fp {
                f(pos as u32, fp);
            }
        }
    }
}

/// `(input, start, end)` pieces of the inputs for the parallel passes.
pub(crate) fn chunk_inputs(inputs: &[&[Fingerprint]]) -> Vec<Chunk> {
    chunk_lengths(&inputs.iter().map(|s| s.len()).collect::<Vec<_>>())
}

fn chunk_lengths(lens: &[usize]) -> Vec<Chunk> {
    let n: usize = lens.iter().sum();
    let pieces = (rayon::current_num_threads() * 4).max(1);
    let size = n.div_ceil(pieces).max(1 << 14);
    let mut chunks = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let mut lo = 0;
        while lo < len {
            let hi = (lo + size).min(len);
            chunks.push((i, lo, hi));
            lo = hi;
        }
    }
    chunks
}

/// The bucket sizes of one table over the whole input: where each bucket starts, and where
/// each chunk's entries of each bucket start.
pub(crate) struct Histogram {
    /// The bucket boundaries, `2^bits + 1` of them: bucket `b` is `starts[b]..starts[b + 1]`.
    pub(crate) starts: Vec<usize>,
    /// `offsets[c][b]`: where chunk `c`'s first entry of bucket `b` goes.
    offsets: Vec<Vec<usize>>,
    bits: u32,
}

/// Counts every input fingerprint (permuted by `table`) by the top `bits` bits, per chunk.
pub(crate) fn histogram<S: Source + ?Sized>(
    src: &S,
    chunks: &[Chunk],
    table: &Table,
    bits: u32,
) -> Histogram {
    let buckets = 1usize << bits;
    let hists: Vec<Vec<usize>> = chunks
        .par_iter()
        .map(|&chunk| {
            let mut h = vec![0usize; buckets];
            src.each(chunk, |_, fp| h[table.top_bits(fp, bits)] += 1);
            h
        })
        .collect();
    let mut starts = vec![0usize; buckets + 1];
    let mut offsets: Vec<Vec<usize>> = vec![vec![0; buckets]; chunks.len()];
    let mut at = 0;
    for b in 0..buckets {
        starts[b] = at;
        for (c, h) in hists.iter().enumerate() {
            offsets[c][b] = at;
            at += h[b];
        }
    }
    starts[buckets] = at;
    Histogram { starts, offsets, bits }
}

/// A pointer to the destination of the scatter, shared by the tasks that write to disjoint
/// positions of it.
#[derive(Clone, Copy)]
struct SharedDest(*mut Entry);
// SAFETY: the tasks write to disjoint ranges of the buffer (see `scatter_range`).
unsafe impl Send for SharedDest {}
// SAFETY: as above.
unsafe impl Sync for SharedDest {}

impl SharedDest {
    fn get(self) -> *mut Entry {
        self.0
    }
}

/// Scatters the entries of buckets `buckets` (permuted by `table`, stably; with `raw`, the
/// entries hold the fingerprints as they are, not permuted) into `dest`,
/// which it sizes to hold them, `starts[buckets.end] - starts[buckets.start]` entries, and
/// a spare slot per chunk after them. Entry `i` of the whole table (as one pass over all
/// buckets would place it) lands at `i - starts[buckets.start]`. Returns the number of
/// entries.
///
/// Over part of the buckets, the loop has no branch on whether an entry is in range (that
/// branch is unpredictable, and mispredicted it costs more than the permutation): every
/// entry is written, those of other buckets to its chunk's spare slot, which does not
/// advance.
pub(crate) fn scatter_range<S: Source + ?Sized>(
    src: &S,
    chunks: &[Chunk],
    table: &Table,
    hist: &Histogram,
    buckets: Range<usize>,
    dest: &mut Vec<Entry>,
    raw: bool,
) -> usize {
    let base = hist.starts[buckets.start];
    let len = hist.starts[buckets.end] - base;
    let (bits, lo, width) = (hist.bits, buckets.start, buckets.end - buckets.start);
    let all = width == 1 << bits;
    let spare = if all { 0 } else { chunks.len() };
    if dest.len() < len + spare {
        dest.resize(len + spare, Entry::default());
    }
    // Where each chunk writes its next entry of each bucket, relative to `base`; buckets
    // out of range write to the chunk's spare slot.
    let mut offsets: Vec<Vec<usize>> = hist
        .offsets
        .iter()
        .enumerate()
        .map(|(c, offs)| {
            let trash = len + c;
            let inside = |b: usize| b.wrapping_sub(lo) < width;
            offs.iter()
                .enumerate()
                .map(|(b, &o)| if inside(b) { o - base } else { trash })
                .collect()
        })
        .collect();
    let ptr = SharedDest(dest.as_mut_ptr());
    chunks.par_iter().zip(offsets.par_iter_mut()).for_each(|(&chunk, offs)| {
        let side = chunk.0 as u32;
        src.each(chunk, |id, fp| {
            let b = table.top_bits(fp, bits);
            let key = if raw { fp.0 } else { table.permute(fp) };
            debug_assert_eq!(b, table.permute(fp).checked_shr(64 - bits).unwrap_or(0) as usize);
            // The bucket comes from the very call that counted it in the histogram, so
            // each chunk writes exactly as many entries per bucket as it counted.
            let o = &mut offs[b];
            // SAFETY: chunk `c` writes bucket `b` in range at `offsets[c][b] - base..` for
            // `hists[c][b]` entries (the same bucket function over the same inputs): ranges
            // that are disjoint between chunks and buckets, and that tile the buckets of
            // `buckets`, which are `0..len` of `dest`. Its entries of other buckets all go
            // to its own spare slot `len + c < dest.len()`, which no other chunk writes.
            // `dest` outlives this loop and is not reallocated in it.
            unsafe { ptr.get().add(*o).write(Entry { key, id, side }) };
            *o += usize::from(all || b.wrapping_sub(lo) < width);
        });
    });
    len
}

/// A stable, parallel counting sort of every input fingerprint (permuted by `table`) by
/// the top `bits` bits into `dest`. Returns the bucket boundaries (`2^bits + 1` of them).
pub(crate) fn scatter(
    inputs: &[&[Fingerprint]],
    chunks: &[Chunk],
    table: &Table,
    bits: u32,
    dest: &mut Vec<Entry>,
) -> Vec<usize> {
    let src = Sides(inputs);
    let hist = histogram(&src, chunks, table, bits);
    scatter_range(&src, chunks, table, &hist, 0..1 << bits, dest, false);
    hist.starts
}
