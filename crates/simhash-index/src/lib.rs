//! Near-duplicate matching: exact Hamming matching of 64-bit simhash fingerprints
//! ([`hamming`](#hamming-matching): block-permutation tables, batch all-pairs, an online
//! [`Index`], the planner and the [`Blocks`] setting) and MinHash LSH (the [`lsh`] module:
//! banding with [`lsh::Banding`], batch candidate pairs, the engine and the online
//! [`lsh::MinHashIndex`] with exact Jaccard verification). The sketches themselves come
//! from `simhash-core`; the types a matching user needs from it ([`Fingerprint`],
//! [`MinHasher`]) are re-exported here.
//!
//! # Namespaces
//!
//! One rule for the two methods: **Hamming matching is at the crate root, MinHash LSH is
//! under [`lsh`].** The `hamming` module is private and every public item of it is
//! re-exported at the root (`simhash_index::Tables`, `simhash_index::AllPairs`,
//! `simhash_index::Index`); the `lsh` module is public and its items are reached only by
//! their path (`simhash_index::lsh::Banding`, `simhash_index::lsh::MinHashIndex`), never
//! re-exported at the root. Items that belong to neither method have modules of their own
//! ([`contamination`], [`disk`], [`settings`]), and the vocabulary of `simhash-core` is re-exported at the
//! root.
//!
//! # Hamming matching
//!
//! Within `k` bits: all pairs among millions to billions of fingerprints, (query, corpus)
//! pairs between two sets, and an online index.
//!
//! Matching is exact: every pair within `k` bits is found, each exactly once, with its
//! distance; pairs at exactly `k` bits are included, and identical fingerprints at two
//! positions (or under two ids) are a pair at distance 0. The method is Manku, Jain and Das
//! Sarma (2007): split the 64 bits into `m > k` blocks; two fingerprints within `k` bits
//! agree on at least `m - k` whole blocks, so for each of the `C(m, m - k)` choices of
//! blocks (a [`Table`]) only fingerprints sharing those blocks (the *prefix*) are compared.
//! More blocks mean longer prefixes and fewer comparisons, but more tables; [`plan`] picks
//! `m` for a workload. `docs/index.md` has the math, the cost model and measurements.
//!
//! # Overview
//!
//! * [`Tables`] is a validated `(blocks, max_distance)` configuration and its tables
//!   ([`Tables::new`] returns a [`ConfigError`] rather than panicking; [`Tables::from_plan`]
//!   builds what [`plan`] recommends; [`Blocks`] is the `auto | N` setting).
//! * [`AllPairs`] streams every pair among a slice of fingerprints to a callback, as
//!   [`Pair`]s of positions, with its options: a memory [`budget`](AllPairs::budget) (the
//!   same batches, each table in passes over ranges of prefixes; for a billion
//!   fingerprints on a 24 GiB machine; [`plan_with_memory`] plans the passes) and a
//!   [`progress`](AllPairs::progress) callback. [`all_pairs`] collects them sorted. Both
//!   take `Fingerprint`s or `Option<Fingerprint>`s (documents with no features; positions
//!   are then among all of them). [`cross_pairs_with`] and [`cross_pairs`] do the same for
//!   (query, corpus) [`CrossPair`]s. They run on rayon's current thread pool, and their
//!   output does not depend on the number of threads. A [`Pair`] converts into `(a, b)`,
//!   so pairs go to `simhash-cluster` as they are.
//! * [`Index`] is the online index (ids of any `Clone + Eq + Hash + Ord` type): [`insert`](Index::insert), [`remove`](Index::remove),
//!   [`find_first`](Index::find_first), [`find_all`](Index::find_all) (a [`Hits`] iterator
//!   of [`Hit`]s) and [`find_all_into`](Index::find_all_into), and parallel bulk versions.
//! * [`pair_group`] and [`cross_group`] are the pairing kernel the batch functions are built
//!   on: given the fingerprints that share one table's prefix, emit the pairs that table
//!   owns. A distributed engine that groups records by `(table, prefix)` calls them directly.
//! * [`lsh::MinHashDedup`] is MinHash near-duplicate detection with exact Jaccard
//!   verification, from texts or shingle sets to keep/remove decisions, verified pairs or
//!   clusters (the `simhash` command's `--method minhash`); the [`lsh`] module has its
//!   pieces (sketcher, in-memory and spilled stores, the searches).
//! * [`lsh::Banding`] and [`lsh::candidate_pairs_with`] are LSH banding over MinHash signatures (the
//!   high-recall mode): bands and rows for a Jaccard threshold, and every pair of documents
//!   sharing a band hash, each once; [`lsh::for_each_band_group`] gives the groups themselves.
//! * [`lsh::MinHashIndex`] is the online MinHash index: insert, remove and query feature sets;
//!   candidates share a band bucket, and each is verified by exact Jaccard similarity, so
//!   a query returns exactly the bucket-sharing sets at or above the threshold.
//! * [`plan`] recommends `m` for `n` fingerprints and reports the expected work ([`Plan`]).
//! * [`contamination`] finds eval-set (benchmark) text inside a training corpus, exactly:
//!   word n-grams after normalisation, each match checked word by word, with the places
//!   where it is written.
//! * [`disk`] is the persistent index of either method: a directory of immutable,
//!   checksummed segment files and an atomically replaced manifest; one writer adds and
//!   compacts, any number of readers query (`docs/index-format.md` has the format).
//!
//! # Example: near-duplicate texts (MinHash)
//!
//! ```
//! use simhash_index::lsh::{Decision, MinHashDedup};
//!
//! let mut dedup = MinHashDedup::builder().jaccard(0.5).build()?;
//! for text in [
//!     "the cat sat on the mat and looked out of the window",
//!     "stock markets fell sharply on monday after the announcement",
//!     "the cat sat on the mat and looked out of the window again",
//! ] {
//!     dedup.add_text(text)?;
//! }
//! let decisions = dedup.dedup()?;
//! assert!(matches!(decisions[2], Decision::Duplicate { of: 0, .. }));
//! assert_eq!(decisions.iter().filter(|d| d.is_keep()).count(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: all pairs
//!
//! ```
//! use simhash_index::{AllPairs, Fingerprint, Pair, Tables, plan};
//!
//! let fps: Vec<Fingerprint> =
//!     [0x0000_0000_0000_00ff, 0x0000_0000_0000_00fe, 0xffff_0000_0000_0000, 0x0000_0000_0000_00ff]
//!         .into_iter()
//!         .map(Fingerprint)
//!         .collect();
//! let plan = plan(fps.len() as u64, 3)?;
//! let tables = Tables::from_plan(&plan)?;
//! let mut pairs: Vec<Pair> = Vec::new();
//! AllPairs::new(&tables).run(&fps, |batch| pairs.extend_from_slice(batch))?;
//! pairs.sort();
//! assert_eq!(pairs, [
//!     Pair { a: 0, b: 1, distance: 1 },
//!     Pair { a: 0, b: 3, distance: 0 },
//!     Pair { a: 1, b: 3, distance: 1 },
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: an online index
//!
//! ```
//! use simhash_core::Fingerprint;
//! use simhash_index::{Hit, Index, Tables};
//!
//! let mut seen: Index<&str> = Index::new(Tables::new(4, 3)?);
//! seen.insert("a.html", Fingerprint(0x0123_4567_89ab_cdef));
//! seen.insert_many([("b.html", Fingerprint(0x0123_4567_89ab_cdee)), ("c.html", Fingerprint(7))]);
//! let mut hits = Vec::new();
//! seen.find_all_into(Fingerprint(0x0123_4567_89ab_cdef), &mut hits);
//! assert_eq!(hits, [Hit { id: "a.html", distance: 0 }, Hit { id: "b.html", distance: 1 }]);
//! assert!(seen.find_first(Fingerprint(0xffff_ffff_0000_0000)).is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: an online MinHash index
//!
//! ```
//! use simhash_index::lsh::MinHashIndex;
//!
//! // Feature sets: shingle hashes (from `Fingerprinter::for_each_feature`, or your own).
//! let mut seen: MinHashIndex<String> = MinHashIndex::new(0.7, 128)?;
//! seen.insert("doc-1".to_string(), 0..100u64);
//! seen.insert("doc-2".to_string(), 500..600u64);
//! let hits = seen.query(5..100u64); // Jaccard 95 / 100 with doc-1
//! assert_eq!(hits.len(), 1);
//! assert_eq!((hits[0].id.as_str(), hits[0].jaccard), ("doc-1", 0.95));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Errors
//!
//! Every error type ([`ConfigError`], [`lsh::LshError`], [`ParseBlocksError`],
//! [`contamination::ContaminationError`]) has a lowercase
//! message with no trailing period and a `kind()`, a `#[non_exhaustive]` enum to match on.
//!
//! # Guarantees and costs
//!
//! * Exact for every valid configuration: the choice of blocks changes the speed, never the
//!   result. Property tests check every entry point against brute force.
//! * Batch memory: the input, 16 bytes per fingerprint for the table being processed (one
//!   table at a time), and the pairs of the groups in flight; within a budget, the table is
//!   processed in passes of `n / passes` fingerprints each (see [`plan_with_memory`]).
//! * Positions in [`Pair`] and [`CrossPair`] are `u32`: a batch holds at most `u32::MAX`
//!   fingerprints per slice.
#![deny(missing_docs)]

pub mod contamination;
pub mod disk;
mod hamming;
pub mod lsh;
pub mod settings;
#[cfg(test)]
mod test_rng;

#[cfg(test)]
#[path = "../tests/support/own_flood.rs"]
mod own_flood;

pub use crate::hamming::blocks::{Blocks, ParseBlocksError, ParseBlocksErrorKind};
pub use crate::hamming::distinct::Distinct;
pub use crate::hamming::kernel::{cross_group, pair_group};
pub use crate::hamming::online::{DEFAULT_BLOCKS, DEFAULT_MAX_DISTANCE, Hit, Hits, Index};
pub use crate::hamming::pairs::{
    AllPairs, CrossPair, Pair, PairInput, all_pairs, cross_pairs, cross_pairs_with,
};
pub use crate::hamming::plan::{Plan, plan, plan_with_memory};
pub use crate::hamming::tables::{ConfigError, ConfigErrorKind, MAX_TABLES, Table, Tables};
pub use crate::hamming::walk::{DedupWalk, Identical, WALK_CHUNK, WalkOutcome, collapse_identical};
/// The matching vocabulary from `simhash-core`, so that a matching user needs one crate.
pub use simhash_core::{Fingerprint, MAX_PERM, MinHasher, ParseFingerprintError};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The workspace README's library examples, which use this crate with core and cluster.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct WorkspaceReadmeDoctests;

/// The examples of `docs/library.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
struct LibraryGuideDoctests;

#[cfg(test)]
mod testoibits {
    use super::*;
    use crate::lsh::{LshError, MinHashIndex};

    fn assert_all<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}

    #[test]
    fn oibits() {
        assert_all::<Tables>();
        assert_all::<Table>();
        assert_all::<ConfigError>();
        assert_all::<Index>();
        assert_all::<Hits>();
        assert_all::<Plan>();
        assert_all::<Blocks>();
        assert_all::<MinHashIndex>();
        assert_all::<MinHashIndex<String>>();
        assert_all::<Index<String>>();
        assert_all::<LshError>();
        assert_all::<crate::contamination::EvalSets>();
        assert_all::<crate::contamination::Tally>();
        assert_all::<crate::contamination::DocHits>();
        assert_all::<crate::contamination::ContaminationError>();
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;
    use crate::lsh::{Banding, JaccardHit};

    fn round_trip<T>(value: &T, json: &str)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        assert_eq!(serde_json::to_string(value).unwrap(), json);
        assert_eq!(&serde_json::from_str::<T>(json).unwrap(), value);
    }

    #[test]
    fn settings_and_results_round_trip() {
        round_trip(&Pair { a: 1, b: 2, distance: 3 }, r#"{"a":1,"b":2,"distance":3}"#);
        round_trip(
            &CrossPair { query: 1, corpus: 2, distance: 0 },
            r#"{"query":1,"corpus":2,"distance":0}"#,
        );
        round_trip(&Hit { distance: 1, id: "a".to_string() }, r#"{"distance":1,"id":"a"}"#);
        round_trip(&JaccardHit { id: 7u32, jaccard: 0.5 }, r#"{"id":7,"jaccard":0.5}"#);
        round_trip(&Blocks::Auto, r#""auto""#);
        round_trip(&Blocks::Fixed(6), r#"{"fixed":6}"#);
        round_trip(&Tables::new(5, 3).unwrap(), r#"{"blocks":5,"max_distance":3}"#);
        round_trip(&Banding::new(25, 5).unwrap(), r#"{"bands":25,"rows":5}"#);
        round_trip(&Fingerprint(255), "255");
        let plan = plan(1000, 3).unwrap();
        let back: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(back, plan);
    }

    #[test]
    fn invalid_settings_are_refused_on_the_way_in() {
        for bad in [r#"{"blocks":3,"max_distance":3}"#, r#"{"blocks":65,"max_distance":3}"#] {
            assert!(serde_json::from_str::<Tables>(bad).is_err(), "{bad}");
        }
        for bad in [r#"{"bands":0,"rows":5}"#, r#"{"bands":1000,"rows":1000}"#] {
            let e = serde_json::from_str::<Banding>(bad).unwrap_err();
            assert!(e.to_string().contains("bands"), "{e}");
        }
    }
}
