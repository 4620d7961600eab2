//! The MinHash method's per-document data: LSH band hashes and each document's shingle set
//! (sorted 32-bit hashes) in unnamed temporary files, the sets read back to verify candidate
//! pairs by their exact Jaccard similarity.
//!
//! Memory per document is 17 bytes here (set hash, set offset, flag), and about 17 more
//! while matching; the band hashes (32-bit, a file of per-band column blocks and one of
//! rows) and the shingle sets (4 bytes a shingle) are on disk, so the LSH sorts one band at
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
    /// The distinct shingle hashes, truncated to 32 bits, sorted.
    pub set: Vec<u32>,
}

impl DocSketch {
    /// A hash of the whole set: documents with equal sets have equal hashes (the members
    /// are already well-mixed hashes, so a cheap fold does; equal hashes are verified).
    fn set_hash(&self) -> u64 {
        let mut h = self.set.len() as u64;
        for &x in &self.set {
            h = (h.rotate_left(26) ^ u64::from(x)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
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
    /// Bytes read back from a spill file, reused.
    static READ_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Spill {
    fn new() -> anyhow::Result<Spill> {
        let file = tempfile::tempfile()
            .context("cannot create a temporary file for the MinHash sketches")?;
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
    /// Start of each document's set in `sets`, in u32 units; one more entry at the end.
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
            self.sets.append(&s.set)?;
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
    pub fn read_set(&self, doc: usize, out: &mut Vec<u32>) -> anyhow::Result<()> {
        let (start, end) = (self.offsets[doc], self.offsets[doc + 1]);
        out.clear();
        self.sets.read(start, usize::try_from(end - start).context("shingle set too large")?, out)
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
    /// Whether `a` and `b` are already known to be in one cluster, so that their pair
    /// need not be verified (for connected components; pair outputs answer false).
    fn joined(&mut self, _a: u32, _b: u32) -> bool {
        false
    }
    /// `a < b` have a Jaccard similarity of at least the threshold.
    fn pair(&mut self, a: u32, b: u32, jaccard: f64);
}

/// What the search did, for the summary.
#[derive(Debug, Default)]
pub struct MatchStats {
    pub duplicates: u64,
    pub candidates: u64,
    pub verified: u64,
    pub pairs: u64,
}

/// Candidate pairs verified together: the `joined` check runs between chunks.
const VERIFY_CHUNK: usize = 4096;

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
    let n = sketches.has.len();
    // Exact duplicates: equal set hashes, then equal sets.
    let mut by_hash: Vec<(u64, u32)> =
        (0..n).filter(|&d| sketches.has(d)).map(|d| (sketches.set_hash(d), d as u32)).collect();
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut by_hash[..]);
    let mut is_rep = vec![false; n];
    let (mut set, mut other) = (Vec::new(), Vec::new());
    for run in by_hash.chunk_by(|x, y| x.0 == y.0) {
        let mut reps: Vec<u32> = vec![run[0].1];
        is_rep[run[0].1 as usize] = true;
        for &(_, doc) in &run[1..] {
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
                sink.duplicate(doc, rep);
                stats.duplicates += 1;
            } else {
                reps.push(doc);
                is_rep[doc as usize] = true;
            }
        }
    }
    drop(by_hash);

    // Candidates among the representatives, in document order.
    let rep_docs: Vec<u32> = (0..n as u32).filter(|&d| is_rep[d as usize]).collect();
    drop(is_rep);
    // Candidates among them, one band at a time from the band files; `rep_docs[i]` is the
    // document of LSH position `i`.
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
                let todo: Vec<(u32, u32)> = chunk
                    .iter()
                    .map(|c| (rep_docs[c.a as usize], rep_docs[c.b as usize]))
                    .filter(|&(a, b)| !sink.joined(a, b))
                    .collect();
                stats.verified += todo.len() as u64;
                let verified: anyhow::Result<Vec<Option<f64>>> = {
                    use rayon::prelude::*;
                    todo.par_iter()
                        .map(|&(a, b)| similarity(sketches, a, b))
                        .map(|j| j.map(|j| (j >= threshold).then_some(j)))
                        .collect()
                };
                match verified {
                    Ok(verified) => {
                        for (&(a, b), j) in todo.iter().zip(verified) {
                            if let Some(j) = j {
                                stats.pairs += 1;
                                sink.pair(a, b, j);
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

thread_local! {
    static SETS: std::cell::RefCell<(Vec<u32>, Vec<u32>)> =
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

    /// Sketches of sets drawn around a few bases (near and exact copies), some empty.
    fn sketches(cache_bytes: u64) -> (Sketches, Vec<Vec<u32>>) {
        let minhasher = simhash_core::MinHasher::new(128, 0).unwrap();
        let banding = simhash_index::Banding::for_threshold(0.3, 128).unwrap();
        let mut state = 0x9e37_79b9_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut store = Sketches::with_cache(banding.bands, cache_bytes).unwrap();
        let mut sets = Vec::new();
        for doc in 0..300u64 {
            let base = doc % 40;
            let features: Vec<u64> = if doc % 37 == 5 {
                Vec::new()
            } else {
                (0..60)
                    .map(|i| if next(10) < doc % 4 { 1000 + next(500) } else { base * 100 + i })
                    .collect()
            };
            let sketch = (!features.is_empty()).then(|| {
                let sig = minhasher.signature(features.iter().copied()).unwrap();
                let mut bands = vec![0u64; banding.bands];
                simhash_core::band_hashes(&sig, banding.bands, banding.rows, &mut bands);
                DocSketch {
                    bands: bands.iter().map(|&h| (h ^ (h >> 32)) as u32).collect(),
                    set: simhash_core::shingle_set(features.iter().copied()),
                }
            });
            sets.push(sketch.as_ref().map(|s| s.set.clone()).unwrap_or_default());
            store.push(sketch.as_ref()).unwrap();
        }
        store.finish().unwrap();
        (store, sets)
    }

    fn run(store: &Sketches, threads: usize) -> Record {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut record = Record::default();
        pool.install(|| find_matches(store, 0.4, &mut record)).unwrap();
        record
    }

    #[test]
    fn cached_and_file_reads_find_the_same_matches() {
        let (cached, sets) = sketches(CACHE_BYTES);
        let (on_disk, _) = sketches(0);
        assert!(cached.rows.cache.is_some() && cached.sets.cache.is_some());
        assert!(on_disk.rows.cache.is_none() && on_disk.sets.cache.is_none());
        let want = run(&cached, 1);
        assert!(want.duplicates.len() > 10 && want.pairs.len() > 50);
        for (store, threads) in [(&cached, 3), (&on_disk, 1), (&on_disk, 3)] {
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
            on_disk.read_set(doc, &mut set).unwrap();
            assert_eq!(&set, want);
        }
        assert!(on_disk.columns.blocks[0].len() > 50);
        assert_eq!(on_disk.columns.read(3).unwrap(), cached.columns.read(3).unwrap());
    }
}
