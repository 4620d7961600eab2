//! Which worker reads what: the input files laid end to end and cut into one line-aligned
//! byte range per worker, and the reading of one worker's share into its documents.
//!
//! A record is named by its *position*: the file's index in the high bits and the byte offset
//! of the line's start in the low bits. Positions sort in input order, are known without any
//! coordination, and tell which worker owns the record ([`InputPlan::owner`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use simhash_core::Fingerprinter;
use simhash_index::contamination::{DocHits, EvalSets};
use simhash_index::lsh::{DocSketch, Sketcher};
use simhash_io::{Body, IdTable, LineReader, LineStatus, ParquetRows, Problem, Reason, Source};

/// Bits of a position that hold the byte offset within a file (16 TiB per file).
pub(crate) const OFFSET_BITS: u32 = 44;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// The position of the line starting at byte `offset` of file `file`.
pub(crate) fn position(file: usize, offset: u64) -> u64 {
    ((file as u64) << OFFSET_BITS) | offset
}

/// One input file as every process sees it.
#[derive(Debug)]
pub(crate) struct InputFile {
    /// Shown in messages: the path, or `<stdin>`.
    pub(crate) name: String,
    path: Option<PathBuf>,
    /// Bytes on disk (0 for standard input).
    size: u64,
    /// A regular uncompressed file: cut into byte ranges. Anything else (compressed, standard
    /// input, Parquet) is read whole, by worker `file index % workers`.
    splittable: bool,
    /// A Parquet file (`.parquet`): its records are rows, numbered from 0 where a line's
    /// position has its byte offset.
    pub(crate) parquet: bool,
}

impl InputFile {
    /// The file's path (`None` for standard input).
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// The input files and the byte range of each worker.
#[derive(Debug)]
pub(crate) struct InputPlan {
    /// The input files, in input order.
    pub(crate) files: Vec<InputFile>,
    /// Where each file starts when the files are laid end to end.
    bases: Vec<u64>,
    /// Where each worker's range starts; worker `i` has `starts[i]..starts[i + 1]`.
    starts: Vec<u64>,
    total: u64,
}

impl InputPlan {
    /// The plan of the inputs `paths` (`-`: standard input) for `workers` workers: each file and an
    /// equal byte range per worker.
    pub(crate) fn new(paths: &[PathBuf], workers: usize) -> anyhow::Result<InputPlan> {
        anyhow::ensure!(paths.len() < 1 << (64 - OFFSET_BITS), "too many input files");
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            if path == Path::new("-") {
                files.push(InputFile {
                    name: "<stdin>".into(),
                    path: None,
                    size: 0,
                    splittable: false,
                    parquet: false,
                });
                continue;
            }
            // An unreadable file is reported by the worker that reads it, as `simhash` does.
            let meta = std::fs::metadata(path).ok();
            let regular = meta.as_ref().is_some_and(std::fs::Metadata::is_file);
            let compressed = simhash_io::compression(path).is_some();
            let parquet = simhash_io::is_parquet(path);
            if regular && !compressed && !parquet {
                // As `simhash` does: one message, not a bad record per line. Every process
                // checks, before any reads.
                simhash_io::refuse_compressed_file(path)?;
            }
            let size = meta.filter(std::fs::Metadata::is_file).map_or(0, |m| m.len());
            anyhow::ensure!(size <= OFFSET_MASK, "{}: larger than 16 TiB", path.display());
            files.push(InputFile {
                name: path.display().to_string(),
                path: Some(path.clone()),
                size,
                splittable: regular && !compressed && !parquet,
                parquet,
            });
        }
        let mut bases = Vec::with_capacity(files.len());
        let mut total = 0u64;
        for f in &files {
            bases.push(total);
            total += f.size;
        }
        let workers = workers.max(1);
        let starts = (0..workers)
            .map(|i| (u128::from(total) * i as u128 / workers as u128) as u64)
            .collect();
        Ok(InputPlan { files, bases, starts, total })
    }

    /// A digest of what this process sees (names, sizes, kinds, workers): every process
    /// must agree. XXH3-64 of a fixed little-endian encoding, so that it does not depend on
    /// the Rust toolchain the binary was built with (unlike `std`'s `DefaultHasher`).
    pub(crate) fn digest(&self) -> u64 {
        let mut bytes = Vec::new();
        for f in &self.files {
            bytes.extend_from_slice(&(f.name.len() as u64).to_le_bytes());
            bytes.extend_from_slice(f.name.as_bytes());
            bytes.extend_from_slice(&f.size.to_le_bytes());
            bytes.push(u8::from(f.splittable));
        }
        bytes.extend_from_slice(&(self.starts.len() as u64).to_le_bytes());
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }

    /// The worker whose range holds byte `x` of the laid-out input.
    fn owner_of_byte(&self, x: u64) -> usize {
        self.starts.partition_point(|&s| s <= x).saturating_sub(1)
    }

    /// The worker that reads (and owns) the record at `pos`.
    pub(crate) fn owner(&self, pos: u64) -> usize {
        let file = (pos >> OFFSET_BITS) as usize;
        let base = self.bases[file];
        if self.files[file].splittable {
            self.owner_of_byte(base + (pos & OFFSET_MASK))
        } else {
            file % self.starts.len()
        }
    }

    /// The pieces `worker` reads: `(file, first byte, end byte)`; the end is `u64::MAX` for
    /// a file read whole.
    pub(crate) fn pieces(&self, worker: usize) -> Vec<(usize, u64, u64)> {
        let lo = self.starts[worker];
        let hi = self.starts.get(worker + 1).copied().unwrap_or(self.total);
        let mut out = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            let base = self.bases[i];
            if f.splittable {
                let (a, b) = (lo.max(base), hi.min(base + f.size));
                if a < b {
                    out.push((i, a - base, b - base));
                }
            } else if i % self.starts.len() == worker {
                out.push((i, 0, u64::MAX));
            }
        }
        out
    }
}

/// Every worker's pieces, in input order: the parts of `--output-dir`, numbered by their
/// index here ([`InputPlan::pieces_in_order`]).
#[derive(Debug)]
pub(crate) struct PieceOrder {
    /// `(worker, file, first byte)` of each piece, sorted by `(file, first byte)`.
    pieces: Vec<(usize, usize, u64)>,
}

impl PieceOrder {
    /// How many pieces the input is cut into.
    pub(crate) fn len(&self) -> usize {
        self.pieces.len()
    }

    /// The number of the piece that holds the record at `pos`.
    pub(crate) fn of(&self, pos: u64) -> usize {
        let key = ((pos >> OFFSET_BITS) as usize, pos & OFFSET_MASK);
        self.pieces.partition_point(|p| (p.1, p.2) <= key).saturating_sub(1)
    }

    /// The file of piece `piece`.
    pub(crate) fn file(&self, piece: usize) -> usize {
        self.pieces[piece].1
    }

    /// The numbers of `worker`'s pieces, in input order.
    pub(crate) fn of_worker(&self, worker: usize) -> Vec<usize> {
        (0..self.pieces.len()).filter(|&i| self.pieces[i].0 == worker).collect()
    }
}

impl InputPlan {
    /// Every worker's pieces, numbered in input order.
    pub(crate) fn pieces_in_order(&self) -> PieceOrder {
        let mut pieces: Vec<(usize, usize, u64)> = (0..self.starts.len())
            .flat_map(|w| self.pieces(w).into_iter().map(move |(f, lo, _)| (w, f, lo)))
            .collect();
        pieces.sort_unstable_by_key(|p| (p.1, p.2));
        if pieces.is_empty() {
            // Only empty files: worker 0 still writes part 0 (the output's header).
            pieces.push((0, 0, 0));
        }
        PieceOrder { pieces }
    }
}

/// The lines of one piece: where it starts, how many lines start in it, and its counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Chunk {
    /// The file the piece is in (index into [`InputPlan::files`]).
    pub(crate) file: usize,
    /// The piece's first byte: chunks of one file are ordered by it.
    pub(crate) lo: u64,
    /// Lines that start in the piece.
    pub(crate) lines: u64,
    /// Lines that are records (not blank, not the TSV header), valid or not.
    pub(crate) records: u64,
    /// Blank lines among them.
    pub(crate) blank: u64,
    /// Bytes read for the piece.
    pub(crate) bytes: u64,
}

/// How a line becomes a record: read by `parser`, and for text fingerprinted.
#[derive(Clone, Debug)]
pub(crate) struct Reading {
    /// Reads each line: JSON (text and id columns) or hash TSV.
    pub(crate) parser: simhash_io::Parser,
    /// Set for JSONL records: a text without one would be featureless.
    pub(crate) fingerprinter: Option<Fingerprinter>,
    /// Set for `--method minhash`: each text is also sketched (shingle set, band keys).
    pub(crate) sketcher: Option<std::sync::Arc<Sketcher>>,
    /// Standard input is kept for a second pass (`dedup`, `decontaminate -o`).
    pub(crate) spool: bool,
    /// `decontaminate`: each text is scanned for these eval sets' n-grams.
    pub(crate) eval: Option<std::sync::Arc<EvalSets>>,
}

/// The records one worker read, in input order.
#[derive(Debug, Default)]
pub(crate) struct Docs {
    /// Each record's position: its file in the high bits, its byte offset below.
    pub(crate) pos: Vec<u64>,
    /// Line numbers: within the chunk until [`Docs::resolve_lines`], then in the file (as
    /// `FILE:LINE` messages name them).
    pub(crate) line: Vec<u64>,
    /// The fingerprint, or `None` for a featureless record.
    pub(crate) fp: Vec<Option<u64>>,
    /// With `--method minhash`, each record's sketch (`None` for a featureless record);
    /// empty otherwise.
    pub(crate) sketch: Vec<Option<DocSketch>>,
    /// The records were sketched: a record is featureless when it has no sketch.
    pub(crate) sketched: bool,
    /// The ids as read (empty for a generated one).
    ids: IdTable,
    /// The id was a JSON number (written back as one); generated ids are numbers.
    pub(crate) numeric: Vec<bool>,
    /// The text's length in bytes (0 for hash input): `dedup --keep longest`.
    pub(crate) len: Vec<u64>,
    /// The record had no id: it is its 0-based line number in the input files laid end to
    /// end (in their concatenation, as `simhash` numbers it).
    pub(crate) generated: Vec<bool>,
    /// Skipped after reading: its id is a duplicate of an earlier record's.
    pub(crate) removed: Vec<bool>,
    /// `decontaminate`: the scans that found eval n-grams, by record (ascending).
    pub(crate) scans: Vec<(usize, DocHits)>,
    /// The chunk (index into this worker's chunks) of each record.
    chunk: Vec<u32>,
    /// Per chunk: the lines of all the files before the chunk's file, which turn a line in
    /// the file into a line in the concatenation (set by [`Docs::resolve_lines`]).
    earlier_files: Vec<u64>,
}

impl Docs {
    /// How many records this worker read.
    pub(crate) fn len(&self) -> usize {
        self.pos.len()
    }

    /// The record has no features: no sketch when the records are sketched (as `simhash`
    /// counts them with `--method minhash`), no fingerprint otherwise.
    pub(crate) fn featureless(&self, doc: usize) -> bool {
        if self.sketched { self.sketch[doc].is_none() } else { self.fp[doc].is_none() }
    }

    /// The record at `pos`, when this worker read it.
    pub(crate) fn find(&self, pos: u64) -> Option<usize> {
        self.pos.binary_search(&pos).ok()
    }

    /// The id as read (`None` when generated from the line number).
    pub(crate) fn given_id(&self, doc: usize) -> Option<&str> {
        if self.generated[doc] {
            return None;
        }
        Some(self.ids.get(doc))
    }

    /// The id as `simhash` writes it for the concatenation of the input files: a record
    /// without one gets its 0-based line number in the concatenation.
    pub(crate) fn id(&self, doc: usize) -> String {
        if let Some(id) = self.given_id(doc) {
            return id.to_string();
        }
        let earlier = self.earlier_files.get(self.chunk[doc] as usize).copied();
        (self.line[doc] + earlier.unwrap_or(0) - 1).to_string()
    }

    /// The id as `simhash` writes it in JSON (a number stays a number).
    pub(crate) fn id_value(&self, doc: usize) -> (String, bool) {
        (self.id(doc), self.numeric[doc])
    }

    /// Turns chunk-relative line numbers into file line numbers. For chunk `c`,
    /// `lines[c]` is `(lines of its file before the chunk, lines of all earlier files)`.
    pub(crate) fn resolve_lines(&mut self, lines: &[(u64, u64)]) {
        for (line, &chunk) in self.line.iter_mut().zip(&self.chunk) {
            *line += lines[chunk as usize].0;
        }
        self.earlier_files = lines.iter().map(|l| l.1).collect();
    }

    fn push(&mut self, pos: u64, line: u64, chunk: u32, id: Option<&str>, parsed: Parsed) {
        let Parsed { fp, sketch, len, number, hits } = parsed;
        if self.sketched {
            self.sketch.push(sketch);
        }
        if !hits.is_empty() {
            self.scans.push((self.pos.len(), hits));
        }
        self.pos.push(pos);
        self.line.push(line);
        self.chunk.push(chunk);
        self.fp.push(fp);
        self.ids.push(id.unwrap_or_default());
        self.generated.push(id.is_none());
        self.numeric.push(number || id.is_none());
        self.len.push(len);
        self.removed.push(false);
    }
}

/// A bad record, kept by its reader until it is reported.
#[derive(Debug)]
pub(crate) struct BadRecord {
    /// The record's position (file and byte offset).
    pub(crate) pos: u64,
    /// The chunk (index into the reader's chunks) it is in.
    pub(crate) chunk: u32,
    /// Within the chunk until resolved, then in the file.
    pub(crate) line: u64,
    /// What is wrong with it.
    pub(crate) problem: Problem,
}

/// What one worker read.
#[derive(Debug, Default)]
pub(crate) struct Share {
    /// The counts of each piece this worker read.
    pub(crate) chunks: Vec<Chunk>,
    /// The records it read.
    pub(crate) docs: Docs,
    /// Its bad records, until they are reported.
    pub(crate) bad: Vec<BadRecord>,
    /// Standard input's copy, when it is read twice (`dedup`): `(file, source)`.
    pub(crate) spools: Vec<(usize, Source)>,
}

impl Share {
    /// Opens piece `(file, lo)` again, for a second pass: the reader and its first line's
    /// offset.
    pub(crate) fn reopen(
        &self,
        plan: &InputPlan,
        file: usize,
        lo: u64,
        max: u64,
    ) -> anyhow::Result<(Box<dyn Read + Send>, u64)> {
        if let Some((_, source)) = self.spools.iter().find(|s| s.0 == file) {
            return Ok((source.reopen()?, 0));
        }
        open_piece(&plan.files[file], lo, max)
    }
}

/// Reads `worker`'s pieces of the input. An error (an unreadable file) ends the job.
pub(crate) fn read_share(
    plan: &InputPlan,
    worker: usize,
    reading: &Reading,
    max_record_bytes: u64,
) -> anyhow::Result<Share> {
    let mut share = Share::default();
    share.docs.sketched = reading.sketcher.is_some();
    for (file, lo, hi) in plan.pieces(worker) {
        let f = &plan.files[file];
        let chunk_index = share.chunks.len() as u32;
        let mut chunk = Chunk { file, lo, ..Chunk::default() };
        if f.parquet {
            read_rows(f, (file, chunk_index), reading, &mut share, &mut chunk)?;
            share.chunks.push(chunk);
            continue;
        }
        let (reader, first) = if reading.spool && f.path.is_none() {
            // Standard input, read twice by `dedup`: the first pass keeps a copy.
            let mut source = Source::new(Path::new("-"));
            let reader = source.open(true)?;
            share.spools.push((file, source));
            (reader, 0)
        } else {
            open_piece(f, lo, max_record_bytes)?
        };
        let each = |start: u64, local: u64, status: LineStatus, buf: &[u8], _: &mut Vec<u8>| {
            let pos = position(file, start);
            if lo == 0 && reading.parser.skips_header(local, buf) {
                return Ok(());
            }
            let parsed = match status {
                LineStatus::TooLong(n) => Err(Problem::too_long(n, max_record_bytes)),
                LineStatus::Ok => parse_line(buf, reading),
            };
            match parsed {
                Err(p) if p.reason == Reason::BlankLine => chunk.blank += 1,
                Err(problem) => {
                    chunk.records += 1;
                    share.bad.push(BadRecord { pos, chunk: chunk_index, line: local, problem });
                }
                Ok((id, parsed)) => {
                    chunk.records += 1;
                    share.docs.push(pos, local, chunk_index, id.as_deref(), parsed);
                }
            }
            Ok(())
        };
        (chunk.lines, chunk.bytes) =
            piece_lines(reader, first, hi, max_record_bytes, &f.name, false, each)?;
        share.chunks.push(chunk);
    }
    Ok(share)
}

/// Reads the lines of a piece, whose `reader` starts at byte `first` of its file, up to the
/// first line that starts at or after `hi` (a line that starts before `hi` is read whole),
/// calling `each(start, line, status, text, raw)` for each: its byte in the file, its number
/// in the piece (1-based), the line without its end, and, with `keep_raw`, the line as read
/// (end included; empty otherwise). Returns the lines and the bytes read. A read error names
/// the file and the byte (the line in the file is not known here).
pub(crate) fn piece_lines(
    reader: impl Read,
    first: u64,
    hi: u64,
    max: u64,
    name: &str,
    keep_raw: bool,
    mut each: impl FnMut(u64, u64, LineStatus, &[u8], &mut Vec<u8>) -> anyhow::Result<()>,
) -> anyhow::Result<(u64, u64)> {
    let mut lines = LineReader::new(reader, max);
    let (mut buf, mut raw) = (Vec::new(), Vec::new());
    let mut local = 0u64;
    loop {
        let start = first + lines.bytes;
        if start >= hi {
            break;
        }
        buf.clear();
        raw.clear();
        let Some(status) = lines
            .next_line(&mut buf, keep_raw.then_some(&mut raw))
            .with_context(|| format!("{name}: read error at byte {start}"))?
        else {
            break;
        };
        local += 1;
        each(start, local, status, &buf, &mut raw)?;
    }
    Ok((local, lines.bytes))
}

/// Reads the rows of the Parquet file `f` (file number `file`, chunk `chunk_index`), as
/// `simhash` reads them ([`ParquetRows`]): each row a record at `position(file, row)`,
/// numbered `row + 1` as a line. A file that is not readable Parquet (or lacks the text
/// column) is one bad record, reported without a line, as `simhash` reports it.
fn read_rows(
    f: &InputFile,
    (file, chunk_index): (usize, u32),
    reading: &Reading,
    share: &mut Share,
    chunk: &mut Chunk,
) -> anyhow::Result<()> {
    let simhash_io::Parser::Json(columns) = &reading.parser else {
        anyhow::bail!("{}: Parquet input holds text columns: --format hash does not apply", f.name);
    };
    let path = f.path.as_deref().unwrap_or(Path::new("-"));
    let mut rows = match ParquetRows::open(path, columns) {
        Ok(rows) => rows,
        Err(e) if e.kind() == simhash_io::ErrorKind::BadParquet => {
            chunk.records += 1;
            let problem = Problem::new(Reason::BadFile, e.to_string());
            share.bad.push(BadRecord {
                pos: position(file, 0),
                chunk: chunk_index,
                line: 0,
                problem,
            });
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    while let Some(batch) = rows.next_batch()? {
        let first = rows.rows_read() - batch.len() as u64;
        for i in 0..batch.len() {
            let row = first + i as u64;
            let (pos, line) = (position(file, row), row + 1);
            chunk.records += 1;
            let parsed = match (batch.text(i), batch.id(i)) {
                (Ok(text), Ok(id)) => Ok(parse_record(
                    simhash_io::Record { id, body: Body::Text(text.into()) },
                    reading,
                )),
                (Err(problem), _) | (_, Err(problem)) => Err(problem),
            };
            match parsed {
                Ok((id, parsed)) => share.docs.push(pos, line, chunk_index, id.as_deref(), parsed),
                Err(problem) => {
                    share.bad.push(BadRecord { pos, chunk: chunk_index, line, problem });
                }
            }
        }
    }
    chunk.lines = rows.rows_read();
    chunk.bytes = f.size;
    Ok(())
}

/// What a record's body becomes: its fingerprint, and with a sketcher its sketch.
struct Parsed {
    fp: Option<u64>,
    sketch: Option<DocSketch>,
    /// The text's length in bytes, as `simhash` measures it for `--keep longest`.
    len: u64,
    /// The id is a JSON number.
    number: bool,
    /// `decontaminate`: the eval n-grams the text contains.
    hits: DocHits,
}

/// A record: its id when it has one, and what its body became.
type Record = (Option<String>, Parsed);

fn parse_line(bytes: &[u8], reading: &Reading) -> Result<Record, Problem> {
    Ok(parse_record(reading.parser.parse(bytes)?, reading))
}

/// What `record` becomes: its id, and its body fingerprinted (and sketched).
fn parse_record(record: simhash_io::Record<'_>, reading: &Reading) -> Record {
    let hits = match (&record.body, &reading.eval) {
        (Body::Text(text), Some(eval)) => eval.scan(text),
        _ => DocHits::default(),
    };
    let (fp, sketch, len) = match (record.body, &reading.fingerprinter, &reading.sketcher) {
        (Body::Text(text), Some(fingerprinter), Some(sketcher)) => {
            let (fp, sketch) = sketcher.sketch(fingerprinter, &text);
            (fp, sketch, text.len() as u64)
        }
        (Body::Text(text), Some(fingerprinter), None) => {
            (fingerprinter.fingerprint(&text), None, text.len() as u64)
        }
        (Body::Text(text), None, _) => (None, None, text.len() as u64),
        (Body::Hash(fp), ..) => (fp, None, 0),
    };
    let number = record.id.as_ref().is_some_and(|id| id.number);
    let parsed = Parsed { fp: fp.map(|f| f.0), sketch, len, number, hits };
    (record.id.map(|id| id.text.into_owned()), parsed)
}

/// Opens a piece of `f` starting at byte `lo`: the reader, and the offset of the first
/// line it returns (a file read whole, compressed or standard input, starts at 0).
pub(crate) fn open_piece(
    f: &InputFile,
    lo: u64,
    max: u64,
) -> anyhow::Result<(Box<dyn Read + Send>, u64)> {
    if let (Some(path), true) = (&f.path, f.splittable) {
        return open_at(path, lo, max);
    }
    let mut source = Source::new(f.path.as_deref().unwrap_or(Path::new("-")));
    Ok((source.open(false)?, 0))
}

/// Opens `path` at the first line that starts at or after byte `lo`: returns the reader
/// and that line's offset.
fn open_at(path: &Path, lo: u64, max: u64) -> anyhow::Result<(Box<dyn Read + Send>, u64)> {
    let shown = path.display();
    let mut file = File::open(path).with_context(|| format!("{shown}: cannot open"))?;
    if lo == 0 {
        return Ok((Box::new(file), 0));
    }
    file.seek(SeekFrom::Start(lo - 1)).with_context(|| format!("{shown}: cannot seek"))?;
    // The rest of the line holding byte lo - 1 (just its "\n" when a line starts at lo)
    // belongs to the previous worker.
    let mut lines = LineReader::new(file, max);
    let mut skip = Vec::new();
    lines
        .next_line(&mut skip, None)
        .with_context(|| format!("{shown}: read error at byte {}", lo - 1))?;
    let first = lo - 1 + lines.bytes;
    // Reopen at the line start: the skipping reader has read ahead.
    let mut file = File::open(path).with_context(|| format!("{shown}: cannot open"))?;
    file.seek(SeekFrom::Start(first)).with_context(|| format!("{shown}: cannot seek"))?;
    Ok((Box::new(file), first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_for(sizes: &[u64], workers: usize) -> InputPlan {
        let files = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| InputFile {
                name: format!("f{i}"),
                path: None,
                size,
                splittable: true,
                parquet: false,
            })
            .collect::<Vec<_>>();
        let mut bases = Vec::new();
        let mut total = 0;
        for f in &files {
            bases.push(total);
            total += f.size;
        }
        let starts = (0..workers).map(|i| total * i as u64 / workers as u64).collect();
        InputPlan { files, bases, starts, total }
    }

    #[test]
    fn digest_is_fixed_and_sees_names_sizes_and_workers() {
        let plan = plan_for(&[10, 20], 3);
        // Pinned: the digest must not change with the toolchain (processes of one job may
        // be built apart), only with this encoding.
        assert_eq!(plan.digest(), 0xefa7972aa3a130c2);
        assert_ne!(plan_for(&[10, 21], 3).digest(), plan.digest());
        assert_ne!(plan_for(&[10, 20], 4).digest(), plan.digest());
        assert_ne!(plan_for(&[30], 3).digest(), plan.digest());
    }

    #[test]
    fn pieces_in_order_number_every_byte_by_its_piece() {
        for (sizes, workers) in [(&[100u64][..], 3), (&[10, 0, 7, 30], 4), (&[2], 5)] {
            let plan = plan_for(sizes, workers);
            let order = plan.pieces_in_order();
            let mut last = 0;
            for (file, &size) in sizes.iter().enumerate() {
                for offset in 0..size {
                    let pos = position(file, offset);
                    let piece = order.of(pos);
                    // Numbers never go down in input order, and the piece is its owner's.
                    assert!(piece >= last, "{sizes:?} x {workers}: byte {offset} of {file}");
                    last = piece;
                    assert!(order.of_worker(plan.owner(pos)).contains(&piece));
                }
            }
            assert_eq!(last + 1, order.len(), "{sizes:?} x {workers}: a piece holds no byte");
        }
    }

    #[test]
    fn every_byte_has_one_owner_and_pieces_agree() {
        for (sizes, workers) in [(&[100u64][..], 3), (&[10, 0, 7, 30], 4), (&[2], 5), (&[0], 2)] {
            let plan = plan_for(sizes, workers);
            for (file, &size) in sizes.iter().enumerate() {
                for offset in 0..size {
                    let owner = plan.owner(position(file, offset));
                    let pieces = plan.pieces(owner);
                    assert!(
                        pieces.iter().any(|&(f, lo, hi)| f == file && lo <= offset && offset < hi),
                        "{sizes:?} x {workers}: byte {offset} of file {file}"
                    );
                    let holders = (0..workers)
                        .filter(|&w| {
                            plan.pieces(w)
                                .iter()
                                .any(|&(f, lo, hi)| f == file && lo <= offset && offset < hi)
                        })
                        .count();
                    assert_eq!(holders, 1);
                }
            }
        }
    }
}
