//! The online index: insert, remove and query one fingerprint at a time (simhash-cpp's `Corpus`).

mod part;

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::hamming::tables::Tables;
use part::{MIN_BATCH, Part, delta_limit};

/// A match: the caller's id of a stored fingerprint and its distance to the query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Hit<I = u64> {
    /// The distance between the query and the stored fingerprint.
    pub distance: u32,
    /// The id the fingerprint was inserted with.
    pub id: I,
}

/// The matches of one query, nearest first (by distance, then id); see [`Index::find_all`].
#[derive(Clone, Debug)]
pub struct Hits<I = u64> {
    inner: std::vec::IntoIter<Hit<I>>,
}

impl<I> Iterator for Hits<I> {
    type Item = Hit<I>;

    fn next(&mut self) -> Option<Hit<I>> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<I> ExactSizeIterator for Hits<I> {}

#[derive(Clone, Debug)]
struct Slot<I> {
    id: I,
    fp: Fingerprint,
    live: bool,
}

/// How many `(query, table)` probes are in flight at once: their cache misses overlap.
const LANES: usize = 16;

/// Brings the cache line holding `p` towards the core; a hint with no effect on results.
#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that never faults, and SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            std::ptr::from_ref(p).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A mutable index of fingerprints under the caller's ids: insert, remove, and find the
/// stored fingerprints within [`Tables::max_distance`] bits of a query, exactly.
///
/// Ids are unique: inserting an id that is already present replaces its fingerprint (like
/// a map) and returns the old one. Queries never report a removed or replaced fingerprint.
///
/// # Costs
///
/// Each table keeps a sorted array with a directory on its top bits (a query costs one
/// directory lookup and a scan of the fingerprints sharing the prefix, per table) plus a
/// small B-tree of recent inserts. An insert costs a B-tree insert per table; when a
/// B-tree grows past 1/32 of its array (at least 4096 entries) it is merged in, which is
/// linear but happens once per that many inserts, so inserts cost `O(tables * log n)`
/// amortized. A removal marks the entry dead; dead entries are dropped at the next merge,
/// and all tables are rebuilt once the dead outnumber the live. The bulk methods
/// ([`insert_many`](Index::insert_many), [`find_all_many`](Index::find_all_many),
/// [`find_first_many`](Index::find_first_many)) run in parallel on rayon's current pool.
///
/// An index holds fewer than 2^32 slots: stored fingerprints plus removed or replaced ones
/// not yet dropped by a rebuild (inserting past that panics).
///
/// Memory is about 12 bytes per fingerprint per table plus about 60 per fingerprint. For
/// 10 million fingerprints at distance 3, 5 blocks (10 tables, 2.2 GB) answer queries about
/// twice as fast as 4 blocks (4 tables, 1.2 GB); see `docs/index.md`.
///
/// # Ids
///
/// Any `Clone + Eq + Hash + Ord` type: integers, `&str`, `String`. The id is stored twice
/// (in the slot and in the id map), so a heap-allocated id costs its size twice; hits
/// clone it. Lookups by id take a borrowed form (`&str` for `String` ids), as `HashMap` does.
///
/// ```
/// use simhash_index::{Fingerprint, Index, Tables};
///
/// let mut pages: Index<String> = Index::new(Tables::new(4, 3)?);
/// pages.insert("https://a.example/".to_string(), Fingerprint(0xffff));
/// assert!(pages.contains("https://a.example/"));
/// assert_eq!(pages.find_first(Fingerprint(0xfffe)).map(|h| h.id), Some("https://a.example/".into()));
/// assert_eq!(format!("{pages:?}"), "Index { len: 1, max_distance: 3, blocks: 4, tables: 4 }");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_index::{Hit, Index, Tables};
///
/// let mut index = Index::new(Tables::new(4, 3)?);
/// index.insert(1, Fingerprint(0xffff_0000));
/// index.insert(2, Fingerprint(0xffff_0007));
/// index.insert(3, Fingerprint(0x1234_5678_9abc_def0));
/// let hits: Vec<Hit> = index.find_all(Fingerprint(0xffff_0001)).collect();
/// assert_eq!(hits, [Hit { id: 1, distance: 1 }, Hit { id: 2, distance: 2 }]);
/// index.remove(&1);
/// assert_eq!(index.find_first(Fingerprint(0xffff_0001)), Some(Hit { id: 2, distance: 2 }));
/// assert_eq!(index.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Index<I = u64> {
    tables: Tables,
    slots: Vec<Slot<I>>,
    by_id: HashMap<I, u32>,
    parts: Vec<Part>,
    dead: usize,
}

/// A summary (size and configuration), not the entries: an index of millions would print
/// for minutes.
#[allow(clippy::missing_fields_in_debug)] // on purpose: the entries are what it leaves out
impl<I> fmt::Debug for Index<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Index")
            .field("len", &self.by_id.len())
            .field("max_distance", &self.tables.max_distance())
            .field("blocks", &self.tables.blocks())
            .field("tables", &self.tables.len())
            .finish()
    }
}

/// The default index: [`DEFAULT_MAX_DISTANCE`] bits over [`DEFAULT_BLOCKS`] blocks.
impl<I: Clone + Eq + Hash + Ord + Send + Sync> Default for Index<I> {
    fn default() -> Index<I> {
        Index::new(default_tables())
    }
}

/// The maximum distance of [`Index::default`]: 3 bits, simhash-cpp's default (Manku et al.'s
/// choice for 64-bit fingerprints of web pages).
pub const DEFAULT_MAX_DISTANCE: u32 = 3;
/// The blocks of [`Index::default`]: 4 (4 tables), the least memory at distance 3; 5 blocks
/// (10 tables) answer queries about twice as fast on large indexes.
pub const DEFAULT_BLOCKS: usize = 4;

fn default_tables() -> Tables {
    Tables::new(DEFAULT_BLOCKS, DEFAULT_MAX_DISTANCE).expect("4 blocks at distance 3 are valid")
}

/// An index of [`Index::default`]'s configuration holding `items` (later duplicates of an
/// id replace earlier ones).
impl<I: Clone + Eq + Hash + Ord + Send + Sync> FromIterator<(I, Fingerprint)> for Index<I> {
    fn from_iter<T: IntoIterator<Item = (I, Fingerprint)>>(iter: T) -> Index<I> {
        let mut index = Index::default();
        index.insert_many(iter);
        index
    }
}

impl<I: Clone + Eq + Hash + Ord + Send + Sync> Index<I> {
    /// An empty index over `tables`.
    pub fn new(tables: Tables) -> Index<I> {
        let parts = vec![Part::default(); tables.len()];
        Index { tables, slots: Vec::new(), by_id: HashMap::new(), parts, dead: 0 }
    }

    /// The tables (blocks and maximum distance) of this index.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The number of stored fingerprints (distinct ids).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// True if `id` is stored.
    pub fn contains<Q>(&self, id: &Q) -> bool
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.by_id.contains_key(id)
    }

    /// The fingerprint stored under `id`, if any.
    pub fn get<Q>(&self, id: &Q) -> Option<Fingerprint>
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.by_id.get(id).map(|&s| self.slots[s as usize].fp)
    }

    fn new_slot(&mut self, id: I, fp: Fingerprint) -> (u32, Option<Fingerprint>) {
        let slot =
            u32::try_from(self.slots.len()).expect("fewer than 2^32 inserts between rebuilds");
        self.slots.push(Slot { id: id.clone(), fp, live: true });
        let old = self.by_id.insert(id, slot).map(|old| self.kill(old));
        (slot, old)
    }

    fn kill(&mut self, slot: u32) -> Fingerprint {
        let s = &mut self.slots[slot as usize];
        s.live = false;
        self.dead += 1;
        s.fp
    }

    /// Stores `fp` under `id`; returns the fingerprint `id` had before, if any (it is
    /// replaced).
    pub fn insert(&mut self, id: I, fp: Fingerprint) -> Option<Fingerprint> {
        let (slot, old) = self.new_slot(id, fp);
        let any_dead = self.dead > 0;
        for (table, part) in self.tables.iter().zip(&mut self.parts) {
            part.delta.insert((table.permute(fp), slot));
            if part.delta.len() > delta_limit(part.keys.len()) {
                let slots = &self.slots;
                let live = |s: u32| slots[s as usize].live;
                part.merge(table, &[], any_dead.then_some(&live));
            }
        }
        self.maybe_rebuild();
        old
    }

    /// Stores many fingerprints at once, merging them into every table in parallel (one
    /// linear merge per table instead of per-insert updates). Later duplicates of an id
    /// replace earlier ones, as with [`insert`](Index::insert).
    ///
    /// A batch small next to the index goes through the per-table delta like single inserts,
    /// so that small batches never cost a pass over the whole index.
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = (I, Fingerprint)>) {
        // Collected first: a panicking iterator leaves the index as it was.
        let items: Vec<(I, Fingerprint)> = items.into_iter().collect();
        let base = self.parts.first().map_or(0, |p| p.keys.len());
        if items.len() <= delta_limit(base) {
            for (id, fp) in items {
                self.insert(id, fp);
            }
            return;
        }
        self.merge_in(items, true);
    }

    /// [`insert_many`](Index::insert_many) without the path for small batches: every table
    /// merges the batch (in pieces over the threads), and the deltas stay empty, so that
    /// queries need no B-tree lookups (the dedup walk's index). Without `keyed`, the ids
    /// are not recorded (no hashing on the calling thread): the caller promises that they
    /// are all new and that it only queries the index from then on (`len`, `contains`,
    /// `get`, `remove` and replacing inserts do not see them).
    pub(crate) fn merge_in(&mut self, items: Vec<(I, Fingerprint)>, keyed: bool) {
        let first = self.slots.len();
        self.slots.reserve(items.len());
        if keyed {
            self.by_id.reserve(items.len());
            for (id, fp) in items {
                self.new_slot(id, fp);
            }
        } else {
            assert!(
                u32::try_from(first + items.len()).is_ok(),
                "fewer than 2^32 inserts between rebuilds"
            );
            self.slots.extend(items.into_iter().map(|(id, fp)| Slot { id, fp, live: true }));
        }
        let slots = &self.slots[..];
        let new = &slots[first..];
        let any_dead = self.dead > 0;
        self.parts.par_iter_mut().zip(self.tables.iter().collect::<Vec<_>>()).for_each(
            |(part, table)| {
                let mut extra: Vec<(u64, u32)> = new
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.live)
                    .map(|(i, s)| (table.permute(s.fp), (first + i) as u32))
                    .collect();
                extra.par_sort_unstable();
                let live = |s: u32| slots[s as usize].live;
                part.merge(table, &extra, any_dead.then_some(&live));
            },
        );
        self.maybe_rebuild();
    }

    /// Removes `id`; returns its fingerprint if it was stored.
    pub fn remove<Q>(&mut self, id: &Q) -> Option<Fingerprint>
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = self.by_id.remove(id)?;
        let fp = self.kill(slot);
        self.maybe_rebuild();
        Some(fp)
    }

    /// Removes every id of `ids` that is stored; returns how many were. The tables are
    /// rebuilt at most once, at the end (when the dead then outnumber the live), so a large
    /// batch costs one pass however many it removes.
    ///
    /// ```
    /// use simhash_index::{Fingerprint, Index};
    ///
    /// let mut index: Index<u32> = (0..10).map(|i| (i, Fingerprint(u64::from(i) << 20))).collect();
    /// assert_eq!(index.remove_many(&[1, 2, 3, 42]), 3);
    /// assert_eq!(index.len(), 7);
    /// ```
    pub fn remove_many<'q, Q>(&mut self, ids: impl IntoIterator<Item = &'q Q>) -> usize
    where
        I: Borrow<Q>,
        Q: Hash + Eq + ?Sized + 'q,
    {
        let mut removed = 0;
        for id in ids {
            if let Some(slot) = self.by_id.remove(id) {
                self.kill(slot);
                removed += 1;
            }
        }
        self.maybe_rebuild();
        removed
    }

    /// Once the dead slots outnumber the live ones, renumbers the live slots and rebuilds
    /// every table (in parallel).
    fn maybe_rebuild(&mut self) {
        if self.dead <= self.by_id.len().max(MIN_BATCH) {
            return;
        }
        let slots: Vec<Slot<I>> =
            std::mem::take(&mut self.slots).into_iter().filter(|s| s.live).collect();
        for (i, s) in slots.iter().enumerate() {
            if let Some(slot) = self.by_id.get_mut(&s.id) {
                *slot = i as u32;
            }
        }
        self.slots = slots;
        self.dead = 0;
        let slots = &self.slots[..];
        self.parts.par_iter_mut().zip(self.tables.iter().collect::<Vec<_>>()).for_each(
            |(part, table)| {
                let mut all: Vec<(u64, u32)> = slots
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (table.permute(s.fp), i as u32))
                    .collect();
                all.sort_unstable();
                part.keys = Vec::new();
                part.slots = Vec::new();
                part.delta.clear();
                part.merge(table, &all, None);
            },
        );
    }

    /// Every stored fingerprint within the maximum distance of `fp`, each once, by
    /// distance and then id.
    pub fn find_all(&self, fp: Fingerprint) -> Hits<I> {
        let mut hits = Vec::new();
        self.find_all_into(fp, &mut hits);
        Hits { inner: hits.into_iter() }
    }

    /// Like [`find_all`](Index::find_all), but clears `hits` and fills it, so a loop of
    /// queries need not allocate.
    pub fn find_all_into(&self, fp: Fingerprint, hits: &mut Vec<Hit<I>>) {
        hits.clear();
        self.probe(&[fp], true, &mut |_, hit| {
            hits.push(hit);
            true
        });
        hits.sort_unstable();
    }

    /// A stored fingerprint within the maximum distance of `fp`, if there is one: the
    /// first found (tables in order; in each, the merged entries in key order, then the
    /// recent inserts), not necessarily the nearest. The same state gives the same answer. Stops at the first match, so it is the cheapest "have I seen this?".
    pub fn find_first(&self, fp: Fingerprint) -> Option<Hit<I>> {
        let mut first = None;
        self.probe(&[fp], false, &mut |_, hit| {
            first = Some(hit);
            false
        });
        first
    }

    /// [`find_all`](Index::find_all) for each query, in parallel; the result has one entry
    /// per query, in order.
    ///
    /// # Panics
    ///
    /// With more than `u32::MAX` queries in one call.
    pub fn find_all_many(&self, queries: &[Fingerprint]) -> Vec<Vec<Hit<I>>> {
        self.find_all_many_by(queries, self.sorted_pays(queries.len()))
    }

    /// [`find_all_many`](Index::find_all_many) by the sorted or the independent path.
    pub(crate) fn find_all_many_by(
        &self,
        queries: &[Fingerprint],
        sorted: bool,
    ) -> Vec<Vec<Hit<I>>> {
        if sorted {
            let mut out = vec![Vec::new(); queries.len()];
            for (q, hit) in self.probe_sorted(queries, true) {
                out[q as usize].push(hit);
            }
            out.par_iter_mut().for_each(|hits| hits.sort_unstable());
            return out;
        }
        queries
            .par_chunks(LANES)
            .flat_map_iter(|block| {
                let mut out = vec![Vec::new(); block.len()];
                self.probe(block, true, &mut |q, hit| {
                    out[q].push(hit);
                    true
                });
                for hits in &mut out {
                    hits.sort_unstable();
                }
                out
            })
            .collect()
    }

    /// Whether a batch of `queries` is large enough, next to the index, for the sorted
    /// bulk path (a pass over the queries per table) to beat independent lookups.
    fn sorted_pays(&self, queries: usize) -> bool {
        queries >= 1 << 15 && queries.saturating_mul(64) >= self.slots.len()
    }

    /// [`find_first`](Index::find_first) for each query, in parallel, in order.
    ///
    /// # Panics
    ///
    /// With more than `u32::MAX` queries in one call.
    pub fn find_first_many(&self, queries: &[Fingerprint]) -> Vec<Option<Hit<I>>> {
        self.find_first_many_by(queries, self.sorted_pays(queries.len()))
    }

    /// [`find_first_many`](Index::find_first_many) by the sorted or the independent path.
    pub(crate) fn find_first_many_by(
        &self,
        queries: &[Fingerprint],
        sorted: bool,
    ) -> Vec<Option<Hit<I>>> {
        if sorted {
            // At most one hit per query and table, tables in order: the first is the one
            // `find_first` finds.
            let mut out = vec![None; queries.len()];
            for (q, hit) in self.probe_sorted(queries, false) {
                out[q as usize].get_or_insert(hit);
            }
            return out;
        }
        queries
            .par_chunks(LANES)
            .flat_map_iter(|block| {
                let mut out = vec![None; block.len()];
                self.probe(block, false, &mut |q, hit| {
                    out[q] = Some(hit);
                    false
                });
                out
            })
            .collect()
    }

    /// Looks up at most [`LANES`] queries in every table and calls `emit(query, hit)` for
    /// each live stored fingerprint within the maximum distance (with `owned_only`, only
    /// where the table owns the pair, so each is reported once); `emit` returns false to
    /// stop looking for that query.
    #[inline]
    fn probe<F: FnMut(usize, Hit<I>) -> bool>(
        &self,
        queries: &[Fingerprint],
        owned_only: bool,
        emit: &mut F,
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the popcnt instruction.
            unsafe { self.probe_popcnt(queries, owned_only, emit) };
            return;
        }
        self.probe_impl(queries, owned_only, emit);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn probe_popcnt<F: FnMut(usize, Hit<I>) -> bool>(
        &self,
        queries: &[Fingerprint],
        owned_only: bool,
        emit: &mut F,
    ) {
        self.probe_impl(queries, owned_only, emit);
    }

    /// The probes run in groups of [`LANES`] `(query, table)` pairs, in three stages
    /// (permute and prefetch the directory; read the range and prefetch the keys; scan), so
    /// that the cache misses of a group overlap instead of following one another.
    #[inline(always)]
    fn probe_impl<F: FnMut(usize, Hit<I>) -> bool>(
        &self,
        queries: &[Fingerprint],
        owned_only: bool,
        emit: &mut F,
    ) {
        debug_assert!(queries.len() <= LANES);
        let tables = self.tables.as_slice();
        let n_tables = tables.len();
        let total = queries.len() * n_tables;
        let mut done = [false; LANES];
        let mut undone = queries.len();
        let mut jobs = [(0u64, 0usize, 0usize); LANES];
        let mut start = 0;
        while start < total && undone > 0 {
            let end = (start + LANES).min(total);
            for (j, job) in (start..end).zip(&mut jobs) {
                let (q, t) = (j / n_tables, j % n_tables);
                let key = tables[t].permute(queries[q]);
                let part = &self.parts[t];
                job.0 = key;
                if !part.keys.is_empty() {
                    prefetch(&part.dir[part.dir_index(key)]);
                }
            }
            for (j, job) in (start..end).zip(&mut jobs) {
                let part = &self.parts[j % n_tables];
                (job.1, job.2) = if part.keys.is_empty() { (0, 0) } else { part.base_range(job.0) };
                if job.1 < job.2 {
                    prefetch(&part.keys[job.1]);
                }
            }
            for (j, &(key, lo, hi)) in (start..end).zip(&jobs) {
                let (q, t) = (j / n_tables, j % n_tables);
                if done[q] {
                    continue;
                }
                let go = self.scan(t, key, lo, hi, owned_only, &mut |hit| emit(q, hit));
                if !go {
                    done[q] = true;
                    undone -= 1;
                }
            }
            start = end;
        }
    }

    /// Scans table `t` for the permuted query `key`: `keys[lo..hi]` (the directory range)
    /// and the delta. Returns false if `emit` asked to stop.
    #[inline(always)]
    fn scan(
        &self,
        t: usize,
        key: u64,
        lo: usize,
        hi: usize,
        owned_only: bool,
        emit: &mut impl FnMut(Hit<I>) -> bool,
    ) -> bool {
        let k = self.tables.max_distance();
        let (table, part) = (&self.tables.as_slice()[t], &self.parts[t]);
        let shift = 64 - table.prefix_bits();
        // The rare path: a stored fingerprint with the query's prefix within k bits.
        let mut hit = |x: u64, slot: u32| {
            if owned_only && !table.owns_permuted_xor(x) {
                return true;
            }
            let s = &self.slots[slot as usize];
            !s.live || emit(Hit { id: s.id.clone(), distance: x.count_ones() })
        };
        // Plain loops, not iterator adapters, so that they inline into the popcnt versions;
        // `&` rather than `&&` keeps the common case free of a second branch.
        for (i, &stored) in part.keys[lo..hi].iter().enumerate() {
            let x = stored ^ key;
            if (x >> shift == 0) & (x.count_ones() <= k) && !hit(x, part.slots[lo + i]) {
                return false;
            }
        }
        if !part.delta.is_empty() {
            for &(stored, slot) in part.delta_group(table, key) {
                let x = stored ^ key;
                if (x >> shift == 0) & (x.count_ones() <= k) && !hit(x, slot) {
                    return false;
                }
            }
        }
        true
    }

    /// The bulk path for many queries: table by table, the queries are bucketed by the top
    /// bits of their permuted value (one parallel counting-sort pass), so that they walk the
    /// table's arrays in order instead of at random. Returns `(query, hit)` pairs, table by table.
    fn probe_sorted(&self, queries: &[Fingerprint], owned_only: bool) -> Vec<(u32, Hit<I>)> {
        use crate::hamming::batch::tasks;
        use crate::hamming::group::sort_bucket;
        use crate::hamming::scatter::{chunk_inputs, scatter};
        // The scatter numbers queries with u32 positions.
        assert!(u32::try_from(queries.len()).is_ok(), "more than u32::MAX queries");
        let mut dest = vec![crate::hamming::kernel::Entry::default(); queries.len()];
        let chunks = chunk_inputs(&[queries]);
        let mut all = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let bits = self.parts[t].dir_bits.min(12).min(table.prefix_bits());
            let starts = scatter(&[queries], &chunks, table, bits, &mut dest);
            // Split the buckets into tasks over disjoint slices; each bucket is then sorted
            // by the rest of the prefix, so that its queries walk the arrays in order.
            let mut slices = Vec::new();
            let mut rest: &mut [crate::hamming::kernel::Entry] = &mut dest;
            for (b_lo, b_hi) in tasks(&starts) {
                let (mine, tail) =
                    std::mem::take(&mut rest).split_at_mut(starts[b_hi] - starts[b_lo]);
                rest = tail;
                slices.push((mine, &starts[b_lo..=b_hi]));
            }
            let found: Vec<Vec<(u32, Hit<I>)>> = slices
                .into_par_iter()
                .map_init(Vec::new, |scratch, (slice, bounds)| {
                    let mut out = Vec::new();
                    let base = bounds[0];
                    for w in bounds.windows(2) {
                        let bucket = &mut slice[w[0] - base..w[1] - base];
                        let sorted = sort_bucket(bucket, scratch, table, bits);
                        self.scan_entries(t, sorted, owned_only, &mut out);
                    }
                    out
                })
                .collect();
            all.extend(found.into_iter().flatten());
        }
        all
    }

    fn scan_entries(
        &self,
        t: usize,
        entries: &[crate::hamming::kernel::Entry],
        owned_only: bool,
        out: &mut Vec<(u32, Hit<I>)>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the popcnt instruction.
            unsafe { self.scan_entries_popcnt(t, entries, owned_only, out) };
            return;
        }
        self.scan_entries_impl(t, entries, owned_only, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn scan_entries_popcnt(
        &self,
        t: usize,
        entries: &[crate::hamming::kernel::Entry],
        owned_only: bool,
        out: &mut Vec<(u32, Hit<I>)>,
    ) {
        self.scan_entries_impl(t, entries, owned_only, out);
    }

    #[inline(always)]
    fn scan_entries_impl(
        &self,
        t: usize,
        entries: &[crate::hamming::kernel::Entry],
        owned_only: bool,
        out: &mut Vec<(u32, Hit<I>)>,
    ) {
        let part = &self.parts[t];
        if part.keys.is_empty() && part.delta.is_empty() {
            return;
        }
        for e in entries {
            let (lo, hi) = if part.keys.is_empty() { (0, 0) } else { part.base_range(e.key) };
            self.scan(t, e.key, lo, hi, owned_only, &mut |hit| {
                out.push((e.id, hit));
                owned_only
            });
        }
    }

    /// The stored `(id, fingerprint)` pairs, in insertion order (of the current values).
    pub fn iter(&self) -> impl Iterator<Item = (&I, Fingerprint)> + '_ {
        self.slots.iter().filter(|s| s.live).map(|s| (&s.id, s.fp))
    }
}

impl<I: Clone + Eq + Hash + Ord + Send + Sync> Extend<(I, Fingerprint)> for Index<I> {
    fn extend<T: IntoIterator<Item = (I, Fingerprint)>>(&mut self, iter: T) {
        self.insert_many(iter);
    }
}
