//! The reading pipeline: one reader thread, a bounded channel of numbered batches,
//! fingerprint workers, and the calling thread putting the results back in input order.

use super::batch::{
    BATCH_BYTES, BATCH_LINES, HASH_BLOCK_BYTES, HashBlock, Parsed, ParsedBatch, ParsedDoc,
    RawBatch, SPAN_BYTES, Span,
};
use super::collect::collect;
#[allow(clippy::wildcard_imports)]
use super::*;

/// Reads all records of `sources`, as if concatenated, into a corpus, reporting bad ones
/// through `reporter`.
///
/// The files are opened one after the other by the reader thread. Their lines are numbered
/// over the concatenation (a record without an id gets its 0-based line number there, as
/// simhash-dist numbers shards), and each file's lines end at its end: a file without a
/// final newline is read as if it had one. A hash TSV header is skipped at the top of each
/// file. Problems name the file and the line in it.
pub(crate) fn read(
    sources: &mut [Source],
    options: &ReadOptions,
    reporter: &mut Reporter,
) -> Result<Corpus> {
    if options.reading.eval.is_some() && options.sample.is_some() {
        // A tally counts every document read: a sample's are not the corpus's.
        bail!(Settings, "eval sets are scanned over the whole corpus, not a sample");
    }
    if sources.iter().any(Source::is_stdin) {
        reporter.reading_stdin();
    }
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
        let read_result = reader_thread
            .join()
            .map_err(|_| JobError::new(ErrorKind::Internal, "reader thread panicked"))?;
        let corpus = result?;
        read_result?;
        Ok(corpus)
    })
}

/// Reads the sources one after the other into batches.
pub(super) fn read_sources(
    sources: &mut [Source],
    options: &ReadOptions,
    tx: &Sender<RawBatch>,
    stop: &AtomicBool,
) -> Result<()> {
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
                JobError::from(e).context(format!("{}:{line}: read error", source.name))
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
pub(super) fn send_spans(file: File, len: u64, mut out: Batches<'_>) -> u64 {
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
pub(super) struct Batches<'a> {
    /// The channel the batches go to.
    pub(super) tx: &'a Sender<RawBatch>,
    /// Set when collecting failed: the reader stops.
    pub(super) stop: &'a AtomicBool,
    /// The input file (index into the run's sources).
    pub(super) shard: usize,
    /// The next batch's sequence number.
    pub(super) seq: u64,
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
pub(super) fn read_batches(
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
pub(super) fn read_hash_blocks(
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
pub(super) fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
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
pub(super) fn read_parquet(
    path: &Path,
    size: Option<u64>,
    options: &ReadOptions,
    mut out: Batches<'_>,
) -> Result<u64> {
    let simhash_io::Parser::Json(columns) = &options.reading.parser else {
        bail!(
            Input,
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
pub(super) struct Channels {
    /// Raw batches in.
    pub(super) rx: Receiver<RawBatch>,
    /// Parsed batches out.
    pub(super) tx: Sender<ParsedBatch>,
    /// The sketches the collector is done with, to free here.
    pub(super) spent: Receiver<Vec<DocSketch>>,
    /// The worker's number.
    pub(super) worker: usize,
    /// Where the worker writes its batches' shingle sets, when it does.
    pub(super) sets: Option<SetWriter>,
}

/// `line_hashes`: hash each line, for a second pass (otherwise the hash is 0, unused).
pub(super) fn parse_batches(channels: &Channels, reading: &Reading, max: u64, line_hashes: bool) {
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
pub(super) fn write_sets(sets: &SetWriter, out: &mut ParsedBatch, buf: &mut Vec<u8>) {
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
pub(super) fn sketched(items: &mut [(u64, Parsed)]) -> impl Iterator<Item = &mut ParsedDoc> {
    let docs = items.iter_mut().filter_map(|(_, item)| item.as_mut().ok());
    docs.filter(|doc| doc.sketch.is_some())
}

/// Parses the lines of a span into `out`, numbered from 1.
pub(super) fn parse_block(
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

/// Parses one line into a document (its id appended to `ids`), or says why it is skipped;
/// `line_hash`: hash the line for a second pass.
pub(super) fn parse_line(
    bytes: &[u8],
    reading: &Reading,
    ids: &mut String,
    line_hash: bool,
) -> Parsed {
    // simhash-cpp's input has no ids: repeated hashes are repeated documents, each with its
    // line number as id.
    let record = reading.parser.parse(bytes)?;
    Ok(parsed_doc(record, bytes, reading, ids, line_hash))
}

/// The document of a record read from `bytes` (hashed for a second pass when `line_hash`).
pub(super) fn parsed_doc(
    record: simhash_io::Record<'_>,
    bytes: &[u8],
    reading: &Reading,
    ids: &mut String,
    line_hash: bool,
) -> ParsedDoc {
    let id = record.id;
    let hits = match (&record.body, &reading.eval) {
        (Body::Text(text), Some(eval)) => eval.scan(text),
        _ => DocHits::default(),
    };
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
    ParsedDoc { id_end, number, fp, len, sketch, place: None, line_hash, offset: 0, hits }
}
