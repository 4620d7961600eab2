//! The documents of one run, read by a parallel pipeline: one reader thread, a bounded
//! channel of numbered batches, fingerprint workers, and this thread putting the results
//! back in input order.

use std::borrow::Cow;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{
    DocSketch, SPILL_CACHE_BYTES, SetPlace, SetWriter, SketchStore, Sketcher, SpillStore,
};
use simhash_io::{
    BlockLines, Body, HashLines, IdKey, IdKeys, IdTable, LineReader, LineStatus, Problem, Reason,
    Source,
};

use crate::report::Reporter;

/// How a line becomes a document: its record (read by `parser`), and for text the
/// fingerprint and, with a sketcher, the MinHash sketch.
#[derive(Clone, Debug)]
pub struct Reading {
    pub parser: simhash_io::Parser,
    /// Set for JSONL records: a text without one would be featureless.
    pub fingerprinter: Option<Fingerprinter>,
    pub sketcher: Option<std::sync::Arc<Sketcher>>,
}

impl Reading {
    /// Records that are hashes already (hash TSV, simhash-cpp's input).
    pub fn hashes(parser: simhash_io::Parser) -> Reading {
        Reading { parser, fingerprinter: None, sketcher: None }
    }
}

pub struct ReadOptions {
    pub reading: Reading,
    pub threads: usize,
    pub max_record_bytes: u64,
    pub sample: Option<(u64, u64)>,
    /// Keep standard input in a temporary file for a second pass.
    pub spool: bool,
    /// Keep each record's hash and nothing else (8 bytes a record): simhash-cpp's input
    /// for `find-all`, which needs no ids, lines or lengths; see [`Corpus::take_hashes`].
    pub compact: bool,
    /// Hash each record's line even when it is read once ([`Corpus::tag_line_ids`] needs
    /// the hashes); `spool` implies it.
    pub line_hashes: bool,
}

impl ReadOptions {
    fn hash_lines(&self) -> bool {
        self.spool || self.line_hashes
    }
}

/// The documents: for each, its id, fingerprint (none when featureless), line and length.
/// Memory grows with the number of documents, never with their text.
#[derive(Default)]
pub struct Corpus {
    /// The ids read from the input; empty when ids are line numbers (`generated`).
    ids: IdTable,
    /// The records have no ids: each one's id is its 0-based line number in the
    /// concatenation of the inputs, made when asked for rather than kept.
    generated: bool,
    /// With `generated`, the tag of this input ([`Corpus::tag_line_ids`]): each id is
    /// `TAG:LINE`, so that the ids of different inputs added to one index differ.
    id_tag: Option<String>,
    /// None when featureless.
    fps: Vec<Option<Fingerprint>>,
    /// Read with [`ReadOptions::compact`]: the hashes alone, in input order, and no other
    /// per-record field (`fps`, `lines` and the rest stay empty).
    compact: Option<Vec<Fingerprint>>,
    /// The id was a JSON number (or a line number), not a string.
    numeric: Vec<bool>,
    /// Each document's line number in the concatenation of the input files (1-based).
    lines: Vec<u64>,
    lens: Vec<u64>,
    /// The lines of each input file (header and blank lines included), as first read.
    shard_lines: Vec<u64>,
    /// Each record's line hash, when the input is read twice (dedup).
    line_hashes: Vec<u64>,
    /// Each record's byte offset in its input file (decompressed), when the input is read
    /// twice: the second pass reads the records it wants there.
    offsets: Vec<u64>,
    keep_line_hashes: bool,
    /// The MinHash method's sketches, when the parser makes them.
    pub sketches: Option<SpillStore>,
    no_features: usize,
    /// Records read (lines, bar the TSV header and blank lines), including skipped and not
    /// sampled ones.
    pub records: u64,
    /// Blank lines: not records, so neither read nor skipped, but counted.
    pub blank_lines: u64,
    /// Valid records left out by --sample.
    pub not_sampled: u64,
    pub bytes: u64,
}

impl Corpus {
    pub fn len(&self) -> usize {
        self.compact.as_ref().map_or(self.fps.len(), Vec::len)
    }

    /// The hashes of a corpus read with [`ReadOptions::compact`], in input order (records
    /// without one, which simhash-cpp's input never has, left out); empty otherwise.
    pub fn take_hashes(&mut self) -> Vec<Fingerprint> {
        self.compact.take().unwrap_or_default()
    }

    pub fn id(&self, doc: usize) -> Cow<'_, str> {
        if self.generated {
            let line = self.lines[doc] - 1;
            Cow::Owned(match &self.id_tag {
                None => line.to_string(),
                Some(tag) => format!("{tag}:{line}"),
            })
        } else {
            Cow::Borrowed(self.ids.get(doc))
        }
    }

    /// Whether each document's id is its 0-based line number (the records had none), so
    /// that ids sort as documents do.
    pub fn ids_are_line_numbers(&self) -> bool {
        self.generated
    }

    /// The id as it appeared: a JSON number (or a line number), or a string.
    pub fn id_value(&self, doc: usize) -> simhash_io::IdValue<'_> {
        simhash_io::IdValue {
            text: self.id(doc),
            number: self.numeric[doc] && self.id_tag.is_none(),
        }
    }

    /// For a run whose records have no ids and that adds to or matches against a persistent
    /// index: each id becomes `TAG:LINE`, where `TAG` (16 hex digits) is a hash of the
    /// inputs' names (`inputs`: their absolute paths, symlinks resolved) and of every
    /// record's line in order. Ids then stay unique across the inputs added to one index
    /// (line numbers alone restart at 0 in every run), and the same files read again have
    /// the same ids, so that a rerun finds its records already indexed; the same lines in
    /// another file are another input. Needs the line hashes (a corpus read for two passes,
    /// or [`ReadOptions::line_hashes`]); returns the tag, or none when the records have ids
    /// (or there are none).
    pub fn tag_line_ids(&mut self, inputs: &[&Path]) -> Option<&str> {
        if !self.generated || self.line_hashes.len() != self.fps.len() || self.fps.is_empty() {
            return None;
        }
        let mut bytes = Vec::with_capacity(16 * self.line_hashes.len());
        for input in inputs {
            let path = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
            bytes.extend_from_slice(path.as_os_str().as_encoded_bytes());
            bytes.push(0);
        }
        for (hash, line) in self.line_hashes.iter().zip(&self.lines) {
            bytes.extend_from_slice(&hash.to_le_bytes());
            bytes.extend_from_slice(&line.to_le_bytes());
        }
        let tag = format!("{:016x}", simhash_io::line_hash(&bytes));
        Some(self.id_tag.insert(tag))
    }

    pub fn fingerprint(&self, doc: usize) -> Option<Fingerprint> {
        self.fps[doc]
    }

    /// Every document's fingerprint, None when featureless.
    pub fn fingerprints(&self) -> &[Option<Fingerprint>] {
        &self.fps
    }

    /// The document's line number in the concatenation of the input files (1-based).
    pub fn line(&self, doc: usize) -> u64 {
        self.lines[doc]
    }

    /// The lines of each input file (header and blank lines included), as first read.
    pub fn shard_lines(&self) -> &[u64] {
        &self.shard_lines
    }

    /// The hash of the document's line as read ([`simhash_io::line_hash`]), if kept.
    pub fn line_hash(&self, doc: usize) -> Option<u64> {
        self.line_hashes.get(doc).copied()
    }

    /// Where the document's line starts in its input file (decompressed), if kept (with the
    /// line hashes; not for Parquet rows).
    pub fn offset(&self, doc: usize) -> Option<u64> {
        self.offsets.get(doc).copied()
    }

    pub fn lens(&self) -> &[u64] {
        &self.lens
    }

    /// Documents whose text has no features: no fingerprint, or no MinHash sketch when the
    /// run sketches.
    pub fn featureless(&self) -> usize {
        self.no_features
    }

    /// Adds records without ids (each one's id is its line number), no sketches and no
    /// line hashes, at once: the lines `lines` (plus `offset`) hold the hashes `fps`.
    fn extend_line_numbered(&mut self, lines: &[u64], fps: &[Option<Fingerprint>], offset: u64) {
        if let Some(hashes) = &mut self.compact {
            let before = hashes.len();
            hashes.extend(fps.iter().flatten());
            self.no_features += fps.len() - (hashes.len() - before);
            return;
        }
        if self.fps.is_empty() {
            self.generated = true;
        }
        debug_assert!(self.generated && !self.keep_line_hashes && self.sketches.is_none());
        self.no_features += fps.iter().filter(|fp| fp.is_none()).count();
        self.fps.extend_from_slice(fps);
        self.lines.extend(lines.iter().map(|&l| l + offset));
        let n = self.fps.len();
        self.numeric.resize(n, true);
        self.lens.resize(n, 0);
    }

    /// Adds a document; its sketch's set is in the sketch or, when `place` is given, where
    /// a worker wrote it.
    fn push(
        &mut self,
        id: &str,
        meta: Meta,
        sketch: Option<&DocSketch>,
        place: Option<SetPlace>,
    ) -> anyhow::Result<()> {
        let Meta { numeric, generated, fp, line, len, line_hash, offset } = meta;
        if let Some(hashes) = &mut self.compact {
            match fp {
                Some(fp) => hashes.push(fp),
                None => self.no_features += 1,
            }
            return Ok(());
        }
        if self.keep_line_hashes {
            self.line_hashes.push(line_hash);
            self.offsets.push(offset);
        }
        if let Some(sketches) = &mut self.sketches {
            match (sketch, place) {
                (Some(sketch), Some(place)) => sketches.push_placed(sketch, place)?,
                _ => sketches.push(sketch)?,
            }
            self.no_features += usize::from(sketch.is_none());
        } else {
            self.no_features += usize::from(fp.is_none());
        }
        // The first record decides (a corpus never mixes the two kinds of ids).
        if self.fps.is_empty() {
            self.generated = generated;
        }
        if !generated {
            self.ids.push(id);
        }
        debug_assert_eq!(generated, self.generated);
        self.numeric.push(numeric);
        self.fps.push(fp);
        self.lines.push(line);
        self.lens.push(len);
        Ok(())
    }
}

/// What the corpus keeps of a record besides its id and sketch.
#[derive(Clone, Copy)]
struct Meta {
    /// The id is a JSON number (or a line number).
    numeric: bool,
    /// The id is the line number (the record has none): not kept, made when asked for.
    generated: bool,
    fp: Option<Fingerprint>,
    line: u64,
    len: u64,
    line_hash: u64,
    /// Where the line starts in its file.
    offset: u64,
}

/// A run of lines as read, all from one input file.
struct RawBatch {
    seq: u64,
    /// The input file (index into the run's sources).
    shard: usize,
    /// Input bytes the batch covers, line endings and skipped lines included.
    bytes: u64,
    /// Lines of its file the batch covers (header and blank lines included), when the
    /// reader counted them (not for a `span`, whose worker counts them).
    file_lines: u64,
    data: Vec<u8>,
    /// Per line: its number in the file, end offset in `data`, and status.
    lines: Vec<(u64, usize, LineStatus)>,
    /// Per line: where it starts in the file.
    starts: Vec<u64>,
    /// Rows of a Parquet file instead of lines, as decoded (the workers read their text
    /// where Arrow put it, already checked as UTF-8), and the number of the first (0-based).
    rows: Option<(simhash_io::RowBatch, u64)>,
    /// The file cannot be read as records: reported for the whole file, which counts no
    /// line.
    failed: Option<Problem>,
    /// Hash input: `data` holds whole lines, not yet split (`lines` is empty); the workers
    /// split and parse them all at once.
    block: Option<HashBlock>,
    /// A block of a regular file that the worker reads itself: the lines that start in
    /// it, numbered from 1 (`data` and `lines` are empty).
    span: Option<Span>,
}

/// A block of a regular file, for a worker to read with positional reads
/// ([`simhash_io::read_block`]): the kernel's copy of the bytes and the splitting of lines
/// happen on the worker's core, not the reader's.
struct Span {
    file: Arc<File>,
    start: u64,
    end: u64,
}

/// Where a block of whole lines of hash input is in its file.
#[derive(Clone, Copy)]
struct HashBlock {
    /// The number in the file of the block's first line (1-based).
    first_line: u64,
    /// A line too long to hold follows the block's lines: its length, terminator
    /// included (its bytes were skipped).
    too_long: Option<u64>,
}

/// A batch after parsing, in the same order.
struct ParsedBatch {
    seq: u64,
    /// The worker that parsed it.
    worker: usize,
    shard: usize,
    bytes: u64,
    /// Lines of its file the batch covers.
    file_lines: u64,
    ids: String,
    /// Per line: its number in the file (in the block, from 1, for a `span`), and the
    /// record or the problem.
    items: Vec<(u64, Parsed)>,
    /// The items are numbered from the batch's first line, not from the file's.
    relative: bool,
    /// A block that could not be read: the number in the block of the line that failed,
    /// and why (its items are left out; the run fails).
    read_error: Option<(u64, std::io::Error)>,
    /// The batch's shingle sets could not be written (the run fails).
    failed_write: Option<simhash_index::lsh::EngineError>,
    failed: Option<Problem>,
    /// A block of hash input: the number in the file of its first line, and its records
    /// and problems (`items` is empty).
    hashes: Option<(u64, HashLines)>,
}

const BATCH_LINES: usize = 2048;
const BATCH_BYTES: usize = 4 << 20;

/// The size of a block of hash input: a worker's share, cut at a line end.
const HASH_BLOCK_BYTES: usize = 1 << 20;

/// The size of a block of a regular file of records that a worker reads itself
/// ([`Span`]): it holds the lines that start in it.
const SPAN_BYTES: u64 = 1 << 20;

/// Reads all records of `sources`, as if concatenated, into a corpus, reporting bad ones
/// through `reporter`.
///
/// The files are opened one after the other by the reader thread. Their lines are numbered
/// over the concatenation (a record without an id gets its 0-based line number there, as
/// simhash-dist numbers shards), and each file's lines end at its end: a file without a
/// final newline is read as if it had one. A hash TSV header is skipped at the top of each
/// file. Problems name the file and the line in it.
pub fn read(
    sources: &mut [Source],
    options: &ReadOptions,
    reporter: &mut Reporter,
) -> anyhow::Result<Corpus> {
    let threads = options.threads.max(1);
    let stop = AtomicBool::new(false);
    let (raw_tx, raw_rx) = bounded::<RawBatch>(2 * threads);
    let (done_tx, done_rx) = bounded::<ParsedBatch>(2 * threads);
    // The sketches the collector is done with, back to the worker that made them.
    let (spent_tx, spent_rx): (Vec<_>, Vec<_>) = (0..threads).map(|_| unbounded()).unzip();
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let store = match &options.reading.sketcher {
        Some(sketcher) => {
            let (bands, width) = (sketcher.banding().bands, sketcher.band_keys());
            Some(SpillStore::with_band_keys(bands, width, SPILL_CACHE_BYTES)?)
        }
        None => None,
    };
    // The workers write the shingle sets into the store's file themselves, unless the
    // sample decides which sets to keep after reading.
    let sets = match &store {
        Some(store) if options.sample.is_none() => Some(store.set_writer()?),
        _ => None,
    };

    std::thread::scope(|scope| {
        let stop = &stop;
        // The reader owns the only sender: when it returns, the workers see the end.
        let reader_thread = scope.spawn(move || read_sources(sources, options, &raw_tx, stop));
        for (worker, spent) in spent_rx.into_iter().enumerate() {
            let (rx, tx) = (raw_rx.clone(), done_tx.clone());
            let reading = &options.reading;
            let (max, hash_lines) = (options.max_record_bytes, options.hash_lines());
            let sets = sets.clone();
            let channels = Channels { rx, tx, spent, worker, sets };
            scope.spawn(move || parse_batches(&channels, reading, max, hash_lines));
        }
        drop(raw_rx);
        drop(done_tx);

        let result = collect(&done_rx, &spent_tx, store, options, reporter, &names);
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Let the workers finish: drain what is left so that no sender blocks.
        for _ in &done_rx {}
        let read_result =
            reader_thread.join().map_err(|_| anyhow::anyhow!("reader thread panicked"))?;
        let corpus = result?;
        read_result?;
        Ok(corpus)
    })
}

/// Reads the sources one after the other into batches.
fn read_sources(
    sources: &mut [Source],
    options: &ReadOptions,
    tx: &Sender<RawBatch>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut seq = 0;
    // Records (not hash input) in a regular file: the workers read the file themselves.
    let spans = options.reading.parser.hash_format().is_none();
    for (shard, source) in sources.iter_mut().enumerate() {
        let batches = Batches { tx, stop, shard, seq };
        let parquet = source.path().filter(|p| simhash_io::is_parquet(p)).map(Path::to_path_buf);
        let opened = if spans && parquet.is_none() { source.open_at()? } else { None };
        let next_seq = if let Some(path) = parquet {
            read_parquet(&path, source.size, options, batches)?
        } else if let Some((file, len)) = opened {
            send_spans(file, len, batches)
        } else {
            let reader = source.open(options.spool)?;
            // Hash input goes in blocks of whole lines, which the workers split: one
            // channel message, and no line-at-a-time work on this thread.
            let blocks = options.reading.parser.hash_format().is_some() && !options.spool;
            if blocks {
                read_hash_blocks(reader, options, batches)
            } else {
                read_batches(reader, options, batches)
            }
            .map_err(|(line, e)| {
                anyhow::Error::new(e).context(format!("{}:{line}: read error", source.name))
            })?
        };
        seq = next_seq;
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(())
}

/// Cuts a regular file of `len` bytes into [`Span`]s for the workers to read; returns the
/// next sequence number.
fn send_spans(file: File, len: u64, mut out: Batches<'_>) -> u64 {
    let file = Arc::new(file);
    let mut start = 0;
    while start < len {
        if out.stop.load(Ordering::Relaxed) {
            break;
        }
        let end = len.min(start.saturating_add(SPAN_BYTES));
        let mut batch = out.empty(0);
        batch.bytes = end - start;
        batch.span = Some(Span { file: Arc::clone(&file), start, end });
        if !out.send(batch) {
            break;
        }
        start = end;
    }
    out.seq
}
/// Where one file's batches go: the channel, and the numbers they carry.
struct Batches<'a> {
    tx: &'a Sender<RawBatch>,
    stop: &'a AtomicBool,
    shard: usize,
    /// The next batch's sequence number.
    seq: u64,
}

impl Batches<'_> {
    fn empty(&self, capacity: usize) -> RawBatch {
        RawBatch {
            seq: self.seq,
            shard: self.shard,
            bytes: 0,
            file_lines: 0,
            data: Vec::with_capacity(capacity),
            lines: Vec::new(),
            starts: Vec::new(),
            rows: None,
            failed: None,
            block: None,
            span: None,
        }
    }

    /// Sends `batch`; false when the receiver is gone.
    fn send(&mut self, batch: RawBatch) -> bool {
        self.seq += 1;
        self.tx.send(batch).is_ok()
    }
}

/// Reads one file's lines into batches; returns the next sequence number, or the line and
/// error of a failed read.
fn read_batches(
    reader: Box<dyn Read + Send>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> Result<u64, (u64, std::io::Error)> {
    let parser = &options.reading.parser;
    let mut lines = LineReader::new(reader, options.max_record_bytes);
    let mut batch = out.empty(0);
    let (mut sent_bytes, mut sent_lines) = (0, 0);
    loop {
        let start = lines.bytes;
        let status = match lines.next_line(&mut batch.data, None) {
            Ok(Some(status)) => status,
            Ok(None) => break,
            Err(e) => return Err((lines.line + 1, e)),
        };
        if parser.skips_header(lines.line, &batch.data) {
            batch.data.clear();
            continue;
        }
        batch.lines.push((lines.line, batch.data.len(), status));
        batch.starts.push(start);
        if batch.lines.len() >= BATCH_LINES || batch.data.len() >= BATCH_BYTES {
            if out.stop.load(Ordering::Relaxed) {
                return Ok(out.seq);
            }
            batch.bytes = lines.bytes - sent_bytes;
            sent_bytes = lines.bytes;
            batch.file_lines = lines.line - sent_lines;
            sent_lines = lines.line;
            // A huge line made this batch big: do not keep reserving that much.
            let capacity = batch.data.len().min(BATCH_BYTES + BATCH_BYTES / 4);
            let full = std::mem::replace(&mut batch, out.empty(capacity));
            if !out.send(full) {
                return Ok(out.seq);
            }
            batch.seq = out.seq;
        }
    }
    batch.bytes = lines.bytes - sent_bytes;
    batch.file_lines = lines.line - sent_lines;
    if !batch.lines.is_empty() || batch.bytes > 0 {
        out.send(batch);
    }
    Ok(out.seq)
}

/// Reads one file of hash input into blocks of whole lines of about [`HASH_BLOCK_BYTES`]
/// (a line is never split), for the workers to split and parse
/// ([`simhash_io::parse_hash_lines`]), as [`read_batches`] would read it line by line;
/// returns the next sequence number, or the line and error of a failed read. A line longer than a block is held whole, unless it is over the record
/// limit: then its bytes are counted and skipped, never held.
fn read_hash_blocks(
    mut reader: Box<dyn Read + Send>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> Result<u64, (u64, std::io::Error)> {
    let max = options.max_record_bytes;
    // Complete lines sent so far.
    let mut lines: u64 = 0;
    let mut buf: Vec<u8> = Vec::with_capacity(HASH_BLOCK_BYTES);
    let mut want = HASH_BLOCK_BYTES;
    // A plain loop the compiler vectorizes: no crate for counting bytes.
    #[allow(clippy::naive_bytecount)]
    let newlines = |data: &[u8]| data.iter().filter(|&&b| b == b'\n').count() as u64;
    loop {
        let eof = match fill(&mut reader, &mut buf, want) {
            Ok(eof) => eof,
            Err(e) => return Err((lines + newlines(&buf) + 1, e)),
        };
        if eof && buf.is_empty() {
            break;
        }
        let (data, too_long) = if eof {
            (std::mem::take(&mut buf), None)
        } else if let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            let rest = buf[end + 1..].to_vec();
            buf.truncate(end + 1);
            want = HASH_BLOCK_BYTES.max(rest.len() + HASH_BLOCK_BYTES / 2);
            let mut next = Vec::with_capacity(want);
            next.extend_from_slice(&rest);
            (std::mem::replace(&mut buf, next), None)
        } else if buf.len() as u64 > max.saturating_add(2) {
            // One line longer than the limit: measure it without keeping it.
            let mut total = buf.len() as u64;
            buf.clear();
            loop {
                match fill(&mut reader, &mut buf, HASH_BLOCK_BYTES) {
                    Ok(eof) => {
                        if let Some(end) = buf.iter().position(|&b| b == b'\n') {
                            total += end as u64 + 1;
                            buf.drain(..=end);
                            break;
                        }
                        total += buf.len() as u64;
                        buf.clear();
                        if eof {
                            break;
                        }
                    }
                    Err(e) => return Err((lines + 1, e)),
                }
            }
            want = HASH_BLOCK_BYTES;
            (Vec::new(), Some(total))
        } else {
            // One line longer than the block, within the limit so far: read on, twice as
            // many bytes, but no more than the limit (and "\r\n") and a byte allow, to know
            // whether it is over it.
            let most = usize::try_from(max.saturating_add(3)).unwrap_or(usize::MAX);
            want = buf.len().saturating_mul(2).min(most);
            continue;
        };
        if out.stop.load(Ordering::Relaxed) {
            return Ok(out.seq);
        }
        let mut batch = out.empty(0);
        batch.bytes = data.len() as u64 + too_long.unwrap_or(0);
        batch.block = Some(HashBlock { first_line: lines + 1, too_long });
        let before = lines;
        lines += newlines(&data) + u64::from(too_long.is_some());
        // The last line of a file needs no end.
        if data.last().is_some_and(|&b| b != b'\n') {
            lines += 1;
        }
        batch.file_lines = lines - before;
        batch.data = data;
        if !out.send(batch) {
            return Ok(out.seq);
        }
    }
    Ok(out.seq)
}

/// Reads from `reader` until `buf` holds `want` bytes or the input ends; true at its end.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    // Exactly as much room as asked for: `want` grows by doubling already, and a line near
    // the limit must not take twice the limit.
    buf.reserve_exact(want.saturating_sub(buf.len()));
    while buf.len() < want {
        let len = buf.len();
        buf.resize(want, 0);
        match reader.read(&mut buf[len..]) {
            Ok(0) => {
                buf.truncate(len);
                return Ok(true);
            }
            Ok(n) => buf.truncate(len + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => {
                buf.truncate(len);
                return Err(e);
            }
        }
    }
    Ok(false)
}

/// Reads one Parquet file's rows into batches, as [`read_batches`] reads lines; returns the
/// next sequence number. A file that cannot be opened as records (not
/// Parquet, no text column, a column of the wrong type) is one batch that says so; a read
/// error later in the file ends the run.
fn read_parquet(
    path: &Path,
    size: Option<u64>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> anyhow::Result<u64> {
    let simhash_io::Parser::Json(columns) = &options.reading.parser else {
        anyhow::bail!(
            "{}: Parquet input holds text columns: --format hash does not apply",
            path.display()
        );
    };
    let mut rows = match simhash_io::ParquetRows::open(path, columns) {
        Ok(rows) => rows,
        Err(e) if e.kind() == simhash_io::ErrorKind::BadParquet => {
            let mut batch = out.empty(0);
            batch.failed = Some(Problem::new(Reason::BadFile, e.to_string()));
            out.send(batch);
            return Ok(out.seq);
        }
        Err(e) => return Err(e.into()),
    };
    let (total, size) = (rows.total_rows().max(1), size.unwrap_or(0));
    let mut sent_bytes = 0;
    while let Some(rb) = rows.next_batch()? {
        if out.stop.load(Ordering::Relaxed) {
            break;
        }
        let first = rows.rows_read() - rb.len() as u64;
        let mut batch = out.empty(0);
        batch.file_lines = rb.len() as u64;
        batch.rows = Some((rb, first));
        // The file's bytes, in proportion to the rows read, for the progress bar.
        let done = size * rows.rows_read().min(total) / total;
        batch.bytes = done - sent_bytes;
        sent_bytes = done;
        if !out.send(batch) {
            break;
        }
    }
    Ok(out.seq)
}

/// A parse worker's channels: raw batches in, parsed batches out, and the sketches of its
/// batches that the collector is done with, to free here. A sketch freed by the thread that
/// allocated it goes back to that thread's heap at little cost; freed by the collector, it
/// took a lock and cold memory on the one serial thread (about 0.14 CPU-s of 600 MB).
struct Channels {
    rx: Receiver<RawBatch>,
    tx: Sender<ParsedBatch>,
    spent: Receiver<Vec<DocSketch>>,
    worker: usize,
    /// Where the worker writes its batches' shingle sets, when it does.
    sets: Option<SetWriter>,
}

/// `line_hashes`: hash each line, for a second pass (otherwise the hash is 0, unused).
fn parse_batches(channels: &Channels, reading: &Reading, max: u64, line_hashes: bool) {
    let Channels { rx, tx, spent, worker, sets } = channels;
    // A span's lines, read into the same buffer each time.
    let mut block = BlockLines::default();
    // The bytes of a batch's sets, written at once.
    let mut set_bytes = Vec::new();
    for raw in rx {
        for sketches in spent.try_iter() {
            drop(sketches);
        }
        let mut out = ParsedBatch {
            seq: raw.seq,
            worker: *worker,
            shard: raw.shard,
            bytes: raw.bytes,
            file_lines: raw.file_lines,
            ids: String::new(),
            items: Vec::with_capacity(raw.lines.len()),
            relative: false,
            read_error: None,
            failed_write: None,
            failed: raw.failed,
            hashes: None,
        };
        if let Some(span) = &raw.span {
            out.relative = true;
            match simhash_io::read_block(&*span.file, span.start, span.end, max, &mut block) {
                Ok(()) => parse_block(&block, reading, max, line_hashes, &mut out),
                Err(e) => out.read_error = Some((block.lines.len() as u64 + 1, e)),
            }
        }
        if let (Some(block), Some(format)) = (raw.block, reading.parser.hash_format()) {
            let mut hashes = HashLines::default();
            let top = block.first_line == 1;
            simhash_io::parse_hash_lines(format, &raw.data, max, top, &mut hashes);
            if let Some(n) = block.too_long {
                hashes.count += 1;
                hashes.problems.push((hashes.count, Problem::too_long(n, max)));
            }
            out.hashes = Some((block.first_line, hashes));
        }
        if let Some((rows, first)) = &raw.rows {
            out.items.reserve(rows.len());
            for i in 0..rows.len() {
                let item = match (rows.text(i), rows.id(i)) {
                    (Ok(text), Ok(id)) => {
                        let record = simhash_io::Record { id, body: Body::Text(text.into()) };
                        Ok(parsed_doc(record, text.as_bytes(), reading, &mut out.ids, line_hashes))
                    }
                    (Err(p), _) | (_, Err(p)) => Err(p),
                };
                out.items.push((first + i as u64 + 1, item));
            }
        }
        let mut start = 0;
        for ((line, end, status), offset) in raw.lines.into_iter().zip(raw.starts) {
            let bytes = &raw.data[start..end];
            start = end;
            let item = match status {
                LineStatus::TooLong(n) => Err(Problem::too_long(n, max)),
                LineStatus::Ok => parse_line(bytes, reading, &mut out.ids, line_hashes)
                    .map(|doc| ParsedDoc { offset, ..doc }),
            };
            out.items.push((line, item));
        }
        if let Some(sets) = sets {
            write_sets(sets, &mut out, &mut set_bytes);
        }
        if tx.send(out).is_err() {
            return;
        }
    }
}

/// Writes the shingle sets of a parsed batch's sketches into the store's file, recording
/// each one's place in its document (or the failure in the batch).
fn write_sets(sets: &SetWriter, out: &mut ParsedBatch, buf: &mut Vec<u8>) {
    let written = sets.write(sketched(&mut out.items).filter_map(|d| d.sketch.as_mut()), buf);
    match written {
        Ok(places) => {
            for (doc, place) in sketched(&mut out.items).zip(places) {
                doc.place = Some(place);
            }
        }
        Err(e) => out.failed_write = Some(e),
    }
}

/// The documents of `items` that have a sketch, in order.
fn sketched(items: &mut [(u64, Parsed)]) -> impl Iterator<Item = &mut ParsedDoc> {
    let docs = items.iter_mut().filter_map(|(_, item)| item.as_mut().ok());
    docs.filter(|doc| doc.sketch.is_some())
}

/// Parses the lines of a span into `out`, numbered from 1.
fn parse_block(
    block: &BlockLines,
    reading: &Reading,
    max: u64,
    line_hashes: bool,
    out: &mut ParsedBatch,
) {
    out.file_lines = block.lines.len() as u64;
    out.items.reserve(block.lines.len());
    for (line, &(start, end, status)) in (1..).zip(&block.lines) {
        let item = match status {
            LineStatus::TooLong(n) => Err(Problem::too_long(n, max)),
            LineStatus::Ok => {
                parse_line(&block.data[start..end], reading, &mut out.ids, line_hashes)
                    .map(|doc| ParsedDoc { offset: block.origin + start as u64, ..doc })
            }
        };
        out.items.push((line, item));
    }
}

/// A parsed line, or why it was skipped.
type Parsed = Result<ParsedDoc, Problem>;

struct ParsedDoc {
    /// The end of its id in the batch's `ids`, or none when it has no id.
    id_end: Option<usize>,
    /// The id is a JSON number.
    number: bool,
    /// None when featureless.
    fp: Option<Fingerprint>,
    /// Bytes of text.
    len: u64,
    /// The MinHash sketch, when asked for and the text has features.
    sketch: Option<DocSketch>,
    /// Where the worker wrote the sketch's set, taken out of it ([`SetWriter`]).
    place: Option<SetPlace>,
    /// A 64-bit hash of the line, to check that a second pass reads the same record.
    line_hash: u64,
    /// Where the line starts in its file (0 for a Parquet row).
    offset: u64,
}

fn parse_line(bytes: &[u8], reading: &Reading, ids: &mut String, line_hash: bool) -> Parsed {
    // simhash-cpp's input has no ids: repeated hashes are repeated documents, each with its
    // line number as id.
    let record = reading.parser.parse(bytes)?;
    Ok(parsed_doc(record, bytes, reading, ids, line_hash))
}

/// The document of a record read from `bytes` (hashed for a second pass when `line_hash`).
fn parsed_doc(
    record: simhash_io::Record<'_>,
    bytes: &[u8],
    reading: &Reading,
    ids: &mut String,
    line_hash: bool,
) -> ParsedDoc {
    let id = record.id;
    let (fp, len, sketch) = match (record.body, &reading.fingerprinter, &reading.sketcher) {
        (Body::Text(text), Some(fingerprinter), None) => {
            (fingerprinter.fingerprint(&text), text.len() as u64, None)
        }
        (Body::Text(text), Some(fingerprinter), Some(sketcher)) => {
            let (fp, sketch) = sketcher.sketch(fingerprinter, &text);
            (fp, text.len() as u64, sketch)
        }
        (Body::Text(text), None, _) => (None, text.len() as u64, None),
        (Body::Hash(fp), ..) => (fp, 0, None),
    };
    let number = id.as_ref().is_some_and(|id| id.number);
    let id_end = id.map(|id| {
        ids.push_str(&id.text);
        ids.len()
    });
    let line_hash = if line_hash { simhash_io::line_hash(bytes) } else { 0 };
    ParsedDoc { id_end, number, fp, len, sketch, place: None, line_hash, offset: 0 }
}

/// Puts batches back in order and builds the corpus.
fn collect(
    rx: &Receiver<ParsedBatch>,
    spent: &[Sender<Vec<DocSketch>>],
    sketches: Option<SpillStore>,
    options: &ReadOptions,
    reporter: &mut Reporter,
    names: &[String],
) -> anyhow::Result<Corpus> {
    let mut corpus = Corpus {
        keep_line_hashes: options.hash_lines(),
        compact: options.compact.then(Vec::new),
        sketches,
        ..Corpus::default()
    };
    let mut ids = SeenIds { keys: IdKeys::default(), own: sampler_ids(options) };
    let mut sampler = options.sample.map(|(n, seed)| Sampler::new(n, seed));
    let mut pending: BTreeMap<u64, ParsedBatch> = BTreeMap::new();
    let mut next = 0;
    let mut ids_given: Option<bool> = None;
    // The sketches pushed from the current batch, for its worker to free.
    let mut done = Vec::new();
    // The lines of each input file so far, and of the files before the current batch's.
    let mut shard_lines = vec![0; names.len()];
    let (mut base, mut files_before) = (0, 0);
    for batch in rx {
        pending.insert(batch.seq, batch);
        while let Some(batch) = pending.remove(&next) {
            next += 1;
            corpus.bytes += batch.bytes;
            let name = names[batch.shard].as_str();
            // Batches come file after file: a line's number in the concatenation is `base`
            // plus its number in its file, which is `offset` plus its number in the batch
            // when the batch is `relative`.
            while files_before < batch.shard {
                base += shard_lines[files_before];
                files_before += 1;
            }
            let offset = shard_lines[batch.shard];
            shard_lines[batch.shard] += batch.file_lines;
            if let Some((line, e)) = batch.read_error {
                let line = offset + line;
                return Err(anyhow::Error::new(e).context(format!("{name}:{line}: read error")));
            }
            if let Some(e) = batch.failed_write {
                return Err(e.into());
            }
            let in_file = |line: u64| if batch.relative { offset + line } else { line };
            if let Some(problem) = &batch.failed {
                corpus.records += 1;
                reporter.bad_file(problem)?;
            }
            if let Some((first_line, hashes)) = batch.hashes {
                let at = Place { name, base, first_line };
                let state = &mut Collecting { ids: &mut ids, ids_given: &mut ids_given };
                collect_hashes(&mut corpus, hashes, at, state, sampler.as_mut(), reporter)?;
                reporter.progress(corpus.bytes, corpus.records);
                continue;
            }
            let mut id_start = 0;
            for (line, item) in batch.items {
                let line = in_file(line);
                let doc = match item {
                    Ok(doc) => doc,
                    Err(problem) if problem.reason == Reason::BlankLine => {
                        corpus.blank_lines += 1;
                        continue;
                    }
                    Err(problem) => {
                        corpus.records += 1;
                        reporter.problem(name, line, &problem)?;
                        continue;
                    }
                };
                corpus.records += 1;
                let ParsedDoc { id_end, number, fp, len, sketch, place, line_hash, offset } = doc;
                // The first record decides whether records have ids: a generated id (the
                // line number) must never equal an explicit one.
                let has_id = id_end.is_some();
                if *ids_given.get_or_insert(has_id) != has_id {
                    if let Some(end) = id_end {
                        id_start = end;
                    }
                    reporter.problem(name, line, &Problem::mixed_ids(has_id))?;
                    continue;
                }
                let (id, numeric, generated) = if let Some(end) = id_end {
                    let id = &batch.ids[id_start..end];
                    id_start = end;
                    (id, number, false)
                } else {
                    // The id is the line number, made when asked for.
                    ("", true, true)
                };
                // Generated ids are line numbers, distinct by construction (and never equal
                // to an explicit id): only explicit ids need the set.
                if !generated && !ids.insert(IdKey::new(id), id, &corpus.ids) {
                    reporter.problem(name, line, &Problem::duplicate_id(id))?;
                    continue;
                }
                let meta =
                    Meta { numeric, generated, fp, line: base + line, len, line_hash, offset };
                if let Some(s) = &mut sampler {
                    s.offer(id, meta, sketch);
                } else {
                    corpus.push(id, meta, sketch.as_ref(), place)?;
                    done.extend(sketch);
                }
            }
            if !done.is_empty() {
                // A worker gone (after an error) frees nothing more: this thread does.
                let _ = spent[batch.worker].send(std::mem::take(&mut done));
            }
            reporter.progress(corpus.bytes, corpus.records);
        }
    }
    if let Some(sampler) = sampler {
        corpus.not_sampled = sampler.offered - sampler.heap.len() as u64;
        for doc in sampler.into_sorted() {
            corpus.push(&doc.id, doc.meta, doc.sketch.as_ref(), None)?;
        }
    }
    if let Some(sketches) = &mut corpus.sketches {
        sketches.finish()?;
    }
    corpus.shard_lines = shard_lines;
    Ok(corpus)
}

/// Where a block of hash input is: its file's name, the lines of the files before it, and
/// its first line's number in its file.
#[derive(Clone, Copy)]
struct Place<'a> {
    name: &'a str,
    base: u64,
    first_line: u64,
}

/// What collecting carries from record to record: the ids seen, and whether records have
/// ids (the first record decides).
struct Collecting<'a> {
    ids: &'a mut SeenIds,
    ids_given: &'a mut Option<bool>,
}

/// The ids seen so far, to find repeats: their keys, and their text in the corpus's id
/// table, which holds exactly the ids that went in, or, when sampling (the corpus keeps
/// only the sample's ids), in a table of their own.
struct SeenIds {
    keys: IdKeys,
    own: Option<IdTable>,
}

/// The table of their own that [`SeenIds`] needs: when sampling.
fn sampler_ids(options: &ReadOptions) -> Option<IdTable> {
    options.sample.map(|_| IdTable::default())
}

impl SeenIds {
    /// Returns false when `id` (whose key is `key`) was seen before. Without a table of
    /// their own, the caller pushes a new id to the corpus (`corpus_ids`).
    fn insert(&mut self, key: IdKey, id: &str, corpus_ids: &IdTable) -> bool {
        match &mut self.own {
            Some(own) => {
                let new = self.keys.insert(key, id, own);
                if new {
                    own.push(id);
                }
                new
            }
            None => self.keys.insert(key, id, corpus_ids),
        }
    }
}

/// Adds a block of hash input to the corpus as [`collect`] adds its records one by one:
/// the same records, problems and counts, in line order. Without ids (simhash-cpp's
/// input) and without a sample, the records between two problems go in at once.
fn collect_hashes(
    corpus: &mut Corpus,
    hashes: HashLines,
    at: Place<'_>,
    state: &mut Collecting<'_>,
    mut sampler: Option<&mut Sampler>,
    reporter: &mut Reporter,
) -> anyhow::Result<()> {
    let HashLines { lines, hashes, ids: block_ids, keys, problems, count: _ } = hashes;
    // A line's number in its file, and in the concatenation of the files.
    let in_file = |line: u64| at.first_line - 1 + line;
    let has_ids = !block_ids.is_empty();
    let mut next = 0;
    let mut problems = problems.into_iter().peekable();
    loop {
        // The records before the next problem.
        let end = match problems.peek() {
            Some(&(line, _)) => next + lines[next..].partition_point(|&l| l < line),
            None => lines.len(),
        };
        if !has_ids && sampler.is_none() && end > next {
            if *state.ids_given.get_or_insert(false) {
                // Records with ids came first: every one of these is a mixed-ids problem.
                for &line in &lines[next..end] {
                    corpus.records += 1;
                    reporter.problem(at.name, in_file(line), &Problem::mixed_ids(false))?;
                }
            } else {
                let offset = at.base + at.first_line - 1;
                corpus.extend_line_numbered(&lines[next..end], &hashes[next..end], offset);
                corpus.records += (end - next) as u64;
            }
        } else {
            for doc in next..end {
                let line = in_file(lines[doc]);
                corpus.records += 1;
                if *state.ids_given.get_or_insert(has_ids) != has_ids {
                    reporter.problem(at.name, line, &Problem::mixed_ids(has_ids))?;
                    continue;
                }
                let id = if has_ids { block_ids.get(doc) } else { "" };
                if has_ids && !state.ids.insert(keys[doc], id, &corpus.ids) {
                    reporter.problem(at.name, line, &Problem::duplicate_id(id))?;
                    continue;
                }
                let meta = Meta {
                    numeric: !has_ids,
                    generated: !has_ids,
                    fp: hashes[doc],
                    line: at.base + line,
                    len: 0,
                    line_hash: 0,
                    offset: 0,
                };
                match sampler.as_deref_mut() {
                    Some(s) => s.offer(id, meta, None),
                    None => corpus.push(id, meta, None, None)?,
                }
            }
        }
        next = end;
        let Some((line, problem)) = problems.next() else { break };
        if problem.reason == Reason::BlankLine {
            corpus.blank_lines += 1;
        } else {
            corpus.records += 1;
            reporter.problem(at.name, in_file(line), &problem)?;
        }
    }
    Ok(())
}

/// Bottom-k sampling: each record gets a pseudo-random key from (seed, line); the n records
/// with the smallest keys are the sample. One pass, memory for n records, and the sample
/// depends only on the seed and the input.
struct Sampler {
    n: u64,
    seed: u64,
    heap: BinaryHeap<Sampled>,
    offered: u64,
}

struct Sampled {
    key: u64,
    id: Box<str>,
    meta: Meta,
    sketch: Option<DocSketch>,
}

impl PartialEq for Sampled {
    fn eq(&self, other: &Sampled) -> bool {
        (self.key, self.meta.line) == (other.key, other.meta.line)
    }
}
impl Eq for Sampled {}
impl PartialOrd for Sampled {
    fn partial_cmp(&self, other: &Sampled) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Sampled {
    fn cmp(&self, other: &Sampled) -> std::cmp::Ordering {
        (self.key, self.meta.line).cmp(&(other.key, other.meta.line))
    }
}

impl Sampler {
    fn new(n: u64, seed: u64) -> Sampler {
        Sampler { n, seed, heap: BinaryHeap::new(), offered: 0 }
    }

    fn offer(&mut self, id: &str, meta: Meta, sketch: Option<DocSketch>) {
        let line = meta.line;
        self.offered += 1;
        if self.n == 0 {
            return;
        }
        let key = splitmix(self.seed ^ splitmix(line));
        if self.heap.len() as u64 >= self.n {
            match self.heap.peek() {
                Some(top) if (key, line) < (top.key, top.meta.line) => {
                    self.heap.pop();
                }
                _ => return,
            }
        }
        self.heap.push(Sampled { key, id: id.into(), meta, sketch });
    }

    fn into_sorted(self) -> Vec<Sampled> {
        let mut docs = self.heap.into_vec();
        docs.sort_unstable_by_key(|d| d.meta.line);
        docs
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
