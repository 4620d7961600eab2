//! Grouping one bucket of a table by prefix: the runs of equal prefixes that the pairing
//! kernel reads, by insertion sort, an LSD radix sort of short keys, or of the entries, in
//! a per-thread scratch buffer ([`group_bucket`]).

use simhash_core::Fingerprint;

use crate::hamming::kernel::Entry;
use crate::hamming::tables::Table;

/// Buckets smaller than this are sorted by insertion sort.
pub(crate) const SMALL_BUCKET: usize = 48;
/// Buckets larger than this are sorted in place (no scratch buffer of their size). Small in
/// tests, so that they exercise all three ways of sorting a bucket.
pub(crate) const HUGE_BUCKET: usize = if cfg!(test) { 200 } else { 1 << 22 };
/// Whether a bucket of `len` entries whose prefixes have `rest` bits left takes
/// [`group_bucket`]'s short-key path: `rest` is 1 to 32 bits, and at least 4 more than
/// `log2(len)`, so that most prefixes occur once and few entries are copied out as runs.
/// (With fewer bits, as at 4 blocks and k = 3, where 6 bits are left, almost every entry is
/// in a run, and sorting the entries themselves is cheaper.)
pub(crate) fn sparse(rest: u32, len: usize) -> bool {
    (1..=32).contains(&rest) && (len as u64) << 4 <= 1u64 << rest
}

/// Per-thread buffers for [`group_bucket`].
#[derive(Default)]
pub(crate) struct Scratch {
    /// The radix sort's second buffer, or the entries of one run.
    entries: Vec<Entry>,
    /// The short keys of a bucket and the radix sort's second buffer for them.
    keys: Vec<u64>,
}

/// Calls `each` with every run of two or more equal prefixes of `bucket` (whose entries
/// share the top `done` bits), in ascending prefix order, each run in bucket order: the
/// runs of length two or more of a stable sort of the bucket by prefix.
///
/// When the rest of the prefix has at most 32 bits (21 to 23 at 6 blocks, k = 3 and 2M
/// fingerprints) and the bucket is small enough for most of them to occur once (see
/// `sparse`), the bucket itself is neither sorted nor written: one pass reads it (from
/// memory: the scatter just wrote it) and writes a short key per entry, `rest of the prefix
/// << 32 | position in the bucket`, then the radix passes sort these 8-byte keys (the
/// position keeps the sort stable) in a scratch buffer that stays in the L1 cache, and only
/// the entries of runs of two or more are copied out of the bucket for the kernel. Otherwise
/// the bucket is sorted by [`sort_bucket`].
pub(crate) fn group_bucket(
    bucket: &mut [Entry],
    scratch: &mut Scratch,
    table: &Table,
    done: u32,
    each: impl FnMut(&[Entry]),
) {
    let rest = table.prefix_bits() - done;
    let len = bucket.len();
    if len <= SMALL_BUCKET || len > HUGE_BUCKET || !sparse(rest, len) {
        let sorted = sort_bucket(bucket, &mut scratch.entries, table, done);
        for_each_run(sorted, 64 - table.prefix_bits(), each);
        return;
    }
    short_runs(bucket, scratch, rest, done, |key| key, each);
}

/// [`group_bucket`] for a bucket of a scatter shared between tables (see `run`): its entries
/// hold the fingerprints as they are, in input order, and stay so for the next table. Every
/// bucket of such a table is small (copied and sorted) or takes the short-key path.
pub(crate) fn group_raw_bucket(
    bucket: &[Entry],
    scratch: &mut Scratch,
    table: &Table,
    done: u32,
    each: impl FnMut(&[Entry]),
) {
    let rest = table.prefix_bits() - done;
    debug_assert!(sparse(rest, bucket.len()) && bucket.len() <= HUGE_BUCKET);
    let permute = |key: u64| table.permute(Fingerprint(key));
    if bucket.len() <= SMALL_BUCKET {
        let shift = 64 - table.prefix_bits();
        let entries = &mut scratch.entries;
        entries.clear();
        entries.extend(bucket.iter().map(|e| Entry { key: permute(e.key), ..*e }));
        insertion_sort(entries, shift);
        for_each_run(entries, shift, each);
        return;
    }
    short_runs(bucket, scratch, rest, done, permute, each);
}

/// The short-key path of [`group_bucket`], the bucket's keys read through `permute`.
#[inline(always)]
fn short_runs(
    bucket: &[Entry],
    scratch: &mut Scratch,
    rest: u32,
    done: u32,
    permute: impl Fn(u64) -> u64,
    mut each: impl FnMut(&[Entry]),
) {
    let len = bucket.len();
    let passes = rest.div_ceil(8);
    let digit = rest.div_ceil(passes);
    // Each pass's digit of the short key: its lowest bit and mask (the last one may be
    // narrower).
    let mut digits = [(0u32, 0u64); 4];
    let mut lo = 32;
    for d in &mut digits[..passes as usize] {
        let width = digit.min(32 + rest - lo);
        *d = (lo, (1u64 << width) - 1);
        lo += width;
    }
    let digits = &digits[..passes as usize];
    let Scratch { entries, keys } = scratch;
    if keys.len() < 2 * len {
        keys.resize(2 * len, 0);
    }
    let (mut src, dst) = keys.split_at_mut(len);
    let dst = &mut dst[..len];
    // The short keys, and the counts of every pass in the same read of the bucket. A
    // bucket holds at most HUGE_BUCKET entries: u32 positions and counts.
    let mut counts = [[0u32; 256]; 4];
    for ((i, e), k) in bucket.iter().enumerate().zip(src.iter_mut()) {
        *k = (permute(e.key) << done) >> (64 - rest) << 32 | i as u64;
        for (c, &(lo, mask)) in counts.iter_mut().zip(digits) {
            c[((*k >> lo) & mask) as usize] += 1;
        }
    }
    for (c, &(_, mask)) in counts.iter_mut().zip(digits) {
        let mut at = 0;
        for c in &mut c[..=mask as usize] {
            let n = *c;
            *c = at;
            at += n;
        }
    }
    let mut dst: &mut [u64] = dst;
    for (c, &(lo, mask)) in counts.iter_mut().zip(digits) {
        for &k in src.iter() {
            let c = &mut c[((k >> lo) & mask) as usize];
            dst[*c as usize] = k;
            *c += 1;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    // `src` holds the sorted keys: runs of equal high halves.
    let mut sorted: &[u64] = src;
    while let Some(i) = sorted.windows(2).position(|w| (w[0] ^ w[1]) >> 32 == 0) {
        let high = sorted[i] >> 32;
        let n = 2 + sorted[i + 2..].iter().take_while(|&&k| k >> 32 == high).count();
        entries.clear();
        entries.extend(sorted[i..i + n].iter().map(|&k| {
            let e = bucket[k as u32 as usize];
            Entry { key: permute(e.key), ..e }
        }));
        each(entries);
        sorted = &sorted[i + n..];
    }
}

/// Calls `each` with every run of two or more equal prefixes (`key >> shift`) of `sorted`,
/// in order: the runs of length two or more of `sorted.chunk_by(..)`. Most entries are in
/// no such run, so the scan looks for the next pair of equal neighbours in a tight loop
/// rather than handing every entry on as a run of one.
#[inline(always)]
pub(crate) fn for_each_run(sorted: &[Entry], shift: u32, mut each: impl FnMut(&[Entry])) {
    let mut rest = sorted;
    while let Some(i) = rest.windows(2).position(|w| (w[0].key ^ w[1].key) >> shift == 0) {
        let prefix = rest[i].key >> shift;
        let len = 2 + rest[i + 2..].iter().take_while(|e| e.key >> shift == prefix).count();
        each(&rest[i..i + len]);
        rest = &rest[i + len..];
    }
}

/// Sorts a few entries by prefix (`key >> shift`), stably.
fn insertion_sort(bucket: &mut [Entry], shift: u32) {
    for i in 1..bucket.len() {
        let e = bucket[i];
        let k = e.key >> shift;
        let mut j = i;
        while j > 0 && bucket[j - 1].key >> shift > k {
            bucket[j] = bucket[j - 1];
            j -= 1;
        }
        bucket[j] = e;
    }
}

/// Sorts a bucket (whose entries share the top `done` bits) by the rest of the prefix,
/// stably; returns the sorted entries (in `bucket` or in `scratch`).
pub(crate) fn sort_bucket<'a>(
    bucket: &'a mut [Entry],
    scratch: &'a mut Vec<Entry>,
    table: &Table,
    done: u32,
) -> &'a [Entry] {
    let p = table.prefix_bits();
    let shift = 64 - p;
    let rest = p - done;
    if rest == 0 {
        return bucket;
    }
    if bucket.len() <= SMALL_BUCKET {
        insertion_sort(bucket, shift);
        return bucket;
    }
    if bucket.len() > HUGE_BUCKET {
        // In place; (side, id) breaks ties, so the order is the stable one.
        bucket.sort_unstable_by_key(|e| (e.key >> shift, e.side, e.id));
        return bucket;
    }
    let passes = rest.div_ceil(8);
    let digit = rest.div_ceil(passes);
    scratch.clear();
    scratch.resize(bucket.len(), Entry::default());
    // Each pass's digit: its lowest bit and mask (the last one may be narrower).
    let mut digits = [(0u32, 0u64); 8];
    let mut lo = shift;
    for d in &mut digits[..passes as usize] {
        let width = digit.min(64 - done - lo);
        *d = (lo, (1u64 << width) - 1);
        lo += width;
    }
    let digits = &digits[..passes as usize];
    // The counts of every pass in one read of the bucket (they do not depend on its order),
    // then each pass's starts. A bucket holds at most HUGE_BUCKET entries: u32 counts.
    let mut counts = [[0u32; 256]; 8];
    for e in bucket.iter() {
        for (c, &(lo, mask)) in counts.iter_mut().zip(digits) {
            c[((e.key >> lo) & mask) as usize] += 1;
        }
    }
    for (c, &(_, mask)) in counts.iter_mut().zip(digits) {
        let mut at = 0;
        for c in &mut c[..=mask as usize] {
            let n = *c;
            *c = at;
            at += n;
        }
    }
    let mut src: &'a mut [Entry] = bucket;
    let mut dst: &'a mut [Entry] = scratch.as_mut_slice();
    for (c, &(lo, mask)) in counts.iter_mut().zip(digits) {
        for e in src.iter() {
            let c = &mut c[((e.key >> lo) & mask) as usize];
            dst[*c as usize] = *e;
            *c += 1;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    src
}
