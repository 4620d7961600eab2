//! The dedup walk's settling of one chunk, in parallel: among the chunk's documents that
//! no earlier chunk's kept document matched (in priority order), which are kept and which
//! join a kept document before them within the distance.
//!
//! The rule is sequential (a document is kept unless a *kept* document before it is within
//! the distance), but its inputs are not: each document first lists, in parallel, the
//! documents before it in the chunk within the distance (at most [`LISTED`] of them, found
//! in the chunk's own block-permutation tables, each pair in the table that owns it), and
//! then one cheap pass in order decides each document from its list. A document with more
//! than [`LISTED`] earlier neighbours (a flood of near-copies) is decided instead by a scan
//! of the chunk's kept documents in order, which stops at the first within the distance:
//! in a flood, the flood's first document. So the work done on one thread is a few array
//! reads per document, the memory is [`LISTED`] positions per document of the chunk, and a
//! flood costs what a single document costs.

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::hamming::tables::{Table, Tables};

/// The most earlier neighbours a document lists; past that, the pass in order scans the
/// kept documents. Small in tests, so that they exercise the scan.
const LISTED: usize = if cfg!(test) { 2 } else { 8 };

/// A document's earlier neighbours within the chunk: the first `len` of `list`, and
/// whether there were more.
#[derive(Clone, Copy)]
struct Earlier {
    list: [u32; LISTED],
    len: u8,
    more: bool,
}

/// For `fps` (the open documents of a chunk, in priority order): `None` for a document
/// that is kept, or `Some(j)` for one that joins `j`, the first kept document before it
/// within the tables' distance. The same for any number of threads (rayon's current pool).
pub(crate) fn settle(fps: &[Fingerprint], tables: &Tables) -> Vec<Option<u32>> {
    let sorted: Vec<Vec<(u64, u32)>> = tables
        .as_slice()
        .par_iter()
        .map(|table| {
            let mut keys: Vec<(u64, u32)> =
                fps.iter().zip(0u32..).map(|(&fp, i)| (table.permute(fp), i)).collect();
            keys.par_sort_unstable();
            keys
        })
        .collect();
    let k = tables.max_distance();
    let earlier: Vec<Earlier> = (0..fps.len())
        .into_par_iter()
        .map(|i| earlier(fps[i], i as u32, tables.as_slice(), &sorted, k))
        .collect();
    decide(fps, &earlier, k)
}

/// The documents before position `i` (of fingerprint `fp`) within `k` bits, each found in
/// the table that owns the pair, stopping after [`LISTED`].
fn earlier(
    fp: Fingerprint,
    i: u32,
    tables: &[Table],
    sorted: &[Vec<(u64, u32)>],
    k: u32,
) -> Earlier {
    let mut out = Earlier { list: [0; LISTED], len: 0, more: false };
    for (table, keys) in tables.iter().zip(sorted) {
        let key = table.permute(fp);
        let prefix = table.prefix_of_permuted(key);
        let lo = keys.partition_point(|e| table.prefix_of_permuted(e.0) < prefix);
        for &(stored, j) in &keys[lo..] {
            if table.prefix_of_permuted(stored) != prefix {
                break;
            }
            let x = stored ^ key;
            if j < i && x.count_ones() <= k && table.owns_permuted_xor(x) {
                if usize::from(out.len) == LISTED {
                    out.more = true;
                    return out;
                }
                out.list[usize::from(out.len)] = j;
                out.len += 1;
            }
        }
    }
    out
}

/// The pass in order: a document joins the first kept document among its earlier
/// neighbours (all of them listed), or, when it had more than it could list, the first
/// kept document within `k` bits found by a scan of the kept ones in order.
fn decide(fps: &[Fingerprint], earlier: &[Earlier], k: u32) -> Vec<Option<u32>> {
    let mut is_kept = vec![false; fps.len()];
    let mut kept: Vec<u32> = Vec::new();
    let mut out = Vec::with_capacity(fps.len());
    for (i, e) in earlier.iter().enumerate() {
        let first = if e.more {
            kept.iter().copied().find(|&j| fps[j as usize].distance(fps[i]) <= k)
        } else {
            e.list[..usize::from(e.len)].iter().copied().filter(|&j| is_kept[j as usize]).min()
        };
        if first.is_none() {
            is_kept[i] = true;
            kept.push(i as u32);
        }
        out.push(first);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule itself: each document against every kept one before it.
    fn naive(fps: &[Fingerprint], k: u32) -> Vec<Option<u32>> {
        let mut kept: Vec<u32> = Vec::new();
        let mut out = Vec::new();
        for (i, fp) in fps.iter().enumerate() {
            let first = kept.iter().copied().find(|&j| fps[j as usize].distance(*fp) <= k);
            if first.is_none() {
                kept.push(i as u32);
            }
            out.push(first);
        }
        out
    }

    #[test]
    fn agrees_with_the_rule() {
        let mut x = 5u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let base = next();
        let fps: Vec<Fingerprint> = (0..3000)
            .map(|i| match i % 4 {
                0 => Fingerprint(next()),
                1 => Fingerprint(base ^ (1 << (next() % 64)) ^ (1 << (next() % 64))),
                2 => Fingerprint(base ^ (next() & next() & next() & next())),
                _ => Fingerprint(base ^ (0b111 << (next() % 60))),
            })
            .collect();
        for (blocks, k) in [(4, 3), (5, 3), (3, 2), (2, 0)] {
            let tables = Tables::new(blocks, k).unwrap();
            let expected = naive(&fps, k);
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert_eq!(pool.install(|| settle(&fps, &tables)), expected, "{threads}, k {k}");
            }
        }
        assert_eq!(settle(&[], &Tables::new(4, 3).unwrap()), []);
    }
}
