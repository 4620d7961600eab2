//! The batch engine: all pairs among one set, and all (query, corpus) pairs between two
//! sets (the API is `hamming::pairs`).
//!
//! One table at a time: permute every fingerprint and scatter it (parallel, stable
//! counting sort) into buckets by the top bits of its prefix, then group each bucket by the
//! rest of the prefix (`hamming::group`) and hand each run of equal prefixes to the pairing
//! kernel. Consecutive tables whose prefixes start with the same block bucket every
//! fingerprint alike: they share one scatter of the unpermuted fingerprints when the whole
//! table fits one pass. Buckets are processed in parallel in a fixed order, and each
//! bucket's pairs are handed to the sink in that order, so the output (even its order)
//! does not depend on the number of threads. Under a memory budget a table is processed in
//! passes, each a range of whole tasks of buckets ([`passes`]).

use std::ops::Range;

use rayon::prelude::*;
#[cfg(test)]
use simhash_core::Fingerprint;

use crate::hamming::group::{HUGE_BUCKET, Scratch, group_bucket, group_raw_bucket, sparse};
use crate::hamming::kernel::{Entry, cross_run, pair_run};
use crate::hamming::pair::{CrossPair, Pair};
use crate::hamming::plan::scatter_bits;
#[cfg(test)]
use crate::hamming::scatter::{Optional, Sides};
use crate::hamming::scatter::{Source, histogram, scatter_range};
use crate::hamming::tables::{Table, Tables};

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

/// Every pair among `src` ([`pair_run`]), a pass of at most `capacity` entries at a time,
/// sharing a scatter between tables where it can if `share` (tests compare both ways).
/// Returns the number of passes made over all tables and the number of tables that read
/// a shared scatter.
pub(crate) fn all_passes<S: Source + ?Sized>(
    src: &S,
    tables: &Tables,
    capacity: usize,
    share: bool,
    sink: &mut dyn FnMut(&[Pair]),
    progress: &mut dyn FnMut(usize),
) -> (usize, usize) {
    run_sharing(src, tables, capacity, share, sink, progress, pair_run, all_shape)
}

/// Every `(query, corpus)` pair of `src` (two sides: queries, then corpus; [`cross_run`]),
/// each table in one pass; returns what [`all_passes`] returns.
pub(crate) fn cross_passes<S: Source + ?Sized>(
    src: &S,
    tables: &Tables,
    share: bool,
    sink: &mut dyn FnMut(&[CrossPair]),
) -> (usize, usize) {
    run_sharing(src, tables, usize::MAX, share, sink, &mut |_| {}, cross_run, cross_shape)
}

/// Finds the pairs of every table, a pass of at most `capacity` entries at a time (a pass
/// is whole tasks; a single task larger than `capacity` is a pass of its own), sharing a
/// scatter between tables where it can if `share`. Returns the number of passes and the
/// number of tables that read a shared scatter.
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

/// All pairs with (`share`) or without sharing scatters between tables; returns how many
/// tables read a shared scatter.
#[cfg(test)]
pub(crate) fn all_pairs_sharing(
    fps: &[Fingerprint],
    tables: &Tables,
    share: bool,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    all_passes(&Sides(&[fps]), tables, usize::MAX, share, &mut sink, &mut |_| {}).1
}

/// Cross pairs with or without sharing scatters; returns how many tables read a shared
/// scatter.
#[cfg(test)]
pub(crate) fn cross_pairs_sharing(
    queries: &[Fingerprint],
    corpus: &[Fingerprint],
    tables: &Tables,
    share: bool,
    mut sink: impl FnMut(&[CrossPair]),
) -> usize {
    cross_passes(&Sides(&[queries, corpus]), tables, share, &mut sink).1
}

/// All pairs in passes of at most `capacity` entries (for tests, which choose the
/// partition directly); returns the number of passes made.
#[cfg(test)]
pub(crate) fn all_pairs_with_capacity(
    fps: &[Fingerprint],
    tables: &Tables,
    capacity: usize,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    all_passes(&Sides(&[fps]), tables, capacity, true, &mut sink, &mut |_| {}).0
}

/// All pairs over `Option<Fingerprint>`s in passes of at most `capacity` entries; returns
/// the number of passes made.
#[cfg(test)]
pub(crate) fn all_pairs_optional_with_capacity(
    fps: &[Option<Fingerprint>],
    tables: &Tables,
    capacity: usize,
    mut sink: impl FnMut(&[Pair]),
) -> usize {
    all_passes(&Optional(fps), tables, capacity, true, &mut sink, &mut |_| {}).0
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
