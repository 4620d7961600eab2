//! [`SpillStore`]: the sketches in unnamed temporary files, for corpora larger than memory.

use std::sync::Arc;

use super::files::{
    Columns, READ_BUF, SetFile, SetPlace, SetWriter, Spill, WORDS, read_at, transpose,
};
use super::{DocIndex, SketchStore, finished, keeps_high, trim};
use crate::lsh::keys::{ranked_rows, ranks, unfold};
use crate::lsh::{BandKeyWidth, DocSketch, EngineError};

/// Memory the row and set files of a [`SpillStore`] may take when read back whole, instead
/// of a read per lookup: small corpora match from memory, large ones from the page cache.
pub const SPILL_CACHE_BYTES: u64 = 256 << 20;

/// Sketches in unnamed temporary files, for corpora larger than memory.
///
/// In memory: 25 bytes a document. On disk: each document's 32-bit band keys twice (by
/// band, for sorting one band at a time, and by document, for the ownership test of the
/// documents that share a band), its shingle set and its tokens (4 bytes a token, read
/// only for the relation of a verified pair). At [`finish`](SketchStore::finish) the
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
    /// Every document's tokens, one after another, and where each document's start (one
    /// more entry at the end).
    tokens: Spill,
    token_offsets: Vec<u64>,
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

    /// An empty store with keys of `width` (see [`MemoryStore::with_band_keys`](super::MemoryStore::with_band_keys)) and a
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
            tokens: Spill::new()?,
            token_offsets: vec![0],
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
        let mut tokens = Vec::new();
        self.read_tokens(doc, &mut tokens)?;
        let mut sketch = DocSketch::from_parts(bands, set).with_tokens(tokens);
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
        if let Some(s) = sketch {
            self.tokens.append(&s.tokens)?;
        }
        self.token_offsets.push(self.tokens.len);
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
        self.tokens.finish()?;
        self.tokens.cache_within(&mut budget)?;
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

    fn read_tokens(&self, doc: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        let (start, end) = (self.token_offsets[doc], self.token_offsets[doc + 1]);
        out.clear();
        self.tokens.read(start, (end - start) as usize, out)
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
