//! A persistent near-duplicate index on disk, for both methods: deduplicate new data
//! against everything already kept without reading the old data again.
//!
//! An index is a directory: immutable *segment* files and a *manifest* that lists them with
//! their sizes and checksums, the index's [`Settings`], a generation number and the index's
//! id (128 random bits made with the index, also in every segment's header).
//! `docs/index-format.md` has the byte layout and the compatibility promise.
//!
//! # Overview
//!
//! * Where an index is made: only where nothing is (a missing directory, whose parent
//!   exists, or an empty one); [`Writer::open`] opens an index or makes one there,
//!   [`Writer::create`] only makes one, [`Writer::open_existing`] never does. A directory
//!   that holds files but no manifest (an index whose manifest is lost, or anything else)
//!   is a [`Corrupt`](DiskErrorKind::Corrupt) error naming it, for readers and writers,
//!   and is never written into. A segment whose id is not the manifest's (copied in from
//!   another index) is a `Corrupt` error naming it when the index is opened.
//! * [`Writer`] is the one writer (a lock file keeps it so; a second is a
//!   [`Locked`](DiskErrorKind::Locked) error). It adds documents in order, each an id and
//!   its [`DocSketch`](crate::lsh::DocSketch) (MinHash) or [`Fingerprint`](crate::Fingerprint)
//!   (simhash), or none for a document without features, which is stored as an id only.
//!   It writes a run (an unlisted segment file) every
//!   [`flush_bytes`](WriterBuilder::flush_bytes), so memory stays bounded;
//!   [`commit`](Writer::commit) merges the runs into one segment by a streaming merge (one
//!   segment per add), and nothing is visible until it replaces the manifest (written new,
//!   synced, renamed, directory synced). An id already in the index is
//!   refused and reported in the [`Commit`] ([`Refused`], with its position). Dropped
//!   without a commit, a writer removes what it wrote; killed, it leaves files that no
//!   manifest lists, which are never read and which the next writer removes.
//!   [`compact`](Writer::compact) merges every segment into one by a streaming merge.
//! * [`DiskIndex`] is a reader of one committed state; any number may be open while a
//!   writer commits. Opening reads the manifest and each segment's header and footer (the
//!   time does not grow with the index's size); segments are read through memory maps.
//! * Queries: [`query_sketch`](DiskIndex::query_sketch) returns every indexed document
//!   that shares a band key with the sketch and whose shingle set has an exact Jaccard
//!   similarity of at least the threshold with it; [`query_fingerprint`](DiskIndex::query_fingerprint)
//!   every indexed fingerprint within `k` bits. These are the in-memory engines'
//!   contracts ([`find_matches`](crate::lsh::find_matches), [`all_pairs`](crate::all_pairs)):
//!   the answers for documents B against an index of A are the cross pairs (B, A) that the
//!   engines find in A followed by B, with the same similarities. Answers list document
//!   numbers (insertion order, kept by compaction) in ascending order; the `first_*`
//!   forms return the lowest-numbered match (the earliest added), which is what a dedup
//!   against the index reports as the kept document; the `query_*s` forms run a batch
//!   in parallel, answers in input order.
//! * Damage: every segment has a checksum per 64 KiB block, checked the first time the
//!   block is read, and a header and footer checked on open; the manifest has a checksum.
//!   A truncated or altered file is a [`Corrupt`](DiskErrorKind::Corrupt) error naming
//!   it, never data. [`verify`](DiskIndex::verify) reads and checks everything.
//! * [`DiskError`] names the file; [`DiskErrorKind`] says what went wrong, among them
//!   [`SettingsMismatch`](DiskErrorKind::SettingsMismatch), whose message names each
//!   setting that differs.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use simhash_index::lsh::Sketcher;
//! use simhash_index::disk::{DiskIndex, MinHashSettings, Settings, Writer};
//! use simhash_index::MinHasher;
//! use simhash_index::lsh::Banding;
//!
//! let settings = Settings::MinHash(MinHashSettings {
//!     preset: "default".into(),
//!     window: 3,
//!     num_perm: 128,
//!     bands: 16,
//!     rows: 8,
//!     lsh_threshold: 0.5,
//!     jaccard: 0.5,
//!     seed: 0,
//!     band_key_bits: 32,
//!     extra: BTreeMap::new(),
//! });
//! // The front end makes its sketcher from the settings; sketches are what is indexed.
//! let sketcher = Sketcher::new(MinHasher::new(128, 0), Banding::new(16, 8)?)?;
//! let dir = tempfile::tempdir()?;
//!
//! let mut writer = Writer::open(dir.path(), &settings)?; // creates the index
//! writer.add_sketch("old-1", sketcher.sketch_shingles(0..100).as_ref())?;
//! writer.add_sketch("old-2", sketcher.sketch_shingles(1000..1100).as_ref())?;
//! writer.add_sketch("old-1", sketcher.sketch_shingles(0..5).as_ref())?; // refused
//! let commit = writer.commit()?;
//! assert_eq!((commit.added, commit.refused.len()), (2, 1));
//!
//! let index = DiskIndex::open_with(dir.path(), &settings)?;
//! let new = sketcher.sketch_shingles(5..100).unwrap(); // Jaccard 95 / 100 with old-1
//! let hits = index.query_sketch(&new)?;
//! assert_eq!(hits.len(), 1);
//! assert_eq!((index.id(hits[0].id)?, hits[0].jaccard), ("old-1", 0.95));
//! index.verify()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Costs
//!
//! Per document on disk: its id, 8 bytes of offsets for the id and 8 for the payload, 12
//! in the id table, the payload (8 bytes a shingle for MinHash, 8 for a fingerprint) and
//! one record per column (`band_key_bits / 8 + 4` bytes a band for MinHash, 12 a table for
//! simhash), and 8 bytes per 256 records of a column for its fences. A query reads
//! each column's fences once (then searches them in memory) and about one page of each
//! column per segment, then the candidates' payloads: each add is one segment, and
//! compacting after many adds makes it one for the index. A writer holds about
//! `flush_bytes` of documents, and twice that while a segment is written.
mod error;
mod file;
mod index;
mod manifest;
mod segment;
mod settings;
mod writer;

pub use error::{DiskError, DiskErrorKind};
pub use index::{DiskIndex, Stats};
pub use settings::{MinHashSettings, PLAN_DOCUMENTS, Settings, SimhashSettings};
pub use writer::{Commit, DEFAULT_FLUSH_BYTES, Refused, Writer, WriterBuilder};

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;
