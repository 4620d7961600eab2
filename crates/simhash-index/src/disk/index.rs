//! [`DiskIndex`]: a committed state of an on-disk index, open for queries.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use simhash_core::Fingerprint;

use super::manifest::{self, Contents, MANIFEST, Manifest};
use super::segment::{KIND_MINHASH, KIND_SIMHASH, Segment, Shape, Source};
use super::{DiskError, DiskErrorKind, Settings};
use crate::lsh::JaccardHit;
use crate::lsh::own::{KeptEnds, KeptWindows, window_hashes};
use crate::lsh::small::{PROBE_MAX, SmallSets};
use crate::lsh::{DocSketch, Prepared, Relation, Templates};
use crate::{Hit, Tables};

/// An on-disk index as of one commit, open for reading: queries, id lookups, statistics
/// and verification. Any number of readers may be open, in any number of processes, while
/// one [`Writer`](super::Writer) commits: a reader keeps seeing the state it opened.
///
/// Documents are numbered `0..len()` in the order they were added (across all adds; a
/// compaction keeps the numbers). Queries return these numbers ([`id`](DiskIndex::id) gives
/// the id), in ascending order.
#[derive(Debug)]
pub struct DiskIndex {
    dir: PathBuf,
    manifest: Manifest,
    parts: Vec<Part>,
    method: Method,
    /// The prefix index of the small documents, made at the first short query that
    /// would meet a flood in the band buckets ([`SmallDocs`]); none when the index has too
    /// few small documents to need one.
    small: OnceLock<Option<SmallDocs>>,
    /// The windows of every document's tokens ([`KeptWindows`]) and their ends
    /// ([`KeptEnds`]), made once
    /// [`first_sketch_acted`](DiskIndex::first_sketch_acted) has met [`SPARED_BEFORE_OWN`]
    /// matches it did not act on; none when the index stores no tokens or holds more than
    /// [`OWN_MAX_WINDOWS`] windows.
    own: OnceLock<Option<(KeptWindows, KeptEnds)>>,
    /// Those matches so far.
    spared: AtomicU64,
}

/// An exact search among the index's small documents (at most
/// [`SmallSets::index_max`] shingles), for short queries: the same prefix filter the
/// in-memory engine turns to when short documents sharing a phrase flood its band buckets
/// (see `lsh::small`). Without it, each short query against an index of `N` such documents
/// read and verified about `N / 10` band candidates, none of which matched: `M` queries cost
/// `M × N / 10` reads (40,000 against 200,000: minutes, where the same records in memory
/// take seconds). The answers are the band buckets' exactly: of the documents whose
/// prefix meets the query's, those that share a band key with it and verify.
struct SmallDocs {
    sets: SmallSets,
    /// The document number of each ordinal of `sets`, ascending.
    docs: Vec<u64>,
}

impl std::fmt::Debug for SmallDocs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmallDocs").field("docs", &self.docs.len()).finish_non_exhaustive()
    }
}

/// Band candidates of a short query above which it is answered from the [`SmallDocs`].
const SMALL_FLOOD: usize = if cfg!(test) { 4 } else { 4096 };

/// Matches not acted on (a query with content of its own) that queries of
/// [`DiskIndex::first_sketch_acted`] meet before the index's windows are read into a
/// filter: then a query whose content of its own is in no indexed document is answered
/// without comparing it with its candidates (each is [`Relation::Overlap`]). Without it, a
/// flood of documents that share a boilerplate, each with a sentence of its own, cost each
/// query a relation read with every indexed one of them. Small in tests.
const SPARED_BEFORE_OWN: u64 = if cfg!(test) { 2 } else { 256 };

/// The most windows of an index whose filter of windows is made (16 bits each: 64 MiB; an
/// index with more compares such queries with each candidate, as before).
const OWN_MAX_WINDOWS: usize = 32 << 20;

/// Small documents an index needs before a [`SmallDocs`] is made for it.
const SMALL_MIN: usize = if cfg!(test) { 4 } else { 2048 };

/// The most shingles of small documents a [`SmallDocs`] is made of (32M: 256 MB while it
/// is made, about half that held): an index with more answers from its band buckets, as
/// before, so that a query's memory does not grow with the index.
const SMALL_MAX_SHINGLES: usize = 32 << 20;

#[derive(Debug)]
struct Part {
    segment: Segment,
    base: u64,
}

#[derive(Debug)]
pub(crate) enum Method {
    /// `key_bits`: the band keys' width as recorded (32: `DocSketch::bands`, or 64:
    /// `DocSketch::band_hashes`).
    /// `tokens`: payloads carry the texts' tokens after the shingle set ([`payload`]).
    MinHash {
        jaccard: f64,
        bands: usize,
        key_bits: u32,
        tokens: bool,
    },
    Simhash {
        tables: Tables,
    },
}

/// What an index holds, for `simhash index stats`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Documents in the index (with or without features).
    pub documents: u64,
    /// Segment files.
    pub segments: usize,
    /// Bytes of the segment files and the manifest.
    pub bytes: u64,
    /// The commit's generation number (one more per commit).
    pub generation: u64,
    /// The settings the index was made with.
    pub settings: Settings,
}

/// The error for a directory without a manifest: [`NotFound`](DiskErrorKind::NotFound)
/// when nothing is there, [`Corrupt`](DiskErrorKind::Corrupt) when it holds files.
pub(crate) fn no_manifest(dir: &Path) -> Result<DiskError, DiskError> {
    Ok(match manifest::contents(dir)? {
        Contents::Missing | Contents::Nothing => DiskError::new(
            DiskErrorKind::NotFound,
            Some(&dir.join(MANIFEST)),
            "no index here (no manifest)",
        ),
        Contents::Other(file) => manifest::not_an_index(dir, &file),
    })
}

/// How many times an open retries when a compaction removed a segment between the
/// manifest's read and the segment's open.
const OPEN_RETRIES: usize = 16;

/// Whether a search stops at a verified match (document number, stored payload).
type Stop<'a> = dyn FnMut(u64, &[u64]) -> Result<bool, DiskError> + 'a;

impl Method {
    pub(crate) fn of(settings: &Settings) -> Method {
        match settings {
            Settings::MinHash(s) => Method::MinHash {
                jaccard: s.jaccard,
                bands: s.bands,
                key_bits: s.band_key_bits,
                tokens: s.extra.get(super::settings::TOKENS).is_some_and(|v| v == "1"),
            },
            Settings::Simhash(s) => Method::Simhash {
                tables: Tables::new(s.blocks, s.max_distance).expect("validated settings"),
            },
        }
    }

    pub(crate) fn shape(&self, settings: &Settings) -> Shape {
        match (self, settings) {
            (Method::MinHash { bands, .. }, Settings::MinHash(s)) => Shape {
                kind: KIND_MINHASH,
                columns: *bands,
                key_bytes: s.band_key_bits as usize / 8,
            },
            (Method::Simhash { tables }, _) => {
                Shape { kind: KIND_SIMHASH, columns: tables.len(), key_bytes: 8 }
            }
            _ => unreachable!("a method of other settings"),
        }
    }
}

impl DiskIndex {
    /// Opens the index in `dir` as of its last commit: reads the manifest and checks every
    /// segment's size, header and footer (the time does not grow with the index's size).
    ///
    /// Errors: [`NotFound`](DiskErrorKind::NotFound) when nothing is at `dir` (it does not
    /// exist, or is empty), [`Corrupt`](DiskErrorKind::Corrupt) naming the file (a segment
    /// of another index among them; and `dir` itself when it holds files but no manifest:
    /// not an index, or one whose manifest is lost), [`Version`](DiskErrorKind::Version).
    pub fn open(dir: impl AsRef<Path>) -> Result<DiskIndex, DiskError> {
        let dir = dir.as_ref();
        for _ in 0..OPEN_RETRIES {
            let Some(manifest) = Manifest::read(dir)? else {
                return Err(no_manifest(dir)?);
            };
            let generation = manifest.generation;
            match DiskIndex::from_manifest(dir, manifest) {
                Ok(index) => return Ok(index),
                // A compaction may have removed a segment after the manifest was read:
                // then there is a newer manifest, to read again.
                Err(e) if e.kind() == DiskErrorKind::NotFound => {
                    if Manifest::read(dir)?.map(|m| m.generation) == Some(generation) {
                        let path = e.path().unwrap_or(dir).to_path_buf();
                        return Err(DiskError::corrupt(
                            &path,
                            "a segment the manifest lists is missing",
                        ));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(DiskError::new(
            DiskErrorKind::Io,
            Some(&dir.join(MANIFEST)),
            "the index kept changing while it was opened",
        ))
    }

    /// [`open`](DiskIndex::open), then checks that the index was made with `settings`:
    /// otherwise a [`SettingsMismatch`](DiskErrorKind::SettingsMismatch) error names each
    /// differing setting.
    pub fn open_with(dir: impl AsRef<Path>, settings: &Settings) -> Result<DiskIndex, DiskError> {
        let index = DiskIndex::open(dir)?;
        index.check_settings(settings)?;
        Ok(index)
    }

    pub(crate) fn from_manifest(dir: &Path, manifest: Manifest) -> Result<DiskIndex, DiskError> {
        let method = Method::of(&manifest.settings);
        let shape = method.shape(&manifest.settings);
        let mut parts = Vec::with_capacity(manifest.segments.len());
        let mut base = 0;
        for entry in &manifest.segments {
            let path = dir.join(&entry.name);
            let id = entry.expected_id(&manifest);
            let segment = Segment::open(&path, entry.bytes, entry.docs, shape, id)?;
            parts.push(Part { segment, base });
            base += entry.docs;
        }
        Ok(DiskIndex {
            dir: dir.to_path_buf(),
            manifest,
            parts,
            method,
            small: OnceLock::new(),
            own: OnceLock::new(),
            spared: AtomicU64::new(0),
        })
    }

    /// The index's id (128 random bits, made with the index, in the manifest and in every
    /// segment's header); none for an index of format version 1 that no writer of this
    /// version has committed to.
    pub fn index_id(&self) -> Option<u128> {
        self.manifest.index
    }

    /// Checks that the index was made with `settings`.
    pub fn check_settings(&self, settings: &Settings) -> Result<(), DiskError> {
        let differing = self.manifest.settings.differences(settings);
        if differing.is_empty() {
            Ok(())
        } else {
            Err(DiskError::mismatch(&self.dir.join(MANIFEST), differing))
        }
    }

    /// The settings the index was made with.
    pub fn settings(&self) -> &Settings {
        &self.manifest.settings
    }

    /// The index's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Documents in the index.
    pub fn len(&self) -> u64 {
        self.manifest.documents()
    }

    /// True when the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The generation of the commit this reader sees.
    pub fn generation(&self) -> u64 {
        self.manifest.generation
    }

    pub(crate) fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub(crate) fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.parts.iter().map(|p| &p.segment)
    }

    /// Documents, segments, bytes on disk, generation and settings.
    pub fn stats(&self) -> Stats {
        let manifest_bytes = self.manifest.encode().len() as u64;
        Stats {
            documents: self.len(),
            segments: self.parts.len(),
            bytes: self.manifest.segments.iter().map(|s| s.bytes).sum::<u64>() + manifest_bytes,
            generation: self.manifest.generation,
            settings: self.manifest.settings.clone(),
        }
    }

    fn part_of(&self, doc: u64) -> Option<&Part> {
        let i = self.parts.partition_point(|p| p.base <= doc);
        let part = &self.parts[i.checked_sub(1)?];
        (doc - part.base < part.segment_docs()).then_some(part)
    }

    /// The id of document `doc`. Errors: no such document
    /// ([`Invalid`](DiskErrorKind::Invalid)), or a corrupt segment.
    pub fn id(&self, doc: u64) -> Result<&str, DiskError> {
        let part = self.part_of(doc).ok_or_else(|| {
            DiskError::invalid(format!("no document {doc} in an index of {}", self.len()))
        })?;
        part.segment.id_str((doc - part.base) as usize)
    }

    /// The document whose id is `id`, if any (hashes locate it, strings decide).
    pub fn find_id(&self, id: &str) -> Result<Option<u64>, DiskError> {
        for part in &self.parts {
            if let Some(d) = part.segment.find_id(id)? {
                return Ok(Some(part.base + u64::from(d)));
            }
        }
        Ok(None)
    }

    fn minhash(&self) -> Result<(f64, usize, u32), DiskError> {
        match self.method {
            Method::MinHash { jaccard, bands, key_bits, .. } => Ok((jaccard, bands, key_bits)),
            Method::Simhash { .. } => Err(DiskError::invalid("a MinHash query of a simhash index")),
        }
    }

    fn tables(&self) -> Result<&Tables, DiskError> {
        match &self.method {
            Method::Simhash { tables } => Ok(tables),
            Method::MinHash { .. } => Err(DiskError::invalid("a simhash query of a MinHash index")),
        }
    }

    /// Every indexed document that shares a band key with `sketch` and whose shingle set
    /// has an exact Jaccard similarity of at least the index's threshold with it, in
    /// ascending document order: what [`find_matches`](crate::lsh::find_matches) pairs it
    /// with, had it been added after the indexed documents.
    pub fn query_sketch(&self, sketch: &DocSketch) -> Result<Vec<JaccardHit<u64>>, DiskError> {
        let mut hits = Vec::new();
        self.search_sketch(sketch, &mut |_, _| Ok(false), &mut hits)?;
        Ok(hits)
    }

    /// The first match of [`query_sketch`](DiskIndex::query_sketch) (the lowest document
    /// number: the earliest added), found without verifying the later candidates.
    pub fn first_sketch(&self, sketch: &DocSketch) -> Result<Option<JaccardHit<u64>>, DiskError> {
        let mut hits = Vec::new();
        self.search_sketch(sketch, &mut |_, _| Ok(true), &mut hits)?;
        Ok(hits.pop())
    }

    /// The first match of [`query_sketch`](DiskIndex::query_sketch) whose [`Relation`] to
    /// `sketch` (the record's, as the removed side) `templates` acts on, with that
    /// relation: what `dedup --against` removes a record for. With `before` (the record's
    /// own indexed copy, [`find_copy`](DiskIndex::find_copy)), only the documents added
    /// before it: those it was compared with when it was added (relations are directed: a
    /// later document that contains it was kept for its own content, and must not remove
    /// it on a rerun). The relation is read from the tokens stored with each document; an
    /// index made before tokens were stored reads every match as [`Relation::Same`].
    pub fn first_sketch_acted(
        &self,
        sketch: &DocSketch,
        before: Option<u64>,
        templates: Templates,
    ) -> Result<Option<(JaccardHit<u64>, Relation)>, DiskError> {
        let mine = Prepared::new(sketch.tokens().to_vec());
        // Content of its own in no indexed document: every relation is an overlap (the
        // filter only errs towards "held", so the answer is that of comparing them all).
        if let Some((all, ends)) = self.own_windows()?
            && mine.known_to_overlap(all, ends)
        {
            return Ok(None);
        }
        let (mut tokens, mut relation, mut found) = (Vec::new(), Relation::Same, false);
        let mut spared = 0;
        let mut accept = |doc: u64, payload: &[u64]| -> Result<bool, DiskError> {
            if before.is_some_and(|own| doc >= own) {
                return Ok(false);
            }
            tokens.clear();
            if self.has_tokens() {
                payload::tokens(payload, &mut tokens);
            }
            relation = if tokens.is_empty() { Relation::Same } else { mine.relation(&tokens) };
            found = templates.acts_on(relation);
            spared += u64::from(relation == Relation::Overlap);
            Ok(found)
        };
        let mut hits = Vec::new();
        self.search_sketch(sketch, &mut accept, &mut hits)?;
        self.spared.fetch_add(spared, Ordering::Relaxed);
        Ok(if found { hits.pop().map(|hit| (hit, relation)) } else { None })
    }

    /// The filter of the index's windows ([`DiskIndex::own`]), made at the first call
    /// after the queries have met enough matches not acted on.
    fn own_windows(&self) -> Result<Option<&(KeptWindows, KeptEnds)>, DiskError> {
        if let Some(own) = self.own.get() {
            return Ok(own.as_ref());
        }
        if !self.has_tokens() || self.spared.load(Ordering::Relaxed) < SPARED_BEFORE_OWN {
            return Ok(None);
        }
        let made = self.make_own_windows()?;
        // Two threads may make it at once: the first one set is kept (both are the same).
        Ok(self.own.get_or_init(|| made).as_ref())
    }

    /// Reads every document's tokens twice: to count their windows, then into a filter of
    /// 16 bits a window (none past [`OWN_MAX_WINDOWS`]), with each one's first and last
    /// window ([`KeptEnds`]).
    fn make_own_windows(&self) -> Result<Option<(KeptWindows, KeptEnds)>, DiskError> {
        let (mut payload, mut tokens) = (Vec::new(), Vec::new());
        let mut each = |f: &mut dyn FnMut(&[u32]) -> bool| -> Result<bool, DiskError> {
            for part in &self.parts {
                for d in 0..part.segment.docs() {
                    part.segment.read_payload(d, &mut payload)?;
                    // A document without a sketch is no one's candidate (and would read as
                    // a text with no tokens, to which every relation is the same).
                    if payload::set(&payload).is_empty() {
                        continue;
                    }
                    payload::tokens(&payload, &mut tokens);
                    if !f(&tokens) {
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        };
        let mut windows = 0usize;
        if !each(&mut |t| {
            windows += t.len().max(1);
            windows <= OWN_MAX_WINDOWS
        })? {
            return Ok(None);
        }
        let (mut all, mut ends) = (KeptWindows::sized(windows, 16), KeptEnds::default());
        let mut hashes = Vec::new();
        each(&mut |t| {
            window_hashes(t, &mut hashes);
            all.insert_hashes(&hashes);
            ends.insert_hashes(&hashes);
            true
        })?;
        Ok(Some((all, ends)))
    }

    /// Whether the documents' payloads carry their tokens.
    fn has_tokens(&self) -> bool {
        matches!(self.method, Method::MinHash { tokens: true, .. })
    }

    /// Whether the filter of the index's windows was made, and can answer (no document with
    /// a sketch and no tokens; for tests).
    #[cfg(test)]
    pub(crate) fn made_own_windows(&self) -> bool {
        self.own.get().is_some_and(|own| own.as_ref().is_some_and(|(all, _)| !all.has_empty()))
    }

    /// Whether short queries have been answered from the prefix index of the small
    /// documents (for tests).
    #[cfg(test)]
    pub(crate) fn used_small_docs(&self) -> bool {
        self.small.get().is_some_and(Option::is_some)
    }

    /// The [`SmallDocs`], made at the first call (none when the index has too few small
    /// documents, or its threshold lets sets match with no shingle in common).
    fn small_docs(&self) -> Result<Option<&SmallDocs>, DiskError> {
        if let Some(small) = self.small.get() {
            return Ok(small.as_ref());
        }
        let made = self.make_small_docs()?;
        // Two threads may make it at once: the first one set is kept (both are the same).
        Ok(self.small.get_or_init(|| made).as_ref())
    }

    /// Reads every document's set once and indexes the prefixes of those of at most
    /// [`SmallSets::index_max`] shingles, in document order.
    fn make_small_docs(&self) -> Result<Option<SmallDocs>, DiskError> {
        let (threshold, ..) = self.minhash()?;
        let Some(index_max) =
            SmallSets::of_sets(std::iter::empty(), threshold).map(|empty| empty.index_max())
        else {
            return Ok(None);
        };
        let stored_tokens = self.has_tokens();
        let (mut flat, mut ends, mut docs) = (Vec::new(), Vec::new(), Vec::new());
        let mut payload = Vec::new();
        for part in &self.parts {
            for d in 0..part.segment.docs() {
                part.segment.read_payload(d, &mut payload)?;
                let set = if stored_tokens { payload::set(&payload) } else { &payload[..] };
                if (1..=index_max).contains(&set.len()) {
                    if flat.len() + set.len() > SMALL_MAX_SHINGLES {
                        return Ok(None);
                    }
                    flat.extend_from_slice(set);
                    ends.push(flat.len());
                    docs.push(part.base + d as u64);
                }
            }
        }
        if docs.len() < SMALL_MIN {
            return Ok(None);
        }
        let set_of = |i: usize| &flat[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
        let Some(mut sets) = SmallSets::of_sets((0..docs.len()).map(set_of), threshold) else {
            return Ok(None);
        };
        let mut scratch = Vec::new();
        for i in 0..docs.len() {
            let ordinal = u32::try_from(i).map_err(|_| {
                DiskError::invalid("more small documents than a prefix index holds")
            })?;
            sets.insert(set_of(i), ordinal, &mut scratch)
                .map_err(|e| DiskError::invalid(e.to_string()))?;
        }
        Ok(Some(SmallDocs { sets, docs }))
    }

    /// [`search_sketch`](DiskIndex::search_sketch) of a short query through the
    /// [`SmallDocs`]: the documents whose prefix meets the query's, in document order,
    /// kept when they share a band key with it (as the band buckets find them) and verify.
    fn search_small(
        &self,
        small: &SmallDocs,
        sketch: &DocSketch,
        keys: &[u64],
        stop: &mut Stop<'_>,
        hits: &mut Vec<JaccardHit<u64>>,
    ) -> Result<(), DiskError> {
        let (threshold, ..) = self.minhash()?;
        let (mut scratch, mut ordinals, mut payload) = (Vec::new(), Vec::new(), Vec::new());
        small.sets.candidates(sketch.set(), 0, true, &mut scratch, &mut ordinals);
        for &ordinal in &ordinals {
            let id = small.docs[ordinal as usize];
            let part = &self.parts[self.parts.partition_point(|p| p.base <= id) - 1];
            let d = (id - part.base) as u32;
            let jaccard = self.jaccard_to(&part.segment, d, sketch, &mut payload)?;
            if jaccard >= threshold
                && shares_band(&part.segment, d, keys)?
                && found(stop, hits, id, jaccard, &payload)?
            {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The exact Jaccard similarity of `sketch` to document `d` of `segment`, whose stored
    /// payload is read into `payload`.
    fn jaccard_to(
        &self,
        segment: &Segment,
        d: u32,
        sketch: &DocSketch,
        payload: &mut Vec<u64>,
    ) -> Result<f64, DiskError> {
        segment.read_payload(d as usize, payload)?;
        let stored = if self.has_tokens() { payload::set(payload) } else { &payload[..] };
        Ok(simhash_core::jaccard(stored, sketch.set()))
    }

    /// [`query_sketch`](DiskIndex::query_sketch) of each sketch (none for a document
    /// without features, which matches nothing), in parallel on rayon's current pool; the
    /// answers are in input order.
    pub fn query_sketches(
        &self,
        sketches: &[Option<DocSketch>],
    ) -> Result<Vec<Vec<JaccardHit<u64>>>, DiskError> {
        sketches
            .par_iter()
            .map(|s| s.as_ref().map_or(Ok(Vec::new()), |s| self.query_sketch(s)))
            .collect()
    }

    /// The verified matches of `sketch`, in document order, into `hits`; `stop(doc,
    /// payload)` of each says whether it is the one to stop at (kept, the last), or (false)
    /// to go on (every match kept when it never stops, none but the last when it does).
    fn search_sketch(
        &self,
        sketch: &DocSketch,
        stop: &mut Stop<'_>,
        hits: &mut Vec<JaccardHit<u64>>,
    ) -> Result<(), DiskError> {
        let (threshold, bands, key_bits) = self.minhash()?;
        let keys = stored_keys(sketch, bands, key_bits)?;
        // A short query that would meet a flood in the band buckets: the same answer from
        // the prefix index of the small documents.
        if (1..=PROBE_MAX).contains(&sketch.set().len()) {
            let mut flood = 0usize;
            'count: for part in &self.parts {
                for (c, &key) in keys.iter().enumerate() {
                    flood += part.segment.column_range(c, key, key)?.len();
                    if flood > SMALL_FLOOD {
                        break 'count;
                    }
                }
            }
            if flood > SMALL_FLOOD
                && let Some(small) = self.small_docs()?
            {
                return self.search_small(small, sketch, &keys, stop, hits);
            }
        }
        let (mut candidates, mut set) = (Vec::new(), Vec::new());
        for part in &self.parts {
            let seg = &part.segment;
            candidates.clear();
            for (c, &key) in keys.iter().enumerate() {
                for i in seg.column_range(c, key, key)? {
                    candidates.push(seg.column_doc(c, i)?);
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
            for &d in &candidates {
                let jaccard = self.jaccard_to(seg, d, sketch, &mut set)?;
                if jaccard >= threshold
                    && found(stop, hits, part.base + u64::from(d), jaccard, &set)?
                {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Every indexed fingerprint within the index's maximum distance of `fp`, as
    /// [`Hit`]s of document numbers, in ascending document order: what
    /// [`all_pairs`](crate::all_pairs) pairs it with.
    pub fn query_fingerprint(&self, fp: Fingerprint) -> Result<Vec<Hit<u64>>, DiskError> {
        let mut hits = Vec::new();
        self.search_fingerprint(fp, false, &mut hits)?;
        Ok(hits)
    }

    /// The first match of [`query_fingerprint`](DiskIndex::query_fingerprint) (the lowest
    /// document number).
    pub fn first_fingerprint(&self, fp: Fingerprint) -> Result<Option<Hit<u64>>, DiskError> {
        let mut hits = Vec::new();
        self.search_fingerprint(fp, true, &mut hits)?;
        Ok(hits.pop())
    }

    /// [`query_fingerprint`](DiskIndex::query_fingerprint) of each fingerprint (none for a
    /// document without features), in parallel; the answers are in input order.
    pub fn query_fingerprints(
        &self,
        fps: &[Option<Fingerprint>],
    ) -> Result<Vec<Vec<Hit<u64>>>, DiskError> {
        fps.par_iter().map(|f| f.map_or(Ok(Vec::new()), |f| self.query_fingerprint(f))).collect()
    }

    fn search_fingerprint(
        &self,
        fp: Fingerprint,
        first: bool,
        hits: &mut Vec<Hit<u64>>,
    ) -> Result<(), DiskError> {
        let tables = self.tables()?;
        let k = tables.max_distance();
        let (mut candidates, mut payload) = (Vec::new(), Vec::new());
        for part in &self.parts {
            let seg = &part.segment;
            candidates.clear();
            for (c, table) in tables.iter().enumerate() {
                let mask = u64::MAX << (64 - table.prefix_bits());
                let lo = table.permute(fp) & mask;
                for i in seg.column_range(c, lo, lo | !mask)? {
                    candidates.push(seg.column_doc(c, i)?);
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
            for &d in &candidates {
                seg.read_payload(d as usize, &mut payload)?;
                let [other] = payload[..] else {
                    return Err(DiskError::corrupt(
                        seg.path(),
                        format!("document {d} has no single fingerprint"),
                    ));
                };
                let distance = (other ^ fp.0).count_ones();
                if distance <= k {
                    hits.push(Hit { distance, id: part.base + u64::from(d) });
                    if first {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads every byte of every segment and checks it: each file's checksum against the
    /// manifest's, and each block's against the file's table. Errors name the file.
    pub fn verify(&self) -> Result<(), DiskError> {
        for (part, entry) in self.parts.iter().zip(&self.manifest.segments) {
            let file = part.segment.file();
            if file.whole_checksum() != entry.checksum {
                return Err(DiskError::corrupt(
                    file.path(),
                    "the segment file does not match the manifest's checksum",
                ));
            }
            file.check_all_blocks()?;
        }
        Ok(())
    }
}

impl DiskIndex {
    /// What is stored of document `doc`: its shingle set, ascending (MinHash), or its
    /// fingerprint as one value (simhash); empty for a document without features. For a
    /// front end that must tell identical documents apart (as `simhash pairs` collapses
    /// them).
    ///
    /// Errors: no such document ([`Invalid`](DiskErrorKind::Invalid)), or a corrupt segment.
    pub fn read_payload(&self, doc: u64, out: &mut Vec<u64>) -> Result<(), DiskError> {
        self.read_raw(doc, out)?;
        if self.has_tokens() {
            let len = payload::set(out).len();
            out.truncate(len);
        }
        Ok(())
    }

    /// The tokens stored of document `doc` ([`simhash_core::token_word`]s in text order),
    /// into `out` (cleared first): empty for a simhash index, a document without features,
    /// or an index made before tokens were stored.
    pub fn read_tokens(&self, doc: u64, out: &mut Vec<u32>) -> Result<(), DiskError> {
        out.clear();
        if self.has_tokens() {
            let mut raw = Vec::new();
            self.read_raw(doc, &mut raw)?;
            payload::tokens(&raw, out);
        }
        Ok(())
    }

    /// What is stored of document `doc`, whole.
    fn read_raw(&self, doc: u64, out: &mut Vec<u64>) -> Result<(), DiskError> {
        let part = self.part_of(doc).ok_or_else(|| {
            DiskError::invalid(format!("no document {doc} in an index of {}", self.len()))
        })?;
        part.segment.read_payload((doc - part.base) as usize, out)
    }
}

impl DiskIndex {
    /// The indexed document that *is* a record: the one stored under `id` whose payload
    /// ([`read_payload`](DiskIndex::read_payload): the shingle set, ascending, or the
    /// fingerprint; empty for a document without features) equals `payload`. A front end
    /// that reruns an input already added tells its records from their duplicates this
    /// way: a record is not a near-duplicate of itself. None when the id is not indexed or
    /// holds other content.
    ///
    /// Errors: a corrupt segment.
    pub fn find_copy(&self, id: &str, payload: &[u64]) -> Result<Option<u64>, DiskError> {
        let Some(doc) = self.find_id(id)? else {
            return Ok(None);
        };
        let mut stored = Vec::new();
        self.read_payload(doc, &mut stored)?;
        Ok((stored == payload).then_some(doc))
    }

    /// [`first_sketch`](DiskIndex::first_sketch), passing over document `except` (the
    /// record itself: [`find_copy`](DiskIndex::find_copy)).
    pub fn first_sketch_except(
        &self,
        sketch: &DocSketch,
        except: Option<u64>,
    ) -> Result<Option<JaccardHit<u64>>, DiskError> {
        match except {
            None => self.first_sketch(sketch),
            Some(doc) => Ok(self.query_sketch(sketch)?.into_iter().find(|hit| hit.id != doc)),
        }
    }

    /// [`first_fingerprint`](DiskIndex::first_fingerprint), passing over document `except`.
    pub fn first_fingerprint_except(
        &self,
        fp: Fingerprint,
        except: Option<u64>,
    ) -> Result<Option<Hit<u64>>, DiskError> {
        match except {
            None => self.first_fingerprint(fp),
            Some(doc) => Ok(self.query_fingerprint(fp)?.into_iter().find(|hit| hit.id != doc)),
        }
    }
}

impl Part {
    fn segment_docs(&self) -> u64 {
        use super::segment::Source;
        self.segment.docs() as u64
    }
}

/// A sketch's band keys as an index of `bands` bands and `key_bits`-bit keys stores them.
/// A verified match `id` (its stored `payload`) of a search: added to `hits`; or, when
/// `stop` accepts it, made the only hit, and true (the search ends there).
fn found(
    stop: &mut Stop<'_>,
    hits: &mut Vec<JaccardHit<u64>>,
    id: u64,
    jaccard: f64,
    payload: &[u64],
) -> Result<bool, DiskError> {
    let stops = stop(id, payload)?;
    if stops {
        hits.clear();
    }
    hits.push(JaccardHit { id, jaccard });
    Ok(stops)
}

/// Whether document `doc` of `segment` has one of `keys` (one per column) in its column:
/// the column's entries are sorted by `(key, doc)`, so it is found by binary search in
/// the key's run.
fn shares_band(segment: &Segment, doc: u32, keys: &[u64]) -> Result<bool, DiskError> {
    for (c, &key) in keys.iter().enumerate() {
        let range = segment.column_range(c, key, key)?;
        let (mut lo, mut hi) = (range.start, range.end);
        while lo < hi {
            let mid = usize::midpoint(lo, hi);
            if segment.column_doc(c, mid)? < doc {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < range.end && segment.column_doc(c, lo)? == doc {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(crate) fn stored_keys(
    sketch: &DocSketch,
    bands: usize,
    key_bits: u32,
) -> Result<Vec<u64>, DiskError> {
    if sketch.bands().len() != bands {
        return Err(DiskError::invalid(format!(
            "a sketch of {} band keys for an index of {bands} bands",
            sketch.bands().len()
        )));
    }
    if key_bits == 64 {
        return sketch.band_hashes().ok_or_else(|| {
            DiskError::invalid("a sketch of 32-bit band keys for an index of 64-bit keys")
        });
    }
    Ok(sketch.bands().iter().map(|&k| u64::from(k)).collect())
}

/// A MinHash document's payload in an index that stores tokens: the shingle set, the
/// tokens two to a value (the first in the low half), and one value: the set's length
/// (low half) and the tokens' (high half). Empty for a document without features.
pub(crate) mod payload {
    /// The payload of `set` and `tokens`.
    pub(crate) fn encode(set: &[u64], tokens: &[u32], out: &mut Vec<u64>) {
        out.clear();
        if set.is_empty() {
            return;
        }
        out.extend_from_slice(set);
        out.extend(
            tokens.chunks(2).map(|c| u64::from(c[0]) | (u64::from(*c.get(1).unwrap_or(&0)) << 32)),
        );
        out.push(set.len() as u64 | ((tokens.len() as u64) << 32));
    }

    /// The lengths a payload records (none for an empty or malformed one).
    fn lengths(payload: &[u64]) -> Option<(usize, usize)> {
        let &last = payload.last()?;
        let (set, tokens) = ((last & 0xffff_ffff) as usize, (last >> 32) as usize);
        (set + tokens.div_ceil(2) + 1 == payload.len()).then_some((set, tokens))
    }

    /// The shingle set of a payload.
    pub(crate) fn set(payload: &[u64]) -> &[u64] {
        lengths(payload).map_or(&[][..], |(set, _)| &payload[..set])
    }

    /// The tokens of a payload, into `out`.
    pub(crate) fn tokens(payload: &[u64], out: &mut Vec<u32>) {
        out.clear();
        if let Some((set, n)) = lengths(payload) {
            for &v in &payload[set..payload.len() - 1] {
                out.push(v as u32);
                out.push((v >> 32) as u32);
            }
            out.truncate(n);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn payloads_give_back_their_set_and_tokens() {
            let mut out = Vec::new();
            for (stored, tokens) in [
                (vec![1u64, 5, 9], vec![7u32, 8, 9]),
                (vec![u64::MAX], vec![]),
                (vec![2, 3], vec![u32::MAX, 0, 1, 2]),
                (vec![], vec![4]),
            ] {
                encode(&stored, &tokens, &mut out);
                assert_eq!(set(&out), &stored[..]);
                let mut back = Vec::new();
                super::tokens(&out, &mut back);
                let want: &[u32] = if stored.is_empty() { &[] } else { &tokens };
                assert_eq!(back, want);
            }
            // A payload that does not add up (a set stored before tokens were) has neither.
            assert!(set(&[1, 2, 3]).is_empty());
        }
    }
}
