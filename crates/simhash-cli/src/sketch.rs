//! The MinHash method's per-document data: LSH band hashes and each document's shingle set
//! (sorted 64-bit hashes) in unnamed temporary files, the sets read back to verify candidate
//! pairs by their exact Jaccard similarity; and the three searches over them:
//!
//! - [`find_matches`]: every verified pair (for `pairs`);
//! - [`walk`]: the dedup walk (for `dedup` and `cluster --mode star`): records in priority
//!   order, each kept unless it verifies against a record already kept;
//! - [`components`]: the connected components of the verified pairs.
//!
//! All three first collapse documents with identical shingle sets (compared whole, never by
//! a hash), and the last two work per *candidate component* (documents linked by shared
//! band hashes, found with one union per band group, so never a pair per group member
//! pair): a flood of `N` near-identical documents costs about `N × kept`, not `N²`.
//!
//! Memory per document is 17 bytes here (set hash, set offset, flag), and about 30 more
//! while matching (the identical-set pass, a union-find and one band's sorted column for the
//! candidate components, then the walk's decisions: 12 bytes a document and 16 a removal);
//! the band hashes (32-bit, a file of per-band column blocks and one of
//! rows) and the shingle sets (8 bytes a shingle) are on disk, so the LSH sorts one band at
//! a time.

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::Context;
use simhash_core::{Fingerprint, Fingerprinter, MinHasher};
use simhash_index::Banding;

/// How workers sketch a document for the MinHash method.
#[derive(Debug)]
pub struct Sketcher {
    pub minhasher: MinHasher,
    pub banding: Banding,
    /// Also compute the simhash fingerprint (for outputs that show it).
    pub fingerprints: bool,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<(Vec<u64>, Vec<u32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

impl Sketcher {
    /// The fingerprint (when asked for) and sketch of `text`; none for a featureless text.
    pub fn sketch(
        &self,
        fingerprinter: &Fingerprinter,
        text: &str,
    ) -> (Option<Fingerprint>, Option<DocSketch>) {
        let mut fp = None;
        let sketch = SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (features, signature) = &mut *guard;
            features.clear();
            if self.fingerprints {
                fp = fingerprinter.fingerprint_and_features(text, |hash| features.push(hash));
            } else {
                fingerprinter.for_each_feature(text, |hash, _| features.push(hash));
            }
            if features.is_empty() {
                return None;
            }
            signature.resize(self.minhasher.num_perm(), 0);
            self.minhasher.signature_into(features.iter().copied(), signature);
            let mut bands = vec![0; self.banding.bands];
            simhash_core::band_hashes(signature, self.banding.bands, self.banding.rows, &mut bands);
            let bands = bands.iter().map(|&h| (h ^ (h >> 32)) as u32).collect();
            Some(DocSketch { bands, set: simhash_core::shingle_set(features.iter().copied()) })
        });
        (fp, sketch)
    }
}

/// What a worker computes for one document with features.
pub struct DocSketch {
    /// One hash per LSH band, folded to 32 bits (chance collisions only add candidates,
    /// which verification drops).
    pub bands: Vec<u32>,
    /// The distinct 64-bit shingle hashes, sorted.
    pub set: Vec<u64>,
}

impl DocSketch {
    /// A hash of the whole set: documents with equal sets have equal hashes (the members
    /// are already well-mixed hashes, so a cheap fold does; equal hashes are verified).
    fn set_hash(&self) -> u64 {
        let mut h = self.set.len() as u64;
        for &x in &self.set {
            h = (h.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        h ^ (h >> 29)
    }
}

/// An unnamed temporary file, written front to back once, then read at offsets (the
/// system removes it however the process ends).
struct Spill {
    writer: Option<BufWriter<File>>,
    file: File,
    /// u32 values written.
    len: u64,
    /// The whole file in memory, when it fits the cache budget.
    cache: Option<Vec<u32>>,
}

/// Memory the row and set files may take when read back whole, instead of a read per
/// lookup: small corpora match from memory, large ones from the page cache.
const CACHE_BYTES: u64 = 256 << 20;

/// Thread-local buffers larger than this are given back after use (one huge document must
/// not keep every thread's buffer huge).
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Gives back a reused buffer's memory when it grew past [`KEEP_BUFFER_BYTES`].
fn trim<T>(buf: &mut Vec<T>) {
    if buf.capacity() * std::mem::size_of::<T>() > KEEP_BUFFER_BYTES {
        *buf = Vec::new();
    }
}

thread_local! {
    /// A shingle set's words read back, reused.
    static WORDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Bytes read back from a spill file, reused.
    static READ_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Spill {
    fn new() -> anyhow::Result<Spill> {
        let file = crate::output::temp_file("the MinHash sketches")?;
        let writer = file.try_clone().context("cannot open a temporary file")?;
        Ok(Spill {
            writer: Some(BufWriter::with_capacity(1 << 16, writer)),
            file,
            len: 0,
            cache: None,
        })
    }

    fn append(&mut self, values: &[u32]) -> anyhow::Result<()> {
        let writer = self.writer.as_mut().context("internal error: a sketch file is closed")?;
        for v in values {
            writer
                .write_all(&v.to_le_bytes())
                .context("cannot write the MinHash sketches to a temporary file")?;
        }
        self.len += values.len() as u64;
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(mut writer) = self.writer.take() {
            writer.flush().context("cannot write the MinHash sketches to a temporary file")?;
        }
        Ok(())
    }

    /// Reads the whole file into memory if it takes at most `*budget` bytes, taking them
    /// from the budget.
    fn cache_within(&mut self, budget: &mut u64) -> anyhow::Result<()> {
        let bytes = self.len * 4;
        if bytes <= *budget {
            let mut all = Vec::with_capacity(self.len as usize);
            let chunk = 1 << 18;
            let mut at = 0;
            while at < self.len {
                let count = chunk.min(self.len - at) as usize;
                self.read(at, count, &mut all)?;
                at += count as u64;
            }
            self.cache = Some(all);
            *budget -= bytes;
        }
        Ok(())
    }

    /// Appends the `count` values from value `start` to `out`.
    fn read(&self, start: u64, count: usize, out: &mut Vec<u32>) -> anyhow::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if let Some(cache) = &self.cache {
            out.extend_from_slice(&cache[start as usize..start as usize + count]);
            return Ok(());
        }
        READ_BUF.with(|cell| {
            let mut bytes = cell.borrow_mut();
            bytes.resize(count * 4, 0);
            read_at(&self.file, &mut bytes, start * 4)
                .context("cannot read the MinHash sketches back from their temporary file")?;
            out.extend(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            trim(&mut bytes);
            Ok(())
        })
    }
}

/// Values per block of a band's column in the column file (tiny in tests, so that they
/// cover many blocks).
const COLUMN_BLOCK: usize = if cfg!(test) { 5 } else { 1 << 13 };

/// Every band's column of hashes in one file, written in blocks of [`COLUMN_BLOCK`] values
/// per band (so a band reads back in large pieces, and any number of bands takes one file).
struct Columns {
    spill: Spill,
    /// Values of each band not yet written.
    pending: Vec<Vec<u32>>,
    /// Each band's blocks: start (in values) and length.
    blocks: Vec<Vec<(u64, usize)>>,
}

impl Columns {
    fn new(bands: usize) -> anyhow::Result<Columns> {
        Ok(Columns {
            spill: Spill::new()?,
            pending: vec![Vec::new(); bands],
            blocks: vec![Vec::new(); bands],
        })
    }

    fn push(&mut self, hashes: &[u32]) -> anyhow::Result<()> {
        for (band, &h) in hashes.iter().enumerate() {
            self.pending[band].push(h);
            if self.pending[band].len() == COLUMN_BLOCK {
                self.flush(band)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self, band: usize) -> anyhow::Result<()> {
        let values = std::mem::take(&mut self.pending[band]);
        if !values.is_empty() {
            self.blocks[band].push((self.spill.len, values.len()));
            self.spill.append(&values)?;
        }
        self.pending[band] = values;
        self.pending[band].clear();
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        for band in 0..self.pending.len() {
            self.flush(band)?;
        }
        self.pending = Vec::new();
        self.spill.finish()
    }

    /// One band's hash of every document.
    fn read(&self, band: usize) -> anyhow::Result<Vec<u32>> {
        let mut all = Vec::with_capacity(self.blocks[band].iter().map(|b| b.1).sum());
        for &(start, len) in &self.blocks[band] {
            self.spill.read(start, len, &mut all)?;
        }
        Ok(all)
    }
}

/// The sketches of a corpus, indexed by document (documents without features have none).
///
/// In memory: 17 bytes a document. On disk: each document's band hashes twice (by band, for
/// sorting one band at a time, and by document, for the ownership test of the documents
/// that share a band) and its shingle set.
pub struct Sketches {
    bands: usize,
    set_hashes: Vec<u64>,
    /// Start of each document's set in `sets`, in shingles (two u32 words each); one more
    /// entry at the end.
    offsets: Vec<u64>,
    has: Vec<bool>,
    sets: Spill,
    /// Each band's hash of every document (0 without a sketch).
    columns: Columns,
    /// Every document's band hashes, one row after another.
    rows: Spill,
    /// The band hashes of a document without a sketch.
    zeros: Vec<u32>,
    /// Bytes the row and set files may take in memory when read back.
    cache_bytes: u64,
}

impl Sketches {
    pub fn new(bands: usize) -> anyhow::Result<Sketches> {
        Sketches::with_cache(bands, CACHE_BYTES)
    }

    fn with_cache(bands: usize, cache_bytes: u64) -> anyhow::Result<Sketches> {
        Ok(Sketches {
            bands,
            set_hashes: Vec::new(),
            offsets: vec![0],
            has: Vec::new(),
            sets: Spill::new()?,
            columns: Columns::new(bands)?,
            rows: Spill::new()?,
            zeros: vec![0; bands],
            cache_bytes,
        })
    }

    /// Appends the next document's sketch (none when it has no features).
    pub fn push(&mut self, sketch: Option<&DocSketch>) -> anyhow::Result<()> {
        let end = *self.offsets.last().unwrap_or(&0);
        let bands = if let Some(s) = sketch {
            anyhow::ensure!(s.bands.len() == self.bands, "internal error: wrong number of bands");
            self.set_hashes.push(s.set_hash());
            let words: Vec<u32> =
                s.set.iter().flat_map(|&x| [x as u32, (x >> 32) as u32]).collect();
            self.sets.append(&words)?;
            self.offsets.push(end + s.set.len() as u64);
            self.has.push(true);
            &s.bands
        } else {
            self.set_hashes.push(0);
            self.offsets.push(end);
            self.has.push(false);
            &self.zeros
        };
        self.columns.push(bands)?;
        self.rows.append(bands)
    }

    /// Ends writing: sketches can be read from now on. The row file, then the set file, is
    /// read back into memory if it fits what is left of the cache budget ([`CACHE_BYTES`]).
    pub fn finish(&mut self) -> anyhow::Result<()> {
        self.sets.finish()?;
        self.columns.finish()?;
        self.rows.finish()?;
        let mut budget = self.cache_bytes;
        self.rows.cache_within(&mut budget)?;
        self.sets.cache_within(&mut budget)
    }

    pub fn has(&self, doc: usize) -> bool {
        self.has[doc]
    }

    pub fn set_hash(&self, doc: usize) -> u64 {
        self.set_hashes[doc]
    }

    /// Reads a document's shingle set into `out` (cleared first).
    pub fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> anyhow::Result<()> {
        let (start, end) = (self.offsets[doc], self.offsets[doc + 1]);
        out.clear();
        let len = usize::try_from(end - start).context("shingle set too large")?;
        WORDS.with(|cell| {
            let mut words = cell.borrow_mut();
            words.clear();
            self.sets.read(2 * start, 2 * len, &mut words)?;
            out.extend(words.chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)));
            trim(&mut words);
            Ok(())
        })
    }

    /// One band's hash of each of `docs` (ascending).
    fn column(&self, band: usize, docs: &[u32]) -> anyhow::Result<Vec<u32>> {
        let all = self.columns.read(band)?;
        Ok(docs.iter().map(|&d| all[d as usize]).collect())
    }

    /// Appends the first `band` hashes of each of `docs` (ascending) to `out`, row after
    /// row: each read covers the rows of as many of the next documents as fit in a window of
    /// the row file.
    fn earlier(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> anyhow::Result<()> {
        let width = self.bands as u64;
        if let Some(rows) = &self.rows.cache {
            for &d in docs {
                let at = (u64::from(d) * width) as usize;
                out.extend_from_slice(&rows[at..at + band]);
            }
            return Ok(());
        }
        let window = (1u64 << 14).max(width);
        let mut buf = Vec::new();
        let mut i = 0;
        while i < docs.len() {
            let start = u64::from(docs[i]) * width;
            let mut j = i;
            while j + 1 < docs.len() && (u64::from(docs[j + 1]) + 1) * width - start <= window {
                j += 1;
            }
            buf.clear();
            let count = (u64::from(docs[j]) + 1) * width - start;
            self.rows.read(start, count as usize, &mut buf)?;
            for &d in &docs[i..=j] {
                let at = (u64::from(d) * width - start) as usize;
                out.extend_from_slice(&buf[at..at + band]);
            }
            i = j + 1;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    // One reader at a time: a cloned handle shares the cursor.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Receives what [`find_matches`] finds.
pub trait MatchSink: Send {
    /// `doc` has exactly the shingle set of `of`, an earlier document (`of < doc`), which
    /// stands for it in the search: every match of `of` is a match of `doc`.
    fn duplicate(&mut self, doc: u32, of: u32);
    /// `a < b` have a Jaccard similarity of at least the threshold.
    fn pair(&mut self, a: u32, b: u32, jaccard: f64);
}

/// What a search did, for the summary.
#[derive(Debug, Default)]
pub struct MatchStats {
    /// Documents whose shingle set equals an earlier (or higher-priority) one's.
    pub duplicates: u64,
    /// Candidate pairs considered (sharing a band hash, not already decided).
    pub candidates: u64,
    /// Candidate pairs whose exact Jaccard similarity was computed.
    pub verified: u64,
    /// Verified pairs at or above the threshold.
    pub pairs: u64,
    /// Documents in the largest candidate component (walk and components only).
    pub largest_component: u64,
}

impl MatchStats {
    fn add(&mut self, other: &MatchStats) {
        self.candidates += other.candidates;
        self.verified += other.verified;
        self.pairs += other.pairs;
        self.largest_component = self.largest_component.max(other.largest_component);
    }
}

/// Candidate pairs verified together.
const VERIFY_CHUNK: usize = 4096;

/// Documents with identical shingle sets, collapsed: `reps` (ascending) stand for every
/// document with a sketch, and `duplicates` lists `(doc, rep)` for the others, in document
/// order. Each group's representative is its member of lowest `rank` (lowest position
/// without ranks). Equal set hashes are only a hint: sets are compared whole.
struct Collapsed {
    reps: Vec<u32>,
    duplicates: Vec<(u32, u32)>,
}

fn collapse_identical(sketches: &Sketches, rank: Option<&[u32]>) -> anyhow::Result<Collapsed> {
    let n = sketches.has.len();
    let rank_of = |d: usize| rank.map_or(d as u32, |r| r[d]);
    let mut by_hash: Vec<(u64, u32, u32)> = (0..n)
        .filter(|&d| sketches.has(d))
        .map(|d| (sketches.set_hash(d), rank_of(d), d as u32))
        .collect();
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut by_hash[..]);
    let mut is_rep = vec![false; n];
    let mut duplicates = Vec::new();
    let (mut set, mut other) = (Vec::new(), Vec::new());
    for run in by_hash.chunk_by(|x, y| x.0 == y.0) {
        let mut reps: Vec<u32> = vec![run[0].2];
        is_rep[run[0].2 as usize] = true;
        for &(_, _, doc) in &run[1..] {
            sketches.read_set(doc as usize, &mut set)?;
            let mut found = None;
            for &rep in &reps {
                sketches.read_set(rep as usize, &mut other)?;
                if set == other {
                    found = Some(rep);
                    break;
                }
            }
            if let Some(rep) = found {
                duplicates.push((doc, rep));
            } else {
                reps.push(doc);
                is_rep[doc as usize] = true;
            }
        }
    }
    drop(by_hash);
    duplicates.sort_unstable();
    let reps = (0..n as u32).filter(|&d| is_rep[d as usize]).collect();
    Ok(Collapsed { reps, duplicates })
}

/// Every pair of documents whose shingle sets reach `threshold` Jaccard similarity among
/// the LSH candidates: documents with equal sets are collapsed onto the first of them
/// (reported through [`MatchSink::duplicate`]), the others' band hashes give candidate
/// pairs, each once, and each candidate is verified by its exact Jaccard similarity. Runs on
/// the current rayon pool; what the sink receives does not depend on the thread count.
pub fn find_matches(
    sketches: &Sketches,
    threshold: f64,
    sink: &mut dyn MatchSink,
) -> anyhow::Result<MatchStats> {
    let mut stats = MatchStats::default();
    let Collapsed { reps: rep_docs, duplicates } = collapse_identical(sketches, None)?;
    stats.duplicates = duplicates.len() as u64;
    for (doc, rep) in duplicates {
        sink.duplicate(doc, rep);
    }
    // Candidates among the representatives, one band at a time from the band files;
    // `rep_docs[i]` is the document of LSH position `i`.
    let mut error = None;
    // A failed verification stops the scan at its next read.
    let failed = std::sync::atomic::AtomicBool::new(false);
    let stop = || {
        anyhow::ensure!(
            !failed.load(std::sync::atomic::Ordering::Relaxed),
            "stopped after an error"
        );
        Ok(())
    };
    let scan = simhash_index::candidate_pairs_from_columns(
        rep_docs.len(),
        sketches.bands,
        |band| {
            stop()?;
            sketches.column(band, &rep_docs)
        },
        |positions, band, out| {
            stop()?;
            let docs: Vec<u32> = positions.iter().map(|&p| rep_docs[p as usize]).collect();
            sketches.earlier(&docs, band, out)
        },
        |batch| {
            if error.is_some() {
                return;
            }
            stats.candidates += batch.len() as u64;
            for chunk in batch.chunks(VERIFY_CHUNK) {
                let verified: anyhow::Result<Vec<Option<f64>>> = {
                    use rayon::prelude::*;
                    chunk
                        .par_iter()
                        .map(|c| {
                            similarity(sketches, rep_docs[c.a as usize], rep_docs[c.b as usize])
                        })
                        .map(|j| j.map(|j| (j >= threshold).then_some(j)))
                        .collect()
                };
                stats.verified += chunk.len() as u64;
                match verified {
                    Ok(verified) => {
                        for (c, j) in chunk.iter().zip(verified) {
                            if let Some(j) = j {
                                stats.pairs += 1;
                                sink.pair(rep_docs[c.a as usize], rep_docs[c.b as usize], j);
                            }
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                        return;
                    }
                }
            }
        },
    );
    // The verification's own error first: the scan's is then only "stopped".
    match error {
        Some(e) => Err(e),
        None => scan.map(|()| stats),
    }
}

/// The candidate components of `docs` (ascending): documents linked by chains of shared
/// band hashes. One union per member of each band group (never one per pair), so the cost
/// is `bands × n log n` whatever the groups' sizes. Components of two or more documents,
/// each ascending, in order of first member.
fn candidate_components(sketches: &Sketches, docs: &[u32]) -> anyhow::Result<Vec<Vec<u32>>> {
    let mut uf = simhash_cluster::UnionFind::try_new(docs.len()).context("too many documents")?;
    let mut entries: Vec<(u32, u32)> = Vec::with_capacity(docs.len());
    for band in 0..sketches.bands {
        let column = sketches.column(band, docs)?;
        entries.clear();
        entries.extend(column.iter().enumerate().map(|(p, &h)| (h, p as u32)));
        drop(column);
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut entries[..]);
        for group in entries.chunk_by(|x, y| x.0 == y.0) {
            for e in &group[1..] {
                uf.union(group[0].1, e.1).context("clustering failed")?;
            }
        }
    }
    drop(entries);
    let mut by_root: Vec<(u32, u32)> = Vec::with_capacity(docs.len());
    for p in 0..docs.len() as u32 {
        by_root.push((uf.find(p).context("clustering failed")?, p));
    }
    drop(uf);
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut by_root[..]);
    let mut components: Vec<Vec<u32>> = by_root
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|&(_, p)| docs[p as usize]).collect())
        .collect();
    components.sort_unstable_by_key(|c| c[0]);
    Ok(components)
}

/// Each candidate component's band hashes: document `i` of the component has
/// `rows[i * bands..(i + 1) * bands]`.
fn component_rows(sketches: &Sketches, docs: &[u32]) -> anyhow::Result<Vec<u32>> {
    let mut rows = Vec::with_capacity(docs.len() * sketches.bands);
    sketches.earlier(docs, sketches.bands, &mut rows)?;
    Ok(rows)
}

/// The key of a band hash in a per-component bucket map.
fn bucket_key(band: usize, hash: u32) -> u64 {
    ((band as u64) << 32) | u64::from(hash)
}

/// A removed document, the kept one it duplicates, and their Jaccard similarity.
type Removal = (u32, u32, f64);

/// A verified pair that joins two components.
type Edge = (u32, u32);

/// What the dedup walk decided: for each document, the kept record it duplicates
/// (`center[d] == d` when `d` is kept) and, when removed, the Jaccard similarity to it.
#[derive(Debug)]
pub struct Walk {
    pub center: Vec<u32>,
    pub jaccard: Vec<f64>,
}

/// The dedup walk: documents in priority order (`rank[d]`, lowest first: a permutation),
/// each kept unless an already kept document shares a band hash with it and has a
/// Jaccard similarity of at least `threshold` to it; then it is removed as a duplicate of
/// the first such kept document in priority order. Documents with identical shingle sets
/// follow the first of them in priority order (they would be decided alike). No two kept
/// documents that share a band hash verify, and every removed document verifies against
/// its kept one.
///
/// Each candidate component is walked on its own (in parallel; the outcome does not
/// depend on the thread count), with an index of its kept documents' band hashes: a
/// document is compared with the kept documents it shares a band with, in priority order,
/// until one verifies. A flood of `N` near-duplicates with `K` kept costs about `N × K`.
pub fn walk(
    sketches: &Sketches,
    threshold: f64,
    rank: &[u32],
) -> anyhow::Result<(Walk, MatchStats)> {
    use rayon::prelude::*;
    let n = sketches.has.len();
    anyhow::ensure!(rank.len() == n, "internal error: {} ranks for {n} documents", rank.len());
    let Collapsed { reps, duplicates } = collapse_identical(sketches, Some(rank))?;
    let components = candidate_components(sketches, &reps)?;
    let results: Vec<anyhow::Result<(Vec<Removal>, MatchStats)>> =
        components.par_iter().map(|docs| walk_component(sketches, docs, rank, threshold)).collect();
    let mut center: Vec<u32> = (0..n as u32).collect();
    let mut jaccard = vec![0.0; n];
    let mut stats = MatchStats { duplicates: duplicates.len() as u64, ..MatchStats::default() };
    for result in results {
        let (removed, s) = result?;
        stats.add(&s);
        for (doc, kept, j) in removed {
            center[doc as usize] = kept;
            jaccard[doc as usize] = j;
        }
    }
    // A document identical to its group's representative is decided as it is.
    for (doc, rep) in duplicates {
        let (c, j) = (center[rep as usize], jaccard[rep as usize]);
        if c == rep {
            center[doc as usize] = rep;
            jaccard[doc as usize] = 1.0;
        } else {
            center[doc as usize] = c;
            jaccard[doc as usize] = j;
        }
    }
    Ok((Walk { center, jaccard }, stats))
}

/// Records of a candidate component decided together by the walk: each is compared in
/// parallel with the records kept before the chunk, then the chunk is settled in order
/// among the records kept within it. Small in tests, so that they cover many chunks.
const WALK_CHUNK: usize = if cfg!(test) { 7 } else { 4096 };

/// A kept record (component position) that a record verifies against, and their Jaccard
/// similarity.
type Match = (usize, f64);

/// Kept records (component positions, in the order they were kept, which is priority
/// order) and an index of their band hashes, listing kept ordinals.
#[derive(Default)]
struct Kept {
    docs: Vec<usize>,
    buckets: std::collections::HashMap<u64, Vec<u32>>,
}

impl Kept {
    /// The first kept record, in priority order, that shares a band with `row` and whose
    /// Jaccard similarity to `doc` is at least `threshold`; counts into `stats`.
    fn first_match(
        &self,
        sketches: &Sketches,
        doc: u32,
        row: &[u32],
        docs: &[u32],
        threshold: f64,
        stats: &mut MatchStats,
    ) -> anyhow::Result<Option<Match>> {
        SETS.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (set, other) = &mut *guard;
            let mut candidates: Vec<u32> = row
                .iter()
                .enumerate()
                .filter_map(|(band, &h)| self.buckets.get(&bucket_key(band, h)))
                .flatten()
                .copied()
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            stats.candidates += candidates.len() as u64;
            let mut found = None;
            if !candidates.is_empty() {
                sketches.read_set(doc as usize, set)?;
                for &k in &candidates {
                    let k = self.docs[k as usize];
                    sketches.read_set(docs[k] as usize, other)?;
                    stats.verified += 1;
                    let j = simhash_core::jaccard(set, other);
                    if j >= threshold {
                        found = Some((k, j));
                        break;
                    }
                }
            }
            trim(set);
            trim(other);
            Ok(found)
        })
    }

    fn push(&mut self, i: usize, row: &[u32]) {
        let ordinal = self.docs.len() as u32;
        self.docs.push(i);
        for (band, &h) in row.iter().enumerate() {
            self.buckets.entry(bucket_key(band, h)).or_default().push(ordinal);
        }
    }
}

/// [`walk`] in one candidate component (`docs` ascending): the removed documents with the
/// kept document each duplicates and the similarity.
fn walk_component(
    sketches: &Sketches,
    docs: &[u32],
    rank: &[u32],
    threshold: f64,
) -> anyhow::Result<(Vec<Removal>, MatchStats)> {
    use rayon::prelude::*;
    let bands = sketches.bands;
    let rows = component_rows(sketches, docs)?;
    let row = |i: usize| &rows[i * bands..(i + 1) * bands];
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_unstable_by_key(|&i| rank[docs[i] as usize]);
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    let mut kept = Kept::default();
    let mut removed = Vec::new();
    for chunk in order.chunks(WALK_CHUNK) {
        // Against the records kept before the chunk, in parallel (none in the first).
        let before: Vec<anyhow::Result<(Option<Match>, MatchStats)>> = if kept.docs.is_empty() {
            chunk.iter().map(|_| Ok((None, MatchStats::default()))).collect()
        } else {
            chunk
                .par_iter()
                .map(|&i| {
                    let mut s = MatchStats::default();
                    let found =
                        kept.first_match(sketches, docs[i], row(i), docs, threshold, &mut s)?;
                    Ok((found, s))
                })
                .collect()
        };
        // Then in order, against the records kept within the chunk: every one of those
        // comes after every record kept before it.
        let mut within = Kept::default();
        for (&i, result) in chunk.iter().zip(before) {
            let (mut found, s) = result?;
            stats.add(&s);
            if found.is_none() {
                found =
                    within.first_match(sketches, docs[i], row(i), docs, threshold, &mut stats)?;
            }
            if let Some((k, j)) = found {
                stats.pairs += 1;
                removed.push((docs[i], docs[k], j));
            } else {
                within.push(i, row(i));
            }
        }
        for &i in &within.docs {
            kept.push(i, row(i));
        }
    }
    Ok((removed, stats))
}

/// The connected components of the verified pairs: for each document, the edges that
/// join it to the others (a spanning forest: at most `n - 1` pairs, each verified), and
/// the search's counts. Pairs already joined are neither verified nor held: a document is
/// compared with one member at a time of each other component it shares a band with,
/// until one verifies, so a flood of near-duplicates costs about `N` verifications.
/// Documents with identical shingle sets are joined without a comparison.
pub fn components(
    sketches: &Sketches,
    threshold: f64,
) -> anyhow::Result<(Vec<(u32, u32)>, MatchStats)> {
    use rayon::prelude::*;
    let Collapsed { reps, duplicates } = collapse_identical(sketches, None)?;
    let components = candidate_components(sketches, &reps)?;
    let results: Vec<anyhow::Result<(Vec<Edge>, MatchStats)>> =
        components.par_iter().map(|docs| components_component(sketches, docs, threshold)).collect();
    let mut stats = MatchStats { duplicates: duplicates.len() as u64, ..MatchStats::default() };
    let mut edges: Vec<(u32, u32)> = duplicates.iter().map(|&(doc, rep)| (rep, doc)).collect();
    for result in results {
        let (e, s) = result?;
        stats.add(&s);
        edges.extend(e);
    }
    Ok((edges, stats))
}

/// One bucket's documents of one component (as it stood when last looked at).
struct Group {
    root: u32,
    members: Vec<u32>,
}

/// Union-find over a component's positions, by halving.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// The band buckets of a candidate component that hold two or more of its documents (only
/// those can pair anything), numbered densely: `of_doc` lists `(document, bucket)` sorted.
/// One band at a time, so memory is 8 bytes a document while it runs, then only the shared
/// buckets' entries.
struct SharedBuckets {
    buckets: usize,
    of_doc: Vec<(u32, u32)>,
}

fn shared_buckets(rows: &[u32], bands: usize, n: usize) -> SharedBuckets {
    let mut column: Vec<(u32, u32)> = Vec::with_capacity(n);
    let mut of_doc = Vec::new();
    let mut buckets = 0u32;
    for band in 0..bands {
        column.clear();
        column.extend((0..n).map(|i| (rows[i * bands + band], i as u32)));
        column.sort_unstable();
        for group in column.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
            of_doc.extend(group.iter().map(|&(_, doc)| (doc, buckets)));
            buckets += 1;
        }
    }
    of_doc.sort_unstable();
    SharedBuckets { buckets: buckets as usize, of_doc }
}

/// [`components`] in one candidate component (`docs` ascending).
fn components_component(
    sketches: &Sketches,
    docs: &[u32],
    threshold: f64,
) -> anyhow::Result<(Vec<(u32, u32)>, MatchStats)> {
    let bands = sketches.bands;
    let shared = shared_buckets(&component_rows(sketches, docs)?, bands, docs.len());
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    let mut parent: Vec<u32> = (0..docs.len() as u32).collect();
    let mut buckets: Vec<Vec<Group>> = Vec::new();
    buckets.resize_with(shared.buckets, Vec::new);
    let mut edges = Vec::new();
    let (mut set, mut other) = (Vec::new(), Vec::new());
    // Members that failed to verify against the current document: not tried twice.
    let mut failed: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut next = shared.of_doc.iter().peekable();
    for i in 0..docs.len() as u32 {
        failed.clear();
        let mut loaded = false;
        while let Some(&&(_, bucket)) = next.peek().filter(|&&&(doc, _)| doc == i) {
            next.next();
            let groups = &mut buckets[bucket as usize];
            // Roots move as components merge: bring the groups up to date, one per root.
            for g in groups.iter_mut() {
                g.root = find(&mut parent, g.root);
            }
            if groups.len() > 1 {
                groups.sort_by_key(|g| g.root);
                let mut merged: Vec<Group> = Vec::with_capacity(groups.len());
                for g in groups.drain(..) {
                    match merged.last_mut() {
                        Some(last) if last.root == g.root => last.members.extend(g.members),
                        _ => merged.push(g),
                    }
                }
                *groups = merged;
            }
            for g in groups.iter() {
                if find(&mut parent, g.root) == find(&mut parent, i) {
                    continue;
                }
                for &m in &g.members {
                    if failed.contains(&m) {
                        continue;
                    }
                    if !loaded {
                        sketches.read_set(docs[i as usize] as usize, &mut set)?;
                        loaded = true;
                    }
                    sketches.read_set(docs[m as usize] as usize, &mut other)?;
                    stats.candidates += 1;
                    stats.verified += 1;
                    if simhash_core::jaccard(&set, &other) >= threshold {
                        stats.pairs += 1;
                        let (ri, rm) = (find(&mut parent, i), find(&mut parent, m));
                        parent[ri.max(rm) as usize] = ri.min(rm);
                        edges.push((docs[m as usize], docs[i as usize]));
                        break;
                    }
                    failed.insert(m);
                }
            }
            let ri = find(&mut parent, i);
            match groups.iter_mut().find(|g| find(&mut parent, g.root) == ri) {
                Some(g) => g.members.push(i),
                None => groups.push(Group { root: ri, members: vec![i] }),
            }
        }
    }
    trim(&mut set);
    trim(&mut other);
    Ok((edges, stats))
}

thread_local! {
    static SETS: std::cell::RefCell<(Vec<u64>, Vec<u64>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// The exact Jaccard similarity of two documents' shingle sets.
pub fn similarity(sketches: &Sketches, a: u32, b: u32) -> anyhow::Result<f64> {
    SETS.with(|cell| {
        let mut guard = cell.borrow_mut();
        let (set_a, set_b) = &mut *guard;
        sketches.read_set(a as usize, set_a)?;
        sketches.read_set(b as usize, set_b)?;
        let jaccard = simhash_core::jaccard(set_a, set_b);
        trim(set_a);
        trim(set_b);
        Ok(jaccard)
    })
}

#[cfg(test)]
#[allow(clippy::many_single_char_names)] // sets, ranks and thresholds in the oracles
mod tests {
    use super::*;

    /// Records the matches.
    #[derive(Default)]
    struct Record {
        duplicates: Vec<(u32, u32)>,
        pairs: Vec<(u32, u32, u64)>,
    }

    impl MatchSink for Record {
        fn duplicate(&mut self, doc: u32, of: u32) {
            self.duplicates.push((doc, of));
        }
        fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
            self.pairs.push((a, b, jaccard.to_bits()));
        }
    }

    /// xorshift, for reproducible random sets.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// The sketches of documents given as feature lists (empty: featureless), with their
    /// band hashes kept for the oracles.
    struct Fixture {
        store: Sketches,
        sets: Vec<Vec<u64>>,
        bands: Vec<Vec<u32>>,
    }

    fn fixture(docs: &[Vec<u64>], cache_bytes: u64) -> Fixture {
        let minhasher = simhash_core::MinHasher::new(128, 0);
        let banding = simhash_index::Banding::for_threshold(0.3, 128).unwrap();
        let mut store = Sketches::with_cache(banding.bands, cache_bytes).unwrap();
        let (mut sets, mut bands) = (Vec::new(), Vec::new());
        for features in docs {
            let sketch = (!features.is_empty()).then(|| {
                let sig = minhasher.signature(features.iter().copied()).unwrap();
                let mut b = vec![0u64; banding.bands];
                simhash_core::band_hashes(&sig, banding.bands, banding.rows, &mut b);
                DocSketch {
                    bands: b.iter().map(|&h| (h ^ (h >> 32)) as u32).collect(),
                    set: simhash_core::shingle_set(features.iter().copied()),
                }
            });
            sets.push(sketch.as_ref().map(|s| s.set.clone()).unwrap_or_default());
            bands.push(sketch.as_ref().map(|s| s.bands.clone()).unwrap_or_default());
            store.push(sketch.as_ref()).unwrap();
        }
        store.finish().unwrap();
        Fixture { store, sets, bands }
    }

    /// Documents drawn around a few bases (near and exact copies), some featureless.
    fn random_docs(seed: u64, n: u64) -> Vec<Vec<u64>> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|doc| {
                let base = doc % 40;
                if doc % 37 == 5 {
                    return Vec::new();
                }
                (0..60)
                    .map(|i| {
                        if rng.below(10) < doc % 4 { 1000 + rng.below(500) } else { base * 100 + i }
                    })
                    .collect()
            })
            .collect()
    }

    /// A template flood: a shared paragraph and a few own words each; identical copies;
    /// hashes that agree in 32 bits only; and tiny documents.
    fn adversarial_docs(seed: u64) -> Vec<Vec<u64>> {
        let mut rng = Rng(seed);
        let mut docs = Vec::new();
        for _ in 0..150 {
            let mut d: Vec<u64> = (0..40).collect();
            d.extend((0..6 + rng.below(30)).map(|_| 10_000 + rng.below(1_000_000)));
            docs.push(d);
        }
        for i in 0..60u64 {
            docs.push(vec![5_000_000, 5_000_001 + i % 3]);
            docs.push(vec![1 << 32 | i, i]);
            docs.push(vec![i]);
        }
        docs
    }

    fn run(store: &Sketches, threads: usize) -> Record {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut record = Record::default();
        pool.install(|| find_matches(store, 0.4, &mut record)).unwrap();
        record
    }

    fn share_band(f: &Fixture, a: usize, b: usize) -> bool {
        !f.sets[a].is_empty()
            && !f.sets[b].is_empty()
            && f.bands[a].iter().zip(&f.bands[b]).any(|(x, y)| x == y)
    }

    /// The brute-force walk: every kept document is compared, in priority order.
    fn oracle_walk(f: &Fixture, rank: &[u32], t: f64) -> (Vec<u32>, Vec<f64>) {
        let n = f.sets.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&d| rank[d]);
        let mut center: Vec<u32> = (0..n as u32).collect();
        let mut jaccard = vec![0.0; n];
        let mut kept: Vec<usize> = Vec::new();
        for &d in &order {
            let hit = kept.iter().find_map(|&k| {
                let j = simhash_core::jaccard(&f.sets[d], &f.sets[k]);
                let identical = !f.sets[d].is_empty() && f.sets[d] == f.sets[k];
                ((share_band(f, d, k) || identical) && j >= t).then_some((k, j))
            });
            match hit {
                Some((k, j)) => {
                    center[d] = k as u32;
                    jaccard[d] = j;
                }
                None => kept.push(d),
            }
        }
        (center, jaccard)
    }

    /// The brute-force components of the verified candidate pairs.
    fn oracle_components(f: &Fixture, t: f64) -> Vec<u32> {
        let n = f.sets.len();
        let mut uf = simhash_cluster::UnionFind::new(n);
        for a in 0..n {
            for b in a + 1..n {
                if share_band(f, a, b) && simhash_core::jaccard(&f.sets[a], &f.sets[b]) >= t {
                    uf.union(a as u32, b as u32).unwrap();
                }
            }
        }
        (0..n as u32).map(|d| uf.find(d).unwrap()).collect()
    }

    fn same_partition(a: &[u32], b: &[u32]) -> bool {
        let mut map = std::collections::HashMap::new();
        let mut back = std::collections::HashMap::new();
        a.iter()
            .zip(b)
            .all(|(x, y)| *map.entry(x).or_insert(y) == y && *back.entry(y).or_insert(x) == x)
    }

    #[test]
    fn cached_and_file_reads_find_the_same_matches() {
        let docs = random_docs(0x9e37_79b9, 300);
        let cached = fixture(&docs, CACHE_BYTES);
        let on_disk = fixture(&docs, 0);
        let sets = &cached.sets;
        assert!(cached.store.rows.cache.is_some() && cached.store.sets.cache.is_some());
        assert!(on_disk.store.rows.cache.is_none() && on_disk.store.sets.cache.is_none());
        let want = run(&cached.store, 1);
        assert!(want.duplicates.len() > 10 && want.pairs.len() > 50);
        for (store, threads) in [(&cached.store, 3), (&on_disk.store, 1), (&on_disk.store, 3)] {
            let got = run(store, threads);
            assert_eq!(got.duplicates, want.duplicates);
            assert_eq!(got.pairs, want.pairs);
        }
        // Every match is exact: equal sets, or a Jaccard of at least the threshold.
        for &(doc, of) in &want.duplicates {
            assert!(of < doc && sets[doc as usize] == sets[of as usize]);
        }
        for &(a, b, j) in &want.pairs {
            let j = f64::from_bits(j);
            let exact = simhash_core::jaccard(&sets[a as usize], &sets[b as usize]);
            assert_eq!(j.to_bits(), exact.to_bits());
            assert!(a < b && j >= 0.4, "{a} {b} {j}");
        }
        // Sets and columns read back as written, through many column blocks.
        let mut set = Vec::new();
        for (doc, want) in sets.iter().enumerate() {
            on_disk.store.read_set(doc, &mut set).unwrap();
            assert_eq!(&set, want);
        }
        assert!(on_disk.store.columns.blocks[0].len() > 50);
        assert_eq!(on_disk.store.columns.read(3).unwrap(), cached.store.columns.read(3).unwrap());
    }

    #[test]
    fn walk_and_components_agree_with_brute_force() {
        for (seed, docs) in [
            (1, random_docs(0x1234_5678, 300)),
            (2, random_docs(0xdead_beef, 200)),
            (3, adversarial_docs(77)),
        ] {
            let n = docs.len();
            for cache in [CACHE_BYTES, 0] {
                let f = fixture(&docs, cache);
                let mut rng = Rng(seed * 31 + cache);
                let mut shuffled: Vec<u32> = (0..n as u32).collect();
                for i in (1..n).rev() {
                    shuffled.swap(i, rng.below(i as u64 + 1) as usize);
                }
                let identity: Vec<u32> = (0..n as u32).collect();
                for t in [0.4, 0.7] {
                    let want_components = oracle_components(&f, t);
                    for rank in [&identity, &shuffled] {
                        let want = oracle_walk(&f, rank, t);
                        for threads in [1, 3] {
                            let pool = rayon::ThreadPoolBuilder::new()
                                .num_threads(threads)
                                .build()
                                .unwrap();
                            let (got, _) = pool.install(|| walk(&f.store, t, rank)).unwrap();
                            assert_eq!(got.center, want.0, "seed {seed} t {t} threads {threads}");
                            for d in 0..n {
                                assert_eq!(got.jaccard[d].to_bits(), want.1[d].to_bits());
                            }
                            let (edges, _) = pool.install(|| components(&f.store, t)).unwrap();
                            let mut uf = simhash_cluster::UnionFind::new(n);
                            for &(a, b) in &edges {
                                let j =
                                    simhash_core::jaccard(&f.sets[a as usize], &f.sets[b as usize]);
                                assert!(j >= t, "an unverified edge {a} {b}: {j}");
                                uf.union(a, b).unwrap();
                            }
                            let got: Vec<u32> =
                                (0..n as u32).map(|d| uf.find(d).unwrap()).collect();
                            assert!(same_partition(&got, &want_components), "seed {seed} t {t}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn floods_cost_one_comparison_a_document() {
        // 3,000 near-identical documents: one kept, every other compared with it once.
        let mut rng = Rng(5);
        let docs: Vec<Vec<u64>> = (0..3000)
            .map(|_| {
                let mut d: Vec<u64> = (0..100).collect();
                d.extend((0..12).map(|_| 1000 + rng.below(1 << 40)));
                d
            })
            .collect();
        let f = fixture(&docs, CACHE_BYTES);
        let rank: Vec<u32> = (0..3000).collect();
        let (walked, stats) = walk(&f.store, 0.4, &rank).unwrap();
        assert!(walked.center.iter().all(|&c| c == 0));
        assert_eq!(stats.verified, 2999);
        let (edges, stats) = components(&f.store, 0.4).unwrap();
        assert_eq!(edges.len(), 2999);
        assert_eq!(stats.verified, 2999);
        // Identical documents are not compared at all.
        let f = fixture(&vec![(0..50).collect::<Vec<u64>>(); 3000], CACHE_BYTES);
        let (walked, stats) = walk(&f.store, 0.4, &rank).unwrap();
        assert!(walked.center.iter().all(|&c| c == 0) && stats.verified == 0);
        assert_eq!(stats.duplicates, 2999);
    }

    #[test]
    fn different_tiny_texts_are_never_identical() {
        // Two one-shingle documents whose hashes agree in their low 32 bits, or whose
        // halves XOR alike: distinct sets, so neither a duplicate nor a pair.
        let docs = vec![
            vec![0x0000_0001_0000_0005],
            vec![0x0000_0002_0000_0005],
            vec![0x0000_0005_0000_0001],
            vec![0x0000_0004_0000_0000],
        ];
        let f = fixture(&docs, CACHE_BYTES);
        let got = run(&f.store, 1);
        assert!(got.duplicates.is_empty() && got.pairs.is_empty());
        let (walked, _) = walk(&f.store, 0.4, &[0, 1, 2, 3]).unwrap();
        assert_eq!(walked.center, [0, 1, 2, 3]);
    }
}
