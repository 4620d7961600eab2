//! Term frequencies of a document's shingles: a reusable open-addressing table.

/// Counts occurrences of 64-bit feature hashes. Reused across documents: clearing costs
/// the number of distinct features of the last document, not the table size.
#[derive(Debug, Default)]
pub(crate) struct TfTable {
    /// `(key, count)`, side by side so that a probe touches one cache line; a count of 0
    /// marks an empty slot.
    slots: Vec<(u64, u32)>,
    /// Occupied slots in order of first occurrence.
    used: Vec<u32>,
    /// Slots whose key occurred more than once, in order of second occurrence.
    repeated: Vec<u32>,
}

/// The smallest table; it doubles when three quarters full.
const MIN_SLOTS: usize = 1 << 10;
/// A table grown past this for one huge document is given back afterwards.
const KEEP_SLOTS: usize = 1 << 20;

impl TfTable {
    /// Forgets all counts (and the memory of a table grown for a huge document).
    pub(crate) fn clear(&mut self) {
        if self.slots.len() > KEEP_SLOTS {
            *self = TfTable::default();
            return;
        }
        for &slot in &self.used {
            self.slots[slot as usize].1 = 0;
        }
        self.used.clear();
        self.repeated.clear();
    }

    /// Counts one more occurrence of `key` and returns its count so far.
    #[inline]
    pub(crate) fn increment(&mut self, key: u64) -> u32 {
        if (self.used.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        // Feature hashes are well mixed; the high bits make the slot.
        let mut slot = (key >> 32) as usize & mask;
        loop {
            let entry = &mut self.slots[slot];
            if entry.1 == 0 {
                *entry = (key, 1);
                self.used.push(slot as u32);
                return 1;
            }
            if entry.0 == key {
                entry.1 += 1;
                if entry.1 == 2 {
                    self.repeated.push(slot as u32);
                }
                return entry.1;
            }
            slot = (slot + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(
            self,
            TfTable {
                slots: vec![(0, 0); size],
                used: Vec::with_capacity(size / 2),
                repeated: Vec::new(),
            },
        );
        let mask = size - 1;
        let mut moved = vec![0u32; old.slots.len()];
        for &slot in &old.used {
            let entry = old.slots[slot as usize];
            let mut i = (entry.0 >> 32) as usize & mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = entry;
            self.used.push(i as u32);
            moved[slot as usize] = i as u32;
        }
        self.repeated = old.repeated.iter().map(|&slot| moved[slot as usize]).collect();
    }

    /// Each key that occurred more than once, with its count, in order of second occurrence.
    pub(crate) fn repeated(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.repeated.iter().map(|&slot| self.slots[slot as usize])
    }

    /// Each distinct key with its count, in order of first occurrence.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.used.iter().map(|&slot| self.slots[slot as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_a_hash_map_through_growth_and_reuse() {
        let mut table = TfTable::default();
        for round in 0..3u64 {
            let mut want = std::collections::HashMap::new();
            let mut order = Vec::new();
            let mut x = round + 1;
            for i in 0..5000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Repeats, zero, and keys sharing their high bits.
                let key = match i % 7 {
                    0 => 0,
                    1 => x % 50,
                    2 => (x & 0xffff) | (1 << 40),
                    _ => x,
                };
                let count = want.entry(key).or_insert(0u32);
                if *count == 0 {
                    order.push(key);
                }
                *count += 1;
                assert_eq!(table.increment(key), *count);
            }
            let got: Vec<(u64, u32)> = table.iter().collect();
            let expected: Vec<(u64, u32)> = order.iter().map(|k| (*k, want[k])).collect();
            assert_eq!(got, expected, "round {round}");
            let mut repeated: Vec<(u64, u32)> = table.repeated().collect();
            let mut want_repeated: Vec<(u64, u32)> =
                expected.iter().copied().filter(|&(_, c)| c > 1).collect();
            repeated.sort_unstable();
            want_repeated.sort_unstable();
            assert_eq!(repeated, want_repeated, "round {round}");
            table.clear();
            assert_eq!(table.iter().count(), 0);
        }
    }
}
