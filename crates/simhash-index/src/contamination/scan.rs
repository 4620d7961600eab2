//! Scanning one document: every run of its words that is an eval n-gram, checked word by
//! word, with where it is written.

use simhash_core::for_each_normalized_token;

use super::eval::{BASE, EvalSets, NONE, POWERS, follower_bit, word_value};

/// What [`EvalSets::scan`] found in one document: each eval n-gram it contains, at each
/// place. Hand it to [`Tally::add`](super::Tally::add) with the document's number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocHits {
    pub(crate) matches: Vec<Match>,
}

/// A run of the document's words that is a distinct eval n-gram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Match {
    /// The distinct n-gram.
    pub(crate) key: u32,
    /// The document word it starts at.
    pub(crate) word: usize,
    /// Where it is written: code points `start..end` of the document.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl DocHits {
    /// Whether the document contains no eval n-gram.
    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }

    /// The number of places where the document contains an eval n-gram.
    pub fn len(&self) -> usize {
        self.matches.len()
    }
}

/// The document words a scan still needs: the last `keep` of them, by number.
struct Recent {
    words: Vec<u32>,
    starts: Vec<usize>,
    /// The n-gram hash of all the document's words before each of `words`, and after the
    /// last (one more than `words`): the hash of `words[a..b]` is
    /// `prefix[b] - prefix[a] * BASE^(b - a)`.
    prefix: Vec<u64>,
    /// The number of the first word in `words`.
    base: usize,
    keep: usize,
}

impl Recent {
    fn push(&mut self, word: u32, start: usize) {
        if self.words.len() >= 2 * self.keep.max(512) {
            let drop = self.words.len() - self.keep;
            self.words.drain(..drop);
            self.starts.drain(..drop);
            self.prefix.drain(..drop);
            self.base += drop;
        }
        let last = self.prefix[self.prefix.len() - 1];
        self.prefix.push(last.wrapping_mul(BASE).wrapping_add(word_value(word)));
        self.words.push(word);
        self.starts.push(start);
    }
}

impl EvalSets {
    /// Scans one document: every run of its words that is an eval n-gram (of `N` words,
    /// or a whole item of fewer), compared word by word with the item, so a hash collision
    /// is never a match.
    ///
    /// Pure: documents may be scanned on any number of threads, in any order; what it
    /// returns depends on the text alone. Memory: the matches, and at most the last 1,024
    /// words.
    pub fn scan(&self, text: &str) -> DocHits {
        let mut matches = Vec::new();
        let (Some(&shortest), Some(&longest)) = (self.lengths.first(), self.lengths.last()) else {
            return DocHits { matches };
        };
        let mut recent = Recent {
            words: Vec::new(),
            starts: Vec::new(),
            prefix: vec![0],
            base: 0,
            keep: longest,
        };
        // The number of eval words in a row that end at the current word, each among the
        // followers of the one before it (as every run of an item's words is), and the
        // followers of the last.
        let (mut run, mut followers) = (0, 0);
        for_each_normalized_token(text, |word, chars| {
            let (word, follow) = self.vocab.get(word).copied().unwrap_or((NONE, 0));
            recent.push(word, chars.start);
            run = if word == NONE {
                0
            } else if followers & follower_bit(word) == 0 {
                1
            } else {
                run + 1
            };
            followers = follow;
            if run < shortest {
                return;
            }
            let (words, prefix) = (&recent.words, &recent.prefix);
            let last = words.len() - 1;
            for &len in &self.lengths {
                if len > run {
                    break;
                }
                let first = last + 1 - len;
                let hash = prefix[last + 1].wrapping_sub(prefix[first].wrapping_mul(POWERS[len]));
                if let Some(key) = self.lookup(&words[first..], hash) {
                    matches.push(Match {
                        key,
                        word: recent.base + first,
                        start: recent.starts[first],
                        end: chars.end,
                    });
                }
            }
        });
        DocHits { matches }
    }
}
