//! The corpus-wide part: document frequencies, the documents with matches, and the hits
//! they make once the frequent n-grams are dropped.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;

use super::error::ContaminationError;
use super::eval::{EvalSets, GramHasher, MaxDf};
use super::scan::{DocHits, Match};

/// What the scans of a corpus found, accumulated: each distinct eval n-gram's document
/// frequency, the number of documents, and the matches of the documents that have any.
///
/// Documents are numbered by the caller (their place in the corpus). Tallies of parts of
/// the corpus [`merge`](Tally::merge) in any order, and [`EvalSets::finish`] sorts by
/// document, so the result does not depend on how the corpus was split among threads.
///
/// A new tally costs nothing (document frequencies are kept for the n-grams found), so one
/// per thread or per batch, as rayon's `fold` makes them, is fine. With a [`MaxDf::Count`]
/// limit a tally keeps at most that many documents' matches per n-gram (the matches of an
/// n-gram already over the limit are dropped as they come), so its memory is bounded by
/// the eval sets; with a share or no limit it keeps every document with a match.
///
/// With the `serde` feature a tally is serializable, so that processes that each scanned
/// part of a corpus can gather their tallies and merge them (`simhash-dist`).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Tally {
    ngrams: usize,
    documents: u64,
    /// The document frequency of each distinct n-gram found.
    df: HashMap<u32, u64, BuildHasherDefault<GramHasher>>,
    docs: Vec<(u64, Vec<Match>)>,
    cap: Option<u64>,
}

impl Tally {
    /// An empty tally for `eval`.
    pub fn new(eval: &EvalSets) -> Tally {
        let cap = match eval.max_df {
            MaxDf::Count(max) => Some(max),
            MaxDf::Unlimited | MaxDf::Share(_) => None,
        };
        let (ngrams, df) = (eval.ngrams(), HashMap::default());
        Tally { ngrams, documents: 0, df, docs: Vec::new(), cap }
    }

    /// Adds the scan of document number `doc`. Every document of the corpus is added,
    /// with or without matches: a share limit counts them.
    pub fn add(&mut self, doc: u64, hits: DocHits) {
        self.documents += 1;
        let mut matches = hits.matches;
        if matches.is_empty() {
            return;
        }
        let mut keys: Vec<u32> = matches.iter().map(|m| m.key).collect();
        keys.sort_unstable();
        keys.dedup();
        for &key in &keys {
            *self.df.entry(key).or_insert(0) += 1;
        }
        if let Some(cap) = self.cap {
            // Over the limit here, over it in every merge: dropped at the end.
            matches.retain(|m| self.df.get(&m.key).is_some_and(|&df| df <= cap));
        }
        if !matches.is_empty() {
            self.docs.push((doc, matches));
        }
    }

    /// Adds the documents of `other`, a tally of other documents of the same eval sets.
    pub fn merge(&mut self, other: Tally) -> Result<(), ContaminationError> {
        if other.ngrams != self.ngrams {
            return Err(ContaminationError::mismatch(other.ngrams, self.ngrams));
        }
        self.documents += other.documents;
        for (key, df) in other.df {
            *self.df.entry(key).or_insert(0) += df;
        }
        self.docs.extend(other.docs);
        Ok(())
    }

    /// The number of documents added.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// The number of documents stored for [`finish`](EvalSets::finish): those with a
    /// match that was not already over the limit.
    pub fn stored(&self) -> usize {
        self.docs.len()
    }
}

/// A document contaminated by an eval item: it contains at least the minimum overlap of
/// the item's n-grams.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit<'e> {
    /// The document's number, as given to [`Tally::add`].
    pub doc: u64,
    /// The eval set's name.
    pub set: &'e str,
    /// The item's id.
    pub item: &'e str,
    /// How many of the item's kept n-grams the document contains.
    pub matched: u32,
    /// How many n-grams the item has, less those dropped as too frequent.
    pub ngrams: u32,
    /// `matched / ngrams`.
    pub overlap: f64,
    /// The longest run of words the document and the item have in common, made of
    /// contained n-grams (an item shorter than `N` words: its length).
    pub longest: usize,
    /// Where the item's n-grams are written in the document: code points (`char`s, end
    /// exclusive), overlapping places merged, ascending.
    pub spans: Vec<Range<usize>>,
}

/// What [`EvalSets::finish`] found in the corpus.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report<'e> {
    /// Every (document, item) hit, by document and then by item (in the order added).
    pub hits: Vec<Hit<'e>>,
    /// The number of documents tallied.
    pub documents: u64,
    /// The number of distinct eval n-grams.
    pub ngrams: usize,
    /// How many of them were dropped for their document frequency.
    pub dropped: usize,
    /// The number of items.
    pub items: usize,
    /// How many items can match nothing: no words, or every n-gram dropped.
    pub unmatchable: usize,
    /// The same figures for each eval set, in the order the sets were added.
    pub sets: Vec<SetFigures<'e>>,
}

/// One eval set's part of a [`Report`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SetFigures<'e> {
    /// The eval set's name.
    pub name: &'e str,
    /// Its items.
    pub items: usize,
    /// The distinct n-grams its items have (an n-gram two sets share counts in both).
    pub ngrams: usize,
    /// How many of them were dropped for their document frequency.
    pub dropped: usize,
    /// How many of its items can match nothing.
    pub unmatchable: usize,
}

/// One item's n-gram found at one place: the item, the n-gram's position in it, and the
/// place in the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Found {
    item: u32,
    pos: u32,
    word: usize,
    start: usize,
    end: usize,
}

impl EvalSets {
    /// Drops the n-grams over the document-frequency limit, then turns each document's
    /// matches into a [`Hit`] per item that reaches the minimum overlap.
    pub fn finish(&self, tally: Tally) -> Result<Report<'_>, ContaminationError> {
        if tally.ngrams != self.ngrams() {
            return Err(ContaminationError::mismatch(tally.ngrams, self.ngrams()));
        }
        let Tally { documents, df, mut docs, .. } = tally;
        let mut dropped = vec![false; self.ngrams()];
        for (key, df) in df {
            dropped[key as usize] = self.max_df.drops(df, documents);
        }
        // Each item's n-grams less the dropped ones.
        let mut kept: Vec<u32> = self.items.iter().map(|i| i.grams).collect();
        for key in (0..dropped.len()).filter(|&k| dropped[k]) {
            for &gram in self.grams_of(key as u32) {
                kept[self.item_of(gram)] -= 1;
            }
        }
        docs.sort_unstable_by_key(|d| d.0);
        if let Some(w) = docs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(ContaminationError::duplicate_document(w[0].0));
        }
        let mut hits = Vec::new();
        let mut found = Vec::new();
        for (doc, matches) in &docs {
            found.clear();
            for m in matches.iter().filter(|m| !dropped[m.key as usize]) {
                for &gram in self.grams_of(m.key) {
                    let item = self.item_of(gram);
                    let pos = gram - self.items[item].first_gram;
                    let (word, start, end) = (m.word, m.start, m.end);
                    found.push(Found { item: item as u32, pos, word, start, end });
                }
            }
            found.sort_unstable();
            for group in found.chunk_by(|a, b| a.item == b.item) {
                let item = group[0].item as usize;
                if let Some(hit) = self.hit(*doc, item, kept[item], group) {
                    hits.push(hit);
                }
            }
        }
        Ok(Report {
            hits,
            documents,
            ngrams: self.ngrams(),
            dropped: dropped.iter().filter(|&&d| d).count(),
            items: self.items.len(),
            unmatchable: kept.iter().filter(|&&k| k == 0).count(),
            sets: self.set_figures(&dropped, &kept),
        })
    }

    /// Each set's items, distinct n-grams (those dropped too) and unmatchable items.
    fn set_figures(&self, dropped: &[bool], kept: &[u32]) -> Vec<SetFigures<'_>> {
        let mut sets: Vec<SetFigures<'_>> = self
            .sets
            .iter()
            .map(|name| SetFigures { name, items: 0, ngrams: 0, dropped: 0, unmatchable: 0 })
            .collect();
        for (item, info) in self.items.iter().enumerate() {
            let set = &mut sets[info.set as usize];
            set.items += 1;
            set.unmatchable += usize::from(kept[item] == 0);
        }
        // Each distinct n-gram once per set that has it (its n-grams are ascending, so
        // those of one set are together only by item; a short list of sets seen).
        let mut seen: Vec<u32> = Vec::new();
        for (key, &gone) in dropped.iter().enumerate() {
            seen.clear();
            for &gram in self.grams_of(key as u32) {
                let set = self.items[self.item_of(gram)].set;
                if !seen.contains(&set) {
                    seen.push(set);
                    sets[set as usize].ngrams += 1;
                    sets[set as usize].dropped += usize::from(gone);
                }
            }
        }
        sets
    }

    /// The n-grams of a distinct n-gram.
    fn grams_of(&self, key: u32) -> &[u32] {
        let (a, b) = (self.occ_start[key as usize], self.occ_start[key as usize + 1]);
        &self.occ[a as usize..b as usize]
    }

    /// The hit of `item` in `doc`, from its n-grams found there (sorted by position, then
    /// place), if they reach the minimum overlap.
    fn hit(&self, doc: u64, item: usize, kept: u32, found: &[Found]) -> Option<Hit<'_>> {
        let mut matched = 0;
        let mut last = None;
        for f in found {
            if last != Some(f.pos) {
                matched += 1;
                last = Some(f.pos);
            }
        }
        let overlap = f64::from(matched) / f64::from(kept);
        if overlap < self.min_overlap {
            return None;
        }
        let info = &self.items[item];
        // The longest diagonal: n-grams at consecutive positions found at consecutive
        // places.
        let mut diagonal: Vec<(isize, u32)> =
            found.iter().map(|f| (f.word as isize - f.pos as isize, f.pos)).collect();
        diagonal.sort_unstable();
        let mut run = 0;
        let mut best = 0;
        for (i, d) in diagonal.iter().enumerate() {
            let next = i > 0 && diagonal[i - 1] == (d.0, d.1.wrapping_sub(1));
            run = if next { run + 1 } else { 1 };
            best = best.max(run);
        }
        let width = self.ngram.min(info.len as usize);
        let mut places: Vec<Range<usize>> = found.iter().map(|f| f.start..f.end).collect();
        places.sort_unstable_by_key(|r| (r.start, r.end));
        let mut spans: Vec<Range<usize>> = Vec::new();
        for r in places {
            match spans.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => spans.push(r),
            }
        }
        Some(Hit {
            doc,
            set: &self.sets[info.set as usize],
            item: &info.id,
            matched,
            ngrams: kept,
            overlap,
            longest: best + width - 1,
            spans,
        })
    }
}
