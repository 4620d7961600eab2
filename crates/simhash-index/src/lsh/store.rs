//! Where the sketches of a corpus live while it is searched: the [`SketchStore`] trait, and
//! two stores, [`MemoryStore`] and [`SpillStore`] (band hashes and shingle sets in unnamed
//! temporary files).

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::keys::{ranked_rows, ranks, unfold};
use super::{BandKeyWidth, DocSketch, EngineError, EngineErrorKind};

/// The sketches of a corpus, indexed by document (`0..len`, in the order they were pushed;
/// documents without features have none). The searches ([`find_matches`](super::find_matches),
/// [`walk`](super::walk), [`components`](super::components)) read them through this trait,
/// from rayon's worker threads.
///
/// Contract: [`push`](SketchStore::push) in document order, then
/// [`finish`](SketchStore::finish) (idempotent) before any read; the reads of a document
/// return what was pushed for it. A store may refuse pushes after `finish`
/// ([`EngineErrorKind::Finished`]). Two stores holding the same sketches give every search
/// the same result.
pub trait SketchStore: Send + Sync {
    /// Band hashes per sketch.
    fn bands(&self) -> usize;

    /// Documents pushed (with or without a sketch).
    fn len(&self) -> usize;

    /// True when no document was pushed.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the next document's sketch (none when it has no features).
    ///
    /// Errors: [`EngineErrorKind::Mismatch`] for a sketch of another number of bands,
    /// [`EngineErrorKind::TooManyDocuments`] past `u32::MAX` documents, and I/O errors.
    fn push(&mut self, sketch: Option<&DocSketch>) -> Result<(), EngineError>;

    /// Ends writing: sketches can be read from now on.
    fn finish(&mut self) -> Result<(), EngineError>;

    /// Whether `doc` has a sketch.
    fn has(&self, doc: usize) -> bool;

    /// A hash of `doc`'s shingle set (equal sets, equal hashes; 0 without a sketch).
    fn set_hash(&self, doc: usize) -> u64;

    /// Reads `doc`'s shingle set into `out` (cleared first; empty without a sketch).
    fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), EngineError>;

    /// The size of `doc`'s shingle set (0 without a sketch), without reading it where the
    /// store knows it: a size filter before verification. By default, reads the set.
    fn set_len(&self, doc: usize) -> Result<usize, EngineError> {
        let mut set = Vec::new();
        self.read_set(doc, &mut set)?;
        Ok(set.len())
    }

    /// One band's key of each of `docs` (ascending): 0 for a document without a sketch.
    /// With 64-bit keys ([`band_key_bits`](SketchStore::band_key_bits)), 32-bit values
    /// that are equal exactly when the keys are, among the keys of this call.
    fn column(&self, band: usize, docs: &[u32]) -> Result<Vec<u32>, EngineError>;

    /// Appends the first `band` keys of each of `docs` (ascending) to `out`, row after
    /// row (`band` may be every band). With 64-bit keys, values that are equal exactly when
    /// the keys of the same band are, among the keys of this call.
    fn rows(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> Result<(), EngineError>;

    /// The bits of the band keys the searches group by: 32 (64-bit band hashes folded,
    /// whose chance collisions only add candidates) or 64 (the whole band hashes). Known
    /// once the store is [finished](SketchStore::finish). By default, 32.
    fn band_key_bits(&self) -> u32 {
        32
    }
}

/// The high halves of the band hashes a store keeps, by its [`BandKeyWidth`]: none for
/// `Bits32`; for `Auto`, until a sketch without them comes (then its keys are 32-bit).
fn keeps_high(width: BandKeyWidth, sketch: Option<&DocSketch>) -> Result<bool, EngineError> {
    match (width, sketch) {
        (BandKeyWidth::Bits32, _) => Ok(false),
        (_, None) => Ok(true),
        (_, Some(s)) if s.has_wide_keys() => Ok(true),
        (BandKeyWidth::Bits64, Some(_)) => Err(EngineError::other(
            EngineErrorKind::Mismatch,
            "a sketch of 32-bit band keys for a store of 64-bit keys",
        )),
        (_, Some(_)) => Ok(false),
    }
}

/// What every store keeps in memory: 17 bytes a document.
#[derive(Debug)]
struct DocIndex {
    set_hashes: Vec<u64>,
    /// Start of each document's set, in shingles; one more entry at the end.
    offsets: Vec<u64>,
    has: Vec<bool>,
}

impl DocIndex {
    fn new() -> DocIndex {
        DocIndex { set_hashes: Vec::new(), offsets: vec![0], has: Vec::new() }
    }

    /// Checks `sketch` (whose set has `set_len` shingles) and records it.
    fn push(
        &mut self,
        bands: usize,
        sketch: Option<&DocSketch>,
        set_len: usize,
    ) -> Result<(), EngineError> {
        if self.has.len() >= u32::MAX as usize {
            return Err(EngineError::other(
                EngineErrorKind::TooManyDocuments,
                format!("a store holds at most {} documents", u32::MAX),
            ));
        }
        let end = self.offsets[self.offsets.len() - 1];
        if let Some(s) = sketch {
            if s.bands.len() != bands {
                return Err(EngineError::other(
                    EngineErrorKind::Mismatch,
                    format!("a sketch has {} band hashes, the store {bands}", s.bands.len()),
                ));
            }
            self.set_hashes.push(s.set_hash());
            self.offsets.push(end + set_len as u64);
        } else {
            self.set_hashes.push(0);
            self.offsets.push(end);
        }
        self.has.push(sketch.is_some());
        Ok(())
    }

    /// The range of `doc`'s set, in shingles.
    fn range(&self, doc: usize) -> (u64, u64) {
        (self.offsets[doc], self.offsets[doc + 1])
    }

    /// The size of `doc`'s set.
    fn set_len(&self, doc: usize) -> usize {
        (self.offsets[doc + 1] - self.offsets[doc]) as usize
    }
}

/// Sketches held in memory: the shingle sets (8 bytes a shingle) and band keys (4 bytes
/// a band, 8 when 64-bit keys may be chosen) of every document, and 17 bytes a document.
/// Accepts pushes after a search.
#[derive(Debug)]
pub struct MemoryStore {
    bands: usize,
    index: DocIndex,
    sets: Vec<u64>,
    /// Every document's band keys, one row after another.
    rows: Vec<u32>,
    width: BandKeyWidth,
    /// The high halves of the band hashes, as `rows`, while they are kept.
    high: Option<Vec<u32>>,
}

impl MemoryStore {
    /// An empty store for sketches of `bands` band hashes, whose key width is chosen from
    /// the number of documents ([`BandKeyWidth::Auto`]).
    pub fn new(bands: usize) -> MemoryStore {
        MemoryStore::with_band_keys(bands, BandKeyWidth::Auto)
    }

    /// An empty store for sketches of `bands` band hashes, with keys of `width`: for
    /// `Bits64` (and `Auto`), sketches with wide keys ([`DocSketch::has_wide_keys`]); with
    /// `Auto`, a sketch without them makes the keys 32-bit.
    pub fn with_band_keys(bands: usize, width: BandKeyWidth) -> MemoryStore {
        let high = (width != BandKeyWidth::Bits32).then(Vec::new);
        MemoryStore {
            bands,
            index: DocIndex::new(),
            sets: Vec::new(),
            rows: Vec::new(),
            width,
            high,
        }
    }

    /// The 64-bit key of `doc` in `band`, when the store has them.
    fn wide(&self, high: &[u32], doc: usize, band: usize) -> u64 {
        let at = doc * self.bands + band;
        unfold(self.rows[at], high[at])
    }

    /// The high halves, when the searches use 64-bit keys.
    fn wide_keys(&self) -> Option<&[u32]> {
        self.high.as_deref().filter(|_| self.band_key_bits() == 64)
    }
}

impl SketchStore for MemoryStore {
    fn bands(&self) -> usize {
        self.bands
    }

    fn len(&self) -> usize {
        self.index.has.len()
    }

    fn push(&mut self, sketch: Option<&DocSketch>) -> Result<(), EngineError> {
        let keep_high = self.high.is_some() && keeps_high(self.width, sketch)?;
        self.index.push(self.bands, sketch, sketch.map_or(0, |s| s.set.len()))?;
        match sketch {
            Some(s) => {
                self.sets.extend_from_slice(&s.set);
                self.rows.extend_from_slice(&s.bands);
            }
            None => self.rows.resize(self.rows.len() + self.bands, 0),
        }
        match &mut self.high {
            Some(high) if keep_high => match sketch {
                Some(s) => high.extend_from_slice(&s.high),
                None => high.resize(high.len() + self.bands, 0),
            },
            _ => self.high = None,
        }
        Ok(())
    }

    fn band_key_bits(&self) -> u32 {
        match self.high {
            Some(_) => self.width.bits(self.len() as u64, self.bands),
            None => 32,
        }
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn has(&self, doc: usize) -> bool {
        self.index.has[doc]
    }

    fn set_hash(&self, doc: usize) -> u64 {
        self.index.set_hashes[doc]
    }

    fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), EngineError> {
        let (start, end) = self.index.range(doc);
        out.clear();
        out.extend_from_slice(&self.sets[start as usize..end as usize]);
        Ok(())
    }

    fn set_len(&self, doc: usize) -> Result<usize, EngineError> {
        Ok(self.index.set_len(doc))
    }

    fn column(&self, band: usize, docs: &[u32]) -> Result<Vec<u32>, EngineError> {
        if let Some(high) = self.wide_keys() {
            let keys: Vec<u64> = docs.iter().map(|&d| self.wide(high, d as usize, band)).collect();
            return Ok(ranks(&keys));
        }
        Ok(docs.iter().map(|&d| self.rows[d as usize * self.bands + band]).collect())
    }

    fn rows(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        if let Some(high) = self.wide_keys() {
            ranked_rows(docs.len(), band, |i, k| self.wide(high, docs[i] as usize, k), out);
            return Ok(());
        }
        for &d in docs {
            let at = d as usize * self.bands;
            out.extend_from_slice(&self.rows[at..at + band]);
        }
        Ok(())
    }
}

/// An unnamed temporary file, written front to back once, then read at offsets (the
/// system removes it however the process ends).
#[derive(Debug)]
struct Spill {
    /// The file written to and the bytes not yet written (at most [`WRITE_BYTES`] and
    /// one value), until finished.
    writer: Option<(File, Vec<u8>)>,
    file: File,
    /// u32 values written.
    len: u64,
    /// The whole file in memory, when it fits the cache budget.
    cache: Option<Vec<u32>>,
}

/// Bytes a [`Spill`] gathers before a write call.
const WRITE_BYTES: usize = 1 << 16;

/// Memory the row and set files of a [`SpillStore`] may take when read back whole, instead
/// of a read per lookup: small corpora match from memory, large ones from the page cache.
pub const SPILL_CACHE_BYTES: u64 = 256 << 20;

/// Thread-local buffers larger than this are given back after use (one huge document must
/// not keep every thread's buffer huge).
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Gives back a reused buffer's memory when it grew past [`KEEP_BUFFER_BYTES`].
pub(crate) fn trim<T>(buf: &mut Vec<T>) {
    if buf.capacity() * std::mem::size_of::<T>() > KEEP_BUFFER_BYTES {
        *buf = Vec::new();
    }
}

thread_local! {
    /// A shingle set's words read back, reused.
    static WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Bytes read back from a spill file, reused.
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Spill {
    fn new() -> Result<Spill, EngineError> {
        let file = tempfile::tempfile().map_err(EngineError::temp_file)?;
        let writer =
            file.try_clone().map_err(|e| EngineError::io("cannot open a temporary file", e))?;
        Ok(Spill {
            writer: Some((writer, Vec::with_capacity(WRITE_BYTES + 8))),
            file,
            len: 0,
            cache: None,
        })
    }

    fn append(&mut self, values: &[u32]) -> Result<(), EngineError> {
        self.append_le(values, 1, u32::to_le_bytes)
    }

    /// Appends `values` as their little-endian bytes (`N` bytes, `words` u32 values each),
    /// encoded straight into the spill's buffer: a write call per [`WRITE_BYTES`], not per
    /// value.
    fn append_le<T: Copy, const N: usize>(
        &mut self,
        values: &[T],
        words: u64,
        le: impl Fn(T) -> [u8; N],
    ) -> Result<(), EngineError> {
        let (file, buf) = self.writer.as_mut().ok_or_else(finished)?;
        let mut rest = values;
        while !rest.is_empty() {
            let room = (WRITE_BYTES.saturating_sub(buf.len()) / N).clamp(1, rest.len());
            let (now, later) = rest.split_at(room);
            for &v in now {
                buf.extend_from_slice(&le(v));
            }
            if buf.len() >= WRITE_BYTES {
                file.write_all(buf).map_err(EngineError::write)?;
                buf.clear();
            }
            rest = later;
        }
        self.len += words * values.len() as u64;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        if let Some((mut file, buf)) = self.writer.take() {
            file.write_all(&buf).map_err(EngineError::write)?;
            file.flush().map_err(EngineError::write)?;
        }
        Ok(())
    }

    /// Reads the whole file into memory if it takes at most `*budget` bytes, taking them
    /// from the budget.
    fn cache_within(&mut self, budget: &mut u64) -> Result<(), EngineError> {
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
    fn read(&self, start: u64, count: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
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
            read_at(&self.file, &mut bytes, start * 4).map_err(EngineError::read)?;
            out.extend(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            trim(&mut bytes);
            Ok(())
        })
    }
}

/// The shingle sets' file of a [`SpillStore`]: written at places reserved with an atomic
/// add, a buffer at a time by the store and a batch at a time by [`SetWriter`]s on other
/// threads, so a document's set is wherever its writer put it. The sets' offsets (one set
/// after another in document order, as [`DocIndex`] counts them) map to places in the file
/// by runs: one entry per buffer or batch, not per document.
#[derive(Debug)]
struct SetFile {
    /// The file (every write positional; its `writer` unused) and its cache.
    spill: Spill,
    /// Shingles reserved in the file so far.
    reserved: Arc<AtomicU64>,
    /// From each `offset` on, the sets are at `place` plus the distance, up to the next
    /// entry's offset: `(offset, place)` in shingles, by offset.
    places: Vec<(u64, u64)>,
    /// Sets pushed to the store and not yet written: their bytes, and the first's offset.
    pending: Vec<u8>,
    pending_from: u64,
}

impl SetFile {
    fn new() -> Result<SetFile, EngineError> {
        let mut spill = Spill::new()?;
        spill.writer = None;
        Ok(SetFile {
            spill,
            reserved: Arc::new(AtomicU64::new(0)),
            places: Vec::new(),
            pending: Vec::new(),
            pending_from: 0,
        })
    }

    /// Records that the sets from `offset` on are at `place`.
    fn map(&mut self, offset: u64, place: u64) {
        let follows = self.places.last().is_some_and(|&(o, p)| p + (offset - o) == place);
        if !follows {
            self.places.push((offset, place));
        }
    }

    /// Appends the set at `offset` (the next one) to the pending bytes.
    fn append(&mut self, offset: u64, set: &[u64]) -> Result<(), EngineError> {
        if self.pending.is_empty() {
            self.pending_from = offset;
        }
        for &v in set {
            self.pending.extend_from_slice(&v.to_le_bytes());
        }
        if self.pending.len() >= WRITE_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Records the set at `offset` (the next one) as written at `place`.
    fn placed(&mut self, offset: u64, place: SetPlace) -> Result<(), EngineError> {
        self.flush()?;
        self.map(offset, place.at);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        if !self.pending.is_empty() {
            let place = write_reserved(&self.spill.file, &self.reserved, &self.pending)?;
            self.map(self.pending_from, place);
            self.pending.clear();
            trim(&mut self.pending);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        self.flush()?;
        self.pending = Vec::new();
        // Each shingle is two u32 values.
        self.spill.len = 2 * self.reserved.load(Ordering::Relaxed);
        Ok(())
    }

    /// The place in the file of the shingle at `offset` (in a set: some entry starts at or
    /// before it).
    fn place(&self, offset: u64) -> u64 {
        let i = self.places.partition_point(|&(o, _)| o <= offset);
        let (o, p) = self.places[i.max(1) - 1];
        p + (offset - o)
    }
}

/// Writes `bytes` (whole shingles) to `file` at a place reserved for them; returns the
/// place, in shingles.
fn write_reserved(file: &File, reserved: &AtomicU64, bytes: &[u8]) -> Result<u64, EngineError> {
    let place = reserved.fetch_add((bytes.len() / 8) as u64, Ordering::Relaxed);
    write_at(file, bytes, place * 8).map_err(EngineError::write)?;
    Ok(place)
}

/// Writes shingle sets into a [`SpillStore`]'s set file from any thread, a batch of sets in
/// one write call at a place reserved for them, so that the thread that made the sets
/// copies them (from its own cache) rather than the thread that pushes the sketches
/// ([`SpillStore::push_placed`]).
#[derive(Clone, Debug)]
pub struct SetWriter {
    file: Arc<File>,
    reserved: Arc<AtomicU64>,
}

/// Where a [`SetWriter`] wrote a set: for [`SpillStore::push_placed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetPlace {
    /// In shingles from the file's start.
    at: u64,
    len: u64,
}

impl SetWriter {
    /// Writes the sets of `sketches` one after another and takes them out of the sketches
    /// (their sets are left empty); returns each one's place, in order. `buf` holds the
    /// bytes on the way (reused).
    pub fn write<'a>(
        &self,
        sketches: impl IntoIterator<Item = &'a mut DocSketch>,
        buf: &mut Vec<u8>,
    ) -> Result<Vec<SetPlace>, EngineError> {
        buf.clear();
        let mut places = Vec::new();
        let mut at = 0;
        for sketch in sketches {
            for &v in &sketch.set {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            let len = sketch.set.len() as u64;
            places.push(SetPlace { at, len });
            at += len;
            sketch.set = Vec::new();
        }
        if !buf.is_empty() {
            let start = write_reserved(&self.file, &self.reserved, buf)?;
            for place in &mut places {
                place.at += start;
            }
        }
        Ok(places)
    }
}

/// Values per block of a band's column in the column file (tiny in tests, so that they
/// cover many blocks).
const COLUMN_BLOCK: usize = if cfg!(test) { 5 } else { 1 << 13 };

/// Every band's column of hashes in one file, written in blocks of [`COLUMN_BLOCK`] values
/// per band (so a band reads back in large pieces, and any number of bands takes one file).
#[derive(Debug)]
struct Columns {
    spill: Spill,
    /// Values of each band not yet written.
    pending: Vec<Vec<u32>>,
    /// Each band's blocks: start (in values) and length.
    blocks: Vec<Vec<(u64, usize)>>,
}

impl Columns {
    fn new(bands: usize) -> Result<Columns, EngineError> {
        Ok(Columns {
            spill: Spill::new()?,
            pending: vec![Vec::new(); bands],
            blocks: vec![Vec::new(); bands],
        })
    }

    fn push(&mut self, hashes: &[u32]) -> Result<(), EngineError> {
        for (band, &h) in hashes.iter().enumerate() {
            self.pending[band].push(h);
            if self.pending[band].len() == COLUMN_BLOCK {
                self.flush(band)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self, band: usize) -> Result<(), EngineError> {
        let values = std::mem::take(&mut self.pending[band]);
        if !values.is_empty() {
            self.blocks[band].push((self.spill.len, values.len()));
            self.spill.append(&values)?;
        }
        self.pending[band] = values;
        self.pending[band].clear();
        Ok(())
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        for band in 0..self.pending.len() {
            self.flush(band)?;
        }
        self.pending = Vec::new();
        self.spill.finish()
    }

    /// One band's hash of every document.
    fn read(&self, band: usize) -> Result<Vec<u32>, EngineError> {
        let mut all = Vec::with_capacity(self.blocks[band].iter().map(|b| b.1).sum());
        for &(start, len) in &self.blocks[band] {
            self.spill.read(start, len, &mut all)?;
        }
        Ok(all)
    }
}

/// Sketches in unnamed temporary files, for corpora larger than memory.
///
/// In memory: 17 bytes a document. On disk: each document's 32-bit band keys twice (by
/// band, for sorting one band at a time, and by document, for the ownership test of the
/// documents that share a band) and its shingle set. At [`finish`](SketchStore::finish) the
/// row file, then the set file, is read back into memory if it fits what is left of the
/// cache budget ([`SPILL_CACHE_BYTES`] unless given). Refuses pushes after `finish`.
///
/// The shingle sets may also be written by the threads that make them ([`SetWriter`],
/// then [`push_placed`](SpillStore::push_placed)): each batch at a place reserved in the
/// set file, mapped from the documents' order by one entry per batch.
///
/// Unless its keys are [`BandKeyWidth::Bits32`], the store also writes the high halves of
/// the 64-bit band hashes, by document (4 bytes a band). At `finish` it chooses the key
/// width ([`BandKeyWidth::bits`] of its documents); for 64-bit keys it then writes the high
/// halves by band too (one pass over their file), for 32-bit keys it drops them.
#[derive(Debug)]
pub struct SpillStore {
    bands: usize,
    index: DocIndex,
    sets: SetFile,
    /// Each band's key of every document (0 without a sketch).
    columns: Columns,
    /// Every document's band keys, one row after another.
    rows: Spill,
    /// The band hashes of a document without a sketch.
    zeros: Vec<u32>,
    /// Bytes the row and set files may take in memory when read back.
    cache_bytes: u64,
    finished: bool,
    width: BandKeyWidth,
    /// The high halves of the band hashes, by document, while they are kept; and by band
    /// too once 64-bit keys are chosen.
    high: Option<(Spill, Option<Columns>)>,
}

impl SpillStore {
    /// An empty store for sketches of `bands` band hashes, with a cache budget of
    /// [`SPILL_CACHE_BYTES`]. Creates its temporary files (in `std::env::temp_dir()`).
    pub fn new(bands: usize) -> Result<SpillStore, EngineError> {
        SpillStore::with_cache_bytes(bands, SPILL_CACHE_BYTES)
    }

    /// [`new`](SpillStore::new) with another cache budget (0: every read from the files).
    pub fn with_cache_bytes(bands: usize, cache_bytes: u64) -> Result<SpillStore, EngineError> {
        SpillStore::with_band_keys(bands, BandKeyWidth::Auto, cache_bytes)
    }

    /// An empty store with keys of `width` (see [`MemoryStore::with_band_keys`]) and a
    /// cache budget of `cache_bytes`.
    pub fn with_band_keys(
        bands: usize,
        width: BandKeyWidth,
        cache_bytes: u64,
    ) -> Result<SpillStore, EngineError> {
        let high = if width == BandKeyWidth::Bits32 { None } else { Some((Spill::new()?, None)) };
        Ok(SpillStore {
            bands,
            index: DocIndex::new(),
            sets: SetFile::new()?,
            columns: Columns::new(bands)?,
            rows: Spill::new()?,
            zeros: vec![0; bands],
            cache_bytes,
            finished: false,
            width,
            high,
        })
    }

    /// The sketch of `doc` as it was pushed (none for a document without one), with the
    /// high halves of its band hashes only when the store uses 64-bit keys. The store must
    /// be [finished](SketchStore::finish).
    pub fn sketch(&self, doc: usize) -> Result<Option<DocSketch>, EngineError> {
        if !self.has(doc) {
            return Ok(None);
        }
        let mut bands = Vec::with_capacity(self.bands);
        read_rows(&self.rows, self.bands, &[doc as u32], self.bands, &mut bands)?;
        let mut set = Vec::new();
        self.read_set(doc, &mut set)?;
        let mut sketch = DocSketch::from_parts(bands, set);
        if let Some((high, _)) = self.wide_keys() {
            read_rows(high, self.bands, &[doc as u32], self.bands, &mut sketch.high)?;
        }
        Ok(Some(sketch))
    }

    /// A writer of shingle sets into this store's set file, from any thread, for
    /// [`push_placed`](SpillStore::push_placed).
    pub fn set_writer(&self) -> Result<SetWriter, EngineError> {
        if self.finished {
            return Err(finished());
        }
        let file = self.sets.spill.file.try_clone();
        let file = file.map_err(|e| EngineError::io("cannot open a temporary file", e))?;
        Ok(SetWriter { file: Arc::new(file), reserved: Arc::clone(&self.sets.reserved) })
    }

    /// [`push`](SketchStore::push) for a sketch whose set a [`SetWriter`] of this store
    /// wrote (the sketch as the writer left it, its set taken out) at `place`.
    pub fn push_placed(&mut self, sketch: &DocSketch, place: SetPlace) -> Result<(), EngineError> {
        self.push_with(Some(sketch), Some(place))
    }

    /// Pushes `sketch`, whose set is in it or, when `place` is given, in the set file.
    fn push_with(
        &mut self,
        sketch: Option<&DocSketch>,
        place: Option<SetPlace>,
    ) -> Result<(), EngineError> {
        if self.finished {
            return Err(finished());
        }
        let keep_high = self.high.is_some() && keeps_high(self.width, sketch)?;
        let offset = self.index.offsets[self.index.offsets.len() - 1];
        let set_len = match (sketch, place) {
            (_, Some(place)) => place.len as usize,
            (Some(s), None) => s.set.len(),
            (None, None) => 0,
        };
        self.index.push(self.bands, sketch, set_len)?;
        match &mut self.high {
            Some((spill, _)) if keep_high => {
                spill.append(sketch.map_or(&self.zeros, |s| &s.high))?;
            }
            _ => self.high = None,
        }
        let bands = if let Some(s) = sketch {
            // Each shingle as two u32 words, low first: its little-endian bytes.
            match place {
                Some(place) => self.sets.placed(offset, place)?,
                None => self.sets.append(offset, &s.set)?,
            }
            &s.bands
        } else {
            &self.zeros
        };
        self.columns.push(bands)?;
        self.rows.append(bands)
    }

    /// The high halves by document and by band, when the searches use 64-bit keys.
    fn wide_keys(&self) -> Option<(&Spill, &Columns)> {
        match &self.high {
            Some((rows, Some(columns))) => Some((rows, columns)),
            _ => None,
        }
    }

    /// Whether the row and set files were read back into memory, in that order.
    #[cfg(test)]
    pub(crate) fn cached(&self) -> (bool, bool) {
        (self.rows.cache.is_some(), self.sets.spill.cache.is_some())
    }

    /// The column blocks of `band`, and its column read back whole.
    #[cfg(test)]
    pub(crate) fn column_blocks(&self, band: usize) -> (usize, Vec<u32>) {
        (self.columns.blocks[band].len(), self.columns.read(band).unwrap())
    }
}

impl SketchStore for SpillStore {
    fn bands(&self) -> usize {
        self.bands
    }

    fn len(&self) -> usize {
        self.index.has.len()
    }

    fn push(&mut self, sketch: Option<&DocSketch>) -> Result<(), EngineError> {
        self.push_with(sketch, None)
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        if self.finished {
            return Ok(());
        }
        self.sets.finish()?;
        self.columns.finish()?;
        self.rows.finish()?;
        let wide = self.width.bits(self.len() as u64, self.bands) == 64;
        match self.high.take() {
            Some((mut high, _)) if wide => {
                high.finish()?;
                let columns = transpose(&high, self.bands, self.len())?;
                self.high = Some((high, Some(columns)));
            }
            _ => {}
        }
        let mut budget = self.cache_bytes;
        self.rows.cache_within(&mut budget)?;
        if let Some((high, _)) = &mut self.high {
            high.cache_within(&mut budget)?;
        }
        self.sets.spill.cache_within(&mut budget)?;
        self.finished = true;
        Ok(())
    }

    fn band_key_bits(&self) -> u32 {
        if self.wide_keys().is_some() { 64 } else { 32 }
    }

    fn has(&self, doc: usize) -> bool {
        self.index.has[doc]
    }

    fn set_hash(&self, doc: usize) -> u64 {
        self.index.set_hashes[doc]
    }

    fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), EngineError> {
        let (start, end) = self.index.range(doc);
        out.clear();
        let len = (end - start) as usize;
        if len == 0 {
            return Ok(());
        }
        let start = self.sets.place(start);
        if self.sets.spill.cache.is_none() {
            // Straight from the file's bytes (each shingle is two words, low first: its
            // little-endian bytes).
            return READ_BUF.with(|cell| {
                let mut bytes = cell.borrow_mut();
                bytes.resize(len * 8, 0);
                read_at(&self.sets.spill.file, &mut bytes, start * 8).map_err(EngineError::read)?;
                out.extend(
                    bytes.chunks_exact(8).map(|c| {
                        u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                    }),
                );
                trim(&mut bytes);
                Ok(())
            });
        }
        WORDS.with(|cell| {
            let mut words = cell.borrow_mut();
            words.clear();
            self.sets.spill.read(2 * start, 2 * len, &mut words)?;
            out.extend(words.chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)));
            trim(&mut words);
            Ok(())
        })
    }

    fn set_len(&self, doc: usize) -> Result<usize, EngineError> {
        Ok(self.index.set_len(doc))
    }

    fn column(&self, band: usize, docs: &[u32]) -> Result<Vec<u32>, EngineError> {
        let all = self.columns.read(band)?;
        if let Some((_, high)) = self.wide_keys() {
            let high = high.read(band)?;
            let keys: Vec<u64> =
                docs.iter().map(|&d| unfold(all[d as usize], high[d as usize])).collect();
            return Ok(ranks(&keys));
        }
        Ok(docs.iter().map(|&d| all[d as usize]).collect())
    }

    fn rows(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        if let Some((high, _)) = self.wide_keys() {
            let (mut keys, mut highs) = (Vec::new(), Vec::new());
            read_rows(&self.rows, self.bands, docs, band, &mut keys)?;
            read_rows(high, self.bands, docs, band, &mut highs)?;
            let at = |i: usize, k: usize| unfold(keys[i * band + k], highs[i * band + k]);
            ranked_rows(docs.len(), band, at, out);
            return Ok(());
        }
        read_rows(&self.rows, self.bands, docs, band, out)
    }
}

/// Appends the first `band` values of each of `docs` (ascending) in `spill`, a file of rows
/// of `bands` values, to `out`. Each read covers the rows of as many of the next documents
/// as fit in a window of the file.
fn read_rows(
    spill: &Spill,
    bands: usize,
    docs: &[u32],
    band: usize,
    out: &mut Vec<u32>,
) -> Result<(), EngineError> {
    let width = bands as u64;
    if let Some(rows) = &spill.cache {
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
        spill.read(start, count as usize, &mut buf)?;
        for &d in &docs[i..=j] {
            let at = (u64::from(d) * width - start) as usize;
            out.extend_from_slice(&buf[at..at + band]);
        }
        i = j + 1;
    }
    Ok(())
}

/// The rows of `n` documents of `bands` values in `spill` (finished), written by band: one
/// pass over the file.
fn transpose(spill: &Spill, bands: usize, n: usize) -> Result<Columns, EngineError> {
    let mut columns = Columns::new(bands)?;
    let per_read = (1usize << 16).div_ceil(bands.max(1)).max(1);
    let mut buf = Vec::new();
    let mut doc = 0;
    while doc < n {
        let count = per_read.min(n - doc);
        buf.clear();
        spill.read((doc * bands) as u64, count * bands, &mut buf)?;
        for row in buf.chunks_exact(bands.max(1)) {
            columns.push(row)?;
        }
        doc += count;
    }
    columns.finish()?;
    Ok(columns)
}

/// The error for a push after [`SketchStore::finish`] on a [`SpillStore`].
fn finished() -> EngineError {
    EngineError::other(
        EngineErrorKind::Finished,
        "documents cannot be added to a spilled store after it is searched",
    )
}

#[cfg(unix)]
fn write_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(not(unix))]
fn write_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    // One writer at a time: a cloned handle shares the cursor.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.write_all(buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets of 0 to 40 shingles (none: featureless), by a splitmix sequence.
    fn docs(n: usize, seed: u64) -> Vec<Option<DocSketch>> {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..n)
            .map(|_| {
                let len = next() % 41;
                let mut set: Vec<u64> = (0..len).map(|_| next()).collect();
                set.sort_unstable();
                set.dedup();
                let bands = (0..3).map(|_| next() as u32).collect();
                (len > 0).then(|| DocSketch::from_parts(bands, set))
            })
            .collect()
    }

    #[test]
    fn sets_written_by_set_writers_read_as_pushed() {
        let docs = docs(500, 17);
        let mut memory = MemoryStore::new(3);
        for d in &docs {
            memory.push(d.as_ref()).unwrap();
        }
        for cache in [0, 1 << 30] {
            let mut store = SpillStore::with_cache_bytes(3, cache).unwrap();
            let writer = store.set_writer().unwrap();
            // Batches of 7 documents; every third one pushed with its set, the others
            // written by two threads in no particular order, with sets never pushed between.
            let batches: Vec<Vec<Option<DocSketch>>> = docs.chunks(7).map(<[_]>::to_vec).collect();
            let placed: Vec<Option<Vec<SetPlace>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batches
                    .iter()
                    .enumerate()
                    .map(|(i, batch)| {
                        let writer = writer.clone();
                        let mut batch = batch.clone();
                        scope.spawn(move || {
                            if i % 3 == 0 {
                                return None;
                            }
                            let mut buf = Vec::new();
                            let mut unused = docs_unused(i);
                            writer.write(unused.iter_mut(), &mut buf).unwrap();
                            Some(writer.write(batch.iter_mut().flatten(), &mut buf).unwrap())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (batch, places) in batches.iter().zip(placed) {
                match places {
                    None => batch.iter().for_each(|d| store.push(d.as_ref()).unwrap()),
                    Some(places) => {
                        let mut places = places.into_iter();
                        for d in batch {
                            match d {
                                Some(d) => {
                                    let mut hollow = d.clone();
                                    hollow.set = Vec::new();
                                    store.push_placed(&hollow, places.next().unwrap()).unwrap();
                                }
                                None => store.push(None).unwrap(),
                            }
                        }
                    }
                }
            }
            store.finish().unwrap();
            assert_eq!(store.cached().1, cache > 0);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (doc, sketch) in docs.iter().enumerate() {
                memory.read_set(doc, &mut a).unwrap();
                store.read_set(doc, &mut b).unwrap();
                assert_eq!(a, b, "doc {doc}, cache {cache}");
                assert_eq!(store.set_len(doc).unwrap(), a.len());
                assert_eq!(store.set_hash(doc), memory.set_hash(doc));
                assert_eq!(&store.sketch(doc).unwrap(), sketch, "doc {doc}");
            }
        }
    }

    /// Sketches whose sets are written and never pushed.
    fn docs_unused(seed: usize) -> Vec<DocSketch> {
        docs(3, 1000 + seed as u64).into_iter().flatten().collect()
    }
}
