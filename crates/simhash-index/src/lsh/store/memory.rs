//! [`MemoryStore`]: the sketches in memory.

use super::{DocIndex, SketchStore, keeps_high};
use crate::lsh::keys::{ranked_rows, ranks, unfold};
use crate::lsh::{BandKeyWidth, DocSketch, EngineError};

/// Sketches held in memory: the shingle sets (8 bytes a shingle), tokens (4 bytes a token)
/// and band keys (4 bytes a band, 8 when 64-bit keys may be chosen) of every document, and
/// 25 bytes a document.
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
    /// Every document's tokens, one after another, and where each document's start (one
    /// more entry at the end).
    tokens: Vec<u32>,
    token_offsets: Vec<u64>,
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
            tokens: Vec::new(),
            token_offsets: vec![0],
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
                self.tokens.extend_from_slice(&s.tokens);
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
        self.token_offsets.push(self.tokens.len() as u64);
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

    fn read_tokens(&self, doc: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        let (start, end) = (self.token_offsets[doc], self.token_offsets[doc + 1]);
        out.clear();
        out.extend_from_slice(&self.tokens[start as usize..end as usize]);
        Ok(())
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
