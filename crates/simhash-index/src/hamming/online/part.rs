//! One table's storage in the online index: the permuted fingerprints sorted, with a
//! directory on their top bits, and a B-tree of recent inserts, merged into the sorted
//! arrays once it outgrows a share of them.

use std::collections::BTreeSet;

use crate::hamming::merge::{merge_sorted, par_dir, par_merge};
use crate::hamming::tables::Table;

/// One table's entries: permuted fingerprints and their slots, sorted, plus recent inserts.
#[derive(Clone, Debug, Default)]
pub(super) struct Part {
    /// Permuted fingerprints, sorted (ties by slot).
    pub(super) keys: Vec<u64>,
    /// `slots[i]` is the slot of `keys[i]`.
    pub(super) slots: Vec<u32>,
    /// `dir[t]..dir[t + 1]` is the range of `keys` whose top `dir_bits` bits are `t`.
    pub(super) dir: Vec<u32>,
    pub(super) dir_bits: u32,
    /// Recent inserts `(key, slot)`, merged into `keys` when there are more than
    /// `delta_limit(keys.len())`.
    pub(super) delta: BTreeSet<(u64, u32)>,
}

/// Merge the delta into the sorted arrays when it holds more than this share of them (or
/// more than the minimum): inserts then cost `O(log delta + base / delta)` per table
/// amortized, about 32 entry moves, and a query's delta lookup stays a short B-tree descent.
pub(super) fn delta_limit(base: usize) -> usize {
    (base / 32).max(MIN_BATCH)
}

/// The smallest delta worth merging, and the fewest dead slots worth a rebuild (small in
/// tests, so that they exercise merges and rebuilds).
pub(super) const MIN_BATCH: usize = if cfg!(test) { 8 } else { 4096 };

impl Part {
    pub(super) fn rebuild_dir(&mut self, table: &Table) {
        let bits = (self.keys.len().max(2).ilog2()).min(table.prefix_bits()).min(26);
        self.dir = par_dir(&self.keys, bits);
        self.dir_bits = bits;
    }

    #[inline(always)]
    pub(super) fn dir_index(&self, q: u64) -> usize {
        (q >> (64 - self.dir_bits)) as usize
    }

    /// The range of `keys` that holds the keys sharing the prefix of the permuted query `q`
    /// (and possibly other keys with the same top `dir_bits` bits: check the prefix).
    #[inline(always)]
    pub(super) fn base_range(&self, q: u64) -> (usize, usize) {
        let top = self.dir_index(q);
        (self.dir[top] as usize, self.dir[top + 1] as usize)
    }

    pub(super) fn delta_group(&self, table: &Table, q: u64) -> impl Iterator<Item = &(u64, u32)> {
        let shift = 64 - table.prefix_bits();
        let lo = table.prefix_of_permuted(q) << shift;
        let hi = lo | u64::MAX.checked_shr(table.prefix_bits()).unwrap_or(0);
        self.delta.range((lo, 0)..=(hi, u32::MAX))
    }

    /// Merges the delta and `extra` (sorted) into the sorted arrays, dropping dead slots
    /// (`live` is `None` if there are none).
    pub(super) fn merge(
        &mut self,
        table: &Table,
        extra: &[(u64, u32)],
        live: Option<&dyn Fn(u32) -> bool>,
    ) {
        let delta = std::mem::take(&mut self.delta);
        if live.is_none() {
            // Nothing to drop: merged in pieces over the threads.
            let new: Vec<(u64, u32)> =
                merge_sorted(delta.into_iter(), extra.iter().copied()).collect();
            (self.keys, self.slots) = par_merge(&self.keys, &self.slots, &new);
            self.rebuild_dir(table);
            return;
        }
        let keys = std::mem::take(&mut self.keys);
        let slots = std::mem::take(&mut self.slots);
        let len = keys.len() + delta.len() + extra.len();
        let (mut new_keys, mut new_slots) = (Vec::with_capacity(len), Vec::with_capacity(len));
        let old = keys.into_iter().zip(slots);
        let new = merge_sorted(delta.into_iter(), extra.iter().copied());
        for (key, slot) in merge_sorted(old, new) {
            if live.is_none_or(|live| live(slot)) {
                new_keys.push(key);
                new_slots.push(slot);
            }
        }
        self.keys = new_keys;
        self.slots = new_slots;
        self.rebuild_dir(table);
    }
}
