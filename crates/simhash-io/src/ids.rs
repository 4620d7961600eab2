//! Ids: a compact table of each document's id, and the set that finds duplicate ids.

use std::collections::HashMap;
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

    /// The id of document `doc`, or `None` when `doc` is not below [`IdTable::len`].
    pub fn try_get(&self, doc: usize) -> Option<&str> {
        let end = *self.ends.get(doc)?;
        let start = if doc == 0 { 0 } else { self.ends[doc - 1] };
        self.text.get(start..end)
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

/// What [`IdKeys`] and [`IdSet`] keep of an id besides its text: a 64-bit hash (XXH3) of
/// its bytes. Computed apart from the set (on any thread), then given to
/// [`IdKeys::insert`] or [`IdSet::insert_key`]. Two different ids may share a key: the sets
/// compare the ids' bytes whenever keys are equal, so a repeat is never decided by a hash.
///
/// ```
/// use simhash_io::{IdKey, IdSet};
///
/// let mut seen = IdSet::default();
/// assert!(seen.insert_key(IdKey::new("7"), "7"));
/// assert!(!seen.insert("7"), "the same id");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdKey(u64);

impl IdKey {
    /// The key of `id`.
    #[inline]
    pub fn new(id: &str) -> IdKey {
        IdKey(xxhash_rust::xxh3::xxh3_64(id.as_bytes()))
    }
}

/// The keys of the ids of an [`IdTable`], to find a repeated id
/// ([`crate::Problem::duplicate_id`]) without keeping the ids a second time: 16 bytes an id
/// besides the table, which keeps the text. Equal keys are confirmed on the table's bytes.
///
/// The table must hold exactly the ids for which [`IdKeys::insert`] returned true, in that
/// order: the caller pushes an id to the table when, and only when, it is new.
///
/// ```
/// use simhash_io::{IdKey, IdKeys, IdTable};
///
/// let (mut keys, mut table) = (IdKeys::default(), IdTable::default());
/// for id in ["a", "b", "a"] {
///     if keys.insert(IdKey::new(id), id, &table) {
///         table.push(id);
///     }
/// }
/// assert_eq!((table.len(), table.get(0), table.get(1)), (2, "a", "b"));
/// ```
#[derive(Debug, Default)]
pub struct IdKeys {
    /// Each key and the first id (its number in the table) that has it.
    first: HashMap<u64, u64, BuildHasherDefault<KeyHasher>>,
    /// The further ids that share a key with a different id (64-bit collisions: in
    /// practice none), by key.
    more: HashMap<u64, Vec<u64>>,
}

impl IdKeys {
    /// Returns false when `id` (whose key is `key`) is in `table`; true when it is new, and
    /// then the caller pushes it to `table`.
    pub fn insert(&mut self, key: IdKey, id: &str, table: &IdTable) -> bool {
        let next = table.len() as u64;
        let first = *self.first.entry(key.0).or_insert(next);
        if first == next {
            return true;
        }
        let same = |doc: u64| table.try_get(doc as usize) == Some(id);
        if same(first) {
            return false;
        }
        let more = self.more.entry(key.0).or_default();
        if more.iter().any(|&doc| same(doc)) {
            return false;
        }
        more.push(next);
        true
    }
}

/// Ids seen so far, to report duplicates ([`crate::Problem::duplicate_id`]): the ids
/// themselves in an [`IdTable`] and their [`IdKeys`]. Where the ids are kept anyway (the
/// corpus keeps each document's id), [`IdKeys`] with that table saves the second copy.
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
    ids: IdTable,
    keys: IdKeys,
}

/// The set's hasher: a key is a hash already, so it serves as it is (no second hash).
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
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }
}

impl IdSet {
    /// Returns false when `id` was seen before.
    pub fn insert(&mut self, id: &str) -> bool {
        self.insert_key(IdKey::new(id), id)
    }

    /// Returns false when `id`, whose key is `key` ([`IdKey::new`]), was seen before.
    pub fn insert_key(&mut self, key: IdKey, id: &str) -> bool {
        let new = self.keys.insert(key, id, &self.ids);
        if new {
            self.ids.push(id);
        }
        new
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

    /// Adversarial ids: empty, long, Unicode, equal prefixes, repeats.
    fn adversarial_ids(rng: &mut crate::test_rng::Rng, n: usize) -> Vec<String> {
        let base =
            ["", "a", "a\u{0}", "été", "\u{feff}x", "x y", "\t", "doc-1", "doc-10", "doc-1 "];
        let long = "p".repeat(5000);
        (0..n)
            .map(|i| match rng.below(6) {
                0 => base[rng.below(base.len())].to_string(),
                1 => format!("{long}{}", rng.below(50)),
                2 => format!("doc-{}", rng.below(n / 2 + 1)),
                3 => format!("é{}ü{}", rng.below(100), "\u{1F600}".repeat(rng.below(3))),
                4 => (0..rng.below(40)).map(|_| char::from(b'a' + rng.below(3) as u8)).collect(),
                _ => format!("{i}"),
            })
            .collect()
    }

    /// Inserts `ids` in `keys` (with `key` as each id's key, the corpus's way: the table
    /// holds the new ids) and in a `HashSet` of strings, and checks they agree.
    fn agrees_with_strings(ids: &[String], key: impl Fn(&str) -> IdKey) {
        let (mut keys, mut table) = (IdKeys::default(), IdTable::default());
        let mut set = IdSet::default();
        let mut naive = std::collections::HashSet::new();
        for id in ids {
            let new = naive.insert(id.clone());
            assert_eq!(keys.insert(key(id), id, &table), new, "{id:?}");
            if new {
                table.push(id);
            }
            assert_eq!(set.insert_key(key(id), id), new, "{id:?}");
        }
        assert_eq!(table.len(), naive.len());
    }

    #[test]
    fn keys_find_exactly_the_repeats_of_adversarial_ids() {
        let mut rng = crate::test_rng::Rng(17);
        for n in [0, 1, 10, 1000, 20_000] {
            let ids = adversarial_ids(&mut rng, n);
            agrees_with_strings(&ids, IdKey::new);
        }
    }

    #[test]
    fn keys_confirm_equal_keys_on_the_bytes() {
        // Forced collisions: every id has one of four keys, so nearly every insertion
        // meets an equal key of a different id.
        let mut rng = crate::test_rng::Rng(18);
        let ids = adversarial_ids(&mut rng, 3000);
        agrees_with_strings(&ids, |id| IdKey(IdKey::new(id).0 & 3));
        agrees_with_strings(&ids, |_| IdKey(0));
    }

    #[test]
    fn keys_with_a_table_that_does_not_match_do_not_panic() {
        let mut keys = IdKeys::default();
        let table = IdTable::default();
        assert!(keys.insert(IdKey(1), "a", &table));
        // "a" was not pushed: the table is not the one the keys describe.
        assert!(keys.insert(IdKey(1), "b", &table));
        assert_eq!(table.try_get(0), None);
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
