//! The batch matching API: [`AllPairs`] (every pair among one set of fingerprints, with its
//! options), [`all_pairs`] (the common case, collected and sorted) and [`cross_pairs_with`]
//! (every `(query, corpus)` pair between two sets), and the pairs they report. The engine
//! behind them is `hamming::batch`.

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::hamming::batch::{all_passes, cross_passes};
pub use crate::hamming::pair::{CrossPair, Pair};
use crate::hamming::plan::pass_capacity;
use crate::hamming::scatter::{Optional, Sides, Source};
use crate::hamming::tables::{ConfigError, Tables};

/// What [`AllPairs`] reads: a [`Fingerprint`] per document, or an
/// `Option<Fingerprint>` per document (as `Fingerprinter::fingerprint` returns `None` for a
/// text with no features). Sealed: these two are the only ones.
pub trait PairInput: sealed::Sealed + Sync {}

impl PairInput for Fingerprint {}
impl PairInput for Option<Fingerprint> {}

mod sealed {
    use simhash_core::Fingerprint;

    /// The input, as the engine reads it.
    #[derive(Debug)]
    pub enum Input<'a> {
        Plain(&'a [Fingerprint]),
        Optional(&'a [Option<Fingerprint>]),
    }

    pub trait Sealed: Sized {
        fn input(fps: &[Self]) -> Input<'_>;
    }

    impl Sealed for Fingerprint {
        fn input(fps: &[Fingerprint]) -> Input<'_> {
            Input::Plain(fps)
        }
    }

    impl Sealed for Option<Fingerprint> {
        fn input(fps: &[Option<Fingerprint>]) -> Input<'_> {
            Input::Optional(fps)
        }
    }
}

/// Every pair of positions `(a, b)`, `a < b`, whose fingerprints are at most
/// [`Tables::max_distance`] bits apart, each pair exactly once, handed to a callback in
/// batches: the batch all-pairs search and its options.
///
/// [`new`](AllPairs::new) takes the tables; [`budget`](AllPairs::budget) and
/// [`progress`](AllPairs::progress) set the options; [`run`](AllPairs::run) searches a
/// slice of [`Fingerprint`]s, or of `Option<Fingerprint>`s ([`PairInput`]), and
/// [`collect`](AllPairs::collect) gathers the pairs sorted. [`all_pairs`] is the common
/// case: no options, fingerprints in, the pairs sorted.
///
/// Identical fingerprints at two positions are a pair at distance 0. The sink runs on the
/// calling thread; the work runs on rayon's current thread pool (use
/// [`rayon::ThreadPool::install`] to choose the threads). The batches and their order are
/// the same for any number of threads, and with or without a budget. Memory: the input,
/// 16 bytes per fingerprint for the table being processed (or a pass's share of it under
/// a budget), and the pairs of the groups in flight (a few million fingerprints' worth; a
/// huge group of equal prefixes is split into pieces of about a million candidate pairs,
/// streamed a wave at a time).
///
/// # Example
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{AllPairs, Tables};
///
/// let fps = [Fingerprint(0), Fingerprint(0b111), Fingerprint(u64::MAX), Fingerprint(0)];
/// let tables = Tables::new(6, 3)?;
/// let (mut count, mut started) = (0, Vec::new());
/// AllPairs::new(&tables)
///     .budget(Some(1 << 20))
///     .progress(|t| started.push(t))
///     .run(&fps, |pairs| count += pairs.len())?;
/// assert_eq!(count, 3); // (0, 1), (0, 3) and (1, 3)
/// assert_eq!(started, (0..tables.len()).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct AllPairs<'t, P = fn(usize)> {
    tables: &'t Tables,
    memory: Option<u64>,
    progress: P,
}

impl<'t> AllPairs<'t> {
    /// The search over `tables`, with no budget and no progress callback.
    pub fn new(tables: &'t Tables) -> AllPairs<'t> {
        AllPairs { tables, memory: None, progress: |_| {} }
    }
}

impl<'t, P: FnMut(usize)> AllPairs<'t, P> {
    /// Searches within a memory budget: at most about `memory` bytes in use (the input
    /// included), with the same batches in the same order; `None` holds each table at once.
    ///
    /// Each table is processed in as many passes as the budget needs: a pass scatters only
    /// the fingerprints whose permuted prefix falls in one range (whole tasks of buckets, in
    /// order), then sorts and pairs them as the in-memory path does. Every candidate pair of
    /// a table shares the table's prefix, so it lies within one pass: the pairs are
    /// complete, and since the tasks, and the order in which their pairs reach the sink,
    /// are those of a single pass, so are the batches. Nothing is written to disk; each pass
    /// after the first rereads the input. An `Option<Fingerprint>` input counts at 16 bytes
    /// per entry, present or not. [`plan_with_memory`](crate::plan_with_memory) states the
    /// memory model and predicts the number of passes and the peak; a single bucket larger
    /// than a pass's share (many fingerprints with one prefix, which random data never has)
    /// is a pass of its own.
    ///
    /// By default, `None`.
    ///
    /// ```
    /// use simhash_core::Fingerprint;
    /// use simhash_index::{AllPairs, Tables};
    ///
    /// let fps: Vec<Fingerprint> =
    ///     (0..50_000u64).map(|i| Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 3))).collect();
    /// let tables = Tables::new(5, 3)?;
    /// let (mut free, mut budgeted) = (Vec::new(), Vec::new());
    /// AllPairs::new(&tables).run(&fps, |batch| free.push(batch.to_vec()))?;
    /// // 400 KB of input and 800 KB for a whole table: 1 MB means several passes per table.
    /// AllPairs::new(&tables).budget(Some(1_000_000)).run(&fps, |batch| budgeted.push(batch.to_vec()))?;
    /// assert_eq!(free, budgeted);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn budget(self, memory: Option<u64>) -> AllPairs<'t, P> {
        AllPairs { memory, ..self }
    }

    /// Calls `progress(t)` on the calling thread as table `t` (counted from 0, of
    /// [`Tables::len`]) starts: for a progress bar over a long run.
    ///
    /// By default, nothing is called.
    #[must_use]
    pub fn progress<Q: FnMut(usize)>(self, progress: Q) -> AllPairs<'t, Q> {
        AllPairs { tables: self.tables, memory: self.memory, progress }
    }

    /// Calls `sink` with batches of every pair within the maximum distance among `fps`.
    /// With `Option<Fingerprint>`s the pairs are positions in `fps`, `None`s included, so
    /// they index the documents directly; a `None` is in no pair, and the batches come in
    /// the order that the present fingerprints alone give them (`fps` is read in place:
    /// they are not copied).
    ///
    /// # Errors
    ///
    /// Only with a [`budget`](AllPairs::budget):
    /// [`ConfigErrorKind::MemoryTooSmall`](crate::ConfigErrorKind::MemoryTooSmall) before any
    /// work if the budget is below the input, the memory in flight and 1/256 of a table.
    ///
    /// # Panics
    ///
    /// If `fps` has more than `u32::MAX` entries.
    pub fn run<T: PairInput>(
        mut self,
        fps: &[T],
        mut sink: impl FnMut(&[Pair]),
    ) -> Result<(), ConfigError> {
        assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
        match T::input(fps) {
            sealed::Input::Plain(fps) => self.run_on(&Sides(&[fps]), &mut sink),
            sealed::Input::Optional(fps) => self.run_on(&Optional(fps), &mut sink),
        }
    }

    /// Every pair within the maximum distance among `fps` (as [`run`](AllPairs::run)
    /// reads them), sorted by `(a, b)`.
    ///
    /// # Errors
    ///
    /// As [`run`](AllPairs::run): only with a budget too small for the input.
    ///
    /// # Panics
    ///
    /// If `fps` has more than `u32::MAX` entries.
    ///
    /// ```
    /// use simhash_cluster::Clusters;
    /// use simhash_core::Fingerprinter;
    /// use simhash_index::{AllPairs, Pair, Tables};
    ///
    /// let texts = ["the cat sat on the mat", "...", "the cat sat on the mat!", "a dog barked"];
    /// let fingerprinter = Fingerprinter::new();
    /// let fps: Vec<_> = texts.iter().map(|t| fingerprinter.fingerprint(t)).collect();
    /// assert_eq!(fps[1], None); // no words, no fingerprint
    /// let pairs = AllPairs::new(&Tables::new(4, 3)?).collect(&fps)?;
    /// assert_eq!(pairs, [Pair { a: 0, b: 2, distance: 0 }]);
    /// // Positions are the documents' own: the pairs go to clustering as they are.
    /// let clusters = Clusters::components(texts.len(), pairs)?;
    /// assert_eq!(clusters.members(0), &[0, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn collect<T: PairInput>(self, fps: &[T]) -> Result<Vec<Pair>, ConfigError> {
        let mut out = Vec::new();
        self.run(fps, |p| out.extend_from_slice(p))?;
        out.par_sort_unstable();
        Ok(out)
    }

    fn run_on<S: Source + ?Sized>(
        &mut self,
        src: &S,
        sink: &mut dyn FnMut(&[Pair]),
    ) -> Result<(), ConfigError> {
        let capacity = capacity(src, self.memory)?;
        all_passes(src, self.tables, capacity, true, sink, &mut self.progress);
        Ok(())
    }
}

/// The entries one pass may hold within `memory` (all of them with no budget).
fn capacity<S: Source + ?Sized>(src: &S, memory: Option<u64>) -> Result<usize, ConfigError> {
    let Some(memory) = memory else { return Ok(usize::MAX) };
    let entries = pass_capacity(memory, src.bytes(), src.count() as u64)?;
    Ok(usize::try_from(entries).unwrap_or(usize::MAX))
}

/// Every pair within the maximum distance among `fps`, sorted by `(a, b)`: the common
/// case of [`AllPairs`] (no options; [`AllPairs::collect`] takes `Option<Fingerprint>`s
/// too).
///
/// # Panics
///
/// If `fps` has more than `u32::MAX` fingerprints.
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
    assert!(u32::try_from(fps.len()).is_ok(), "more than u32::MAX fingerprints");
    all_passes(
        &Sides(&[fps]),
        tables,
        usize::MAX,
        true,
        &mut |p| out.extend_from_slice(p),
        &mut |_| {},
    );
    out.par_sort_unstable();
    out
}

/// Calls `sink` with batches of every `(query, corpus)` pair of positions whose
/// fingerprints are at most [`Tables::max_distance`] bits apart, each pair exactly once
/// (the paper's batch query mode). Threads and determinism as in [`AllPairs`].
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
    cross_passes(&Sides(&[queries, corpus]), tables, true, &mut sink);
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
