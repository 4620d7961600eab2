//! The documents of one run, read by a parallel pipeline: one reader thread, a bounded
//! channel of numbered batches, fingerprint workers, and this thread putting the results
//! back in input order.

use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender, bounded};
use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{DocSketch, SketchStore, Sketcher, SpillStore};
use simhash_io::{Body, IdSet, IdTable, LineReader, LineStatus, Problem, Reason, Source};

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
}

/// The documents: for each, its id, fingerprint (none when featureless), line and length.
/// Memory grows with the number of documents, never with their text.
#[derive(Default)]
pub struct Corpus {
    ids: IdTable,
    /// None when featureless.
    fps: Vec<Option<Fingerprint>>,
    /// The id was a JSON number (or a line number), not a string.
    numeric: Vec<bool>,
    /// Each document's line number in the concatenation of the input files (1-based).
    lines: Vec<u64>,
    lens: Vec<u64>,
    /// The lines of each input file (header and blank lines included), as first read.
    shard_lines: Vec<u64>,
    /// Each record's line hash, when the input is read twice (dedup).
    line_hashes: Vec<u64>,
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
        self.fps.len()
    }

    pub fn id(&self, doc: usize) -> &str {
        self.ids.get(doc)
    }

    /// The id as it appeared: a JSON number (or a line number), or a string.
    pub fn id_value(&self, doc: usize) -> simhash_io::IdValue<'_> {
        simhash_io::IdValue { text: self.id(doc).into(), number: self.numeric[doc] }
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

    pub fn lens(&self) -> &[u64] {
        &self.lens
    }

    /// Documents whose text has no features: no fingerprint, or no MinHash sketch when the
    /// run sketches.
    pub fn featureless(&self) -> usize {
        self.no_features
    }

    fn push(&mut self, id: &str, meta: Meta, sketch: Option<&DocSketch>) -> anyhow::Result<()> {
        let Meta { numeric, fp, line, len, line_hash } = meta;
        if self.keep_line_hashes {
            self.line_hashes.push(line_hash);
        }
        if let Some(sketches) = &mut self.sketches {
            sketches.push(sketch)?;
            self.no_features += usize::from(sketch.is_none());
        } else {
            self.no_features += usize::from(fp.is_none());
        }
        self.ids.push(id);
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
    fp: Option<Fingerprint>,
    line: u64,
    len: u64,
    line_hash: u64,
}

/// A run of lines as read, all from one input file.
struct RawBatch {
    seq: u64,
    /// The input file (index into the run's sources).
    shard: usize,
    /// Lines of the input files before this one: a line's number in the concatenation is
    /// `base` plus its number in the file.
    base: u64,
    /// Input bytes the batch covers, line endings and skipped lines included.
    bytes: u64,
    data: Vec<u8>,
    /// Per line: its number in the file, end offset in `data`, and status.
    lines: Vec<(u64, usize, LineStatus)>,
    /// Rows of a Parquet file instead of lines, as decoded (the workers read their text
    /// where Arrow put it, already checked as UTF-8), and the number of the first (0-based).
    rows: Option<(simhash_io::RowBatch, u64)>,
    /// The file cannot be read as records: reported for the whole file, which counts no
    /// line.
    failed: Option<Problem>,
}

/// A batch after parsing, in the same order.
struct ParsedBatch {
    seq: u64,
    shard: usize,
    base: u64,
    bytes: u64,
    ids: String,
    /// Per line: its number in the file, and the record or the problem.
    items: Vec<(u64, Parsed)>,
    failed: Option<Problem>,
}

const BATCH_LINES: usize = 2048;
const BATCH_BYTES: usize = 4 << 20;

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
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();

    std::thread::scope(|scope| {
        let stop = &stop;
        // The reader owns the only sender: when it returns, the workers see the end.
        let reader_thread = scope.spawn(move || read_sources(sources, options, &raw_tx, stop));
        for _ in 0..threads {
            let (rx, tx) = (raw_rx.clone(), done_tx.clone());
            let reading = &options.reading;
            let (max, spool) = (options.max_record_bytes, options.spool);
            scope.spawn(move || parse_batches(&rx, &tx, reading, max, spool));
        }
        drop(raw_rx);
        drop(done_tx);

        let result = collect(&done_rx, options, reporter, &names);
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Let the workers finish: drain what is left so that no sender blocks.
        for _ in &done_rx {}
        let read_result =
            reader_thread.join().map_err(|_| anyhow::anyhow!("reader thread panicked"))?;
        let mut corpus = result?;
        corpus.shard_lines = read_result?;
        Ok(corpus)
    })
}

/// Reads the sources one after the other into batches; returns each one's line count.
fn read_sources(
    sources: &mut [Source],
    options: &ReadOptions,
    tx: &Sender<RawBatch>,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<u64>> {
    let mut seq = 0;
    let mut shard_lines = Vec::with_capacity(sources.len());
    let mut base = 0;
    for (shard, source) in sources.iter_mut().enumerate() {
        let batches = Batches { tx, stop, shard, base, seq };
        let parquet = source.path().filter(|p| simhash_io::is_parquet(p)).map(Path::to_path_buf);
        let (lines, next_seq) = if let Some(path) = parquet {
            read_parquet(&path, source.size, options, batches)?
        } else {
            let reader = source.open(options.spool)?;
            read_batches(reader, options, batches).map_err(|(line, e)| {
                anyhow::Error::new(e).context(format!("{}:{line}: read error", source.name))
            })?
        };
        seq = next_seq;
        base += lines;
        shard_lines.push(lines);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(shard_lines)
}
/// Where one file's batches go: the channel, and the numbers they carry.
struct Batches<'a> {
    tx: &'a Sender<RawBatch>,
    stop: &'a AtomicBool,
    shard: usize,
    base: u64,
    /// The next batch's sequence number.
    seq: u64,
}

impl Batches<'_> {
    fn empty(&self, capacity: usize) -> RawBatch {
        RawBatch {
            seq: self.seq,
            shard: self.shard,
            base: self.base,
            bytes: 0,
            data: Vec::with_capacity(capacity),
            lines: Vec::new(),
            rows: None,
            failed: None,
        }
    }

    /// Sends `batch`; false when the receiver is gone.
    fn send(&mut self, batch: RawBatch) -> bool {
        self.seq += 1;
        self.tx.send(batch).is_ok()
    }
}

/// Reads one file's lines into batches; returns its line count and the next sequence
/// number, or the line and error of a failed read.
fn read_batches(
    reader: Box<dyn Read + Send>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> Result<(u64, u64), (u64, std::io::Error)> {
    let parser = &options.reading.parser;
    let mut lines = LineReader::new(reader, options.max_record_bytes);
    let mut batch = out.empty(0);
    let mut sent_bytes = 0;
    loop {
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
        if batch.lines.len() >= BATCH_LINES || batch.data.len() >= BATCH_BYTES {
            if out.stop.load(Ordering::Relaxed) {
                return Ok((lines.line, out.seq));
            }
            batch.bytes = lines.bytes - sent_bytes;
            sent_bytes = lines.bytes;
            // A huge line made this batch big: do not keep reserving that much.
            let capacity = batch.data.len().min(BATCH_BYTES + BATCH_BYTES / 4);
            let full = std::mem::replace(&mut batch, out.empty(capacity));
            if !out.send(full) {
                return Ok((lines.line, out.seq));
            }
            batch.seq = out.seq;
        }
    }
    batch.bytes = lines.bytes - sent_bytes;
    if !batch.lines.is_empty() || batch.bytes > 0 {
        out.send(batch);
    }
    Ok((lines.line, out.seq))
}

/// Reads one Parquet file's rows into batches, as [`read_batches`] reads lines; returns its
/// row count and the next sequence number. A file that cannot be opened as records (not
/// Parquet, no text column, a column of the wrong type) is one batch that says so; a read
/// error later in the file ends the run.
fn read_parquet(
    path: &Path,
    size: Option<u64>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> anyhow::Result<(u64, u64)> {
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
            return Ok((0, out.seq));
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
        batch.rows = Some((rb, first));
        // The file's bytes, in proportion to the rows read, for the progress bar.
        let done = size * rows.rows_read().min(total) / total;
        batch.bytes = done - sent_bytes;
        sent_bytes = done;
        if !out.send(batch) {
            break;
        }
    }
    Ok((rows.rows_read(), out.seq))
}

/// `line_hashes`: hash each line, for a second pass (otherwise the hash is 0, unused).
fn parse_batches(
    rx: &Receiver<RawBatch>,
    tx: &Sender<ParsedBatch>,
    reading: &Reading,
    max: u64,
    line_hashes: bool,
) {
    for raw in rx {
        let mut out = ParsedBatch {
            seq: raw.seq,
            shard: raw.shard,
            base: raw.base,
            bytes: raw.bytes,
            ids: String::new(),
            items: Vec::with_capacity(raw.lines.len()),
            failed: raw.failed,
        };
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
        for (line, end, status) in raw.lines {
            let bytes = &raw.data[start..end];
            start = end;
            let item = match status {
                LineStatus::TooLong(n) => Err(Problem::too_long(n, max)),
                LineStatus::Ok => parse_line(bytes, reading, &mut out.ids, line_hashes),
            };
            out.items.push((line, item));
        }
        if tx.send(out).is_err() {
            return;
        }
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
    /// A 64-bit hash of the line, to check that a second pass reads the same record.
    line_hash: u64,
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
    ParsedDoc { id_end, number, fp, len, sketch, line_hash }
}

/// Puts batches back in order and builds the corpus.
fn collect(
    rx: &Receiver<ParsedBatch>,
    options: &ReadOptions,
    reporter: &mut Reporter,
    names: &[String],
) -> anyhow::Result<Corpus> {
    let mut corpus = Corpus { keep_line_hashes: options.spool, ..Corpus::default() };
    if let Some(sketcher) = &options.reading.sketcher {
        corpus.sketches = Some(SpillStore::new(sketcher.banding().bands)?);
    }
    let mut ids = IdSet::default();
    let mut sampler = options.sample.map(|(n, seed)| Sampler::new(n, seed));
    let mut pending: BTreeMap<u64, ParsedBatch> = BTreeMap::new();
    let mut next = 0;
    let mut line_id = String::new();
    let mut ids_given: Option<bool> = None;
    for batch in rx {
        pending.insert(batch.seq, batch);
        while let Some(batch) = pending.remove(&next) {
            next += 1;
            corpus.bytes += batch.bytes;
            let name = names[batch.shard].as_str();
            if let Some(problem) = &batch.failed {
                corpus.records += 1;
                reporter.bad_file(problem)?;
            }
            let mut id_start = 0;
            for (line, item) in batch.items {
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
                let ParsedDoc { id_end, number, fp, len, sketch, line_hash } = doc;
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
                    line_id.clear();
                    let _ = write!(line_id, "{}", batch.base + line - 1);
                    (line_id.as_str(), true, true)
                };
                // Generated ids are line numbers, distinct by construction (and never equal
                // to an explicit id): only explicit ids need the set.
                if !generated && !ids.insert(id) {
                    reporter.problem(name, line, &Problem::duplicate_id(id))?;
                    continue;
                }
                let meta = Meta { numeric, fp, line: batch.base + line, len, line_hash };
                match &mut sampler {
                    Some(s) => s.offer(id, meta, sketch),
                    None => corpus.push(id, meta, sketch.as_ref())?,
                }
            }
            reporter.progress(corpus.bytes, corpus.records);
        }
    }
    if let Some(sampler) = sampler {
        corpus.not_sampled = sampler.offered - sampler.heap.len() as u64;
        for doc in sampler.into_sorted() {
            corpus.push(&doc.id, doc.meta, doc.sketch.as_ref())?;
        }
    }
    if let Some(sketches) = &mut corpus.sketches {
        sketches.finish()?;
    }
    Ok(corpus)
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
