//! Scanning one document: every run of its words that is an eval n-gram, checked word by
//! word, with where it is written.

use simhash_core::for_each_normalized_token;

use super::eval::{EvalSets, GRAM_SEED, NONE, step};

/// What [`EvalSets::scan`] found in one document: each eval n-gram it contains, at each
/// place. Hand it to [`Tally::add`](super::Tally::add) with the document's number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocHits {
    pub(crate) matches: Vec<Match>,
}

/// A run of the document's words that is a distinct eval n-gram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
            self.base += drop;
        }
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
        let mut recent = Recent { words: Vec::new(), starts: Vec::new(), base: 0, keep: longest };
        // The number of eval words in a row that end at the current word.
        let mut run = 0;
        for_each_normalized_token(text, |word, chars| {
            let word = self.vocab.get(word).copied().unwrap_or(NONE);
            recent.push(word, chars.start);
            run = if word == NONE { 0 } else { run + 1 };
            if run < shortest {
                return;
            }
            let words = &recent.words;
            let last = words.len() - 1;
            // The hash of the last `hashed` words, added from the last one back.
            let (mut hash, mut hashed) = (GRAM_SEED, 0);
            for &len in &self.lengths {
                if len > run {
                    break;
                }
                while hashed < len {
                    hash = step(hash, u64::from(words[last - hashed]));
                    hashed += 1;
                }
                let first = last + 1 - len;
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
