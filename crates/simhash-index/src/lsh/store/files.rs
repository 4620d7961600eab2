//! The unnamed temporary files a [`SpillStore`](super::SpillStore)(super::SpillStore) writes: a file of
//! 32-bit values written once and read at offsets ([`Spill`]), the shingle sets' file
//! ([`SetFile`], written in order or by [`SetWriter`]s at reserved places), and every band's
//! column in blocks ([`Columns`]).

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{finished, trim};
use crate::lsh::{DocSketch, EngineError};

/// An unnamed temporary file, written front to back once, then read at offsets (the
/// system removes it however the process ends).
#[derive(Debug)]
pub(super) struct Spill {
    /// The file written to and the bytes not yet written (at most [`WRITE_BYTES`] and
    /// one value), until finished.
    pub(super) writer: Option<(File, Vec<u8>)>,
    pub(super) file: File,
    /// u32 values written.
    pub(super) len: u64,
    /// The whole file in memory, when it fits the cache budget.
    pub(super) cache: Option<Vec<u32>>,
}

/// Bytes a [`Spill`] gathers before a write call.
const WRITE_BYTES: usize = 1 << 16;

thread_local! {
    /// A shingle set's words read back, reused.
    pub(super) static WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Bytes read back from a spill file, reused.
    pub(super) static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Spill {
    pub(super) fn new() -> Result<Spill, EngineError> {
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

    pub(super) fn append(&mut self, values: &[u32]) -> Result<(), EngineError> {
        self.append_le(values, 1, u32::to_le_bytes)
    }

    /// Appends `values` as their little-endian bytes (`N` bytes, `words` u32 values each),
    /// encoded straight into the spill's buffer: a write call per [`WRITE_BYTES`], not per
    /// value.
    pub(super) fn append_le<T: Copy, const N: usize>(
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

    pub(super) fn finish(&mut self) -> Result<(), EngineError> {
        if let Some((mut file, buf)) = self.writer.take() {
            file.write_all(&buf).map_err(EngineError::write)?;
            file.flush().map_err(EngineError::write)?;
        }
        Ok(())
    }

    /// Reads the whole file into memory if it takes at most `*budget` bytes, taking them
    /// from the budget.
    pub(super) fn cache_within(&mut self, budget: &mut u64) -> Result<(), EngineError> {
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
    pub(super) fn read(
        &self,
        start: u64,
        count: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), EngineError> {
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

/// The shingle sets' file of a [`SpillStore`](super::SpillStore): written at places reserved with an atomic
/// add, a buffer at a time by the store and a batch at a time by [`SetWriter`]s on other
/// threads, so a document's set is wherever its writer put it. The sets' offsets (one set
/// after another in document order, as [`DocIndex`](super::DocIndex) counts them) map to places in the file
/// by runs: one entry per buffer or batch, not per document.
#[derive(Debug)]
pub(super) struct SetFile {
    /// The file (every write positional; its `writer` unused) and its cache.
    pub(super) spill: Spill,
    /// Shingles reserved in the file so far.
    pub(super) reserved: Arc<AtomicU64>,
    /// From each `offset` on, the sets are at `place` plus the distance, up to the next
    /// entry's offset: `(offset, place)` in shingles, by offset.
    pub(super) places: Vec<(u64, u64)>,
    /// Sets pushed to the store and not yet written: their bytes, and the first's offset.
    pub(super) pending: Vec<u8>,
    pub(super) pending_from: u64,
}

impl SetFile {
    pub(super) fn new() -> Result<SetFile, EngineError> {
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
    pub(super) fn map(&mut self, offset: u64, place: u64) {
        let follows = self.places.last().is_some_and(|&(o, p)| p + (offset - o) == place);
        if !follows {
            self.places.push((offset, place));
        }
    }

    /// Appends the set at `offset` (the next one) to the pending bytes.
    pub(super) fn append(&mut self, offset: u64, set: &[u64]) -> Result<(), EngineError> {
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
    pub(super) fn placed(&mut self, offset: u64, place: SetPlace) -> Result<(), EngineError> {
        self.flush()?;
        self.map(offset, place.at);
        Ok(())
    }

    pub(super) fn flush(&mut self) -> Result<(), EngineError> {
        if !self.pending.is_empty() {
            let place = write_reserved(&self.spill.file, &self.reserved, &self.pending)?;
            self.map(self.pending_from, place);
            self.pending.clear();
            trim(&mut self.pending);
        }
        Ok(())
    }

    pub(super) fn finish(&mut self) -> Result<(), EngineError> {
        self.flush()?;
        self.pending = Vec::new();
        // Each shingle is two u32 values.
        self.spill.len = 2 * self.reserved.load(Ordering::Relaxed);
        Ok(())
    }

    /// The place in the file of the shingle at `offset` (in a set: some entry starts at or
    /// before it).
    pub(super) fn place(&self, offset: u64) -> u64 {
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

/// Writes shingle sets into a [`SpillStore`](super::SpillStore)'s set file from any thread, a batch of sets in
/// one write call at a place reserved for them, so that the thread that made the sets
/// copies them (from its own cache) rather than the thread that pushes the sketches
/// ([`SpillStore::push_placed`](super::SpillStore::push_placed)).
#[derive(Clone, Debug)]
pub struct SetWriter {
    pub(super) file: Arc<File>,
    pub(super) reserved: Arc<AtomicU64>,
}

/// Where a [`SetWriter`] wrote a set: for [`SpillStore::push_placed`](super::SpillStore::push_placed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetPlace {
    /// In shingles from the file's start.
    pub(super) at: u64,
    pub(super) len: u64,
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
pub(super) struct Columns {
    pub(super) spill: Spill,
    /// Values of each band not yet written.
    pub(super) pending: Vec<Vec<u32>>,
    /// Each band's blocks: start (in values) and length.
    pub(super) blocks: Vec<Vec<(u64, usize)>>,
}

impl Columns {
    pub(super) fn new(bands: usize) -> Result<Columns, EngineError> {
        Ok(Columns {
            spill: Spill::new()?,
            pending: vec![Vec::new(); bands],
            blocks: vec![Vec::new(); bands],
        })
    }

    pub(super) fn push(&mut self, hashes: &[u32]) -> Result<(), EngineError> {
        for (band, &h) in hashes.iter().enumerate() {
            self.pending[band].push(h);
            if self.pending[band].len() == COLUMN_BLOCK {
                self.flush(band)?;
            }
        }
        Ok(())
    }

    pub(super) fn flush(&mut self, band: usize) -> Result<(), EngineError> {
        let values = std::mem::take(&mut self.pending[band]);
        if !values.is_empty() {
            self.blocks[band].push((self.spill.len, values.len()));
            self.spill.append(&values)?;
        }
        self.pending[band] = values;
        self.pending[band].clear();
        Ok(())
    }

    pub(super) fn finish(&mut self) -> Result<(), EngineError> {
        for band in 0..self.pending.len() {
            self.flush(band)?;
        }
        self.pending = Vec::new();
        self.spill.finish()
    }

    /// One band's hash of every document.
    pub(super) fn read(&self, band: usize) -> Result<Vec<u32>, EngineError> {
        let mut all = Vec::with_capacity(self.blocks[band].iter().map(|b| b.1).sum());
        for &(start, len) in &self.blocks[band] {
            self.spill.read(start, len, &mut all)?;
        }
        Ok(all)
    }
}

/// The rows of `n` documents of `bands` values in `spill` (finished), written by band: one
/// pass over the file.
pub(super) fn transpose(spill: &Spill, bands: usize, n: usize) -> Result<Columns, EngineError> {
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
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    // One reader at a time: a cloned handle shares the cursor.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
