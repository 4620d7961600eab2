//! Content no kept record has: a filter of the windows of a candidate component's kept
//! records, so that the dedup walk knows a record with content of its own that none of
//! them shares is kept, without reading its [relation](super::Relation) to each of them.
//!
//! A record's relation to a kept one is [`Overlap`](super::Relation::Overlap) as soon as
//! its runs of tokens in no window of the kept text hold [`ADDED_WORDS`](super::ADDED_WORDS)
//! words (runs of [`CONTENT_RUN`](super::CONTENT_RUN) tokens or more), or
//! [`OWN_WORDS`](super::OWN_WORDS) when the kept text has a token alone: certainly when its
//! first or last window, the only one over its first or last token, is not one of the
//! record's ([`KeptEnds::may_lie_within`] asks that of every kept record at once). A token in no
//! window of *any* kept text is in no window of each one, so when the runs of tokens in no
//! kept window already hold that many words (`OWN_WORDS` only when no kept record may lie
//! wholly within the record), every relation to a kept record is `Overlap`
//! and the record is kept, whatever the comparisons would find. The filter may answer
//! "held" for a window no kept text has (a Bloom filter's false positive: a run is cut
//! short, and the record is compared as before), never the other way round, so the
//! decisions are those of the comparisons; only the work is less.
//!
//! The same reading serves the other searches: the on-disk index keeps a filter of all its
//! documents' windows for `dedup --against`, and [`alone`](super::alone) finds, for
//! `cluster` and `pairs`, the records of a candidate component whose content of their own
//! no other record of it has (two of them never pair).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use super::small::MixHasher;
use super::versions::without_versions;
use super::windows::for_each_window_hash;

/// What the walk keeps of a candidate component's kept records once relations spare
/// records there: the filter of all their windows ([`KeptWindows`]) and one of each
/// record's ([`RecordWindows`]).
pub(super) struct Owned {
    /// The windows of every kept record.
    pub(super) all: KeptWindows,
    /// The windows of each kept record, by kept ordinal.
    pub(super) each: RecordWindows,
    /// The first and last windows of every kept record.
    pub(super) ends: KeptEnds,
    /// Each kept record's first and last window, by kept ordinal (`None` without tokens).
    ends_of: Vec<Option<(u64, u64)>>,
    /// The window hashes of the record being kept, reused.
    hashes: Vec<u64>,
}

/// The first and last windows of kept texts, indexed by the first: a kept text with no
/// token alone against a record (every one in a window of the record's) has both among the
/// record's windows, as they are the only windows over its first and last tokens.
#[derive(Debug, Default)]
pub(crate) struct KeptEnds {
    /// Last windows by first window.
    lasts: HashMap<u64, HashSet<u64, BuildHasherDefault<MixHasher>>, BuildHasherDefault<MixHasher>>,
}

impl KeptEnds {
    /// Adds a kept text's ends, from its window hashes in text order ([`window_hashes`];
    /// none for a text without tokens); returns them.
    pub(crate) fn insert_hashes(&mut self, hashes: &[u64]) -> Option<(u64, u64)> {
        let ends = hashes.first().zip(hashes.last()).map(|(&f, &l)| (f, l));
        if let Some((first, last)) = ends {
            self.lasts.entry(first).or_default().insert(last);
        }
        ends
    }

    /// Whether a kept text may lie wholly within a record whose distinct windows are
    /// `windows` (`has(h)`: whether `h` is one of them): every one of the kept text's tokens
    /// in a window of the record's, so that a sentence the record adds is a variant's below
    /// [`ADDED_WORDS`](super::ADDED_WORDS). Its first and last windows are then among the
    /// record's. False when none may.
    pub(crate) fn may_lie_within(&self, windows: &[u64], has: impl Fn(u64) -> bool) -> bool {
        windows.iter().any(|first| {
            self.lasts.get(first).is_some_and(|lasts| {
                if lasts.len() <= windows.len() {
                    lasts.iter().any(|&last| has(last))
                } else {
                    windows.iter().any(|last| lasts.contains(last))
                }
            })
        })
    }
}

impl Owned {
    /// Filters sized for a component of about `windows` windows, empty.
    pub(super) fn new(windows: usize) -> Owned {
        Owned {
            all: KeptWindows::new(windows),
            each: RecordWindows::default(),
            ends: KeptEnds::default(),
            ends_of: Vec::new(),
            hashes: Vec::new(),
        }
    }

    /// Adds the next kept record's windows (`tokens`: its token words, as the store keeps
    /// them): it is the next kept ordinal of [`Owned::each`].
    /// Each window is hashed once for both filters.
    pub(super) fn keep(&mut self, tokens: &[u32]) {
        window_hashes(tokens, &mut self.hashes);
        self.all.insert_hashes(&self.hashes);
        self.each.push_hashes(&self.hashes);
        let ends = self.ends.insert_hashes(&self.hashes);
        self.ends_of.push(ends);
    }

    /// Whether kept ordinal `k` may lie wholly within a record (`has(h)`: whether `h` is
    /// one of its windows; see [`KeptEnds::may_lie_within`]); true for a record without
    /// tokens or not known here.
    pub(super) fn may_lie_within_one(&self, k: usize, has: impl Fn(u64) -> bool) -> bool {
        match self.ends_of.get(k) {
            Some(Some((first, last))) => has(*first) && has(*last),
            _ => true,
        }
    }
}

/// The hashes of a kept text's windows (`tokens`: its token words, as the store keeps
/// them; version markers dropped first, as every relation reads past them) into
/// `out`, in text order: what both filters take.
pub(crate) fn window_hashes(tokens: &[u32], out: &mut Vec<u64>) {
    out.clear();
    for_each_window_hash(&without_versions(tokens), |h| out.push(h));
}

/// Bits a window sets in its block.
const PROBES: u32 = 4;
/// The most bytes a filter starts with (1 MiB: on a 500 MB real corpus whose largest
/// component keeps thousands of records, 8 MiB saved 0.1% more comparisons); it grows past
/// that as its windows need ([`KeptWindows::crowded`]). Small in tests, so that they cover
/// the growth.
const MAX_BYTES: usize = if cfg!(test) { 128 } else { 1 << 20 };
/// The fewest (two blocks at least).
const MIN_BYTES: usize = if cfg!(test) { 128 } else { 4 << 10 };
/// The most bytes a filter grows to (past it, it fills, and fewer records are known to be
/// kept: they are compared as before).
const GROWN_BYTES: usize = 1 << 30;

/// The windows of the records kept so far in a candidate component: a blocked Bloom
/// filter (each window's bits in one 512-bit block), sized for the component.
pub(crate) struct KeptWindows {
    blocks: Vec<[u64; 8]>,
    /// `64 - log2(blocks)` (at least 2 blocks): a hash's top bits choose its block.
    shift: u32,
    /// A kept record with no tokens: every record's relation to it is
    /// [`Same`](super::Relation::Same), so no record is known to be kept.
    empty: bool,
    /// Windows added that set a bit (about the distinct windows held).
    held: usize,
    /// Bits a window is given before the filter is [`crowded`](KeptWindows::crowded).
    bits_per_window: usize,
}

impl std::fmt::Debug for KeptWindows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptWindows")
            .field("bytes", &(self.blocks.len() * 64))
            .field("held", &self.held)
            .finish_non_exhaustive()
    }
}

impl KeptWindows {
    /// A filter for up to about `windows` windows (about 8 bits each, within
    /// 4 KiB..1 MiB).
    pub(super) fn new(windows: usize) -> KeptWindows {
        KeptWindows::with_bytes(windows.clamp(MIN_BYTES, MAX_BYTES))
    }

    /// A filter for `windows` windows of `bits_per_window` bits each (the bytes rounded up
    /// to a power of two), [`crowded`](KeptWindows::crowded) past that many.
    pub(crate) fn sized(windows: usize, bits_per_window: usize) -> KeptWindows {
        let mut filter = KeptWindows::with_bytes(windows.saturating_mul(bits_per_window) / 8);
        filter.bits_per_window = bits_per_window;
        filter
    }

    /// An empty filter of `bytes` (rounded up to a power of two, at least two blocks).
    fn with_bytes(bytes: usize) -> KeptWindows {
        let blocks = (bytes.next_power_of_two() / 64).max(2);
        KeptWindows {
            blocks: vec![[0; 8]; blocks],
            shift: 64 - blocks.trailing_zeros(),
            empty: false,
            held: 0,
            bits_per_window: 8,
        }
    }

    /// Gives each window 32 bits from now on (four times the false "held" answers fewer,
    /// once [`grown`](KeptWindows::grown)): for a component where many records are kept
    /// for content of their own, one false answer in a short run of its own sends a
    /// record to be compared with every kept record.
    pub(super) fn make_sparse(&mut self) {
        self.bits_per_window = 32;
    }

    /// Whether [`make_sparse`](KeptWindows::make_sparse) was called.
    pub(super) fn is_sparse(&self) -> bool {
        self.bits_per_window == 32
    }

    /// Whether it holds more windows than its size was chosen for (8 bits each, or 32
    /// once [sparse](KeptWindows::make_sparse): past that, false answers of "held"
    /// multiply and cut records' runs of own content short) and may still grow: then the
    /// walk starts a [`grown`](KeptWindows::grown) one and adds every kept text to it
    /// again.
    pub(super) fn crowded(&self) -> bool {
        let bits = self.blocks.len() * 512;
        self.held.saturating_mul(self.bits_per_window) > bits && bits / 8 < GROWN_BYTES
    }

    /// An empty filter of twice this one's size (at least), with as many bits a window.
    pub(super) fn grown(&self) -> KeptWindows {
        let bytes = (self.blocks.len() * 128).max(self.held * self.bits_per_window / 4);
        let mut grown = KeptWindows::with_bytes(bytes.min(GROWN_BYTES));
        grown.bits_per_window = self.bits_per_window;
        grown
    }

    /// Adds a kept text's windows (`tokens`: its token words, as the store keeps them).
    pub(crate) fn insert_text(&mut self, tokens: &[u32]) {
        let mut hashes = Vec::new();
        window_hashes(tokens, &mut hashes);
        self.insert_hashes(&hashes);
    }

    /// Adds a kept text's windows by their hashes ([`for_each_window_hash`] of its tokens
    /// without version markers; none for a text with no tokens).
    pub(crate) fn insert_hashes(&mut self, hashes: &[u64]) {
        if hashes.is_empty() {
            self.empty = true;
        }
        for &h in hashes {
            self.insert(h);
        }
    }

    /// Whether a kept record with no tokens was added (then no record is known to be kept).
    pub(crate) fn has_empty(&self) -> bool {
        self.empty
    }

    pub(super) fn insert(&mut self, h: u64) {
        let (block, bits) = self.place(h);
        let block = &mut self.blocks[block];
        let mut set = false;
        for bit in bits {
            let (word, mask) = (&mut block[(bit >> 6) as usize], 1 << (bit & 63));
            set |= *word & mask == 0;
            *word |= mask;
        }
        self.held += usize::from(set);
    }

    /// Whether a window (its hash) may be in a kept text: false only when it is in none.
    pub(super) fn may_hold(&self, h: u64) -> bool {
        let (block, bits) = self.place(h);
        let block = &self.blocks[block];
        bits.into_iter().all(|bit| block[(bit >> 6) as usize] & (1 << (bit & 63)) != 0)
    }

    /// A window's block and its bits there.
    fn place(&self, h: u64) -> (usize, [u32; PROBES as usize]) {
        let mixed = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
        let block = (mixed >> self.shift) as usize;
        let low = (mixed ^ (mixed >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let bits = std::array::from_fn(|i| ((low >> (9 * i as u32)) & 511) as u32);
        (block, bits)
    }
}

/// Bits of a record's filter per window of its text (one 64-bit word per 8 windows).
const RECORD_BITS_PER_WINDOW: usize = 8;
/// The most words all of a component's record filters take (8 MiB; past it, records kept
/// later have none and are compared as before).
const RECORD_WORDS: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// A Bloom filter of each kept record's windows (by kept ordinal, in one allocation): a
/// window sets three bits of one 64-bit word of its record's filter. After a record's first
/// [`Overlap`](super::Relation::Overlap), the walk compares it with a later kept record only
/// when that record may hold enough of its content of its own
/// ([`Prepared::overlaps`](super::relation::Prepared::overlaps)). Like [`KeptWindows`], it
/// can only err towards "held".
#[derive(Default)]
pub(super) struct RecordWindows {
    /// Per kept ordinal, where its filter starts in `words` and its length in words; none
    /// for a record with no tokens (every record is [`Same`](super::Relation::Same) to it) or
    /// past [`RECORD_WORDS`].
    spans: Vec<Option<(usize, usize)>>,
    words: Vec<u64>,
}

/// One kept record's filter.
#[derive(Clone, Copy)]
pub(super) struct RecordFilter<'a> {
    words: &'a [u64],
}

impl RecordWindows {
    /// Adds the next kept ordinal's filter, from its tokens.
    #[cfg(test)]
    pub(super) fn push(&mut self, tokens: &[u32]) {
        let mut hashes = Vec::new();
        window_hashes(tokens, &mut hashes);
        self.push_hashes(&hashes);
    }

    /// Adds the next kept ordinal's filter, from its window hashes (as
    /// [`KeptWindows::insert_hashes`] takes them).
    fn push_hashes(&mut self, hashes: &[u64]) {
        let len = (hashes.len() * RECORD_BITS_PER_WINDOW).div_ceil(64);
        if hashes.is_empty() || self.words.len() + len > RECORD_WORDS {
            self.spans.push(None);
            return;
        }
        let start = self.words.len();
        super::buffers::reserve_within(&mut self.words, len, RECORD_WORDS);
        self.words.resize(start + len, 0);
        let filter = &mut self.words[start..];
        for &h in hashes {
            let (word, bits) = record_place(h, len);
            filter[word] |= bits;
        }
        self.spans.push(Some((start, len)));
    }

    /// Kept ordinal `k`'s filter, when it has one.
    pub(super) fn get(&self, k: usize) -> Option<RecordFilter<'_>> {
        let (start, len) = (*self.spans.get(k)?)?;
        Some(RecordFilter { words: &self.words[start..start + len] })
    }
}

impl RecordFilter<'_> {
    /// Whether a window (its hash) may be in the record's text: false only when it is not.
    pub(super) fn may_hold(&self, h: u64) -> bool {
        let (word, bits) = record_place(h, self.words.len());
        self.words[word] & bits == bits
    }
}

/// A window's word among `len` and its three bits there.
fn record_place(h: u64, len: usize) -> (usize, u64) {
    let mixed = h.wrapping_mul(0x9fb2_1c65_1e98_df25);
    let word = ((u128::from(mixed) * len as u128) >> 64) as usize;
    let low = (mixed ^ (mixed >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    let bits = (1u64 << (low & 63)) | (1 << ((low >> 6) & 63)) | (1 << ((low >> 12) & 63));
    (word, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every window added is held (no false negative), and most others are not.
    #[test]
    fn holds_what_was_added() {
        let mut filter = KeptWindows::with_bytes(10_000);
        let added: Vec<u64> =
            (0..10_000u64).map(|i| i.wrapping_mul(0x1234_5678_9abc_def1)).collect();
        for &h in &added {
            filter.insert(h);
        }
        assert!(added.iter().all(|&h| filter.may_hold(h)));
        let others =
            (0..10_000u64).map(|i| ((i + 1) << 40) ^ 0x5555).filter(|&h| filter.may_hold(h));
        assert!(others.count() < 500, "false positives past 5%");
    }

    /// Each record's filter holds its windows, not (mostly) another's; a record with no
    /// tokens, or past the budget, has none.
    #[test]
    fn record_filters_hold_their_windows() {
        let texts: Vec<Vec<u32>> =
            (0..4u32).map(|t| (0..30).map(|i| (t * 1000 + i) << 2).collect()).collect();
        let mut each = RecordWindows::default();
        each.push(&texts[0]);
        each.push(&[]);
        each.push(&texts[1]);
        assert!(each.get(1).is_none() && each.get(3).is_none());
        let hashes = |t: &[u32]| {
            let mut h = Vec::new();
            for_each_window_hash(t, |x| h.push(x));
            h
        };
        for (k, text) in [(0, &texts[0]), (2, &texts[1])] {
            let filter = each.get(k).expect("a filter");
            assert!(hashes(text).iter().all(|&h| filter.may_hold(h)));
            let others = hashes(&texts[3]).into_iter().filter(|&h| filter.may_hold(h)).count();
            assert!(others < 6, "{others} of 28 false positives");
        }
        // RECORD_WORDS in tests is 64 words: a few of these texts, then none.
        for _ in 0..20 {
            each.push(&texts[2]);
        }
        assert!(each.get(22).is_none());
    }

    /// A filter is crowded past a window a byte (four once sparse), and a grown one (at
    /// least twice the size, room for twice the windows held) holds what is added again
    /// without being crowded.
    #[test]
    fn a_crowded_filter_grows() {
        let added: Vec<u64> = (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        for sparse in [false, true] {
            let mut filter = KeptWindows::with_bytes(1024);
            if sparse {
                filter.make_sparse();
            }
            let per_byte = if sparse { 4 } else { 1 };
            for (n, &h) in added.iter().enumerate() {
                filter.insert(h);
                assert_eq!(filter.crowded(), filter.held * per_byte > 1024, "{n}");
            }
            assert!(filter.crowded() && filter.held > 2000, "{} held", filter.held);
            let mut grown = filter.grown();
            assert!(grown.blocks.len() >= 2 * filter.blocks.len() && grown.is_sparse() == sparse);
            for &h in &added {
                grown.insert(h);
            }
            assert!(!grown.crowded() && added.iter().all(|&h| grown.may_hold(h)), "{sparse}");
        }
        // A small one doubles.
        let mut small = KeptWindows::with_bytes(1024);
        small.insert(1);
        assert_eq!(small.grown().blocks.len(), 2 * small.blocks.len());
    }

    /// A kept text with no tokens (or only version markers) is flagged.
    #[test]
    fn empty_texts_are_flagged() {
        let mut filter = KeptWindows::new(10);
        filter.insert_text(&[1, 2, 3, 4]);
        assert!(!filter.has_empty());
        filter.insert_text(&[simhash_core::token_word("beta")]);
        assert!(filter.has_empty());
    }
}
