//! The [relation](super#relations) of a verified pair: the same document, template siblings,
//! or two documents that overlap.

use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::ops::Range;
use std::str::FromStr;

#[cfg(test)]
use super::own::Owned;
use super::own::{KeptEnds, KeptWindows, RecordFilter};
use super::small::MixHasher;
use super::stock::stock_at;
use super::versions::{TopBytes, version_tokens, without_versions};
use super::windows::{WINDOW, WindowIds, for_each_window_hash, window_hash};
use super::{EngineError, SketchStore};

/// What a verified pair is, read from what the removed document has that the kept one
/// lacks (see [the module](super#relations)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Relation {
    /// The same document: a copy, version, revision or edition of the same text.
    Same,
    /// Template siblings: beyond filled-in names, numbers, versions and stock phrases, the
    /// removed one has no content of its own.
    Template,
    /// The removed one has substantial content of its own; the two share a template,
    /// boilerplate or a passage. `dedup` never removes it.
    Overlap,
}

impl Relation {
    /// Its name in outputs: `same`, `template` or `overlap`.
    pub fn name(self) -> &'static str {
        match self {
            Relation::Same => "same",
            Relation::Template => "template",
            Relation::Overlap => "overlap",
        }
    }

    /// The three, in order.
    pub const ALL: [Relation; 3] = [Relation::Same, Relation::Template, Relation::Overlap];

    /// Its place in [`ALL`](Relation::ALL) (0, 1, 2): a compact code for front ends that
    /// carry it in numbers; [`from_code`](Relation::from_code) reads it back.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The relation of a [`code`](Relation::code); none past 2.
    pub fn from_code(code: u8) -> Option<Relation> {
        Relation::ALL.get(usize::from(code)).copied()
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`Relation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRelation(pub String);

impl fmt::Display for UnknownRelation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown relation {:?} (same, template or overlap)", self.0)
    }
}

impl std::error::Error for UnknownRelation {}

impl FromStr for Relation {
    type Err = UnknownRelation;

    fn from_str(s: &str) -> Result<Relation, UnknownRelation> {
        Relation::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| UnknownRelation(s.to_string()))
    }
}

/// Which verified pairs the searches act on: `dedup` removes, `pairs` lists and `cluster`
/// joins only these. [`Relation::Overlap`] never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Templates {
    /// Same documents and template siblings (a corpus builder's choice).
    #[default]
    Remove,
    /// Same documents only: template siblings are different entities, kept (a search
    /// index's or an archive's choice).
    Keep,
}

impl Templates {
    /// Whether a pair of this relation is acted on.
    pub fn acts_on(self, relation: Relation) -> bool {
        match relation {
            Relation::Same => true,
            Relation::Template => self == Templates::Remove,
            Relation::Overlap => false,
        }
    }

    /// Its name: `remove` or `keep`.
    pub fn name(self) -> &'static str {
        match self {
            Templates::Remove => "remove",
            Templates::Keep => "keep",
        }
    }
}

impl fmt::Display for Templates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Templates {
    type Err = String;

    fn from_str(s: &str) -> Result<Templates, String> {
        match s {
            "remove" => Ok(Templates::Remove),
            "keep" => Ok(Templates::Keep),
            _ => Err(format!("unknown templates policy {s:?} (remove or keep)")),
        }
    }
}

/// Tokens in a run, at least, for its words to count as content of its own (shorter runs
/// are fill-ins: a name, a number, a changed word or two).
pub const CONTENT_RUN: usize = 5;
/// Words of own content (in runs of [`CONTENT_RUN`] tokens or more) that make a pair
/// [`Relation::Overlap`].
pub const OWN_WORDS: usize = 15;
/// Distinct words of own content that the kept text never uses that make a pair
/// [`Relation::Overlap`] (a sentence of its own, however short the runs around it).
pub const NEW_WORDS: usize = 6;
/// Words of own content below which a removed text that is the kept text with a sentence
/// added (the kept text has no token alone: every one lies in a window of the removed
/// text) is not [`Relation::Overlap`] for its [`OWN_WORDS`] or [`NEW_WORDS`]: a variant's
/// added phrase ("This package is for working without an X server", "The files to run the
/// tests"), read as filled in. The pair is then [`Relation::Template`] (or, in a text long
/// enough that the sentence is under 1% of it, or within [`EDITION_PERCENT`],
/// [`Relation::Same`]: a revision, an edition). From
/// this many words on, a paragraph of its own makes it [`Relation::Overlap`] whatever the
/// kept text has.
pub const ADDED_WORDS: usize = 20;
/// Words in one run of each text that the other text never uses that make a pair
/// [`Relation::Overlap`]: a phrase of its own in place of the other's (a summary or a
/// description of what each entity does, replaced), when the removed text's are more than
/// [`REPLACED_PERCENT`]% of its tokens (a long revision may reword a phrase).
pub const REPLACED_WORDS: usize = 5;
/// See [`REPLACED_WORDS`].
pub const REPLACED_PERCENT: usize = 3;
/// Words the removed text may have alone (or 1% of its tokens) and still be the
/// [`Relation::Same`] document, when neither side has a number of its own; beyond 1% of its
/// tokens, only words added or dropped: a word swapped for another (the kept text has
/// words alone among its fill-ins too) is a template's slot filled in differently.
pub const FILL_WORDS: usize = 2;
/// Percent of a long removed text's tokens ([`EDITION_TOKENS`] or more) that may be words
/// added to the whole of the kept text (it has no token alone) and the pair still be
/// [`Relation::Same`], when none of them is a stock packaging word: an edition's notice,
/// heading or entry ("This command is currently in beta and might change without notice"
/// on a 400-token manual page, a changelog's line). Past [`FILL_WORDS`] and 1%, other words
/// alone make a template, and so does a stock sentence added (a `-doc` or `-prof`
/// package's) at any length. Content of its own of [`ADDED_WORDS`] or more (in runs of
/// [`CONTENT_RUN`] tokens) is [`Relation::Overlap`] first, whatever its share: the 4% only
/// reaches past 19 such words in words added in shorter runs.
pub const EDITION_PERCENT: usize = 4;
/// Tokens of the removed text, at least, for [`EDITION_PERCENT`]: in a shorter text (a
/// package's description) a phrase added names a variant ("compiled for profiling",
/// "(3.x version)"), a template's slot.
pub const EDITION_TOKENS: usize = 300;
/// A pair that would be [`Relation::Same`] is [`Relation::Template`] when the kept text
/// has this many stock packaging words alone, at least (read as such,
/// [`STOCK_SPAN`](super::STOCK_SPAN)): it adds a stock sentence, as a sibling package's
/// description does. Not when the kept text also has [`OWN_WORDS`] words of its own content:
/// the removed text is then a part of a larger document ([`Evidence::kept_stock_words`]).
pub const KEPT_STOCK_WORDS: usize = 2;

/// Why a pair is what it is: the runs of tokens each text has alone and the counts the
/// [`Relation`] was read from (see [the module](super#relations)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// What the pair is.
    pub relation: Relation,
    /// The removed text's runs: token positions (`0..removed.len()`) it has alone.
    pub removed_runs: Vec<Range<usize>>,
    /// The kept text's runs.
    pub kept_runs: Vec<Range<usize>>,
    /// Words (not names with a number in them) in the removed text's runs of
    /// [`CONTENT_RUN`] tokens or more: its own content.
    pub own_words: usize,
    /// Distinct words among them that the kept text never uses.
    pub new_words: usize,
    /// Words in all of the removed text's runs.
    pub filled_words: usize,
    /// Names with a number in them (`u64`, `v3_22`, `libfoo2`) in the removed text's runs
    /// and the kept text's fill-ins (runs shorter than [`CONTENT_RUN`]), and numbers alone
    /// there when both sides have one (`22` for `16`; not `12` for `twelve`).
    pub numbers: usize,
    /// Words swapped for others: the words (not CJK characters) in the removed text's
    /// runs when the kept text's fill-ins hold words too (`jack` for `alsa`, `division`
    /// for `addition`: a slot filled in differently, as in a template) and they are more
    /// than 1% of its tokens (a long revision may change that many); 0 otherwise (words
    /// added or dropped on one side, as in an edit).
    pub swapped: usize,
    /// Words of the removed text's phrase in place of one of the kept text's: the most
    /// words one of its runs has that the kept text never uses, when they are at least
    /// [`REPLACED_WORDS`] and more than [`REPLACED_PERCENT`]% of its tokens and one of the
    /// kept text's runs has [`REPLACED_WORDS`] words the removed text never uses (the pair
    /// is then [`Relation::Overlap`]); 0 otherwise.
    pub replaced: usize,
    /// [Stock packaging words](super::STOCK_WORDS) in the removed text's runs, read as such
    /// ([`STOCK_SPAN`](super::STOCK_SPAN)): among the words filled in, never content.
    pub stock_words: usize,
    /// Stock packaging words, read as such, in the kept text's runs; 0 when the kept text
    /// has [`OWN_WORDS`] words of its own content (it is then a larger document of which
    /// the removed text may be a part). At [`KEPT_STOCK_WORDS`] or more the kept text adds
    /// a stock sentence the removed one lacks ("This package contains the development
    /// files" on a `-dev` package's description and not on its library's), so a pair that
    /// would be [`Relation::Same`] is [`Relation::Template`]: different packages.
    pub kept_stock_words: usize,
    /// Whether the pair is [`Relation::Same`] for an edition's allowance
    /// ([`EDITION_PERCENT`]): the removed text has more words alone than [`FILL_WORDS`] and
    /// 1% of its tokens, all added to the whole of the kept text, in a text of
    /// [`EDITION_TOKENS`] tokens or more (a notice, a heading, a changelog's entry).
    pub edition: bool,
}

impl Evidence {
    /// Whether the removed text is the whole of the kept text (which has no token alone)
    /// with a sentence added that would be content of its own against another text
    /// ([`OWN_WORDS`] or [`NEW_WORDS`]) but holds fewer than [`ADDED_WORDS`] words: a
    /// variant's, so the pair is not [`Relation::Overlap`] for it.
    pub fn sentence_added(&self) -> bool {
        self.kept_runs.is_empty()
            && self.own_words < ADDED_WORDS
            && (self.own_words >= OWN_WORDS || self.new_words >= NEW_WORDS)
    }
}

type Set<T> = HashSet<T, BuildHasherDefault<MixHasher>>;

/// The relation of a verified pair: `removed` is the document that would go, `kept` the
/// one it would go for; both their token words in text order
/// ([`simhash_core::token_word`]). [`Relation::Same`] when either has none.
pub fn relation(removed: &[u32], kept: &[u32]) -> Relation {
    Prepared::new(removed.to_vec()).relation(kept)
}

/// A text that would be removed, read once for the [`relation`]s of all the texts it is
/// compared with (the dedup walk compares a record with every kept candidate until one
/// acts): its tokens and their windows, sorted.
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    tokens: Vec<u32>,
    /// Each distinct window's number, by its hash, and the number of the window at each
    /// position.
    ids: WindowIds,
    at: Vec<u32>,
    /// Each distinct window's hash, by number.
    hashes: Vec<u64>,
    /// The positions of the stock words read as such ([`stock_at`]), sorted: the pieces of
    /// its runs are found without looking at every token again for each kept text.
    stock: Vec<u32>,
}

impl Prepared {
    /// `tokens` ([`simhash_core::token_word`]s in text order) read for comparisons.
    pub fn new(tokens: Vec<u32>) -> Prepared {
        let tokens = match without_versions(&tokens) {
            std::borrow::Cow::Owned(fewer) => fewer,
            std::borrow::Cow::Borrowed(_) => tokens,
        };
        let windows = tokens.len().saturating_sub(WINDOW - 1).max(1);
        let mut ids = WindowIds::with_capacity(windows);
        let (mut at, mut hashes) = (Vec::with_capacity(windows), Vec::new());
        for_each_window_hash(&tokens, |h| {
            let id = ids.number(h);
            if id as usize == hashes.len() {
                hashes.push(h);
            }
            at.push(id);
        });
        let stock = (0..tokens.len()).filter(|&p| stock_at(&tokens, p)).map(|p| p as u32).collect();
        Prepared { tokens, ids, at, hashes, stock }
    }

    /// Whether this text, removed, has content of its own against every text whose windows
    /// `kept` holds (see [`KeptWindows`]): its runs of tokens in no window `kept` may hold
    /// hold [`ADDED_WORDS`] words, as [`Prepared::relation`] counts them, so its relation to
    /// each of those texts is [`Relation::Overlap`].
    #[cfg(test)]
    pub(crate) fn own_beyond(&self, kept: &KeptWindows) -> bool {
        !kept.has_empty() && self.own_beyond_by(|h| kept.may_hold(h)) >= ADDED_WORDS
    }

    /// Whether this text, removed, is known to be [`Relation::Overlap`] to every kept text
    /// whose windows `all` holds and whose ends `ends` holds: its runs of tokens in no kept
    /// window hold [`ADDED_WORDS`] words, or [`OWN_WORDS`] when no kept text may lie wholly
    /// within this one ([`KeptEnds::may_lie_within`]: below `ADDED_WORDS`, a sentence added
    /// to the whole of a kept text is a variant's, not content of its own).
    pub(crate) fn known_to_overlap(&self, all: &KeptWindows, ends: &KeptEnds) -> bool {
        if all.has_empty() {
            return false;
        }
        let words = self.own_beyond_by(|h| all.may_hold(h));
        words >= ADDED_WORDS
            || (words >= OWN_WORDS && !ends.may_lie_within(&self.hashes, |h| self.has_window(h)))
    }

    /// The words of this text's own content (in runs of [`CONTENT_RUN`] tokens or more,
    /// between stock words, as [`Prepared::relation`] counts them) in no window `held`
    /// may hold (false only for a window none of the texts has), counted up to
    /// [`ADDED_WORDS`].
    pub(super) fn own_beyond_by(&self, held: impl Fn(u64) -> bool) -> usize {
        if self.tokens.len() < WINDOW {
            return 0;
        }
        let held: Vec<bool> = self.hashes.iter().map(|&h| held(h)).collect();
        let mut shared = vec![false; self.tokens.len()];
        for (p, &id) in self.at.iter().enumerate() {
            if held[id as usize] {
                shared[p..p + WINDOW].fill(true);
            }
        }
        let mut own = 0;
        let content = unshared(&shared).flat_map(|run| self.pieces(run));
        for run in content.filter(|run| run.len() >= CONTENT_RUN) {
            own += self.tokens[run].iter().map(|&w| own_weight(w)).sum::<usize>();
            if own / 3 >= ADDED_WORDS {
                return ADDED_WORDS;
            }
        }
        own / 3
    }

    /// Whether `h` is the hash of one of this text's windows.
    pub(super) fn has_window(&self, h: u64) -> bool {
        self.ids.get(h).is_some()
    }

    /// The [`relation`] of this text, removed, to `kept`.
    pub fn relation(&self, kept: &[u32]) -> Relation {
        SCRATCH.with(|scratch| self.relation_with(kept, &mut scratch.borrow_mut(), None))
    }

    /// [`Prepared::relation`], and when it is [`Relation::Overlap`] for the words of this
    /// text's own runs, those runs (token positions, runs of [`CONTENT_RUN`] tokens or more
    /// in no window of `kept`, which hold [`OWN_WORDS`] words) into `runs`; otherwise
    /// `runs` is left empty. See [`Prepared::overlaps`].
    pub(super) fn relation_runs(&self, kept: &[u32], runs: &mut Vec<Range<usize>>) -> Relation {
        runs.clear();
        SCRATCH.with(|scratch| self.relation_with(kept, &mut scratch.borrow_mut(), Some(runs)))
    }

    /// Whether this text, removed, is [`Relation::Overlap`] to a kept text whose windows
    /// `filter` holds, from `runs` (its own runs against another text, from
    /// [`Prepared::relation_runs`]): the tokens of those runs in no window `filter` may
    /// hold make runs of [`CONTENT_RUN`] tokens or more with `words` words: [`ADDED_WORDS`],
    /// or [`OWN_WORDS`] when the kept text has a token alone (its first or last window is
    /// not one of this text's). Each such run lies within a run of tokens in no window of
    /// the kept text, so its words count in the relation as well; false when unsure.
    pub(super) fn overlaps(
        &self,
        runs: &[Range<usize>],
        filter: RecordFilter<'_>,
        words: usize,
    ) -> bool {
        let n = self.tokens.len();
        if n < WINDOW {
            return false;
        }
        let last = n - WINDOW;
        // Whether the window starting at `s` may be in the kept text.
        let held_at = |s: usize| s <= last && filter.may_hold(self.hashes[self.at[s] as usize]);
        let mut own = 0;
        for run in runs {
            let (start, end) = (run.start, run.end.min(n));
            // The last three windows' answers (bit 0: the one starting at `p`): a token is
            // in a window the kept text may hold when any of the three over it is.
            let mut recent = 0u8;
            for s in start.saturating_sub(WINDOW - 1)..start {
                recent = (recent << 1) | u8::from(held_at(s));
            }
            let (mut len, mut weight) = (0, 0);
            for p in start..end {
                recent = ((recent << 1) | u8::from(held_at(p))) & 0b111;
                if recent != 0 || self.stock_at(p) {
                    if len >= CONTENT_RUN {
                        own += weight;
                    }
                    (len, weight) = (0, 0);
                } else {
                    len += 1;
                    weight += own_weight(self.tokens[p]);
                    if len >= CONTENT_RUN && (own + weight) / 3 >= words {
                        return true;
                    }
                }
            }
            if len >= CONTENT_RUN {
                own += weight;
            }
        }
        own / 3 >= words
    }

    /// Whether the token at `p` is a stock word read as one ([`stock_at`]).
    #[inline]
    fn stock_at(&self, p: usize) -> bool {
        !self.stock.is_empty() && self.stock.binary_search(&(p as u32)).is_ok()
    }

    /// The pieces of `run` of its tokens between stock words ([`pieces`]).
    fn pieces(&self, run: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
        pieces(run, move |p| self.stock_at(p))
    }

    /// The hashes of its distinct windows.
    pub(super) fn window_hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// The tokens read (version markers dropped).
    pub(super) fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// The number of tokens read (version markers dropped).
    pub(super) fn len(&self) -> usize {
        self.tokens.len()
    }

    /// [`Prepared::relation_runs`] with its working memory (the runs only when asked for).
    fn relation_with(
        &self,
        kept: &[u32],
        scratch: &mut Scratch,
        mut runs: Option<&mut Vec<Range<usize>>>,
    ) -> Relation {
        let removed = &self.tokens[..];
        let kept = &*without_versions(kept);
        if removed.is_empty() || kept.is_empty() || removed == kept {
            return Relation::Same;
        }
        // What [`evidence`] reads, computed only as far as the answer needs: which of this
        // text's tokens the kept text's windows cover (looked up in this text's windows,
        // nothing built per pair), its runs in one pass (stopping at the first sign of own
        // content), the kept text's vocabulary only for new words, and its runs only to
        // tell the same text from a template.
        // The distinct windows of this text the kept one has, then the tokens they cover.
        let Scratch { hit, shared } = scratch;
        hit.clear();
        hit.resize(self.ids.len(), 0);
        // Whether every token of the kept text lies in one of these windows (it has nothing
        // alone): the windows come in order, so the tokens they cover so far are a prefix
        // unless one was missed.
        let mut covered = 0;
        self.for_each_kept_window(kept, |id, at| {
            hit[id as usize] = 1;
            if at <= covered {
                covered = at + WINDOW;
            }
        });
        let kept_alone = covered < kept.len();
        shared.clear();
        shared.resize(removed.len(), 0);
        if removed.len() < WINDOW {
            shared.fill(hit[0]);
        } else {
            // A token is shared when any of the (up to three) windows over it is.
            for (p, &id) in self.at.iter().enumerate() {
                let h = hit[id as usize];
                shared[p] |= h;
                shared[p + 1] |= h;
                shared[p + 2] |= h;
            }
        }
        let (mut own, mut filled, mut names, mut bare, mut words) = (0, 0, 0, 0, 0);
        // The most words in one run (a phrase that may replace one of the kept text's).
        let mut phrase = 0;
        let mut content: Vec<u32> = Vec::new();
        // Stock packaging words in the runs (the tokens between their pieces).
        let mut stock = 0;
        for run in unshared(shared) {
            let words_before = words;
            stock += run.len();
            for &w in &removed[run.clone()] {
                match w & 3 {
                    1 => names += 1,
                    3 => bare += 1,
                    _ => {
                        filled += own_weight(w);
                        words += usize::from(is_word(w));
                    }
                }
            }
            // Its content: the pieces of CONTENT_RUN tokens or more between stock words.
            for piece in self.pieces(run) {
                stock -= piece.len();
                if piece.len() < CONTENT_RUN {
                    continue;
                }
                if let Some(runs) = runs.as_deref_mut() {
                    runs.push(piece.clone());
                }
                for &w in &removed[piece] {
                    let weight = own_weight(w);
                    if weight > 0 {
                        own += weight;
                        content.push(w);
                    }
                }
            }
            if own / 3 >= ADDED_WORDS {
                return Relation::Overlap;
            }
            phrase = phrase.max(words - words_before);
        }
        // Own content, unless the kept text has nothing alone and it is a sentence added.
        if kept_alone && own / 3 >= OWN_WORDS {
            return Relation::Overlap;
        }
        if let Some(runs) = runs {
            runs.clear();
        }
        if kept_alone && content.len() >= NEW_WORDS && new_words(&mut content, kept) >= NEW_WORDS {
            return Relation::Overlap;
        }
        // Which of the kept text's tokens this text's windows cover.
        let kept_shared = || {
            let mut kept_shared = vec![false; kept.len()];
            self.for_each_kept_window(kept, |_, at| {
                kept_shared[at..(at + WINDOW).min(kept.len())].fill(true);
            });
            kept_shared
        };
        let mut covered = None;
        // A phrase of its own in place of one of the kept text's (only when a run holds
        // enough words to be one, and they are new: then the kept text's runs are read).
        if replaces(phrase, removed.len()) {
            let mine: Vec<Range<usize>> =
                unshared(shared).flat_map(|run| self.pieces(run)).collect();
            if replaces(most_unused_in_a_run(removed, &mine, kept), removed.len()) {
                let kept_covered = covered.insert(kept_shared());
                let theirs = stock_pieces(kept, unshared(kept_covered));
                if most_unused_in_a_run(kept, &theirs, removed) >= REPLACED_WORDS {
                    return Relation::Overlap;
                }
            }
        }
        if names > 0 || filled.div_ceil(3) > fill_allowed(removed.len(), !kept_alone && stock == 0)
        {
            return Relation::Template;
        }
        // The kept text's fill-ins: a name or a number filled in there makes a template, and
        // so do words there when this text has words alone past the 1% of its tokens a long
        // revision may change (a word swapped for another).
        let kept_shared = covered.unwrap_or_else(kept_shared);
        let kept_runs: Vec<Range<usize>> = unshared(&kept_shared).collect();
        let (mut kept_names, mut kept_bare, mut kept_words) = (0, 0, 0);
        for run in kept_runs.iter().filter(|r| r.len() < CONTENT_RUN) {
            for &w in &kept[run.clone()] {
                kept_names += usize::from(w & 3 == 1);
                kept_bare += usize::from(w & 3 == 3);
                kept_words += usize::from(is_word(w));
            }
        }
        let swapped = words > removed.len() / 100 && kept_words > 0;
        if kept_names > 0 || (bare > 0 && kept_bare > 0) || swapped {
            return Relation::Template;
        }
        // A stock sentence alone in the kept text (read only when nothing else decided).
        let kept_pieces = stock_pieces(kept, kept_runs.iter().cloned());
        if stock_words_added(kept, &kept_runs, &kept_pieces) >= KEPT_STOCK_WORDS {
            Relation::Template
        } else {
            Relation::Same
        }
    }

    /// Calls `f(id, at)` for each window of `kept` (at position `at`) that this text has,
    /// `id` the window's number here.
    fn for_each_kept_window(&self, kept: &[u32], mut f: impl FnMut(u32, usize)) {
        if kept.len() < WINDOW {
            if let Some(id) = self.ids.get(window_hash(kept)) {
                f(id, 0);
            }
        } else {
            for (at, w) in kept.windows(WINDOW).enumerate() {
                if let Some(id) = self.ids.get(window_hash(w)) {
                    f(id, at);
                }
            }
        }
    }
}

/// Whether a token word is a word (not a name with a number, a CJK character or a number).
fn is_word(w: u32) -> bool {
    matches!(w & 3, 0)
}

/// Whether a run with `words` words the other text never uses, in a text of `len` tokens,
/// is a phrase that may replace one of the other text's ([`REPLACED_WORDS`]).
fn replaces(words: usize, len: usize) -> bool {
    words >= REPLACED_WORDS && words * 100 > REPLACED_PERCENT * len
}

/// The most words (not names with a number, numbers or CJK characters) one of `runs` of
/// `tokens` has that `other` never uses.
fn most_unused_in_a_run(tokens: &[u32], runs: &[Range<usize>], other: &[u32]) -> usize {
    let in_runs = || runs.iter().flat_map(|run| &tokens[run.clone()]);
    let mut unused: Vec<u32> = in_runs().copied().filter(|&w| is_word(w)).collect();
    if unused.len() < REPLACED_WORDS {
        return 0;
    }
    new_words(&mut unused, other);
    let unused_in = |run: &Range<usize>| {
        tokens[run.clone()].iter().filter(|w| is_word(**w) && unused.binary_search(w).is_ok())
    };
    runs.iter().map(|run| unused_in(run).count()).max().unwrap_or(0)
}

/// A token's weight in own content, in thirds of a word: a word 3, a CJK character 1 (a
/// word of Chinese is one to three of them), a name with a number in it or a number 0
/// (fill-ins, not content).
fn own_weight(w: u32) -> usize {
    match w & 3 {
        0 => 3,
        2 => 1,
        _ => 0,
    }
}

/// The pieces of `run` (positions of a text's tokens) between the [stock packaging
/// words](super::STOCK_WORDS) in it (`stock(p)`: whether the token at `p` is one, read as
/// such by [`stock_at`]): a stock word is a fill-in, and it parts a run, so the other words
/// of a stock sentence ("this package contains the development files") make no run of
/// content of their own.
fn pieces(run: Range<usize>, stock: impl Fn(usize) -> bool) -> impl Iterator<Item = Range<usize>> {
    let end = run.end;
    let mut at = run.start;
    std::iter::from_fn(move || {
        while at < end {
            let start = at;
            while at < end && !stock(at) {
                at += 1;
            }
            let piece = start..at;
            at += 1;
            if !piece.is_empty() {
                return Some(piece);
            }
        }
        None
    })
}

/// The [`pieces`] of `runs` of `tokens` between their stock words ([`stock_at`]).
fn stock_pieces(tokens: &[u32], runs: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    runs.flat_map(|run| pieces(run, |p| stock_at(tokens, p))).collect()
}

/// Words a text of `len` tokens may have alone and still be the [`Relation::Same`]
/// document: [`FILL_WORDS`] or 1% of its tokens, or [`EDITION_PERCENT`]% in a text of
/// [`EDITION_TOKENS`] or more when they are `added` (added to the whole of the other text,
/// none a stock packaging word).
fn fill_allowed(len: usize, added: bool) -> usize {
    let percent = if added && len >= EDITION_TOKENS { EDITION_PERCENT } else { 1 };
    FILL_WORDS.max(len * percent / 100)
}

/// Tokens in all of `runs`.
fn run_tokens(runs: &[Range<usize>]) -> usize {
    runs.iter().map(ExactSizeIterator::len).sum()
}

/// The stock words a kept text adds ([`Evidence::kept_stock_words`]): those of its `runs`
/// (tokens in no window of the removed text; `pieces`, the runs between their stock words),
/// when it has less own content there than would make it overlap the removed text (a
/// stock sentence added, not a larger document the removed text is a part of); else 0.
fn stock_words_added(kept: &[u32], runs: &[Range<usize>], pieces: &[Range<usize>]) -> usize {
    let own = pieces.iter().filter(|piece| piece.len() >= CONTENT_RUN);
    let own: usize = own.flat_map(|piece| &kept[piece.clone()]).map(|&w| own_weight(w)).sum();
    if own / 3 < OWN_WORDS { run_tokens(runs) - run_tokens(pieces) } else { 0 }
}

/// Distinct words of `content` (usually a few dozen tokens) that `kept` never uses, a CJK
/// character a third of a word; `content` is left sorted, distinct and without them. One
/// pass over `kept`, its tokens first tested against the [`TopBytes`] of `content`.
fn new_words(content: &mut Vec<u32>, kept: &[u32]) -> usize {
    content.sort_unstable();
    content.dedup();
    let filter = TopBytes::of(content.iter());
    let mut used = vec![false; content.len()];
    for &w in kept {
        if !filter.may_hold(w) {
            continue;
        }
        if let Ok(i) = content.binary_search(&w) {
            used[i] = true;
        }
    }
    let mut i = 0;
    content.retain(|_| {
        i += 1;
        !used[i - 1]
    });
    content.iter().map(|&w| if w & 3 == 2 { 1 } else { 3 }).sum::<usize>() / 3
}

/// The working memory of [`Prepared::relation`], reused: whether each of the removed
/// text's windows is in the kept text, and whether each of its tokens is (1) or not (0).
#[derive(Default)]
struct Scratch {
    hit: Vec<u8>,
    shared: Vec<u8>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The maximal runs of positions not `shared` (`false`, or 0 in the quick reading's
/// bytes), in order.
fn unshared<T: Copy + Default + PartialEq>(
    shared: &[T],
) -> impl Iterator<Item = Range<usize>> + '_ {
    let no = T::default();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < shared.len() && shared[i] != no {
            i += 1;
        }
        let start = i;
        while i < shared.len() && shared[i] == no {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// The relation of a pair with no removed side (`pairs`, `cluster`): the lesser of its
/// two directions ([`Relation::Same`] < [`Relation::Template`] < [`Relation::Overlap`]), so
/// that a pair is acted on when either document could go for the other (a truncated copy,
/// a copy with a passage added), and is [`Relation::Overlap`] only when both have content
/// of their own.
///
/// ```
/// use simhash_core::token_word;
/// use simhash_index::lsh::{Relation, pair_relation, relation};
///
/// let words = |t: &str| t.split_whitespace().map(token_word).collect::<Vec<u32>>();
/// let short = words("the library moves shared code between the projects to avoid duplication");
/// let long = words("the library moves shared code between the projects to avoid duplication \
///     and it implements ciphers, an authentication algorithm, a data link layer for phones, \
///     a parser of tags and lengths and the routines that encode and decode short messages");
/// assert_eq!(relation(&long, &short), Relation::Overlap);
/// assert_eq!(pair_relation(&long, &short), Relation::Same);
/// ```
pub fn pair_relation(a: &[u32], b: &[u32]) -> Relation {
    match relation(b, a) {
        Relation::Same => Relation::Same,
        other => other.min(relation(a, b)),
    }
}

/// [`pair_relation`] of documents `a` and `b` of `store`, from their tokens.
pub fn pair_relation_in<S: SketchStore + ?Sized>(
    store: &S,
    a: usize,
    b: usize,
) -> Result<Relation, EngineError> {
    let (x, y) = tokens_of(store, a, b)?;
    Ok(pair_relation(&x, &y))
}

/// The tokens of documents `a` and `b` of `store`.
fn tokens_of<S: SketchStore + ?Sized>(
    store: &S,
    a: usize,
    b: usize,
) -> Result<(Vec<u32>, Vec<u32>), EngineError> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    store.read_tokens(a, &mut x)?;
    store.read_tokens(b, &mut y)?;
    Ok((x, y))
}

/// The [`relation`] of documents `removed` and `kept` of `store`, from their tokens
/// ([`SketchStore::read_tokens`]).
pub fn relation_in<S: SketchStore + ?Sized>(
    store: &S,
    removed: usize,
    kept: usize,
) -> Result<Relation, EngineError> {
    let (a, b) = tokens_of(store, removed, kept)?;
    Ok(relation(&a, &b))
}

/// [`relation`] with what it was read from.
pub fn evidence(removed: &[u32], kept: &[u32]) -> Evidence {
    let (fewer_removed, fewer_kept) = (without_versions(removed), without_versions(kept));
    let mut evidence = evidence_of(&fewer_removed, &fewer_kept);
    // The runs as positions of the texts given, version words and all.
    for (runs, tokens, fewer) in [
        (&mut evidence.removed_runs, removed, &fewer_removed),
        (&mut evidence.kept_runs, kept, &fewer_kept),
    ] {
        if fewer.len() == tokens.len() {
            continue;
        }
        let versions = version_tokens();
        let at: Vec<usize> = (0..tokens.len()).filter(|&i| !versions.contains(tokens[i])).collect();
        for run in runs.iter_mut() {
            *run = at[run.start]..at[run.end - 1] + 1;
        }
    }
    evidence
}

/// [`evidence`] of texts without version words.
fn evidence_of(removed: &[u32], kept: &[u32]) -> Evidence {
    if removed.is_empty() || kept.is_empty() || removed == kept {
        return Evidence {
            relation: Relation::Same,
            removed_runs: Vec::new(),
            kept_runs: Vec::new(),
            own_words: 0,
            new_words: 0,
            filled_words: 0,
            numbers: 0,
            swapped: 0,
            replaced: 0,
            stock_words: 0,
            kept_stock_words: 0,
            edition: false,
        };
    }
    let removed_runs = runs(removed, &windows(kept));
    let kept_runs = runs(kept, &windows(removed));
    // The token kinds of `simhash_core::token_word`.
    let named = |w: u32| w & 3 == 1;
    let number = |w: u32| w & 3 == 3;
    // A CJK character is a third of a word (a word of Chinese is one to three of them).
    let weight = |w: u32| if w & 3 == 2 { 1 } else { 3 };
    let kept_words: Set<u32> = kept.iter().copied().collect();
    let (mut own_words, mut filled_words, mut numbers, mut bare, mut words) = (0, 0, 0, 0, 0);
    let mut new: Set<u32> = Set::default();
    for run in &removed_runs {
        for &w in &removed[run.clone()] {
            if named(w) {
                numbers += 1;
                continue;
            }
            if number(w) {
                // A number alone is no content of its own; it is filled in only where the
                // kept text has another number (not where it spells it out).
                bare += 1;
                continue;
            }
            filled_words += weight(w);
            words += usize::from(is_word(w));
        }
    }
    // Content: the pieces of the runs between stock words, of CONTENT_RUN tokens or more.
    let removed_pieces = stock_pieces(removed, removed_runs.iter().cloned());
    // The pieces are the runs less their stock words.
    let stock_words = run_tokens(&removed_runs) - run_tokens(&removed_pieces);
    for piece in removed_pieces.iter().filter(|piece| piece.len() >= CONTENT_RUN) {
        for &w in &removed[piece.clone()] {
            if !named(w) && !number(w) {
                own_words += weight(w);
                if !kept_words.contains(&w) {
                    new.insert(w);
                }
            }
        }
    }
    // The kept text's numbers count where they are fill-ins (its own content may hold any).
    let fills = kept_runs.iter().filter(|r| r.len() < CONTENT_RUN).flat_map(|r| &kept[r.clone()]);
    let (kept_named, kept_bare, kept_words) = fills.fold((0, 0, 0), |(n, b, k), &w| {
        (n + usize::from(named(w)), b + usize::from(number(w)), k + usize::from(is_word(w)))
    });
    numbers += kept_named;
    if bare > 0 && kept_bare > 0 {
        numbers += bare + kept_bare;
    }
    let swapped = if kept_words > 0 && words > removed.len() / 100 { words } else { 0 };
    let kept_pieces = stock_pieces(kept, kept_runs.iter().cloned());
    let kept_stock_words = stock_words_added(kept, &kept_runs, &kept_pieces);
    let mine = most_unused_in_a_run(removed, &removed_pieces, kept);
    let theirs = most_unused_in_a_run(kept, &kept_pieces, removed);
    let replaced = if replaces(mine, removed.len()) && theirs >= REPLACED_WORDS { mine } else { 0 };
    let new_words = new.iter().map(|&w| weight(w)).sum::<usize>() / 3;
    let (own_words, filled_words) = (own_words / 3, filled_words.div_ceil(3));
    // A sentence added to the whole of the kept text, under ADDED_WORDS words, is a
    // variant's (there is then no replaced phrase: the kept text has no run).
    let added = kept_runs.is_empty() && own_words < ADDED_WORDS;
    let relation = if replaced > 0
        || own_words >= ADDED_WORDS
        || (!added && (own_words >= OWN_WORDS || new_words >= NEW_WORDS))
    {
        Relation::Overlap
    } else if numbers == 0
        && swapped == 0
        && kept_stock_words < KEPT_STOCK_WORDS
        && filled_words <= fill_allowed(removed.len(), kept_runs.is_empty() && stock_words == 0)
    {
        Relation::Same
    } else {
        Relation::Template
    };
    Evidence {
        relation,
        removed_runs,
        kept_runs,
        own_words,
        new_words,
        filled_words,
        numbers,
        swapped,
        replaced,
        stock_words,
        kept_stock_words,
        edition: relation == Relation::Same && filled_words > fill_allowed(removed.len(), false),
    }
}

/// The windows of `tokens` (the whole of a text shorter than a window), as hashes.
fn windows(tokens: &[u32]) -> Set<u64> {
    if tokens.len() < WINDOW {
        return std::iter::once(window_hash(tokens)).collect();
    }
    let mut set = Set::with_capacity_and_hasher(tokens.len(), BuildHasherDefault::default());
    set.extend(tokens.windows(WINDOW).map(window_hash));
    set
}

/// Whether each token of `tokens` lies in a window of the other text (whose windows are
/// `other`).
fn shared_tokens(tokens: &[u32], other: &Set<u64>) -> Vec<bool> {
    let n = tokens.len();
    let mut shared = vec![false; n];
    if n < WINDOW {
        if other.contains(&window_hash(tokens)) {
            shared.fill(true);
        }
    } else {
        for (i, w) in tokens.windows(WINDOW).enumerate() {
            if other.contains(&window_hash(w)) {
                shared[i..i + WINDOW].fill(true);
            }
        }
    }
    shared
}

/// The runs of `tokens` in no window of `other` (whose windows are `other`).
fn runs(tokens: &[u32], other: &Set<u64>) -> Vec<Range<usize>> {
    unshared(&shared_tokens(tokens, other)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use simhash_core::Fingerprinter;

    fn words(text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        Fingerprinter::new().for_each_shingle_and_token(text, |_| {}, |t| out.push(t));
        out
    }

    fn rel(removed: &str, kept: &str) -> Relation {
        relation(&words(removed), &words(kept))
    }

    const BOILER: &str = "libosmocore is a library with various utility functions that were \
        originally developed as part of the OpenBSC project, but which are of a more generic \
        nature and thus useful to (at least) other programs that are developed in the sphere \
        of Free Software and Open Source mobile communications. There is no clear scope of \
        it. We simply move all shared code between the various Osmocom projects to this \
        library to avoid code duplication.";

    /// One command's page in two release tracks (`beta` inserted, `(BETA)` marks) is the
    /// same document; the evidence's runs stay positions of the texts as given.
    #[test]
    fn release_tracks_of_one_page_are_the_same() {
        let ga = "gcloud compute instances create creates a virtual machine instance in the \
                  zone you choose with the machine type and the image you name, then starts it";
        let beta = "gcloud beta compute instances create (BETA) creates a virtual machine \
                    instance in the zone you choose with the machine type and the image you \
                    name, then starts it";
        assert_eq!(rel(ga, beta), Relation::Same);
        assert_eq!(rel(beta, ga), Relation::Same);
        let other = ga.replace("gcloud compute", "gcloud beta compute").replace(
            "then starts it",
            "and then attaches the persistent disks listed in the flags and waits for them",
        );
        let e = evidence(&words(&other), &words(beta));
        let tokens: Vec<&str> = other.split_whitespace().collect();
        let alone: Vec<&str> =
            e.removed_runs.iter().flat_map(|r| &tokens[r.clone()]).copied().collect();
        assert!(alone.contains(&"persistent") && !alone.contains(&"gcloud"), "{alone:?}");
        assert_eq!(e.relation, relation(&words(&other), &words(beta)));
    }

    /// A notice added to a long page (its beta track) is an edition's: the same document.
    /// The same sentence on a short description, or a stock packaging sentence on the long
    /// page, make a template; with words changed too, the notice is content of its own.
    #[test]
    fn a_notice_added_to_a_long_page_is_an_edition() {
        let flag = |i: usize| {
            format!(
                "--flag-{i} sets option number {i} of the command, which the service reads \
                 when the request arrives and keeps until the resource goes away."
            )
        };
        let page = |flags: usize| (0..flags).map(flag).collect::<Vec<_>>().join("\n");
        let notice = "This command is currently in beta and might change without notice.";
        // About 23 tokens a flag: 14 flags make 322 tokens, 5 make 115.
        let (long, short) = (page(14), page(5));
        assert!(words(&long).len() >= EDITION_TOKENS && words(&short).len() < EDITION_TOKENS);
        let beta = format!("{notice}\n{long}");
        let e = evidence(&words(&beta), &words(&long));
        assert!(e.filled_words > FILL_WORDS.max(words(&beta).len() / 100), "{e:?}");
        assert!(e.filled_words * 100 <= EDITION_PERCENT * words(&beta).len(), "{e:?}");
        assert!(e.edition, "{e:?}");
        assert!(!evidence(&words(&long), &words(&long)).edition);
        assert_eq!(rel(&beta, &long), Relation::Same);
        // Not on a short text, where the same words are a variant's phrase.
        assert_eq!(rel(&format!("{notice}\n{short}"), &short), Relation::Template);
        // Not when the kept text has words alone too (words changed, not only added): the
        // notice's new words are then content of its own.
        let changed = long.replacen("keeps until", "holds until", 1);
        assert_eq!(rel(&beta, &changed), Relation::Overlap);
        // Not a stock packaging sentence, at any length.
        let stock = "This package contains the documentation and the development files.";
        assert_eq!(rel(&format!("{stock}\n{long}"), &long), Relation::Template);
        for (a, b) in [(&beta, &long), (&beta, &changed)] {
            assert_eq!(relation(&words(a), &words(b)), evidence(&words(a), &words(b)).relation);
        }
    }

    #[test]
    fn identical_texts_under_two_ids_are_the_same() {
        assert_eq!(rel(BOILER, BOILER), Relation::Same);
        assert_eq!(rel("", BOILER), Relation::Same);
    }

    #[test]
    fn fill_ins_repeated_are_template_siblings() {
        let gtk = "Rust bindings for the GTK 3 library - feature v3_22. This metapackage \
            enables feature v3_22 for the Rust gtk crate, by pulling in any additional \
            dependencies needed by that feature.";
        let gdk = "Rust bindings for the GDK 3 library - feature v3_16. This metapackage \
            enables feature v3_16 for the Rust gdk crate, by pulling in any additional \
            dependencies needed by that feature.";
        assert_eq!(rel(gtk, gdk), Relation::Template);
        let u8 = "Checked integer addition. Computes self + rhs, returning None if overflow \
            occurred. assert_eq!((u8::MAX - 2).checked_add(1), Some(u8::MAX - 1)); \
            assert_eq!((u8::MAX - 2).checked_add(3), None);";
        let i128 = "Checked integer addition. Computes self + rhs, returning None if overflow \
            occurred. assert_eq!((i128::MAX - 2).checked_add(1), Some(i128::MAX - 1)); \
            assert_eq!((i128::MAX - 2).checked_add(3), None);";
        assert_eq!(rel(u8, i128), Relation::Template);
    }

    /// libosmogsm's description: the boilerplate, then a paragraph of its own.
    fn gsm() -> String {
        format!(
            "{BOILER}\n\nThe GSM library implements the A5/1 and A5/2 ciphers, the COMP128v1 \
             authentication algorithm, the LAPDm data link layer, a TLV parser and the \
             routines to encode and decode SMS messages."
        )
    }

    #[test]
    fn a_paragraph_of_own_content_overlaps() {
        let gsm = gsm();
        let doc = format!(
            "{BOILER}\n\nThis package contains documentation for the codec library, \
             including the API reference generated from the source files."
        );
        assert_eq!(rel(&gsm, &doc), Relation::Overlap);
        assert_eq!(rel(&doc, &gsm), Relation::Overlap, "both have content of their own");
        // Only the kept one has content of its own: removing the other loses nothing.
        assert_eq!(rel(BOILER, &gsm), Relation::Same);
    }

    /// Sibling packages of one source share its description and differ in the stock
    /// sentence of what each package holds: template siblings, in any of the languages of
    /// the stock words; a sentence of what the package does stays content of its own.
    #[test]
    fn a_stock_packaging_sentence_is_a_fill_in() {
        let stock = [
            "This package contains the development headers.",
            "This package provides the debug symbols.",
            "Questo pacchetto contiene gli header di sviluppo principali.",
            "Ce paquet fournit la documentation de développement.",
            "Dieses Paket enthält die Dokumentation für Entwickler.",
        ];
        for (i, a) in stock.iter().enumerate() {
            let removed = format!("{BOILER}\n\n{a}");
            assert_eq!(rel(&removed, BOILER), Relation::Template, "{a}");
            for b in &stock[i + 1..] {
                let kept = format!("{BOILER}\n\n{b}");
                assert_eq!(rel(&removed, &kept), Relation::Template, "{a} | {b}");
            }
            // Its words are filled in, none of them content of its own (without the stock
            // words they would be: a run of 6 to 8 words, all new).
            let e = evidence(&words(&removed), &words(BOILER));
            assert_eq!((e.own_words, e.new_words, e.replaced), (0, 0, 0), "{a}: {e:?}");
            assert!(e.filled_words >= 5, "{a}: {e:?}");
        }
        // A stock word alone, with no other near it, is a word of the text: here the sixth
        // new word of a sentence of its own (against a sibling with a sentence of its own: a
        // sentence added to the whole of the kept text is a variant's, see `ADDED_WORDS`).
        let sibling = format!("{BOILER}\n\nThis package contains the development headers.");
        let lone = format!("{BOILER}\n\nElfedit rewrites one ELF header field.");
        let e = evidence(&words(&lone), &words(&sibling));
        assert_eq!((e.relation, e.new_words), (Relation::Overlap, NEW_WORDS), "{e:?}");
        assert_eq!(rel(&lone, &sibling), Relation::Overlap);
        // What the package does is content, stock words or not.
        let own = format!(
            "{BOILER}\n\nThis package contains a tool to convert Keynote presentations \
             into plain text, raw dumps and XHTML pages."
        );
        assert_eq!(rel(&own, &sibling), Relation::Overlap);
        let own = format!(
            "{BOILER}\n\nThis package provides a library to interact with the vde_switch \
             management console using pre-made unattended scripts."
        );
        assert_eq!(rel(&own, &sibling), Relation::Overlap);
    }

    /// A text that is the whole of the kept text with a sentence added (the kept text has
    /// nothing alone): under `ADDED_WORDS` words of its own it is a variant, a template
    /// sibling (a revision when the sentence is under 1% of a long text); a paragraph of
    /// its own, or the same sentence against a kept text with something of its own,
    /// overlaps.
    #[test]
    fn a_sentence_added_to_the_whole_kept_text_is_a_variant() {
        for sentence in [
            "This package is for working without an X server.",
            "It contains files to run Akonadi based tests and benchmarks.",
            // What a package does, said in a sentence, reads the same: the cost of the rule
            // (judged pairs in docs/accuracy.md).
            "This package contains a tool to convert Keynote presentations into plain text, \
             raw dumps and XHTML pages.",
        ] {
            let variant = format!("{BOILER}\n\n{sentence}");
            let e = evidence(&words(&variant), &words(BOILER));
            assert!(e.sentence_added(), "{sentence}: {e:?}");
            assert_eq!(e.relation, Relation::Template, "{sentence}: {e:?}");
            assert_eq!(rel(&variant, BOILER), Relation::Template, "{sentence}");
            // Against a kept text with a word of its own, the sentence is content.
            let other = format!("{BOILER}\n\nNothing else.");
            assert_eq!(rel(&variant, &other), Relation::Overlap, "{sentence}");
            let e = evidence(&words(&variant), &words(&other));
            assert!(e.relation == Relation::Overlap && !e.sentence_added(), "{sentence}: {e:?}");
        }
        // A paragraph of its own overlaps whatever the kept text has.
        let e = evidence(&words(&gsm()), &words(BOILER));
        assert!(e.kept_runs.is_empty() && e.own_words >= ADDED_WORDS && !e.sentence_added());
        assert_eq!((e.relation, rel(&gsm(), BOILER)), (Relation::Overlap, Relation::Overlap));
        // In a long text, a sentence under 1% of it is a revision: the same document.
        let long: Vec<String> = (0..1200u32)
            .map(|i| (0..3).map(|d| char::from(b'a' + (i / 26u32.pow(d) % 26) as u8)).collect())
            .collect();
        let long = long.join(" ");
        let revised = format!("{long} This package is for working without an X server.");
        let e = evidence(&words(&revised), &words(&long));
        assert_eq!(e.relation, Relation::Same, "{e:?}");
        assert_eq!(rel(&revised, &long), Relation::Same);
    }

    /// A library's description against its `-dev` package's, which adds the stock sentence:
    /// the removed text has nothing alone, but the kept one's stock sentence says it is
    /// another package: template siblings, in either direction. A stock word alone in the
    /// kept text, or a sentence of its own there, leaves the removed text the same.
    #[test]
    fn a_stock_sentence_on_the_kept_side_makes_siblings() {
        for sentence in [
            "This package contains the development headers.",
            "Questo pacchetto contiene la documentazione.",
            "Dieses Paket enthält die Übersetzungen.",
            "This package is a dependency package which depends on the default version.",
        ] {
            let dev = format!("{BOILER}\n\n{sentence}");
            let e = evidence(&words(BOILER), &words(&dev));
            assert_eq!(e.relation, Relation::Template, "{sentence}: {e:?}");
            assert!(e.kept_stock_words >= KEPT_STOCK_WORDS, "{sentence}: {e:?}");
            assert_eq!(rel(BOILER, &dev), Relation::Template, "{sentence}");
            assert_eq!(rel(&dev, BOILER), Relation::Template, "{sentence}");
        }
        // One stock word alone in the kept text is a word of its text.
        let lone = format!("{BOILER}\n\nElfedit rewrites one ELF header field.");
        let e = evidence(&words(BOILER), &words(&lone));
        assert_eq!((e.relation, e.kept_stock_words), (Relation::Same, 0), "{e:?}");
        assert_eq!(rel(BOILER, &lone), Relation::Same);
        // A revision that adds a section of its own: the base is the same text.
        let revised = format!("{BOILER}\n\nThe 2.0 library checks every length field first.");
        assert_eq!(rel(BOILER, &revised), Relation::Same);
        // The kept text has a stock sentence and a paragraph of its own: the removed one is
        // a part of a larger document, the same text.
        let larger = format!(
            "{BOILER}\n\nThis package contains the development headers. Since version two \
             the library checks every length field before it copies a message, and callers \
             must now free the buffers it returns."
        );
        let e = evidence(&words(BOILER), &words(&larger));
        assert_eq!((e.relation, e.kept_stock_words), (Relation::Same, 0), "{e:?}");
        assert_eq!(rel(BOILER, &larger), Relation::Same);
        // Both have the stock sentence: no stock word alone, the same text.
        let dev = format!("{BOILER}\n\nThis package contains the development headers.");
        let edited = dev.replacen("various ", "", 1);
        let e = evidence(&words(&edited), &words(&dev));
        assert_eq!((e.relation, e.kept_stock_words), (Relation::Same, 0), "{e:?}");
    }

    #[test]
    fn a_revision_that_adds_a_section_overlaps_and_its_base_is_the_same() {
        let base = BOILER.repeat(3);
        let revised = format!(
            "{base}\n\nSecurity: since version two the library checks every length field \
             before it copies a message, and callers must now free the buffers it returns."
        );
        assert_eq!(rel(&revised, &base), Relation::Overlap);
        assert_eq!(rel(&base, &revised), Relation::Same);
        // A word changed here and there is still the same text.
        let edited = base.replacen("various", "several", 1).replacen("clear", "fixed", 1);
        assert_eq!(rel(&edited, &base), Relation::Same);
    }

    #[test]
    fn a_number_written_out_is_the_same_text() {
        let wire = "The city council voted on Tuesday to expand the downtown bike lane network \
            by twelve miles, citing a sharp rise in cycling commuters since the spring.";
        let blog = wire.replace("twelve", "12");
        assert_eq!(rel(&blog, wire), Relation::Same);
        assert_eq!(rel(wire, &blog), Relation::Same);
    }

    #[test]
    fn a_licence_whose_one_clause_differs_overlaps() {
        let bsd2 = "Redistribution and use in source and binary forms, with or without \
            modification, are permitted provided that the following conditions are met: \
            1. Redistributions of source code must retain the above copyright notice, this \
            list of conditions and the following disclaimer. 2. Redistributions in binary \
            form must reproduce the above copyright notice, this list of conditions and the \
            following disclaimer in the documentation and/or other materials provided with \
            the distribution. THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND \
            CONTRIBUTORS AS IS AND ANY EXPRESS OR IMPLIED WARRANTIES ARE DISCLAIMED.";
        let bsd3 = bsd2.replace(
            "THIS SOFTWARE",
            "3. Neither the name of the copyright holder nor the names of its contributors \
             may be used to endorse or promote products derived from this software without \
             specific prior written permission. THIS SOFTWARE",
        );
        assert_eq!(rel(&bsd3, bsd2), Relation::Overlap);
        assert_eq!(rel(bsd2, &bsd3), Relation::Same);
        // MIT against MIT-0, the whole of which it holds: its condition is a clause of its
        // own, not a variant's sentence (`ADDED_WORDS`).
        let mit0 = "Permission is hereby granted, free of charge, to any person obtaining a \
            copy of this software and associated documentation files (the Software), to deal \
            in the Software without restriction, including without limitation the rights to \
            use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of \
            the Software, and to permit persons to whom the Software is furnished to do so.";
        let mit = mit0.replace(
            "to do so.",
            "to do so, subject to the following conditions: The above copyright notice and \
             this permission notice shall be included in all copies or substantial portions \
             of the Software.",
        );
        let e = evidence(&words(&mit), &words(mit0));
        assert!(e.kept_runs.is_empty() && e.own_words >= ADDED_WORDS, "{e:?}");
        assert_eq!((e.relation, rel(&mit, mit0)), (Relation::Overlap, Relation::Overlap));
    }

    #[test]
    fn cjk_text_with_variant_characters_is_the_same() {
        let a = "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。";
        let b = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
        assert_eq!(rel(b, a), Relation::Same);
        assert_eq!(rel(a, b), Relation::Same);
    }

    #[test]
    fn the_quick_relation_is_the_evidence_s() {
        // Texts from a small vocabulary of words, names with numbers, numbers and CJK
        // characters, edited in runs: every path of the quick reading against the whole one.
        // Then with rarer words too, and longer cuts, so that a phrase replaces another.
        let common =
            ["a", "b", "c", "d", "e", "f", "g", "h", "u8", "v3", "12", "7", "頭", "头", "package"];
        let rare =
            ["i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "w", "x", "provides"];
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: usize| rng.index(n);
        let (mut replaced, mut by_kept_stock, mut editions) = (0, 0, 0);
        let both = [&common[..], &rare[..]].concat();
        // Vocabulary, tokens a cut takes out (fewer than this), the shortest text and the
        // span of lengths: the third, long texts with words only added (an edition's
        // allowance).
        for (words, cuts, shortest, span) in
            [(&common[..], 3, 1, 60), (&both[..], 9, 1, 60), (&both[..], 1, 250, 300)]
        {
            let vocab: Vec<u32> = words.iter().map(|t| simhash_core::token_word(t)).collect();
            for case in 0..3000 {
                let len = shortest + next(span);
                let base: Vec<u32> = (0..len).map(|_| vocab[next(vocab.len())]).collect();
                let mut other = base.clone();
                for _ in 0..next(4) {
                    let at = next(other.len() + 1);
                    let run: Vec<u32> = (0..=next(12)).map(|_| vocab[next(vocab.len())]).collect();
                    let cut = next(cuts).min(other.len() - at);
                    other.splice(at..at + cut, run);
                }
                for (a, b) in [(&other, &base), (&base, &other)] {
                    let e = evidence(a, b);
                    assert_eq!(relation(a, b), e.relation, "case {case}");
                    let by_phrase = e.own_words < OWN_WORDS && e.new_words < NEW_WORDS;
                    replaced += usize::from(by_phrase && e.replaced > 0);
                    // Template only for the kept text's stock sentence.
                    let alone = e.numbers == 0 && e.swapped == 0;
                    let added = e.kept_runs.is_empty() && e.stock_words == 0;
                    let few = e.filled_words <= fill_allowed(a.len(), added);
                    let sibling = e.relation == Relation::Template && alone && few;
                    by_kept_stock += usize::from(sibling && e.kept_stock_words > 0);
                    let past_one = e.filled_words > FILL_WORDS.max(a.len() / 100);
                    editions += usize::from(e.relation == Relation::Same && past_one);
                }
            }
        }
        assert!(replaced >= 20, "only {replaced} pairs overlap by a phrase replaced");
        assert!(
            by_kept_stock >= 20,
            "only {by_kept_stock} pairs template by a kept stock sentence"
        );
        assert!(editions >= 20, "only {editions} pairs the same past 1% by words added");
    }

    /// A text with content of its own that no kept text has is known to overlap each of
    /// them; one whose own content a kept text has, or any text when a kept one has no
    /// tokens, is not.
    #[test]
    fn own_content_beyond_every_kept_text() {
        let gsm = gsm();
        let doc = format!("{BOILER}\n\nThis package contains documentation for the codec.");
        let mut kept = KeptWindows::new(100);
        kept.insert_text(&words(&doc));
        kept.insert_text(&words(BOILER));
        assert!(Prepared::new(words(&gsm)).own_beyond(&kept));
        assert!(!Prepared::new(words(&doc)).own_beyond(&kept), "a kept text's own content");
        kept.insert_text(&words("encode and decode SMS messages"));
        assert!(Prepared::new(words(&gsm)).own_beyond(&kept), "a part of it still has enough");
        kept.insert_text(&words("LAPDm data link layer, a TLV parser and the routines"));
        assert!(!Prepared::new(words(&gsm)).own_beyond(&kept), "too little left");
        let mut with_empty = KeptWindows::new(100);
        with_empty.insert_text(&words(BOILER));
        assert!(Prepared::new(words(&gsm)).own_beyond(&with_empty));
        with_empty.insert_text(&words("beta"));
        assert!(!Prepared::new(words(&gsm)).own_beyond(&with_empty), "a kept text without tokens");
    }

    /// Whenever a text is known to have content beyond a set of kept texts, its relation to
    /// each of them is `Overlap` (random texts of a small vocabulary, with passages copied
    /// between them, against filters of every size down to one that holds too much).
    #[test]
    fn own_content_beyond_is_never_wrong() {
        let vocab: Vec<u32> = (0..40u8)
            .map(|i| {
                simhash_core::token_word(&format!(
                    "w{}{}",
                    char::from(b'a' + i % 20),
                    "q".repeat(usize::from(i / 20))
                ))
            })
            .chain(["u8", "12", "頭", "paket"].map(simhash_core::token_word))
            .collect();
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: usize| rng.index(n);
        let (mut known, mut known_to_overlap, mut cases) = (0, 0, 0);
        for _ in 0..400 {
            let texts: Vec<Vec<u32>> = (0..6)
                .map(|_| (0..20 + next(60)).map(|_| vocab[next(vocab.len())]).collect())
                .collect();
            // A kept text with a passage of another, words changed, and up to two runs of
            // its own (0 to 24 tokens).
            let mut mine = texts[1].clone();
            let other = &texts[2 + next(4)];
            let at = next(other.len());
            let to = next(mine.len() + 1);
            mine.splice(to..to, other[at..at + next(other.len() - at)].iter().copied());
            for _ in 0..next(4) {
                let at = next(mine.len());
                mine[at] = vocab[next(vocab.len())];
            }
            for _ in 0..next(3) {
                let (to, own) = (next(mine.len() + 1), next(33).min(texts[0].len()));
                mine.splice(to..to, texts[0][..own].iter().copied());
            }
            let mut kept_texts = texts[1..].to_vec();
            if next(3) == 0 {
                let a = next(mine.len());
                let b = a + 1 + next(mine.len() - a);
                kept_texts.push([&mine[..a], &mine[b..]].concat());
            }
            for windows in [1, 1000] {
                let mut kept = KeptWindows::new(windows);
                for other in &texts[1..] {
                    kept.insert_text(other);
                }
                // Grown as the walk grows it, when crowded.
                while kept.crowded() {
                    kept = kept.grown();
                    for other in &texts[1..] {
                        kept.insert_text(other);
                    }
                }
                cases += 1;
                if Prepared::new(mine.clone()).own_beyond(&kept) {
                    known += 1;
                    for other in &texts[1..] {
                        assert_eq!(relation(&mine, other), Relation::Overlap);
                    }
                }
                // The walk's reading: from OWN_WORDS on when no kept text may lie wholly
                // within the record (one of them sometimes does: the record less a passage).
                let mut owned = Owned::new(windows);
                for other in &kept_texts {
                    owned.keep(other);
                }
                while owned.all.crowded() {
                    owned.all = owned.all.grown();
                    for other in &kept_texts {
                        owned.all.insert_text(other);
                    }
                }
                let prepared = Prepared::new(mine.clone());
                let by_added = prepared.own_beyond(&owned.all);
                if prepared.known_to_overlap(&owned.all, &owned.ends) {
                    known_to_overlap += usize::from(!by_added);
                    for other in &kept_texts {
                        assert_eq!(relation(&mine, other), Relation::Overlap);
                    }
                }
            }
        }
        assert!(known > cases / 4 && known < cases, "{known} of {cases} known");
        assert!(known_to_overlap > cases / 100, "{known_to_overlap} of {cases} from OWN_WORDS");
    }

    /// A record's own runs against one kept text, and another kept text's filter: when
    /// [`Prepared::overlaps`] says the record overlaps that text, its relation says so too
    /// (and both answers occur).
    #[test]
    fn overlaps_from_own_runs_is_never_wrong() {
        let vocab: Vec<u32> = (0..30u8)
            .map(|i| simhash_core::token_word(&format!("v{}", char::from(b'a' + i % 26))))
            .chain(["x9", "7", "語", "beta", "contains"].map(simhash_core::token_word))
            .collect();
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: usize| rng.index(n);
        let (mut skipped, mut compared, mut cases) = (0, 0, 0);
        for _ in 0..600 {
            let base: Vec<u32> = (0..30 + next(50)).map(|_| vocab[next(vocab.len())]).collect();
            // Three texts from one base, each with passages of its own inserted and words
            // changed; the record shares some of its passages with the second kept text.
            let own = |next: &mut dyn FnMut(usize) -> usize| -> Vec<u32> {
                (0..next(30)).map(|_| vocab[next(vocab.len())]).collect()
            };
            let (p1, p2) = (own(&mut next), own(&mut next));
            let mut mine = base.clone();
            let mut k1 = base.clone();
            let mut k2 = base.clone();
            for (text, passages) in
                [(&mut mine, vec![p1.clone(), p2.clone()]), (&mut k2, vec![p1, own(&mut next)])]
            {
                for passage in passages {
                    if next(3) > 0 {
                        let to = next(text.len() + 1);
                        text.splice(to..to, passage);
                    }
                }
            }
            for text in [&mut mine, &mut k1, &mut k2] {
                for _ in 0..next(4) {
                    let at = next(text.len());
                    text[at] = vocab[next(vocab.len())];
                }
            }
            if next(20) == 0 {
                k2 = mine.clone();
            } else if next(6) == 0 {
                // The record less a passage: a kept text that may lie wholly within it.
                let a = next(mine.len());
                let b = a + 1 + next(mine.len() - a);
                k2 = [&mine[..a], &mine[b..]].concat();
            }
            let mine = Prepared::new(mine);
            let mut runs = Vec::new();
            let first = mine.relation_runs(&k1, &mut runs);
            assert!(runs.is_empty() || first == Relation::Overlap);
            if runs.is_empty() {
                continue;
            }
            let mut owned = Owned::new(1000);
            owned.keep(&k2);
            let Some(filter) = owned.each.get(0) else {
                continue;
            };
            let within = owned.may_lie_within_one(0, |h| mine.has_window(h));
            let words = if within { ADDED_WORDS } else { OWN_WORDS };
            cases += 1;
            if mine.overlaps(&runs, filter, words) {
                skipped += 1;
                assert_eq!(mine.relation(&k2), Relation::Overlap);
            } else {
                compared += 1;
            }
        }
        assert!(
            skipped > cases / 5 && compared > cases / 10,
            "{skipped} skipped, {compared} compared"
        );
    }

    #[test]
    fn names_and_policies_round_trip() {
        for r in Relation::ALL {
            assert_eq!(r.name().parse::<Relation>(), Ok(r));
            assert_eq!(Relation::from_code(r.code()), Some(r));
        }
        assert_eq!(Relation::from_code(3), None);
        assert!("copy".parse::<Relation>().is_err());
        assert!(Templates::Remove.acts_on(Relation::Template));
        assert!(!Templates::Keep.acts_on(Relation::Template));
        assert!(Templates::Keep.acts_on(Relation::Same));
        assert!(!Templates::Remove.acts_on(Relation::Overlap));
        assert_eq!("keep".parse::<Templates>(), Ok(Templates::Keep));
    }

    #[test]
    fn evidence_names_the_runs() {
        let e = evidence(&words("a b c d e f g h"), &words("a b c x e f g h"));
        assert_eq!(e.removed_runs, vec![Range { start: 3, end: 4 }]);
        assert_eq!(e.kept_runs, vec![Range { start: 3, end: 4 }]);
        assert_eq!((e.relation, e.swapped), (Relation::Template, 1), "d swapped for x");
        let e = evidence(&words("a b c d e f g h"), &words("a b c e f g h"));
        assert_eq!(e.removed_runs, vec![Range { start: 3, end: 4 }]);
        assert!(e.kept_runs.is_empty());
        assert_eq!((e.relation, e.swapped), (Relation::Same, 0), "d added");
    }

    /// A summary replaced by another (each text's phrase of its own in the other's place)
    /// overlaps, however short next to a shared description; a phrase added on one side
    /// only, a few words swapped, or a phrase reworded in a long revision do not.
    #[test]
    fn a_phrase_replaced_by_another_overlaps() {
        let shared = "Calibrates and characterizes display devices using a hardware sensor, \
            driven by the open source color management system Argyll CMS. Supports \
            multi-display setups and a variety of available settings.";
        let synth =
            format!("Synthetic ICC\nCreates ICC profiles of synthetic RGB colorspaces\n{shared}");
        let curves = format!(
            "Curve Viewer\nShows calibration and ICC profile tone response curves\n{shared}"
        );
        assert_eq!(rel(&synth, &curves), Relation::Overlap);
        assert_eq!(rel(&curves, &synth), Relation::Overlap);
        let e = evidence(&words(&synth), &words(&curves));
        assert!(e.own_words < OWN_WORDS && e.new_words < NEW_WORDS, "{e:?}");
        assert!(e.replaced >= REPLACED_WORDS, "{e:?}");
        // The same summary line added to a text without one: content added on one side
        // only, too little to be own content.
        let bare = format!("Synthetic ICC\n{shared}");
        assert_ne!(rel(&synth, &bare), Relation::Overlap);
        assert_eq!(evidence(&words(&synth), &words(&bare)).replaced, 0);
        // Four words in place of the summary: a few words filled in, not a phrase.
        let four = synth.replace(
            "Creates ICC profiles of synthetic RGB colorspaces",
            "Builds new spaces quickly",
        );
        assert_eq!(rel(&four, &synth), Relation::Template);
        // A long text may reword a phrase (here 6 words, at most 3% of its tokens) and stay
        // itself.
        let long = |s: &str| format!("{s}\n{}", BOILER.repeat(3));
        assert!(6 * 100 <= REPLACED_PERCENT * words(&long(&synth)).len());
        assert_ne!(rel(&long(&synth), &long(&curves)), Relation::Overlap);
    }

    /// A word swapped for another is a slot filled in differently (a template); a word
    /// or two added or dropped on one side only, an edit of the same text.
    #[test]
    fn a_word_swapped_is_a_fill_in_a_word_added_an_edit() {
        let jack = "ZynAddSubFX is a realtime software synthesizer for Linux with many \
            features; this launcher starts it with the JACK audio backend.";
        let alsa = jack.replace("JACK", "ALSA");
        assert_eq!(rel(jack, &alsa), Relation::Template);
        assert_eq!(rel(&alsa, jack), Relation::Template);
        let added = jack.replace("many features", "many useful features");
        assert_eq!(rel(&added, jack), Relation::Same);
        assert_eq!(rel(jack, &added), Relation::Same);
        // A number for a word is no swap of words: `12` for `twelve` stays the same text
        // (a_number_written_out_is_the_same_text), and so do CJK variant characters.
        let twelve = jack.replace("many", "twelve");
        assert_eq!(rel(&jack.replace("many", "12"), &twelve), Relation::Same);
        // A long text may change 1% of its tokens, swapped or not, and stay the same text.
        let long =
            |backend: &str| format!("{} {}", jack.replace("JACK", backend), BOILER.repeat(4));
        assert!(words(&long("JACK")).len() >= 200);
        assert_eq!(rel(&long("JACK"), &long("ALSA")), Relation::Same);
    }
}
