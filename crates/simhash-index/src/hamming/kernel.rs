//! The pairing kernel: given fingerprints that share one table's prefix, emit the pairs that
//! table owns. Every batch engine (this crate's, or a distributed one) reduces to it.

use std::ops::Range;

use simhash_core::Fingerprint;

use crate::hamming::tables::Table;

/// Emits every pair of `group` within `max_distance` bits that `table` owns, exactly once.
///
/// This is the whole of the per-table work of the all-pairs algorithm once fingerprints are
/// grouped by prefix. To find all pairs among a set of `(id, fingerprint)` records with any
/// engine (this crate's [`AllPairs`](crate::AllPairs), or a distributed one
/// that shuffles records by key):
///
/// 1. for every table `t` in [`Tables::iter`](crate::Tables::iter) and every record, form
///    the key `(t.index(), t.prefix(fp))`;
/// 2. gather the records of each key into a group (in any order, on any worker);
/// 3. call `pair_group(t, k, &group, emit)` on each group.
///
/// The union of all emitted pairs is then every pair within `k` bits, each exactly once: a
/// pair is emitted only by the first table whose prefix blocks all agree (see
/// [`Table::owns`]), which each call can decide on its own, with no global state and no
/// deduplication. Records whose prefix differs from the others' are skipped, so a group
/// may also be a coarser partition (for example, all records of a hash bucket of keys).
///
/// `emit(a, b, distance)` receives the two ids with `a <= b`; a group holding the same
/// id twice pairs it with itself. The cost is quadratic in the group size, which is what
/// the output size is when the group's fingerprints are close.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Tables, pair_group};
///
/// let tables = Tables::new(4, 3)?;
/// let records = [(10u64, Fingerprint(0)), (11, Fingerprint(0b111)), (12, Fingerprint(0b1111))];
/// let mut pairs = Vec::new();
/// for table in &tables {
///     // Here every record shares every prefix, so each table's group is all of them.
///     pair_group(table, 3, &records, |a, b, d| pairs.push((a, b, d)));
/// }
/// pairs.sort();
/// assert_eq!(pairs, [(10, 11, 3), (11, 12, 1)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn pair_group<I: Copy + Ord>(
    table: &Table,
    max_distance: u32,
    group: &[(I, Fingerprint)],
    mut emit: impl FnMut(I, I, u32),
) {
    for (i, &(ia, fa)) in group.iter().enumerate() {
        for &(ib, fb) in &group[i + 1..] {
            let x = fa.0 ^ fb.0;
            let d = x.count_ones();
            if d <= max_distance && table.owns_xor(x) {
                if ia <= ib { emit(ia, ib, d) } else { emit(ib, ia, d) }
            }
        }
    }
}

/// Emits every `(query, corpus)` pair within `max_distance` bits that `table` owns, where
/// `queries` and `corpus` are records sharing `table`'s prefix (see [`pair_group`]).
///
/// `emit(query_id, corpus_id, distance)`. Summed over every table's groups, each pair is
/// emitted exactly once.
pub fn cross_group<Q: Copy, C: Copy>(
    table: &Table,
    max_distance: u32,
    queries: &[(Q, Fingerprint)],
    corpus: &[(C, Fingerprint)],
    mut emit: impl FnMut(Q, C, u32),
) {
    for &(iq, fq) in queries {
        for &(ic, fc) in corpus {
            let x = fq.0 ^ fc.0;
            let d = x.count_ones();
            if d <= max_distance && table.owns_xor(x) {
                emit(iq, ic, d);
            }
        }
    }
}

/// One element of a group in the batch engine: a permuted fingerprint and its position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Entry {
    /// The fingerprint permuted by the current table: the prefix is in the high bits.
    pub(crate) key: u64,
    /// The position in the input slice.
    pub(crate) id: u32,
    /// 0 for the first input (queries), 1 for the second (corpus).
    pub(crate) side: u32,
}

/// The fast form of [`pair_group`] for entries of one table that share the prefix and sit in
/// ascending id order: the pairs `(run[i], run[j])`, `i < j`, for the rows `i` in `rows`.
#[inline(always)]
pub(crate) fn pair_run(
    table: &Table,
    max_distance: u32,
    run: &[Entry],
    rows: Range<usize>,
    out: &mut Vec<crate::Pair>,
) {
    for i in rows {
        let a = run[i];
        for b in &run[i + 1..] {
            let x = a.key ^ b.key;
            let d = x.count_ones();
            if d <= max_distance && table.owns_permuted_xor(x) {
                out.push(crate::Pair { a: a.id, b: b.id, distance: d });
            }
        }
    }
}

/// The fast form of [`cross_group`]: `run` holds the queries (side 0) first, then the
/// corpus (side 1), all sharing the prefix; the rows in `rows` that are queries are paired
/// with the whole corpus.
#[inline(always)]
pub(crate) fn cross_run(
    table: &Table,
    max_distance: u32,
    run: &[Entry],
    rows: Range<usize>,
    out: &mut Vec<crate::CrossPair>,
) {
    let split = run.partition_point(|e| e.side == 0);
    let (queries, corpus) = run.split_at(split);
    for q in &queries[rows.start.min(split)..rows.end.min(split)] {
        for c in corpus {
            let x = q.key ^ c.key;
            let d = x.count_ones();
            if d <= max_distance && table.owns_permuted_xor(x) {
                out.push(crate::CrossPair { query: q.id, corpus: c.id, distance: d });
            }
        }
    }
}
