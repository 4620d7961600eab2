//! Content no kept record has: a filter of the windows of a candidate component's kept
//! records, so that the dedup walk knows a record with content of its own that none of
//! them shares is kept, without reading its [relation](super::Relation) to each of them.
//!
//! A record's relation to a kept one is [`Overlap`](super::Relation::Overlap) as soon as
//! its runs of tokens in no window of the kept text hold [`OWN_WORDS`](super::OWN_WORDS)
//! words (runs of [`CONTENT_RUN`](super::CONTENT_RUN) tokens or more). A token in no
//! window of *any* kept text is in no window of each one, so when the runs of tokens in no
//! kept window already hold that many words, every relation to a kept record is `Overlap`
//! and the record is kept, whatever the comparisons would find. The filter may answer
//! "held" for a window no kept text has (a Bloom filter's false positive: a run is cut
//! short, and the record is compared as before), never the other way round, so the
//! decisions are those of the comparisons; only the work is less.

use super::versions::without_versions;
use super::windows::for_each_window_hash;

/// Bits a window sets in its block.
const PROBES: u32 = 4;
/// The most bytes one filter takes (1 MiB: on a 500 MB real corpus whose largest
/// component keeps thousands of records, 8 MiB saved 0.1% more comparisons).
const MAX_BYTES: usize = 1 << 20;
/// The fewest.
const MIN_BYTES: usize = 4 << 10;

/// The windows of the records kept so far in a candidate component: a blocked Bloom
/// filter (each window's bits in one 512-bit block), sized for the component.
pub(super) struct KeptWindows {
    blocks: Vec<[u64; 8]>,
    /// `64 - log2(blocks)` (at least 64 blocks): a hash's top bits choose its block.
    shift: u32,
    /// A kept record with no tokens: every record's relation to it is
    /// [`Same`](super::Relation::Same), so no record is known to be kept.
    empty: bool,
}

impl KeptWindows {
    /// A filter for up to about `windows` windows (about 8 bits each, within
    /// 4 KiB..1 MiB).
    pub(super) fn new(windows: usize) -> KeptWindows {
        let bytes = windows.clamp(MIN_BYTES, MAX_BYTES).next_power_of_two();
        let blocks = (bytes / 64).min(MAX_BYTES / 64);
        KeptWindows {
            blocks: vec![[0; 8]; blocks],
            shift: 64 - blocks.trailing_zeros(),
            empty: false,
        }
    }

    /// Adds a kept text's windows (`tokens`: its token words, as the store keeps them).
    pub(super) fn insert_text(&mut self, tokens: &[u32]) {
        let tokens = without_versions(tokens);
        if tokens.is_empty() {
            self.empty = true;
            return;
        }
        for_each_window_hash(&tokens, |h| self.insert(h));
    }

    /// Whether a kept record with no tokens was added (then no record is known to be kept).
    pub(super) fn has_empty(&self) -> bool {
        self.empty
    }

    fn insert(&mut self, h: u64) {
        let (block, bits) = self.place(h);
        let block = &mut self.blocks[block];
        for bit in bits {
            block[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every window added is held (no false negative), and most others are not.
    #[test]
    fn holds_what_was_added() {
        let mut filter = KeptWindows::new(10_000);
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

    /// A kept text with no tokens (or only release-stage words) is flagged.
    #[test]
    fn empty_texts_are_flagged() {
        let mut filter = KeptWindows::new(10);
        filter.insert_text(&[1, 2, 3, 4]);
        assert!(!filter.has_empty());
        filter.insert_text(&[simhash_core::token_word("beta")]);
        assert!(filter.has_empty());
    }
}
