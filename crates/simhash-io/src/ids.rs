//! Ids: a compact table of each document's id, and the set that finds duplicate ids.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// The ids of documents `0..n`, in one string: 8 bytes a document besides the ids' text,
/// where a `Vec<String>` costs 24 and an allocation each.
///
/// ```
/// use simhash_io::IdTable;
///
/// let mut ids = IdTable::default();
/// ids.push("a");
/// ids.push("");
/// ids.push("doc-3");
/// assert_eq!((ids.len(), ids.get(0), ids.get(1), ids.get(2)), (3, "a", "", "doc-3"));
/// ```
#[derive(Clone, Default)]
pub struct IdTable {
    text: String,
    ends: Vec<usize>,
}

impl IdTable {
    /// Adds the id of the next document.
    pub fn push(&mut self, id: &str) {
        self.text.push_str(id);
        self.ends.push(self.text.len());
    }

    /// The id of document `doc`.
    ///
    /// # Panics
    ///
    /// When `doc` is not below [`IdTable::len`].
    pub fn get(&self, doc: usize) -> &str {
        let start = if doc == 0 { 0 } else { self.ends[doc - 1] };
        &self.text[start..self.ends[doc]]
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl std::fmt::Debug for IdTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdTable").field("len", &self.len()).finish_non_exhaustive()
    }
}

/// Ids seen so far, to report duplicates ([`crate::Problem::duplicate_id`]): a 128-bit hash
/// per id (16 bytes, where keeping the ids again would cost their length), so two different
/// ids are taken for one with a probability of about n² / 2¹²⁹: never, in practice.
///
/// ```
/// use simhash_io::IdSet;
///
/// let mut seen = IdSet::default();
/// assert!(seen.insert("7"));
/// assert!(!seen.insert("7"), "a duplicate");
/// ```
///
/// Only ids read from the input go in: the line-number ids given to records without one
/// are distinct by construction, and a corpus never mixes the two kinds
/// ([`crate::Reason::MixedIds`]).
#[derive(Debug, Default)]
pub struct IdSet {
    seen: HashSet<IdKey, BuildHasherDefault<KeyHasher>>,
}

/// What an [`IdSet`] keeps of an id: its 128-bit hash. Computed apart from the set (on
/// any thread), then inserted with [`IdSet::insert_key`].
///
/// ```
/// use simhash_io::{IdKey, IdSet};
///
/// let mut seen = IdSet::default();
/// assert!(seen.insert_key(IdKey::new("7")));
/// assert!(!seen.insert("7"), "the same id");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdKey(u128);

impl IdKey {
    /// The key of `id`.
    pub fn new(id: &str) -> IdKey {
        let hash = |salt: u8| {
            let mut h = std::hash::DefaultHasher::new();
            h.write_u8(salt);
            h.write(id.as_bytes());
            h.finish()
        };
        IdKey((u128::from(hash(1)) << 64) | u128::from(hash(2)))
    }
}

/// The set's hasher: a key is a hash already, so its low 64 bits serve (no second hash).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 ^= v as u64;
    }
}

impl IdSet {
    /// Returns false when `id` was seen before.
    pub fn insert(&mut self, id: &str) -> bool {
        self.insert_key(IdKey::new(id))
    }

    /// Returns false when the id of `key` was seen before.
    pub fn insert_key(&mut self, key: IdKey) -> bool {
        self.seen.insert(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_a_vec_of_strings() {
        let ids = ["", "a", "", "bc", "été", "\u{feff}", "x y", ""];
        let mut table = IdTable::default();
        assert!(table.is_empty());
        for id in ids {
            table.push(id);
        }
        assert_eq!(table.len(), ids.len());
        for (doc, id) in ids.iter().enumerate() {
            assert_eq!(table.get(doc), *id, "{doc}");
        }
        assert_eq!(format!("{table:?}"), "IdTable { len: 8, .. }");
    }

    #[test]
    fn set_finds_exactly_the_repeats() {
        let mut set = IdSet::default();
        let ids: Vec<String> = (0..5000).map(|i| format!("{}", i % 3001)).collect();
        let mut naive = std::collections::HashSet::new();
        for id in &ids {
            assert_eq!(set.insert(id), naive.insert(id.clone()), "{id}");
        }
        assert!(set.insert(""));
        assert!(!set.insert(""));
    }
}
