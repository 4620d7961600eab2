//! Benchmark contamination: find eval-set text inside a training corpus, exactly, with
//! where it is written.
//!
//! An eval item (a benchmark question, a passage) contaminates a corpus document when the
//! document contains enough of the item's word n-grams. Words are the default preset's
//! tokens, normalized ([`simhash_core::for_each_normalized_token`]): case, Unicode
//! normalisation, punctuation, white space and line breaks do not matter, so an item
//! re-wrapped, re-cased or re-punctuated in a document is still found. Every match is
//! checked word by word against the item, so a hash collision is never reported.
//!
//! # Overview
//!
//! * [`EvalSetsBuilder`] (from [`EvalSets::builder`]) takes the settings (the n-gram
//!   length, the document-frequency limit [`MaxDf`], the minimum overlap) and the eval sets
//!   and their items, and builds the immutable [`EvalSets`].
//! * [`EvalSets::scan`] finds the eval n-grams in one document: pure and `&self`, so
//!   documents are scanned on any number of threads. It returns [`DocHits`].
//! * [`Tally`] accumulates the scans of a corpus (document frequencies and the documents
//!   with matches); tallies of parts of the corpus [`merge`](Tally::merge).
//! * [`EvalSets::finish`] drops the n-grams found in too many documents (boilerplate,
//!   licenses) and reports each contaminated (document, item) pair as a [`Hit`]: the
//!   share of the item's n-grams found (`overlap`), the longest run in common (`longest`,
//!   in words) and the `spans` of the document where they are written, in code points.
//!
//! The corpus is read once. Document frequency needs the whole corpus, so the decision
//! waits for [`finish`](EvalSets::finish); until then a tally keeps the documents with a
//! match (their matched n-grams and places only).
//!
//! # Example
//!
//! ```
//! use simhash_index::contamination::{EvalSets, MaxDf, Tally};
//!
//! let mut builder = EvalSets::builder();
//! builder.ngram(4).min_overlap(0.5).max_df(MaxDf::Count(2));
//! let quiz = builder.add_set("quiz")?;
//! builder.add_item(quiz, "q1", "Which planet is known as the Red Planet? Mars.")?;
//! builder.add_item(quiz, "q2", "Who wrote the novel Moby-Dick?")?;
//! let eval = builder.build()?;
//!
//! let corpus = [
//!     "Trivia night! WHICH planet is known as\nthe red planet -- mars, of course.",
//!     "Nothing to see here.",
//! ];
//! let mut tally = Tally::new(&eval);
//! for (doc, text) in corpus.iter().enumerate() {
//!     tally.add(doc as u64, eval.scan(text));
//! }
//! let report = eval.finish(tally)?;
//! assert_eq!(report.hits.len(), 1);
//! let hit = &report.hits[0];
//! assert_eq!((hit.doc, hit.set, hit.item, hit.overlap, hit.longest), (0, "quiz", "q1", 1.0, 9));
//! let written: String = corpus[0].chars().skip(hit.spans[0].start).take(hit.spans[0].len()).collect();
//! assert_eq!(written, "WHICH planet is known as\nthe red planet -- mars");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Matching, exactly
//!
//! * An item of `L ≥ N` words has `L - N + 1` n-grams, by position; an item of fewer than
//!   `N` words (but at least one) has one, all its words, and so matches only whole.
//! * A document contains an n-gram where it has the same normalized words in a row.
//! * N-grams found in more documents than [`MaxDf`] allows are dropped: they count neither
//!   in an item's found n-grams nor in its total, nor in `longest` and `spans`. An item
//!   whose every n-gram is dropped can match nothing ([`Report::unmatchable`]).
//! * A document is contaminated by an item when `found / kept ≥ min_overlap`, where
//!   `found` counts the item's kept n-gram positions the document contains (each once,
//!   however often it appears) and `kept` the item's n-grams less the dropped ones.
//!
//! The result depends on the eval sets, the settings and the corpus only: not on the
//! number of threads, the order documents are scanned or how tallies are merged
//! (documents are sorted by number at the end). The tests check it against a brute-force
//! scan.
//!
//! # Defaults
//!
//! `N = 10` ([`DEFAULT_NGRAM`]) and a minimum overlap of 0.2 ([`DEFAULT_MIN_OVERLAP`])
//! were chosen by the planted test's measurement (`measure_defaults` in
//! `planted_tests.rs`, run with `--ignored --nocapture`): 120 items of 29 to 129 words cut
//! from real documents (the first judged set of `benches/judged`: Rust docs, man pages,
//! licenses, package descriptions), each planted once per kind into a document of the
//! second judged set, 930 documents in all with the unplanted hosts, no document-frequency
//! limit. Recall of whole, re-wrapped, re-cased, re-punctuated and mid-sentence plants was
//! 1.000 at every setting below; the rest:
//!
//! | N | min overlap | recall, cut to half | hits where nothing was planted |
//! |---|---|---|---|
//! | 8 | 0.2 | 1.000 | 1,492 |
//! | 8 | 0.3 | 0.975 | 712 |
//! | **10** | **0.2** | **1.000** | **1,179** |
//! | 10 | 0.3 | 0.908 | 554 |
//! | 13 | 0.2 | 0.950 | 872 |
//! | 13 | 0.3 | 0.783 | 425 |
//! | 8 to 13 | 0.5 | 0.14 to 0.23 | 193 to 251 |
//!
//! Every hit where nothing was planted is also found by the brute-force scan: text the
//! items really share with the hosts (documentation navigation, man-page boilerplate), not
//! a false match. A shorter `N` finds more of it at no gain in recall; `N = 13` starts to
//! miss halves (an item of fewer than `2N` words has no n-gram left in its half). With a
//! limit of 1% of the documents (`MaxDf::Share(0.01)`, 9 documents) those hits all went
//! (0 left, about 1,000 n-grams dropped), and so did 8 of the 120 items, made wholly of
//! text common in the hosts: recall 0.933 whole, 0.85 half at `N = 10`.
//!
//! [`DEFAULT_MAX_DF`] (1,000 documents) is a judgment, not a measurement: it drops
//! license and navigation n-grams of a large corpus and keeps an item copied into a few
//! hundred documents; on a small corpus set a share or a smaller count.
//!
//! # Memory
//!
//! The eval sets take about 40 to 60 bytes per eval n-gram (see [`EvalSets`]), whatever
//! the corpus. A scan holds its matches and at most the last 1,024 words (20 bytes each).
//! A [`Tally`] holds 20 to 40 bytes per distinct eval n-gram its documents contain, and 32
//! bytes per match of the documents it keeps: with a [`MaxDf::Count`] limit at most that
//! many documents per n-gram, so bounded by the eval sets; with a share or no limit, every
//! document with a match, so it grows with the contaminated part of the corpus (the
//! n-grams' document frequencies are known only at the end).

mod error;
mod eval;
mod scan;
mod tally;

pub use error::{ContaminationError, ContaminationErrorKind};
pub use eval::{
    DEFAULT_MAX_DF, DEFAULT_MIN_OVERLAP, DEFAULT_NGRAM, EvalSets, EvalSetsBuilder, MAX_NGRAM,
    MaxDf, SetId,
};
pub use scan::DocHits;
pub use tally::{Hit, Report, SetFigures, Tally};

#[cfg(test)]
mod planted_tests;
#[cfg(test)]
mod tests;
