//! Batch matching: all pairs among one set, and all (query, corpus) pairs between two sets.
//!
//! One table at a time: permute every fingerprint and scatter it (parallel, stable
//! counting sort) into buckets by the top bits of its prefix, then group each bucket by the
//! rest of the prefix (an LSD radix sort of short keys, or of the entries, in a per-thread
//! scratch buffer) and hand each run of equal prefixes to the pairing kernel. Consecutive
//! tables whose prefixes start with the same block bucket every fingerprint alike: they
//! share one scatter of the unpermuted fingerprints when the whole table fits one pass.
//! Buckets are processed in parallel in a fixed order, and each bucket's pairs are handed
//! to the sink in that order, so the output (even its order) does not depend on the number
//! of threads.

use std::ops::Range;

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::hamming::kernel::{Entry, cross_run, pair_run};
use crate::hamming::plan::{pass_capacity, scatter_bits};
use crate::hamming::scatter::{Optional, Sides, Source, histogram, scatter_range};
use crate::hamming::tables::{ConfigError, Table, Tables};

/// A pair of positions in the input slice whose fingerprints are within the maximum
/// distance: `a < b`.
///
/// A pair converts into `(a, b)`, which is what `simhash-cluster`'s builders take, so pairs
/// go to `Clusters::components(n, pairs)` as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Pair {
    /// The smaller position.
    pub a: u32,
    /// The larger position.
    pub b: u32,
    /// The Hamming distance between the two fingerprints.
    pub distance: u32,
}

/// A query position and a corpus position whose fingerprints are within the maximum
/// distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CrossPair {
    /// The position in the query slice.
    pub query: u32,
    /// The position in the corpus slice.
    pub corpus: u32,
    /// The Hamming distance between the two fingerprints.
    pub distance: u32,
}

impl From<Pair> for (u32, u32) {
    /// The two positions, `(a, b)`.
    #[inline]
    fn from(p: Pair) -> (u32, u32) {
        (p.a, p.b)
    }
}

impl From<&Pair> for (u32, u32) {
    /// The two positions, `(a, b)`.
    #[inline]
    fn from(p: &Pair) -> (u32, u32) {
        (p.a, p.b)
    }
}

/// Calls `sink` with batches of every pair of positions `(a, b)`, `a < b`, whose
/// fingerprints are at most [`Tables::max_distance`] bits apart, each pair exactly once.
///
/// Identical fingerprints at two positions are a pair at distance 0. `sink` runs on the
/// calling thread; the work runs on rayon's current thread pool (use
/// [`rayon::ThreadPool::install`] to choose the threads). The batches and their order are
/// the same for any number of threads. Memory: the input, 16 bytes per fingerprint for the
/// table being processed, and the pairs of the groups in flight (a few million
/// fingerprints' worth; a huge group of equal prefixes is split into pieces of about a
/// million candidate pairs, streamed a wave at a time).
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` fingerprints.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Tables, all_pairs_with};
///
/// let fps = [Fingerprint(0), Fingerprint(0b111), Fingerprint(u64::MAX), Fingerprint(0)];
/// let mut count = 0;
/// all_pairs_with(&fps, &Tables::new(6, 3)?, |pairs| count += pairs.len());
/// assert_eq!(count, 3); // (0, 1), (0, 3) and (1, 3)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all_pairs_with(fps: &[Fingerprint], tables: &Tables, sink: impl FnMut(&[Pair])) {
    all_pairs_with_progress(fps, tables, sink, |_| {});
}

/// [`all_pairs_with`], calling `progress(t)` on the calling thread as table `t` (counted from
/// 0, of [`Tables::len`]) starts: for a progress bar over a long run.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Tables, all_pairs_with_progress};
///
/// let fps = [Fingerprint(0), Fingerprint(0b1)];
/// let tables = Tables::new(4, 2)?;
/// let mut started = Vec::new();
/// all_pairs_with_progress(&fps, &tables, |_| {}, |t| started.push(t));
/// assert_eq!(started, (0..tables.len()).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all_pairs_with_progress(
    fps: &[Fingerprint],
    tables: &Tables,
    mut sink: impl FnMut(&[Pair]),
    mut progress: impl FnMut(usize),
) {
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
    let src = Sides(&[fps]);
    run(&src, tables, usize::MAX, &mut sink, &mut progress, pair_run, all_shape);
}

/// [`all_pairs_with`] within a memory budget: the same batches in the same order, with at
/// most about `memory` bytes in use (the input included), or all of them at once with
/// `None`.
///
/// Each table is processed in as many passes as the budget needs: a pass scatters only the
/// fingerprints whose permuted prefix falls in one range (whole tasks of buckets, in order),
/// then sorts and pairs them as the in-memory path does. Every candidate pair of a table
/// shares the table's prefix, so it lies within one pass: the pairs are complete, and since
/// the tasks, and the order in which their pairs reach `sink`, are those of a single pass,
/// so are the batches. Nothing is written to disk; each pass after the first rereads
/// `fps`. [`plan_with_memory`](crate::plan_with_memory) states the memory model and predicts
/// the number of passes and the peak; a single bucket larger than a pass's share (many
/// fingerprints with one prefix, which random data never has) is a pass of its own.
///
/// # Errors
///
/// [`ConfigErrorKind::MemoryTooSmall`](crate::ConfigErrorKind::MemoryTooSmall) before any
/// work if `memory` is below the input, the memory in flight and 1/256 of a table.
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` fingerprints.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Pair, Tables, all_pairs_with, all_pairs_with_budget};
///
/// let fps: Vec<Fingerprint> =
///     (0..50_000u64).map(|i| Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 3))).collect();
/// let tables = Tables::new(5, 3)?;
/// let (mut free, mut budgeted) = (Vec::new(), Vec::new());
/// all_pairs_with(&fps, &tables, |batch| free.push(batch.to_vec()));
/// // 400 KB of input and 800 KB for a whole table: 1 MB means several passes per table.
/// all_pairs_with_budget(&fps, &tables, Some(1_000_000), |batch| budgeted.push(batch.to_vec()))?;
/// assert_eq!(free, budgeted);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all_pairs_with_budget(
    fps: &[Fingerprint],
    tables: &Tables,
    memory: Option<u64>,
    sink: impl FnMut(&[Pair]),
) -> Result<(), ConfigError> {
    all_pairs_with_budget_progress(fps, tables, memory, sink, |_| {})
}

/// [`all_pairs_with_budget`] with the `progress` callback of [`all_pairs_with_progress`].
///
/// # Errors
///
/// As [`all_pairs_with_budget`].
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` fingerprints.
pub fn all_pairs_with_budget_progress(
    fps: &[Fingerprint],
    tables: &Tables,
    memory: Option<u64>,
    mut sink: impl FnMut(&[Pair]),
    mut progress: impl FnMut(usize),
) -> Result<(), ConfigError> {
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
    let src = Sides(&[fps]);
    let capacity = capacity(&src, memory)?;
    run(&src, tables, capacity, &mut sink, &mut progress, pair_run, all_shape);
    Ok(())
}

/// The entries one pass may hold within `memory` (all of them with no budget).
fn capacity<S: Source + ?Sized>(src: &S, memory: Option<u64>) -> Result<usize, ConfigError> {
    let Some(memory) = memory else { return Ok(usize::MAX) };
    let entries = pass_capacity(memory, src.bytes(), src.count() as u64)?;
    Ok(usize::try_from(entries).unwrap_or(usize::MAX))
}

/// Every pair within the maximum distance, sorted by `(a, b)`; see [`all_pairs_with`].
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Pair, Tables, all_pairs};
///
/// let fps = [Fingerprint(0), Fingerprint(0b111), Fingerprint(0b1111)];
/// let pairs = all_pairs(&fps, &Tables::new(4, 3)?);
/// assert_eq!(pairs, [Pair { a: 0, b: 1, distance: 3 }, Pair { a: 1, b: 2, distance: 1 }]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all_pairs(fps: &[Fingerprint], tables: &Tables) -> Vec<Pair> {
    let mut out = Vec::new();
    all_pairs_with(fps, tables, |p| out.extend_from_slice(p));
    out.par_sort_unstable();
    out
}

/// [`all_pairs_with`] over documents some of which have no fingerprint (as
/// `Fingerprinter::fingerprint` returns `None` for a text with no features): the pairs are
/// positions in `fps`, `None`s included, so they index the documents directly. A `None`
/// is in no pair. Batches come in the same order as [`all_pairs_with`] over the present
/// fingerprints gives them. `fps` is read in place: the present fingerprints are not copied.
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` entries.
pub fn all_pairs_optional_with(
    fps: &[Option<Fingerprint>],
    tables: &Tables,
    mut sink: impl FnMut(&[Pair]),
) {
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
    run(&Optional(fps), tables, usize::MAX, &mut sink, &mut |_| {}, pair_run, all_shape);
}

/// [`all_pairs_optional_with`] within a memory budget, as [`all_pairs_with_budget`] does it:
/// the same batches in the same order. The input counts at 16 bytes per entry (the size of
/// an `Option<Fingerprint>`), present or not.
///
/// # Errors
///
/// As [`all_pairs_with_budget`].
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` entries.
pub fn all_pairs_optional_with_budget(
    fps: &[Option<Fingerprint>],
    tables: &Tables,
    memory: Option<u64>,
    mut sink: impl FnMut(&[Pair]),
) -> Result<(), ConfigError> {
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
    let src = Optional(fps);
    let capacity = capacity(&src, memory)?;
    run(&src, tables, capacity, &mut sink, &mut |_| {}, pair_run, all_shape);
    Ok(())
}

/// Every pair within the maximum distance among the documents that have a fingerprint,
/// as positions in `fps`, sorted by `(a, b)`; see [`all_pairs_optional_with`].
///
/// ```
/// use simhash_cluster::Clusters;
/// use simhash_core::Fingerprinter;
/// use simhash_index::{Pair, Tables, all_pairs_optional};
///
/// let texts = ["the cat sat on the mat", "...", "the cat sat on the mat!", "a dog barked"];
/// let fingerprinter = Fingerprinter::new();
/// let fps: Vec<_> = texts.iter().map(|t| fingerprinter.fingerprint(t)).collect();
/// assert_eq!(fps[1], None); // no words, no fingerprint
/// let pairs = all_pairs_optional(&fps, &Tables::new(4, 3)?);
/// assert_eq!(pairs, [Pair { a: 0, b: 2, distance: 0 }]);
/// // Positions are the documents' own: the pairs go to clustering as they are.
/// let clusters = Clusters::components(texts.len(), pairs)?;
/// assert_eq!(clusters.members(0), &[0, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all_pairs_optional(fps: &[Option<Fingerprint>], tables: &Tables) -> Vec<Pair> {
    let mut out = Vec::new();
    all_pairs_optional_with(fps, tables, |p| out.extend_from_slice(p));
    out.par_sort_unstable();
    out
}

/// Calls `sink` with batches of every `(query, corpus)` pair of positions whose
/// fingerprints are at most [`Tables::max_distance`] bits apart, each pair exactly once
/// (the paper's batch query mode). Threads and determinism as in [`all_pairs_with`].
///
/// # Panics
///
/// If either slice has more than `u32::MAX` fingerprints.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{CrossPair, Tables, cross_pairs_with};
///
/// let corpus = [Fingerprint(0), Fingerprint(0xff00), Fingerprint(0b1)];
/// let queries = [Fingerprint(0b11)];
/// let mut pairs = Vec::new();
/// cross_pairs_with(&queries, &corpus, &Tables::new(5, 2)?, |p| pairs.extend_from_slice(p));
/// pairs.sort();
/// assert_eq!(pairs, [
///     CrossPair { query: 0, corpus: 0, distance: 2 },
///     CrossPair { query: 0, corpus: 2, distance: 1 },
/// ]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cross_pairs_with(
    queries: &[Fingerprint],
    corpus: &[Fingerprint],
    tables: &Tables,
    mut sink: impl FnMut(&[CrossPair]),
) {
    assert!(u32::try_from(queries.len()).is_ok(), "more than u32::MAX queries");
    assert!(u32::try_from(corpus.len()).is_ok(), "more than u32::MAX corpus fingerprints");
    if queries.is_empty() || corpus.is_empty() {
        return;
    }
    let src = Sides(&[queries, corpus]);
    run(&src, tables, usize::MAX, &mut sink, &mut |_| {}, cross_run, cross_shape);
}

/// Every `(query, corpus)` pair within the maximum distance, sorted by `(query, corpus)`;
/// see [`cross_pairs_with`].
pub fn cross_pairs(
    queries: &[Fingerprint],
    corpus: &[Fingerprint],
    tables: &Tables,
) -> Vec<CrossPair> {
    let mut out = Vec::new();
    cross_pairs_with(queries, corpus, tables, |p| out.extend_from_slice(p));
    out.par_sort_unstable();
    out
}

/// Buckets smaller than this are sorted by insertion sort.
const SMALL_BUCKET: usize = 48;
/// Buckets larger than this are sorted in place (no scratch buffer of their size). Small in
/// tests, so that they exercise all three ways of sorting a bucket.
const HUGE_BUCKET: usize = if cfg!(test) { 200 } else { 1 << 22 };
/// A parallel task covers whole buckets and at least this many fingerprints; a pass under a
/// memory budget covers whole tasks. Small in tests, so that tiny budgets give many passes.
const TASK_ELEMS: usize = if cfg!(test) { 256 } else { 1 << 15 };
/// Tasks run in waves of about this many fingerprints; each wave's pairs are then sunk.
const WAVE_ELEMS: usize = 1 << 22;

/// The one thing that differs between all-pairs and cross-pairs: what a run of equal
/// prefixes emits (for the rows of the run in the range).
trait RunFn<O>: Fn(&Table, u32, &[Entry], Range<usize>, &mut Vec<O>) + Sync {}
impl<O, F: Fn(&Table, u32, &[Entry], Range<usize>, &mut Vec<O>) + Sync> RunFn<O> for F {}

/// Runs with more entries than this are set aside while their bucket is scanned, and then
/// split by rows over the threads, a wave at a time, so that the pairs of one huge group of
/// equal prefixes (thousands of copies of one document) never sit in memory together.
/// Small in tests, so that they exercise it.
const BIG_RUN: usize = if cfg!(test) { 16 } else { 512 };
/// About how many candidate pairs one piece of a big run checks.
const PIECE_PAIRS: usize = if cfg!(test) { 40 } else { 1 << 20 };
/// Once a task holds this many pairs, its further runs are set aside and paired by the
/// calling thread after the wave, streaming to the sink: so a wave's pairs in memory stay
/// under about `tasks × (TASK_PAIRS + BIG_RUN²/2)` however many mid-sized groups of equal
/// prefixes it has. Small in tests, so that they exercise it.
const TASK_PAIRS: usize = if cfg!(test) { 8 } else { 1 << 15 };

/// What one task hands back: its pairs, the big runs it set aside, and the runs it deferred
/// once it held `TASK_PAIRS` pairs (entries back to back, with the end of each run).
struct TaskOut<O> {
    out: Vec<O>,
    big: Vec<Vec<Entry>>,
    deferred: Vec<Entry>,
    deferred_ends: Vec<usize>,
}

/// Finds the pairs of every table, a pass of at most `capacity` entries at a time (a pass
/// is whole tasks; a single task larger than `capacity` is a pass of its own). Returns the
/// number of passes made over all tables.
fn run<O: Send, S: Source + ?Sized>(
    src: &S,
    tables: &Tables,
    capacity: usize,
    sink: &mut dyn FnMut(&[O]),
    progress: &mut dyn FnMut(usize),
    run_fn: impl RunFn<O>,
    shape: RunShape,
) -> usize {
    run_sharing(src, tables, capacity, true, sink, progress, run_fn, shape).0
}

/// [`run`], sharing a scatter between tables where it can if `share` (tests compare both
/// ways). Returns the number of passes and the number of tables that read a shared scatter.
#[allow(clippy::too_many_arguments)]
fn run_sharing<O: Send, S: Source + ?Sized>(
    src: &S,
    tables: &Tables,
    capacity: usize,
    share: bool,
    sink: &mut dyn FnMut(&[O]),
    progress: &mut dyn FnMut(usize),
    run_fn: impl RunFn<O>,
    shape: RunShape,
) -> (usize, usize) {
    let n = src.count();
    if n < 2 {
        (0..tables.len()).for_each(&mut *progress);
        return (0, 0);
    }
    let (mut made, mut sharing) = (0, 0);
    let max_distance = tables.max_distance();
    let mut dest: Vec<Entry> = Vec::new();
    let chunks = src.chunks();
    let list: Vec<&Table> = tables.iter().collect();
    let mut t = 0;
    while t < list.len() {
        let table = list[t];
        progress(t);
        let scatter_bits = scatter_bits(n, table.prefix_bits());
        let hist = histogram(src, &chunks, table, scatter_bits);
        let starts = &hist.starts;
        let tasks = tasks(starts);
        let passes = passes(starts, &tasks, capacity);
        // The following tables that put every fingerprint in the same bucket (their
        // prefixes start with the same block: 10 of the 20 tables at 6 blocks, k = 3, then
        // 6, 3 and 1) share one scatter of the fingerprints as they are, each permuting
        // them as it reads its buckets, if a pass holds the whole table and every bucket
        // takes the short-key path. The tables' batches come in the same order.
        let shared = if share && passes.len() == 1 && short_keys(table, scatter_bits, starts) {
            list[t + 1..]
                .iter()
                .take_while(|&&u| {
                    table.same_top_bits(u, scatter_bits)
                        && scatter_bits == self::scatter_bits(n, u.prefix_bits())
                        && short_keys(u, scatter_bits, starts)
                })
                .count()
        } else {
            0
        };
        if shared > 0 {
            let all = 0..starts.len() - 1;
            let len = scatter_range(src, &chunks, table, &hist, all, &mut dest, true);
            for (u, &table) in list[t..=t + shared].iter().enumerate() {
                if u > 0 {
                    progress(t + u);
                }
                let task =
                    Task { table, max_distance, scatter_bits, run_fn: &run_fn, shape, raw: true };
                task.waves(&mut dest[..len], starts, &tasks, sink);
                made += 1;
            }
            t += shared + 1;
            sharing += shared + 1;
            continue;
        }
        let task = Task { table, max_distance, scatter_bits, run_fn: &run_fn, shape, raw: false };
        for pass in passes {
            let tasks = &tasks[pass];
            let buckets = tasks[0].0..tasks[tasks.len() - 1].1;
            let len = scatter_range(src, &chunks, table, &hist, buckets, &mut dest, false);
            task.waves(&mut dest[..len], starts, tasks, sink);
            made += 1;
        }
        t += 1;
    }
    (made, sharing)
}

/// Whether every bucket of `table` (bounded by `starts`, split on the top `done` bits of
/// the prefix) takes [`group_bucket`]'s short-key path, or is small.
fn short_keys(table: &Table, done: u32, starts: &[usize]) -> bool {
    let rest = table.prefix_bits() - done;
    let largest = starts.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    largest <= HUGE_BUCKET && sparse(rest, largest)
}

/// Whether a bucket of `len` entries whose prefixes have `rest` bits left takes
/// [`group_bucket`]'s short-key path: `rest` is 1 to 32 bits, and at least 4 more than
/// `log2(len)`, so that most prefixes occur once and few entries are copied out as runs.
/// (With fewer bits, as at 4 blocks and k = 3, where 6 bits are left, almost every entry is
/// in a run, and sorting the entries themselves is cheaper.)
fn sparse(rest: u32, len: usize) -> bool {
    (1..=32).contains(&rest) && (len as u64) << 4 <= 1u64 << rest
}

/// [`all_pairs_with`] with (`share`) or without sharing scatters between tables; returns
/// how many tables read a shared scatter.
#[cfg(test)]
pub(crate) fn all_pairs_sharing(
    fps: &[Fingerprint],
    tables: &Tables,
    share: bool,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    let src = Sides(&[fps]);
    run_sharing(&src, tables, usize::MAX, share, &mut sink, &mut |_| {}, pair_run, all_shape).1
}

/// [`cross_pairs_with`] with or without sharing scatters; returns how many tables read a
/// shared scatter.
#[cfg(test)]
pub(crate) fn cross_pairs_sharing(
    queries: &[Fingerprint],
    corpus: &[Fingerprint],
    tables: &Tables,
    share: bool,
    mut sink: impl FnMut(&[CrossPair]),
) -> usize {
    let src = Sides(&[queries, corpus]);
    run_sharing(&src, tables, usize::MAX, share, &mut sink, &mut |_| {}, cross_run, cross_shape).1
}

/// [`all_pairs_with`] in passes of at most `capacity` entries (for tests, which choose the
/// partition directly); returns the number of passes made.
#[cfg(test)]
pub(crate) fn all_pairs_with_capacity(
    fps: &[Fingerprint],
    tables: &Tables,
    capacity: usize,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    run(&Sides(&[fps]), tables, capacity, &mut sink, &mut |_| {}, pair_run, all_shape)
}

/// [`all_pairs_optional_with`] in passes of at most `capacity` entries; returns the number
/// of passes made.
#[cfg(test)]
pub(crate) fn all_pairs_optional_with_capacity(
    fps: &[Option<Fingerprint>],
    tables: &Tables,
    capacity: usize,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    run(&Optional(fps), tables, capacity, &mut sink, &mut |_| {}, pair_run, all_shape)
}

/// Splits the tasks of a table into passes: runs of consecutive tasks with at most
/// `capacity` entries in all (at least one task each), balanced. With `P = ceil(total /
/// capacity)`, pass `i` ends with the first task that reaches `(i + 1) / P` of the entries
/// (or before the task that would overflow `capacity`), so a pass holds about `total / P`
/// entries, at most one task more. `usize::MAX`: one pass.
pub(crate) fn passes(
    starts: &[usize],
    tasks: &[(usize, usize)],
    capacity: usize,
) -> Vec<Range<usize>> {
    let Some((&(first, _), &(_, last))) = tasks.first().zip(tasks.last()) else {
        return Vec::new();
    };
    let total = starts[last] - starts[first];
    let count = total.div_ceil(capacity.max(1)).max(1);
    let mut out = Vec::new();
    let mut lo = 0;
    for (i, &(_, b_hi)) in tasks.iter().enumerate() {
        if i > lo && starts[b_hi] - starts[tasks[lo].0] > capacity {
            out.push(lo..i);
            lo = i;
        }
        let share = (out.len() + 1) as u128 * total as u128 / count as u128;
        if (starts[b_hi] - starts[first]) as u128 >= share {
            out.push(lo..i + 1);
            lo = i + 1;
        }
    }
    if lo < tasks.len() {
        out.push(lo..tasks.len());
    }
    out
}

/// One table's work on a range of buckets.
struct Task<'a, R> {
    table: &'a Table,
    max_distance: u32,
    scatter_bits: u32,
    run_fn: &'a R,
    shape: RunShape,
    /// The entries hold the fingerprints as they are (a scatter shared between tables):
    /// permute them when reading, and leave the buckets as they are.
    raw: bool,
}

/// For a run of equal prefixes: how many leading rows do work, and about how many
/// candidates each checks. All pairs: every row, against half the run on average. Cross
/// pairs: the query rows (the queries come first in a run), each against every corpus entry.
type RunShape = fn(&[Entry]) -> (usize, usize);

fn all_shape(run: &[Entry]) -> (usize, usize) {
    (run.len(), run.len() / 2)
}

fn cross_shape(run: &[Entry]) -> (usize, usize) {
    let queries = run.partition_point(|e| e.side == 0);
    (queries, run.len() - queries)
}

impl<R> Task<'_, R> {
    /// Runs `tasks` (whose entries, scattered, are `dest`: bucket `b` at `starts[b] -
    /// starts[tasks[0].0]`) in waves over the threads, sinking each wave's pairs in task
    /// order before the next wave starts.
    fn waves<O: Send>(
        &self,
        dest: &mut [Entry],
        starts: &[usize],
        tasks: &[(usize, usize)],
        sink: &mut dyn FnMut(&[O]),
    ) where
        R: RunFn<O>,
    {
        let mut rest: &mut [Entry] = dest;
        let mut done = starts[tasks[0].0];
        let mut t = 0;
        while t < tasks.len() {
            // One wave: consecutive tasks, split into disjoint slices of `dest`.
            let mut wave: Vec<(&mut [Entry], &[usize])> = Vec::new();
            let mut elems = 0;
            while t < tasks.len() && (wave.is_empty() || elems < WAVE_ELEMS) {
                let (b_lo, b_hi) = tasks[t];
                let (lo, hi) = (starts[b_lo], starts[b_hi]);
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - done);
                let (mine, tail) = tail.split_at_mut(hi - lo);
                rest = tail;
                done = hi;
                wave.push((mine, &starts[b_lo..=b_hi]));
                elems += hi - lo;
                t += 1;
            }
            let outs: Vec<TaskOut<O>> = wave
                .into_par_iter()
                .map_init(Scratch::default, |scratch, (slice, bounds)| {
                    self.run(slice, bounds, scratch)
                })
                .collect();
            for TaskOut { out, big, deferred, deferred_ends } in &outs {
                if !out.is_empty() {
                    sink(out);
                }
                for run in big {
                    self.big_run(run, sink);
                }
                self.deferred(deferred, deferred_ends, sink);
            }
        }
    }

    /// Sorts each bucket of `slice` (bounded by `bounds`, offsets into the whole table) and
    /// returns the pairs of its runs, using the popcnt instruction where the CPU has it.
    fn run<O>(&self, slice: &mut [Entry], bounds: &[usize], scratch: &mut Scratch) -> TaskOut<O>
    where
        R: RunFn<O>,
    {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the popcnt instruction.
            return unsafe { self.run_popcnt(slice, bounds, scratch) };
        }
        self.run_impl(slice, bounds, scratch)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn run_popcnt<O>(
        &self,
        slice: &mut [Entry],
        bounds: &[usize],
        scratch: &mut Scratch,
    ) -> TaskOut<O>
    where
        R: RunFn<O>,
    {
        self.run_impl(slice, bounds, scratch)
    }

    #[inline(always)]
    fn run_impl<O>(
        &self,
        slice: &mut [Entry],
        bounds: &[usize],
        scratch: &mut Scratch,
    ) -> TaskOut<O>
    where
        R: RunFn<O>,
    {
        let mut task = TaskOut {
            out: Vec::new(),
            big: Vec::new(),
            deferred: Vec::new(),
            deferred_ends: Vec::new(),
        };
        let base = bounds[0];
        for w in bounds.windows(2) {
            let bucket = &mut slice[w[0] - base..w[1] - base];
            if bucket.len() >= 2 {
                let each = |run: &[Entry]| {
                    if run.len() > BIG_RUN {
                        task.big.push(run.to_vec());
                    } else if task.out.len() >= TASK_PAIRS {
                        task.deferred.extend_from_slice(run);
                        task.deferred_ends.push(task.deferred.len());
                    } else {
                        // Through `rows`, which picks popcnt: this closure is called from
                        // `group_bucket`, which is not inlined here, so it does not get
                        // this function's target features.
                        self.rows(run, 0..run.len(), &mut task.out);
                    }
                };
                if self.raw {
                    group_raw_bucket(bucket, scratch, self.table, self.scatter_bits, each);
                } else {
                    group_bucket(bucket, scratch, self.table, self.scatter_bits, each);
                }
            }
        }
        task
    }

    /// Pairs the runs a task deferred, on the calling thread, handing the sink about
    /// `PIECE_PAIRS` pairs at a time.
    fn deferred<O>(&self, entries: &[Entry], ends: &[usize], sink: &mut dyn FnMut(&[O]))
    where
        R: RunFn<O>,
    {
        let mut out = Vec::new();
        let mut start = 0;
        for &end in ends {
            let run = &entries[start..end];
            start = end;
            self.rows(run, 0..run.len(), &mut out);
            if out.len() >= PIECE_PAIRS {
                sink(&out);
                out.clear();
            }
        }
        if !out.is_empty() {
            sink(&out);
        }
    }

    /// Emits the pairs of one big run: pieces of rows of about `PIECE_PAIRS` candidates
    /// each, in waves over the threads, each wave sunk before the next starts.
    fn big_run<O: Send>(&self, run: &[Entry], sink: &mut dyn FnMut(&[O]))
    where
        R: RunFn<O>,
    {
        // Pieces cover only the rows that do work, each about PIECE_PAIRS candidates: for
        // one query against a huge corpus group that is one piece, not one per corpus row.
        let (active, per_row) = (self.shape)(run);
        let rows = (PIECE_PAIRS / per_row.max(1)).max(1);
        let pieces: Vec<Range<usize>> =
            (0..active).step_by(rows).map(|lo| lo..(lo + rows).min(active)).collect();
        let wave = (WAVE_ELEMS / PIECE_PAIRS).max(8);
        for group in pieces.chunks(wave) {
            let outs: Vec<Vec<O>> = group
                .par_iter()
                .map(|rows| {
                    let mut out = Vec::new();
                    self.rows(run, rows.clone(), &mut out);
                    out
                })
                .collect();
            for out in &outs {
                if !out.is_empty() {
                    sink(out);
                }
            }
        }
    }

    /// `run_fn` on some rows of a run, with popcnt where the CPU has it.
    fn rows<O>(&self, run: &[Entry], rows: Range<usize>, out: &mut Vec<O>)
    where
        R: RunFn<O>,
    {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the popcnt instruction.
            unsafe { self.rows_popcnt(run, rows, out) };
            return;
        }
        (self.run_fn)(self.table, self.max_distance, run, rows, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn rows_popcnt<O>(&self, run: &[Entry], rows: Range<usize>, out: &mut Vec<O>)
    where
        R: RunFn<O>,
    {
        (self.run_fn)(self.table, self.max_distance, run, rows, out);
    }
}

/// Groups consecutive buckets into tasks of at least `TASK_ELEMS` fingerprints.
pub(crate) fn tasks(starts: &[usize]) -> Vec<(usize, usize)> {
    let buckets = starts.len() - 1;
    let mut tasks = Vec::new();
    let mut lo = 0;
    for b in 1..=buckets {
        if starts[b] - starts[lo] >= TASK_ELEMS || b == buckets {
            tasks.push((lo, b));
            lo = b;
        }
    }
    tasks
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
