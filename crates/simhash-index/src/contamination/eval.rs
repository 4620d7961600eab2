//! The eval sets: each item's normalized words, numbered by a vocabulary of the eval sets'
//! words, and the index of their distinct n-grams.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::str::FromStr;

use simhash_core::for_each_normalized_token;

use super::error::ContaminationError;

/// The longest n-gram the scan accepts, in words.
pub const MAX_NGRAM: usize = 64;

/// The default n-gram length, in words: on the planted test it found every whole and
/// every halved item, with fewer incidental matches than 8; see the
/// [module docs](super#defaults) for the measurement.
pub const DEFAULT_NGRAM: usize = 10;

/// The default minimum overlap: the share of an item's n-grams a document must contain to
/// count as contaminated by it. Low enough that half an item of 30 words or more is found
/// at the default n-gram length (0.3 missed 9% of halves on the planted test); see the
/// [module docs](super#defaults).
pub const DEFAULT_MIN_OVERLAP: f64 = 0.2;

/// The default document-frequency limit: an eval n-gram found in more than 1,000 corpus
/// documents is dropped as boilerplate. A judgment, not a measurement; see the
/// [module docs](super#defaults).
pub const DEFAULT_MAX_DF: MaxDf = MaxDf::Count(1000);

/// No word: a document word that is in no eval item, or the end of a chain of n-grams.
pub(crate) const NONE: u32 = u32::MAX;

/// Above what document frequency an eval n-gram is dropped: n-grams that are common in the
/// corpus itself (boilerplate, licenses, navigation) say nothing about contamination.
///
/// `FromStr` reads `none`, a count (`100`, digits only) or a share of the documents
/// (`0.01`, with a decimal point).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MaxDf {
    /// Keep every n-gram, however common.
    Unlimited,
    /// Drop an n-gram found in more than this many documents (at least 1). The tally then
    /// stores at most this many documents' matches per n-gram.
    Count(u64),
    /// Drop an n-gram found in more than this share of the documents (in `(0, 1]`).
    Share(f64),
}

impl MaxDf {
    /// Whether an n-gram found in `df` of `documents` documents is dropped.
    pub fn drops(self, df: u64, documents: u64) -> bool {
        match self {
            MaxDf::Unlimited => false,
            MaxDf::Count(max) => df > max,
            MaxDf::Share(share) => df as f64 > share * documents as f64,
        }
    }

    fn check(self) -> Result<MaxDf, ContaminationError> {
        let valid = match self {
            MaxDf::Unlimited => true,
            MaxDf::Count(max) => max >= 1,
            MaxDf::Share(share) => share > 0.0 && share <= 1.0,
        };
        if valid { Ok(self) } else { Err(ContaminationError::max_df(self.to_string())) }
    }
}

impl fmt::Display for MaxDf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxDf::Unlimited => f.write_str("none"),
            MaxDf::Count(max) => write!(f, "{max}"),
            MaxDf::Share(share) => write!(f, "{share:?}"),
        }
    }
}

impl FromStr for MaxDf {
    type Err = ContaminationError;

    fn from_str(s: &str) -> Result<MaxDf, ContaminationError> {
        let bad = || ContaminationError::max_df(s.to_string());
        let value = if s == "none" {
            MaxDf::Unlimited
        } else if s.bytes().all(|b| b.is_ascii_digit()) {
            MaxDf::Count(s.parse().map_err(|_| bad())?)
        } else {
            MaxDf::Share(s.parse().map_err(|_| bad())?)
        };
        value.check().map_err(|_| bad())
    }
}

/// An eval set, as [`EvalSetsBuilder::add_set`] numbered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SetId(pub(crate) u32);

/// Hashes words for the vocabulary: xxh3 of the bytes, with a fixed seed (no `RandomState`).
#[derive(Default)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = step(self.0, xxhash_rust::xxh3::xxh3_64(bytes));
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = step(self.0, u64::from(b));
    }
}

/// Passes an n-gram hash through as it is (it is mixed already); mixes an n-gram's number.
#[derive(Default)]
pub(crate) struct GramHasher(u64);

impl Hasher for GramHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = step(self.0, u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }

    fn write_u32(&mut self, x: u32) {
        // A distinct n-gram's number (a tally's key): mixed.
        self.0 = step(GRAM_SEED, u64::from(x)).wrapping_mul(MIX);
    }
}

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The seed of a word's value in an n-gram hash ([`word_value`]).
pub(crate) const GRAM_SEED: u64 = 0x636f_6e74_616d_696e;

/// The base of the n-gram hash, a polynomial in the words' values (odd, so no power of it
/// is 0 modulo 2^64).
pub(crate) const BASE: u64 = 0xff51_afd7_ed55_8ccd;

/// `BASE^i` modulo 2^64, for `i` from 0 to [`MAX_NGRAM`].
pub(crate) const POWERS: [u64; MAX_NGRAM + 1] = {
    let mut powers = [1u64; MAX_NGRAM + 1];
    let mut i = 1;
    while i <= MAX_NGRAM {
        powers[i] = powers[i - 1].wrapping_mul(BASE);
        i += 1;
    }
    powers
};

/// A word's value in an n-gram hash: its number, mixed (splitmix64's finalizer).
#[inline]
pub(crate) fn word_value(word: u32) -> u64 {
    let mut x = u64::from(word) ^ GRAM_SEED;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline]
pub(crate) fn step(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(MIX).rotate_left(29)
}

#[inline]
fn gram_key(h: u64, len: usize) -> u64 {
    let x = step(h, len as u64).wrapping_mul(MIX);
    x ^ (x >> 31)
}

/// The hash of a run of words, before [`gram_key`]: the polynomial `sum(v_i * BASE^(L-1-i))`
/// of the words' values modulo 2^64, which [`EvalSets::scan`] gets for any run ending at a
/// word from two prefix sums (one multiplication), not word by word.
pub(crate) fn gram_hash(words: &[u32]) -> u64 {
    words.iter().fold(0, |h, &w| h.wrapping_mul(BASE).wrapping_add(word_value(w)))
}

pub(crate) type Vocabulary = HashMap<Box<str>, u32, BuildHasherDefault<WordHasher>>;

/// The vocabulary a scan looks words up in: each word's number and its followers' bits
/// ([`follower_bit`] of every word that follows it in an item).
pub(crate) type ScanVocabulary = HashMap<Box<str>, (u32, u64), BuildHasherDefault<WordHasher>>;

/// A word's bit in the followers of the word before it: one of 64, from its value.
#[inline]
pub(crate) fn follower_bit(word: u32) -> u64 {
    1 << (word_value(word) >> 58)
}

/// An eval item: its words are `tokens[start..start + len]`, its n-grams are numbered
/// from `first_gram`.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub(crate) set: u32,
    pub(crate) id: Box<str>,
    pub(crate) start: u32,
    pub(crate) len: u32,
    pub(crate) first_gram: u32,
    pub(crate) grams: u32,
}

/// Builds [`EvalSets`]: the settings, then the eval sets and their items.
///
/// ```
/// use simhash_index::contamination::{EvalSets, MaxDf};
///
/// let mut builder = EvalSets::builder();
/// builder.ngram(5).min_overlap(0.5).max_df(MaxDf::Share(0.01));
/// let quiz = builder.add_set("quiz")?;
/// builder.add_item(quiz, "q1", "What is the capital of France? Paris.")?;
/// let eval = builder.build()?;
/// assert_eq!((eval.ngram(), eval.items(), eval.ngrams()), (5, 1, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct EvalSetsBuilder {
    ngram: usize,
    max_df: MaxDf,
    min_overlap: f64,
    vocab: Vocabulary,
    sets: Vec<Box<str>>,
    items: Vec<Item>,
    tokens: Vec<u32>,
    item_ids: HashSet<(u32, Box<str>), BuildHasherDefault<WordHasher>>,
    mask: u64,
}

impl Default for EvalSetsBuilder {
    fn default() -> EvalSetsBuilder {
        EvalSetsBuilder {
            ngram: DEFAULT_NGRAM,
            max_df: DEFAULT_MAX_DF,
            min_overlap: DEFAULT_MIN_OVERLAP,
            vocab: Vocabulary::default(),
            sets: Vec::new(),
            items: Vec::new(),
            tokens: Vec::new(),
            item_ids: HashSet::default(),
            mask: u64::MAX,
        }
    }
}

impl EvalSetsBuilder {
    /// The n-gram length `N`, in words: a document contains an item's n-gram when it has
    /// the same `N` normalized words in a row. An item of fewer than `N` words (but at
    /// least one) is one n-gram of all its words, so it matches only whole. From 1 to
    /// [`MAX_NGRAM`]; [`build`](EvalSetsBuilder::build) refuses another.
    ///
    /// By default, [`DEFAULT_NGRAM`].
    pub fn ngram(&mut self, words: usize) -> &mut Self {
        self.ngram = words;
        self
    }

    /// The document-frequency limit: eval n-grams found in more documents are dropped
    /// (they count neither for nor against an item). [`build`](EvalSetsBuilder::build)
    /// refuses a count of 0 and a share outside `(0, 1]`.
    ///
    /// By default, [`DEFAULT_MAX_DF`].
    pub fn max_df(&mut self, max_df: MaxDf) -> &mut Self {
        self.max_df = max_df;
        self
    }

    /// The minimum overlap: a document is contaminated by an item when it contains at
    /// least this share of the item's (kept) n-grams. 0 reports every item with one
    /// n-gram found. From 0 to 1; [`build`](EvalSetsBuilder::build) refuses another.
    ///
    /// By default, [`DEFAULT_MIN_OVERLAP`].
    pub fn min_overlap(&mut self, share: f64) -> &mut Self {
        self.min_overlap = share;
        self
    }

    /// Adds an eval set named `name`, for [`add_item`](EvalSetsBuilder::add_item).
    pub fn add_set(&mut self, name: &str) -> Result<SetId, ContaminationError> {
        if self.sets.iter().any(|s| &**s == name) {
            return Err(ContaminationError::duplicate_set(name));
        }
        let id = u32::try_from(self.sets.len())
            .map_err(|_| ContaminationError::too_large("eval sets"))?;
        self.sets.push(name.into());
        Ok(SetId(id))
    }

    /// Adds the item `id` of the eval set `set`, with its text (the caller joins an item's
    /// several fields, a question and its answer, with a space or a line break).
    ///
    /// An item with no words is kept (it is counted) but can never match.
    pub fn add_item(&mut self, set: SetId, id: &str, text: &str) -> Result<(), ContaminationError> {
        let Some(set_name) = self.sets.get(set.0 as usize) else {
            return Err(ContaminationError::unknown_set(set.0));
        };
        if !self.item_ids.insert((set.0, id.into())) {
            return Err(ContaminationError::duplicate_item(set_name, id));
        }
        if self.items.len() >= NONE as usize {
            return Err(ContaminationError::too_large("items"));
        }
        let start = self.tokens.len();
        let mut full = false;
        let (vocab, tokens) = (&mut self.vocab, &mut self.tokens);
        for_each_normalized_token(text, |word, _| {
            let next = vocab.len() as u32;
            let word = match vocab.get(word) {
                Some(&w) => w,
                None if next < NONE => {
                    vocab.insert(word.into(), next);
                    next
                }
                None => {
                    full = true;
                    NONE
                }
            };
            tokens.push(word);
        });
        if full || self.tokens.len() >= NONE as usize {
            self.tokens.truncate(start);
            return Err(ContaminationError::too_large("words"));
        }
        let len = (self.tokens.len() - start) as u32;
        self.items.push(Item {
            set: set.0,
            id: id.into(),
            start: start as u32,
            len,
            first_gram: 0,
            grams: 0,
        });
        Ok(())
    }

    /// Numbers every n-gram of the items and indexes the distinct ones. Consumes the
    /// builder: the items' words move into the eval sets rather than being copied.
    pub fn build(self) -> Result<EvalSets, ContaminationError> {
        let ngram = self.ngram;
        if !(1..=MAX_NGRAM).contains(&ngram) {
            return Err(ContaminationError::ngram(ngram, MAX_NGRAM));
        }
        if !(0.0..=1.0).contains(&self.min_overlap) {
            return Err(ContaminationError::min_overlap(self.min_overlap));
        }
        let max_df = self.max_df.check()?;
        let EvalSetsBuilder { vocab, sets, mut items, tokens, mask, min_overlap, .. } = self;
        // Each word's followers in the items: two words in a row in a document can be
        // part of an eval n-gram only if the second is among the first's.
        let mut followers = vec![0u64; vocab.len()];
        for item in &items {
            let words = &tokens[item.start as usize..(item.start + item.len) as usize];
            for pair in words.windows(2) {
                followers[pair[0] as usize] |= follower_bit(pair[1]);
            }
        }
        let vocab: ScanVocabulary =
            vocab.into_iter().map(|(word, n)| (word, (n, followers[n as usize]))).collect();
        let mut grams: u64 = 0;
        let mut lengths = Vec::new();
        for item in &mut items {
            let len = item.len as usize;
            item.first_gram = grams as u32;
            item.grams = match len {
                0 => 0,
                _ if len < ngram => 1,
                _ => (len - ngram + 1) as u32,
            };
            if len > 0 {
                lengths.push(len.min(ngram));
            }
            grams += u64::from(item.grams);
            if grams >= u64::from(NONE) {
                return Err(ContaminationError::too_large("n-grams"));
            }
        }
        lengths.sort_unstable();
        lengths.dedup();
        let mut eval = EvalSets {
            ngram,
            max_df,
            min_overlap,
            vocab,
            sets,
            items,
            tokens,
            table: HashMap::default(),
            next: Vec::new(),
            key_gram: Vec::new(),
            occ_start: Vec::new(),
            occ: Vec::new(),
            lengths,
            mask,
            filter: Vec::new(),
        };
        eval.index(grams as usize);
        Ok(eval)
    }

    /// Test only: n-gram hashes keep only the bits of `mask`, so that distinct n-grams
    /// collide in a few buckets and only the word-by-word check tells them apart.
    #[cfg(test)]
    pub(crate) fn collide(&mut self, mask: u64) -> &mut Self {
        self.mask = mask;
        self
    }
}

/// Eval sets ready to scan documents with: the items' normalized words and the index of
/// their distinct n-grams. Made by [`EvalSets::builder`]; scanned with
/// [`scan`](EvalSets::scan) (`&self`, from any number of threads) and finished with
/// [`finish`](EvalSets::finish).
///
/// # Memory
///
/// Computed from the layout, not measured with an allocator. Per eval word (n-gram
/// position): 4 bytes for the word's number and 4 for the position in its distinct
/// n-gram's list. Per distinct n-gram: 19 to 39 bytes of hash table (a 16-byte entry and a
/// control byte, at a load between 7/16 and 7/8) and 12 bytes of chain link,
/// representative and list offset, and half a byte to a byte of filter (4 to 8 bits).
/// Per distinct word: the word and about 40 bytes (its number and its followers' 64
/// bits); per item: its id and 24 bytes. So about 40 to 60 bytes per eval n-gram when most n-grams
/// are distinct: 100 million eval words take 4 to 6 GB. A [`Tally`](super::Tally) adds
/// 20 to 40 bytes for each distinct n-gram its documents contain.
#[derive(Clone, Debug)]
pub struct EvalSets {
    pub(crate) ngram: usize,
    pub(crate) max_df: MaxDf,
    pub(crate) min_overlap: f64,
    pub(crate) vocab: ScanVocabulary,
    pub(crate) sets: Vec<Box<str>>,
    pub(crate) items: Vec<Item>,
    pub(crate) tokens: Vec<u32>,
    /// Distinct n-grams ("keys"): the first key of each hash, then a chain per hash.
    table: HashMap<u64, u32, BuildHasherDefault<GramHasher>>,
    next: Vec<u32>,
    /// Per key: one n-gram with its words.
    key_gram: Vec<u32>,
    /// Per key: its n-grams are `occ[occ_start[key]..occ_start[key + 1]]`, ascending.
    pub(crate) occ_start: Vec<u32>,
    pub(crate) occ: Vec<u32>,
    /// The lengths of run a scan looks up, ascending: `ngram`, and each shorter item's.
    pub(crate) lengths: Vec<usize>,
    mask: u64,
    /// One bit per [`gram_key`] value of a distinct n-gram (4 to 8 bits per key, so that it
    /// stays in a core's cache where the table does not): a run whose bit is clear is no
    /// eval n-gram, found without probing the table.
    filter: Vec<u64>,
}

impl EvalSets {
    /// A builder with the default settings and no eval sets.
    pub fn builder() -> EvalSetsBuilder {
        EvalSetsBuilder::default()
    }

    /// The n-gram length, in words.
    pub fn ngram(&self) -> usize {
        self.ngram
    }

    /// The document-frequency limit.
    pub fn max_df(&self) -> MaxDf {
        self.max_df
    }

    /// The minimum overlap.
    pub fn min_overlap(&self) -> f64 {
        self.min_overlap
    }

    /// The number of items, of all sets.
    pub fn items(&self) -> usize {
        self.items.len()
    }

    /// The number of distinct n-grams: what document frequencies are counted for.
    pub fn ngrams(&self) -> usize {
        self.key_gram.len()
    }

    /// The name of an eval set.
    pub fn set_name(&self, set: SetId) -> Option<&str> {
        self.sets.get(set.0 as usize).map(|s| &**s)
    }

    /// The words of the n-gram numbered `gram`.
    pub(crate) fn gram(&self, gram: u32) -> &[u32] {
        let item = &self.items[self.item_of(gram)];
        let pos = (gram - item.first_gram) as usize;
        let width = self.ngram.min(item.len as usize);
        let start = item.start as usize + pos;
        &self.tokens[start..start + width]
    }

    /// The item that n-gram `gram` belongs to.
    pub(crate) fn item_of(&self, gram: u32) -> usize {
        // Items without n-grams share their `first_gram` with the next item that has some;
        // the last item whose `first_gram` is at most `gram` is the one.
        self.items.partition_point(|i| i.first_gram <= gram) - 1
    }

    /// The distinct n-gram whose words are `words`, given `gram_hash(words)`: every
    /// n-gram of that hash is compared word by word, so a hash collision finds nothing.
    #[inline]
    pub(crate) fn lookup(&self, words: &[u32], hash: u64) -> Option<u32> {
        let at = gram_key(hash, words.len()) & self.mask;
        if !self.filter.is_empty() {
            let bit = self.filter_bit(at);
            if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
                return None;
            }
        }
        let mut key = *self.table.get(&at)?;
        while key != NONE {
            if self.gram(self.key_gram[key as usize]) == words {
                return Some(key);
            }
            key = self.next[key as usize];
        }
        None
    }

    /// The filter's bit of a table key.
    #[inline]
    fn filter_bit(&self, at: u64) -> usize {
        (at.rotate_right(24) & (self.filter.len() as u64 * 64 - 1)) as usize
    }

    /// Numbers the distinct n-grams and lists each one's n-grams.
    fn index(&mut self, grams: usize) {
        let mut key_of = Vec::with_capacity(grams);
        for i in 0..self.items.len() {
            let item = &self.items[i];
            let (first, count) = (item.first_gram, item.grams);
            for gram in first..first + count {
                let (hash, len, found) = {
                    let words = self.gram(gram);
                    let hash = gram_hash(words);
                    (hash, words.len(), self.lookup(words, hash))
                };
                let key = found.unwrap_or_else(|| {
                    let key = self.key_gram.len() as u32;
                    let head = self.table.insert(gram_key(hash, len) & self.mask, key);
                    self.next.push(head.unwrap_or(NONE));
                    self.key_gram.push(gram);
                    key
                });
                key_of.push(key);
            }
        }
        // Counting sort: each key's n-grams, ascending.
        let keys = self.key_gram.len();
        let mut start = vec![0u32; keys + 1];
        for &key in &key_of {
            start[key as usize + 1] += 1;
        }
        for k in 0..keys {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut occ = vec![0u32; key_of.len()];
        for (gram, &key) in key_of.iter().enumerate() {
            occ[fill[key as usize] as usize] = gram as u32;
            fill[key as usize] += 1;
        }
        self.occ_start = start;
        self.occ = occ;
        self.table.shrink_to_fit();
        // The filter, once every key is in the table (an empty filter lets all through).
        let bits = (keys.max(16) * 4).next_power_of_two();
        let mut filter = vec![0u64; bits / 64];
        let mask = bits as u64 - 1;
        for &at in self.table.keys() {
            let bit = (at.rotate_right(24) & mask) as usize;
            filter[bit / 64] |= 1 << (bit % 64);
        }
        self.filter = filter;
    }
}
