//! MinHash near-duplicate detection with exact verification ([`MinHashDedup`] and the
//! pieces it is made of), and the LSH banding under it: choosing bands and rows for a
//! Jaccard threshold, and batch candidate pairs, each pair once.
//!
//! # Near-duplicates in a few lines
//!
//! ```
//! use simhash_index::lsh::{Decision, MinHashDedup};
//!
//! let texts = [
//!     "MinHash estimates the Jaccard similarity of two shingle sets",
//!     "a recipe for bread: flour, water, salt and a little yeast",
//!     "MinHash estimates the Jaccard similarity of two shingle sets quickly",
//! ];
//! let mut dedup = MinHashDedup::builder().jaccard(0.5).build()?; // defaults: the CLI's
//! dedup.extend_texts(&texts)?; // in parallel; or add_text / add_shingles one at a time
//! let decisions = dedup.dedup()?; // insertion order is the priority (or dedup_by_rank)
//! assert!(decisions[0].is_keep() && decisions[1].is_keep());
//! assert!(matches!(decisions[2], Decision::Duplicate { of: 0, jaccard, .. } if jaccard >= 0.5));
//! let pairs = dedup.pairs()?; // verified pairs with their exact Jaccard similarity
//! assert_eq!((pairs[0].a, pairs[0].b), (0, 2));
//! assert_eq!(dedup.clusters()?, [vec![0, 2], vec![1]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The engine's pieces
//!
//! [`MinHashDedup`] is a [`Sketcher`] and a [`SketchStore`] behind a builder. Front ends
//! with their own reading pipeline use the pieces: workers call [`Sketcher::sketch`] (pure,
//! `Send + Sync`) on documents in any order, one thread pushes the [`DocSketch`]es into a
//! store in document order ([`MemoryStore`], or [`SpillStore`] for corpora larger than
//! memory: band hashes and shingle sets in temporary files), then one of the searches runs
//! on rayon's current pool, with the same result at any thread count:
//!
//! - [`find_matches`]: every verified pair, to a [`MatchSink`];
//! - [`walk`](fn@walk): the dedup walk, records in priority order, each kept unless it verifies
//!   against a record already kept (the first such kept record is the one it duplicates);
//! - [`components`](fn@components): the connected components of the verified pairs, as
//!   spanning edges.
//!
//! All three first collapse documents with identical shingle sets and tokens (compared
//! whole, never by a hash: with a short window a text in another order can share a set),
//! and the last two work per *candidate component* (documents linked by shared
//! band hashes, found with one union per band group, so never a pair per group member
//! pair): a flood of `N` near-identical documents costs about `N × kept`, not `N²`.
//! Candidates are verified by their exact Jaccard similarity ([`similarity`]), so there are
//! no false positives. Errors are [`EngineError`]s (with the [`std::io::Error`] of a spill
//! file as their source).
//!
//! Memory per document is 17 bytes in a store (set hash, set offset, flag), and about 30
//! to 40 more while matching (the identical-set pass; a union-find, one band's column and
//! a table of its keys' first members for the candidate components; then the walk's
//! decisions: 12 bytes a document and 16 a removal); a [`SpillStore`] keeps the band hashes (32-bit, a file of per-band column
//! blocks and one of rows) and the shingle sets (8 bytes a shingle) on disk, so the LSH
//! sorts one band at a time.
//!
//! # Banding
//!
//! A signature of `bands × rows` slots (from `simhash_core::MinHasher`) is cut into `bands`
//! bands of `rows` slots, and each band is hashed (`simhash_core::band_hashes`). Two
//! documents are *candidates* when they share at least one band hash. With Jaccard
//! similarity `j`, a band agrees with probability `j^rows`, so a pair is a candidate with
//! probability `1 - (1 - j^rows)^bands` ([`Banding::probability`]), an S-curve whose steep
//! part sits near `(1 / bands)^(1 / rows)`. Candidates are then verified (by estimated or
//! exact Jaccard); LSH only decides which pairs are compared.
//!
//! # Each pair once
//!
//! A pair that shares several bands is *owned* by the first of them: the batch functions
//! emit pair `(a, b)` while scanning band `j` only if no band `i < j` has equal hashes for
//! `a` and `b`, which each band checks on its own from the band-hash matrix (no global set
//! of pairs seen). [`first_common_band`] is the same test for callers who walk the groups
//! themselves ([`for_each_band_group`]).
//!
//! # Band hashes of any width
//!
//! The batch functions take any `Copy + Ord` hash type: `u64` as `simhash_core::band_hashes`
//! writes them, or narrower truncations to save memory (`u32`: 4 bytes a band). Narrower
//! hashes only add candidates (pairs whose truncated hashes collide by chance, about
//! `n² / 2^33` per band for `u32`), never remove one: grouping and ownership use the same
//! values, so a pair is still emitted once, from the first band whose values agree. Verify
//! candidates, as any LSH user must.
//!
//! # Band keys of 32 or 64 bits
//!
//! A [`DocSketch`] holds one 32-bit key per band (its 64-bit band hash folded) and, unless
//! its [`Sketcher`] is limited to [`BandKeyWidth::Bits32`], the hashes' high halves. A
//! store chooses the width its searches group by once it knows how many documents it holds
//! ([`SketchStore::band_key_bits`]): [`band_key_bits`] of the documents and bands (64 from
//! about 1.3 billion documents at 37 bands, where 32-bit keys' chance collisions cost more
//! to verify than wider keys cost to keep), or a width forced with
//! [`MemoryStore::with_band_keys`] / [`SpillStore::with_band_keys`]. The searches see
//! 64-bit keys as 32-bit values equal exactly when the keys are (their ranks), so both
//! widths give the same verified pairs; only the candidates differ. `simhash-dist` makes the
//! same choice with the same function.
//!
//! # Cost
//!
//! Each band sorts `n` `(hash, document)` entries (16 bytes each for `u64`, one band at a
//! time), and
//! every group of `g` documents sharing a band hash costs `g (g - 1) / 2` ownership checks:
//! the work is the sum over bands of the squared group sizes. Near-identical documents by
//! the thousand make quadratic work in every band; [`for_each_band_group`] lets a caller
//! treat such groups specially (verify each member against one representative, say).
//!
//! Short documents that share a phrase do too, and they need not be near-identical: two
//! 4-shingle sets with one shingle in common (Jaccard 1/7) share a band about one time in
//! ten at the default thresholds. So [`find_matches`], [`walk`](fn@walk) and
//! [`components`](fn@components) find the candidates of small sets (32 shingles or fewer, in
//! a candidate component of 2,048 documents or more for the last two) through a prefix
//! index instead (a shingle of the other's prefix in the component's rarest-first order, as
//! exact set-similarity joins do), keeping those that share a band: the same verified pairs
//! and decisions, without listing the pairs that cannot verify. 200,000 such documents cost
//! seconds, not minutes. The prefix index holds each distinct shingle of the small sets with
//! its count (about 20 bytes), and 8 bytes per prefix shingle of each indexed set (0.6 of its
//! shingles at the default threshold, sets of up to 80 shingles); it lives while its
//! component (or, for [`find_matches`], the search) does.

//!
//! # Relations
//!
//! What a verified pair is: the same document, template siblings, or two documents that
//! overlap (the removed one has content of its own). Read from the two texts' tokens
//! ([`simhash_core::token_word`]s, in text order), not from how much they share: two
//! licences that differ in one clause can share 94% of their shingles, and two package
//! descriptions filled into one template can share 45%.
//!
//! ## How a pair is read
//!
//! Both texts are read without the version markers of [`VERSION_WORDS`] (`alpha`,
//! `beta`, `v1beta1`, ...): one command's page in its beta and GA tracks is one document,
//! and the words that mark the track are no content. A token of the removed text is *shared* when
//! one of the 3-token windows it lies in also occurs in the kept text; the others form *runs* (what the removed text has that the
//! kept one lacks: a filled-in name, a changed word, an added sentence). Then:
//!
//! - **own content**: the words (not numbers, nor names with a number in them like `u64` or
//!   `v3_22`; a CJK character counts as a third of a word) in runs of [`CONTENT_RUN`]
//!   tokens or more, and among them the distinct words the kept text never uses. The pair is
//!   [`Relation::Overlap`] when the removed text has [`OWN_WORDS`] such words, or
//!   [`NEW_WORDS`] distinct new ones: a sentence or a paragraph of its own, a clause, an
//!   option, a verse. The [`STOCK_WORDS`] of a package's stock sentence ("this package
//!   contains the development headers", in the eight languages of Debian's descriptions)
//!   are fill-ins where another lies within [`STOCK_SPAN`] tokens: they part a run, and
//!   are no content (a sibling package that adds only such a sentence is a template
//!   sibling; one that says what it does is not, nor is "discard symbols").
//! - **a sentence added**: when the removed text is the whole of the kept text (every token
//!   of the kept text lies in a window of the removed one) with fewer than [`ADDED_WORDS`]
//!   words of its own, those words are a variant's added sentence ("This package is for
//!   working without an X server", a release notice), not own content: the pair is read on
//!   as below, a template sibling (or the same document, under 1% of a long text or within
//!   an edition's [`EDITION_PERCENT`]). This trades some distinct documents for many
//!   siblings: in samples of what it removes, 5 of 78 pairs were distinct documents (a
//!   sentence of what the package does), 73 siblings or copies (`docs/accuracy.md`).
//!   [`Evidence::sentence_added`] says when it applied.
//! - **a phrase replaced**: the pair is [`Relation::Overlap`] too when one run of the
//!   removed text holds [`REPLACED_WORDS`] words the kept text never uses (more than
//!   [`REPLACED_PERCENT`]% of its tokens) and one of the kept text's holds as many the
//!   removed text never uses: each says something of its own in the other's place (an
//!   application's one-line summary, a function's description under a shared template),
//!   too short for own content alone.
//! - otherwise the differences are fill-ins, and the pair is [`Relation::Same`] when the
//!   removed text's runs hold at most [`FILL_WORDS`] words (or 1% of its tokens; or, in a
//!   text of [`EDITION_TOKENS`] or more, [`EDITION_PERCENT`]% when all are added to the
//!   whole of the kept text and none is a stock word: an edition's notice, heading or
//!   changelog entry, [`Evidence::edition`]), no name
//!   with a number is filled in on either side, no word is swapped for another (words
//!   alone on both sides, past that 1%), and the kept text has no stock sentence alone
//!   ([`KEPT_STOCK_WORDS`]: a library's description against its `-dev` package's, which
//!   adds "this package contains the development files"; unless the kept text also has
//!   [`OWN_WORDS`] words of its own, a larger document the removed one is a part of): an
//!   edited copy, a revision, the same text on another page; and
//!   [`Relation::Template`] when names, numbers, versions, words or stock phrases were
//!   filled in differently (`u8` for `i128`, `gtk` and `v3_22` for `gdk` and `v3_16`,
//!   `jack` for `alsa`).
//!
//! The thresholds were chosen on the judged real-text set of `benches/judged` (364 pairs
//! read by judges), the stock words on its Debian set (336 pairs), and each was checked on
//! sets judged after (see `docs/accuracy.md`). Texts without tokens (shingles given directly,
//! the `moz` and `fork` presets, an on-disk index made before it stored tokens) read as
//! [`Relation::Same`]: every verified pair, as before relations existed. Pairs with no
//! removed side (`pairs`, `cluster`) read as [`pair_relation`]: the lesser of both
//! directions.
//!
//! ```
//! use simhash_core::token_word;
//! use simhash_index::lsh::{Relation, relation};
//!
//! let words = |t: &str| t.split_whitespace().map(token_word).collect::<Vec<u32>>();
//! let gdk = words("Rust bindings for the GDK 3 library feature v3_16 for the gdk crate");
//! let gtk = words("Rust bindings for the GTK 3 library feature v3_22 for the gtk crate");
//! assert_eq!(relation(&gtk, &gdk), Relation::Template);
//! // A sentence of its own, against a sibling: content of its own.
//! let own = words("Rust bindings for the GTK 3 library feature v3_22 for the gtk crate \
//!     which draws windows, reads pointer and keyboard events and manages monitors");
//! assert_eq!(relation(&own, &gdk), Relation::Overlap);
//! // The same sentence added to the whole of the other text: a variant's (ADDED_WORDS).
//! let variant = words("Rust bindings for the GDK 3 library feature v3_16 for the gdk crate \
//!     which draws windows, reads pointer and keyboard events and manages monitors");
//! assert_eq!(relation(&variant, &gdk), Relation::Template);
//! assert_eq!(relation(&gdk, &variant), Relation::Same); // the removed one has nothing of its own
//! ```
//!
//! ## What relations cost
//!
//! A record with content of its own is kept, so the walk keeps more records, and every later
//! record of its candidate component is compared with those too: on a 500 MB real corpus
//! (man pages sharing their flag sections, generated API pages), about 5× the verified pairs
//! of a walk without relations, and a relation read (a pass over the kept text's windows)
//! for each pair that verifies and overlaps. Once a component has spared 64 pairs, the walk
//! keeps a filter of its kept records' windows (a Bloom filter of at most 1 MiB): a record
//! whose tokens in no kept window already make [`ADDED_WORDS`] words of own content overlaps
//! every kept record, and so does one with [`OWN_WORDS`] such words when no kept record may
//! lie wholly within it (a sentence added to the whole of one is a variant's below
//! `ADDED_WORDS`; such a record's first and last windows, the only ones over its first and
//! last tokens, would be among the record's, and the walk keeps each kept record's two,
//! indexed by the first), so after its first overlap it is compared no further
//! ([`MatchStats::known_kept`]). Otherwise the runs of its own content against that first
//! kept record are kept, and each kept record has a filter of its own windows (8 bits a
//! window, at most 8 MiB a component): a later kept record whose filter cannot hold enough
//! of those runs for the record to have fewer than [`OWN_WORDS`] words of its own (or
//! [`ADDED_WORDS`], when that kept record's first and last windows are the record's) is not
//! compared ([`MatchStats::own_skipped`]; those runs' tokens are in no window of it, so its
//! relation would be [`Relation::Overlap`] too). A record whose bands' buckets hold more
//! than 4,096 kept records is asked first, before they are listed, and kept at once when
//! its own content is in no kept window ([`MatchStats::unlisted`]): a flood of records that
//! share a boilerplate and each have a sentence of their own then costs about one look a
//! record, not one per kept record (the filter gives each window more bits, and grows, as
//! such records come). The filters can only err towards "held" (a run cut short, the record
//! compared as before), so the decisions are those of comparing every pair.
mod alone;
mod banding;
mod buffers;
mod candidates;
mod components;
mod engine;
mod error;
mod keys;
mod masked;
pub(crate) mod own;
mod relation;
mod scan;
mod sink;
mod sketch;
pub(crate) mod small;
mod stock;
mod store;
mod versions;
mod walk;
mod windows;

pub use banding::{Banding, LshError, LshErrorKind};
pub use candidates::{
    Candidate, band_owns, candidate_pairs, candidate_pairs_from_columns, candidate_pairs_with,
    first_common_band, for_each_band_group,
};
pub use components::components;
pub use engine::{
    DEFAULT_JACCARD, DEFAULT_LSH_THRESHOLD, DEFAULT_NUM_PERM, DEFAULT_SEED, Decision, MinHashDedup,
    MinHashDedupBuilder, SimilarPair,
};
pub use error::{EngineError, EngineErrorKind};
pub use keys::{BandKeyWidth, ParseBandKeyWidthError, SPURIOUS_CANDIDATE_BYTES, band_key_bits};
pub use masked::Masked;
pub use relation::{
    ADDED_WORDS, CONTENT_RUN, EDITION_PERCENT, EDITION_TOKENS, Evidence, FILL_WORDS,
    KEPT_STOCK_WORDS, NEW_WORDS, OWN_WORDS, Prepared, REPLACED_PERCENT, REPLACED_WORDS, Relation,
    Templates, UnknownRelation, evidence, pair_relation, pair_relation_in, relation, relation_in,
};
pub use scan::{RelatedMatch, find_matches, related_matches, similarity, tokens_hash};
pub use sink::{MatchSink, MatchStats};
pub use sketch::{DocSketch, Sketcher};
pub use stock::{STOCK_SPAN, STOCK_WORDS};
pub use store::{MemoryStore, SPILL_CACHE_BYTES, SetPlace, SetWriter, SketchStore, SpillStore};
pub use versions::VERSION_WORDS;
pub use walk::{Walk, walk};

mod online;

pub use online::{JaccardHit, MINHASH_INDEX_SEED, MinHashIndex};

#[cfg(test)]
mod dedup_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;
