//! The online index: insert, remove and query one fingerprint at a time (the seeds' `Corpus`).

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;

use rayon::prelude::*;
use simhash_core::Fingerprint;

use crate::tables::{Table, Tables};

/// A match: the caller's id of a stored fingerprint and its distance to the query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// One table's entries: `(permuted fingerprint, slot)`.
#[derive(Clone, Debug, Default)]
struct Part {
    /// Sorted by key, then slot.
    base: Vec<(u64, u32)>,
    /// `dir[t]..dir[t + 1]` is the range of `base` whose keys' top `dir_bits` bits are `t`.
    dir: Vec<u32>,
    dir_bits: u32,
    /// Recent inserts, merged into `base` when it grows past `delta_limit(base.len())`.
    delta: BTreeSet<(u64, u32)>,
}

/// Merge the delta into the base when it holds more than this share of the base (or more
/// than the minimum): inserts then cost `O(log delta + tables * base / delta)` amortized,
/// about 32 entry moves per table, and a query's delta lookup stays a short B-tree descent.
fn delta_limit(base: usize) -> usize {
    (base / 32).max(MIN_BATCH)
}

/// The smallest delta worth merging, and the fewest dead slots worth a rebuild (small in
/// tests, so that they exercise merges and rebuilds).
const MIN_BATCH: usize = if cfg!(test) { 8 } else { 4096 };

impl Part {
    fn rebuild_dir(&mut self, table: &Table) {
        let bits = (self.base.len().max(2).ilog2()).min(table.prefix_bits()).min(26);
        let mut dir = vec![0u32; (1 << bits) + 1];
        for &(key, _) in &self.base {
            dir[(key >> (64 - bits)) as usize + 1] += 1;
        }
        for t in 1..dir.len() {
            dir[t] += dir[t - 1];
        }
        self.dir = dir;
        self.dir_bits = bits;
    }

    /// The base entries sharing the prefix of the permuted query `q`.
    #[inline]
    fn base_group(&self, table: &Table, q: u64) -> &[(u64, u32)] {
        if self.base.is_empty() {
            return &[];
        }
        let top = (q >> (64 - self.dir_bits)) as usize;
        let range = &self.base[self.dir[top] as usize..self.dir[top + 1] as usize];
        let p = table.prefix_of_permuted(q);
        if self.dir_bits == table.prefix_bits() {
            return range;
        }
        let lo = range.partition_point(|e| table.prefix_of_permuted(e.0) < p);
        let hi = lo + range[lo..].partition_point(|e| table.prefix_of_permuted(e.0) == p);
        &range[lo..hi]
    }

    fn delta_group(&self, table: &Table, q: u64) -> impl Iterator<Item = &(u64, u32)> {
        let shift = 64 - table.prefix_bits();
        let lo = table.prefix_of_permuted(q) << shift;
        let hi = lo | u64::MAX.checked_shr(table.prefix_bits()).unwrap_or(0);
        self.delta.range((lo, 0)..=(hi, u32::MAX))
    }

    /// Merges the delta and `extra` (sorted) into the base, dropping dead slots.
    fn merge(&mut self, table: &Table, extra: &[(u64, u32)], live: impl Fn(u32) -> bool) {
        let delta = std::mem::take(&mut self.delta);
        let old = std::mem::take(&mut self.base);
        let mut base = Vec::with_capacity(old.len() + delta.len() + extra.len());
        let mut a = old.into_iter().filter(|e| live(e.1)).peekable();
        let mut b = merge_sorted(delta.into_iter(), extra.iter().copied()).peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => {
                    if x <= y {
                        a.next()
                    } else {
                        b.next()
                    }
                }
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            if let Some(e) = next.filter(|e| live(e.1)) {
                base.push(e);
            }
        }
        self.base = base;
        self.rebuild_dir(table);
    }
}

fn merge_sorted<T: Ord + Copy>(
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
/// Fewer tables favour queries: for 10 million fingerprints at distance 3, 4 blocks (4
/// tables) answer single queries fastest (see `docs/index.md`).
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
/// index.remove(1);
/// assert_eq!(index.find_first(Fingerprint(0xffff_0001)), Some(Hit { id: 2, distance: 2 }));
/// assert_eq!(index.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Index<I = u64> {
    tables: Tables,
    slots: Vec<Slot<I>>,
    by_id: HashMap<I, u32>,
    parts: Vec<Part>,
    dead: usize,
}

impl<I: Copy + Eq + Hash + Ord + Send + Sync> Index<I> {
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
    pub fn contains(&self, id: I) -> bool {
        self.by_id.contains_key(&id)
    }

    /// The fingerprint stored under `id`, if any.
    pub fn get(&self, id: I) -> Option<Fingerprint> {
        self.by_id.get(&id).map(|&s| self.slots[s as usize].fp)
    }

    fn new_slot(&mut self, id: I, fp: Fingerprint) -> (u32, Option<Fingerprint>) {
        let slot =
            u32::try_from(self.slots.len()).expect("fewer than 2^32 inserts between rebuilds");
        self.slots.push(Slot { id, fp, live: true });
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
        for (table, part) in self.tables.iter().zip(&mut self.parts) {
            part.delta.insert((table.permute(fp), slot));
            if part.delta.len() > delta_limit(part.base.len()) {
                let slots = &self.slots;
                part.merge(table, &[], |s| slots[s as usize].live);
            }
        }
        self.maybe_rebuild();
        old
    }

    /// Stores many fingerprints at once, merging them into every table in parallel (one
    /// linear merge per table instead of per-insert updates). Later duplicates of an id
    /// replace earlier ones, as with [`insert`](Index::insert).
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = (I, Fingerprint)>) {
        let first = self.slots.len();
        for (id, fp) in items {
            self.new_slot(id, fp);
        }
        let slots = &self.slots[..];
        let new = &slots[first..];
        self.parts.par_iter_mut().zip(self.tables.iter().collect::<Vec<_>>()).for_each(
            |(part, table)| {
                let mut extra: Vec<(u64, u32)> = new
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.live)
                    .map(|(i, s)| (table.permute(s.fp), (first + i) as u32))
                    .collect();
                extra.sort_unstable();
                part.merge(table, &extra, |s| slots[s as usize].live);
            },
        );
        self.maybe_rebuild();
    }

    /// Removes `id`; returns its fingerprint if it was stored.
    pub fn remove(&mut self, id: I) -> Option<Fingerprint> {
        let slot = self.by_id.remove(&id)?;
        let fp = self.kill(slot);
        self.maybe_rebuild();
        Some(fp)
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
            self.by_id.insert(s.id, i as u32);
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
                part.base = Vec::new();
                part.delta.clear();
                part.merge(table, &all, |_| true);
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
        let k = self.tables.max_distance();
        for (table, part) in self.tables.iter().zip(&self.parts) {
            let q = table.permute(fp);
            let mut check = |&(key, slot): &(u64, u32)| {
                let x = key ^ q;
                let d = x.count_ones();
                if d <= k && table.owns_permuted_xor(x) {
                    let s = &self.slots[slot as usize];
                    if s.live {
                        hits.push(Hit { id: s.id, distance: d });
                    }
                }
            };
            part.base_group(table, q).iter().for_each(&mut check);
            if !part.delta.is_empty() {
                part.delta_group(table, q).for_each(&mut check);
            }
        }
        hits.sort_unstable();
    }

    /// A stored fingerprint within the maximum distance of `fp`, if there is one: the
    /// first found (tables in order, each table's entries in key order), not necessarily the
    /// nearest. Stops at the first match, so it is the cheapest "have I seen this?".
    pub fn find_first(&self, fp: Fingerprint) -> Option<Hit<I>> {
        let k = self.tables.max_distance();
        for (table, part) in self.tables.iter().zip(&self.parts) {
            let q = table.permute(fp);
            let check = |&(key, slot): &(u64, u32)| {
                let d = (key ^ q).count_ones();
                let s = &self.slots[slot as usize];
                (d <= k && s.live).then_some(Hit { id: s.id, distance: d })
            };
            if let Some(hit) = part.base_group(table, q).iter().find_map(check) {
                return Some(hit);
            }
            if !part.delta.is_empty()
                && let Some(hit) = part.delta_group(table, q).find_map(check)
            {
                return Some(hit);
            }
        }
        None
    }

    /// [`find_all`](Index::find_all) for each query, in parallel; the result has one entry
    /// per query, in order.
    pub fn find_all_many(&self, queries: &[Fingerprint]) -> Vec<Vec<Hit<I>>> {
        queries
            .par_iter()
            .map(|&q| {
                let mut hits = Vec::new();
                self.find_all_into(q, &mut hits);
                hits
            })
            .collect()
    }

    /// [`find_first`](Index::find_first) for each query, in parallel, in order.
    pub fn find_first_many(&self, queries: &[Fingerprint]) -> Vec<Option<Hit<I>>> {
        queries.par_iter().map(|&q| self.find_first(q)).collect()
    }

    /// The stored `(id, fingerprint)` pairs, in insertion order (of the current values).
    pub fn iter(&self) -> impl Iterator<Item = (I, Fingerprint)> + '_ {
        self.slots.iter().filter(|s| s.live).map(|s| (s.id, s.fp))
    }
}

impl<I: Copy + Eq + Hash + Ord + Send + Sync> Extend<(I, Fingerprint)> for Index<I> {
    fn extend<T: IntoIterator<Item = (I, Fingerprint)>>(&mut self, iter: T) {
        self.insert_many(iter);
    }
}
