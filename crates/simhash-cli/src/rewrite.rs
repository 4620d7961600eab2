//! The second pass of `dedup` (and of `cluster --annotate`): the input read again, each
//! record to write copied byte for byte (JSONL, hash TSV) or row for row (Parquet), checked
//! against the first pass, optionally with annotation fields added, into one output or
//! into one output per input file (`--output-dir`, the same relative paths, formats and
//! compressions). With `--output-dir` the files are written on the job's threads, each
//! thread taking the next file in input order.
//!
//! A JSONL or hash TSV file that can be read at offsets (not compressed; standard input's
//! temporary copy) has only its wanted lines read, where the first pass found them
//! ([`Corpus::offset`]): chunks of them read, checked and annotated on the job's threads,
//! and written in order on one ([`AtOffsets`]). A compressed file is read again from its
//! start, the lines not wanted skipped without being copied. Either way each wanted line
//! is hashed and checked against the first pass's hash of it: a line that differs (or is
//! gone) is an error, and nothing is written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use anyhow::Context;
use rayon::prelude::*;
use simhash_io::{
    Encoded, ExtraColumn, ExtraKind, ExtraRows, ExtraValue, IdValue, InputFile, LineAt, LineReader,
    LineStatus, LinesAt, Output, ParquetCompression, ParquetCopy, Parser, Score, Source,
};

use crate::corpus::Corpus;
use crate::report::Reporter;

/// What `--annotate` adds to each record written.
pub enum Notes<'a> {
    /// Nothing: the records are copied as they are.
    None,
    /// dedup: `duplicate_of` and `similarity`, for each document (`None`: kept).
    Dedup { of: Vec<Option<(IdValue<'a>, Score)>>, jaccard: bool },
    /// cluster: `cluster`, for each document (`None`: in no cluster that is written).
    Cluster(Vec<Option<u64>>),
}

impl Notes<'_> {
    /// The fields added.
    fn names(&self) -> &'static [&'static str] {
        match self {
            Notes::None => &[],
            Notes::Dedup { .. } => &["duplicate_of", "similarity"],
            Notes::Cluster(_) => &["cluster"],
        }
    }

    /// Appends the fields of `doc` as JSON members, each after a comma.
    fn json(&self, doc: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            Notes::None => {}
            Notes::Dedup { of, .. } => match &of[doc] {
                None => out.extend_from_slice(b",\"duplicate_of\":null,\"similarity\":null"),
                Some((id, score)) => {
                    out.extend_from_slice(b",\"duplicate_of\":");
                    simhash_io::write_json_id(out, id)?;
                    write!(out, ",\"similarity\":{score}")?;
                }
            },
            Notes::Cluster(numbers) => match numbers[doc] {
                None => out.extend_from_slice(b",\"cluster\":null"),
                Some(n) => write!(out, ",\"cluster\":{n}")?,
            },
        }
        Ok(())
    }

    /// The Parquet columns added.
    fn columns(&self) -> Vec<ExtraColumn> {
        let column = |name: &str, kind| ExtraColumn { name: name.into(), kind };
        match self {
            Notes::None => Vec::new(),
            Notes::Dedup { jaccard, .. } => vec![
                column("duplicate_of", ExtraKind::Text),
                column("similarity", if *jaccard { ExtraKind::Float } else { ExtraKind::Unsigned }),
            ],
            Notes::Cluster(_) => vec![column("cluster", ExtraKind::Unsigned)],
        }
    }

    /// Pushes the Parquet values of `doc`.
    fn push(&self, doc: usize, row: &mut ExtraRows) {
        match self {
            Notes::None => {}
            Notes::Dedup { of, .. } => match &of[doc] {
                None => {
                    row.push(ExtraValue::Null);
                    row.push(ExtraValue::Null);
                }
                Some((id, score)) => {
                    row.push(ExtraValue::Text(&id.text));
                    row.push(match *score {
                        Score::Distance(d) => ExtraValue::Unsigned(u64::from(d)),
                        // The value --removed prints (4 decimals).
                        Score::Jaccard(_) => ExtraValue::Float(f64::from(score.code()) / 10_000.0),
                    });
                }
            },
            Notes::Cluster(numbers) => {
                row.push(numbers[doc].map_or(ExtraValue::Null, ExtraValue::Unsigned));
            }
        }
    }
}

/// The records to write, in input order: the line of each (numbered over the
/// concatenation of the inputs), the hash of the line as first read, and its document.
pub type Wanted = Vec<Entry>;

/// One record to write: its line, the hash of the line as first read, its document.
pub type Entry = (u64, Option<u64>, u32);

/// The records of `docs`, in line order.
pub fn wanted(corpus: &Corpus, docs: impl Iterator<Item = usize>) -> Wanted {
    let mut wanted: Wanted =
        docs.map(|d| (corpus.line(d), corpus.line_hash(d), d as u32)).collect();
    wanted.sort_unstable();
    wanted
}

/// Drops `value` on a thread of its own: for the MinHash sketches, once nothing needs them
/// (before the second pass), since closing their temporary files frees hundreds of MB of
/// page cache, tens of milliseconds that would otherwise come at the end of the run. The
/// thread is not waited for: if the run ends first, the system closes the files.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    // Without a thread, `value` was dropped with the closure.
    let _ = std::thread::Builder::new().name("drop".into()).spawn(move || drop(value));
}

/// Where the records go.
pub enum Target<'a> {
    /// One output for every input.
    One(Output),
    /// One output per input file, at its relative path under the directory.
    Dir { root: &'a Path, files: &'a [InputFile] },
}

/// What the second pass reads and how.
pub struct Pass<'a> {
    pub parser: &'a Parser,
    pub max_record_bytes: u64,
    pub sources: &'a [Source],
    pub corpus: &'a Corpus,
    pub notes: &'a Notes<'a>,
    pub reporter: &'a Reporter,
    /// The job's threads: `--output-dir` writes its files on them.
    pub pool: &'a rayon::ThreadPool,
    /// `true`: Parquet inputs (rows copied with their schema) for one output
    /// ([`Target::One`]); [`Target::Dir`] writes each file in its own format.
    pub parquet: bool,
    /// `--parquet-compression`: the codec of the Parquet outputs.
    pub compression: ParquetCompression,
}

/// Writes the `wanted` records to `target`; returns the outputs to commit and how many
/// records were written.
pub fn write(
    pass: &Pass<'_>,
    wanted: &Wanted,
    target: Target<'_>,
) -> anyhow::Result<(Vec<Output>, u64)> {
    let (result, rest) = match target {
        Target::One(out) if pass.parquet => {
            let mut rest = wanted.iter().peekable();
            let result = parquet_one(pass, &mut rest, out)?;
            (result, &wanted[wanted.len() - rest.len()..])
        }
        Target::One(out) => {
            let progress = Progress::default();
            let mut copy = Copy::new(pass, false, &progress);
            let mut out = out;
            let mut rest = &wanted[..];
            let mut base = 0;
            for (source, &lines) in pass.sources.iter().zip(pass.corpus.shard_lines()) {
                copy.shard(source, base, lines, &mut rest, &mut out)?;
                base += lines;
            }
            ((vec![out], copy.written), rest)
        }
        Target::Dir { root, files } => dir(pass, wanted, root, files)?,
    };
    if let Some(&(line, ..)) = rest.first() {
        anyhow::bail!("the input changed while it was read (line {line} is gone)");
    }
    Ok(result)
}

type Iter<'w> = std::iter::Peekable<std::slice::Iter<'w, (u64, Option<u64>, u32)>>;

/// The outputs to commit, and how many records they hold.
type Written = (Vec<Output>, u64);

/// One input file of `--output-dir`: its lines are `base + 1 ..= base + lines` of the
/// concatenation, and `wanted` are the records to write among them.
struct Shard<'a> {
    file: &'a InputFile,
    source: &'a Source,
    base: u64,
    lines: u64,
    wanted: &'a [Entry],
}

/// One output per input file under `root`, each closed once written (committed together
/// by the caller), the files written on the job's threads. Returns them in input order,
/// with the records written and the wanted records after the last file's lines (none,
/// unless the input changed).
fn dir<'w>(
    pass: &Pass<'_>,
    wanted: &'w [Entry],
    root: &Path,
    files: &[InputFile],
) -> anyhow::Result<(Written, &'w [Entry])> {
    // Each file's records are a contiguous run of the sorted `wanted`.
    let mut shards = Vec::with_capacity(files.len());
    let (mut base, mut start) = (0, 0);
    for ((file, source), &lines) in files.iter().zip(pass.sources).zip(pass.corpus.shard_lines()) {
        let end = start + wanted[start..].partition_point(|w| w.0 <= base + lines);
        shards.push(Shard { file, source, base, lines, wanted: &wanted[start..end] });
        (base, start) = (base + lines, end);
    }
    let progress = Progress::default();
    let written =
        in_order(pass.pool, shards.len(), |i| shard_output(pass, root, &shards[i], &progress))?;
    let mut outputs = Vec::with_capacity(written.len());
    let mut records = 0;
    for (out, n) in written {
        outputs.extend(out);
        records += n;
    }
    Ok(((outputs, records), &wanted[start..]))
}

/// The output of one `--output-dir` file, closed, and the records written to it; none
/// for a Parquet file the first pass could not read.
fn shard_output(
    pass: &Pass<'_>,
    root: &Path,
    shard: &Shard<'_>,
    progress: &Progress,
) -> anyhow::Result<(Option<Output>, u64)> {
    let Shard { file, source, base, lines, .. } = *shard;
    let path = root.join(&file.relative);
    // Each file in its own format: a directory may mix JSONL and Parquet shards.
    if simhash_io::is_parquet(&file.path) {
        let mut wanted = shard.wanted.iter().peekable();
        // A file the first pass could not read (reported then) has no schema to copy:
        // it gets no output.
        if lines == 0
            && ParquetCopy::new(std::io::sink(), &file.path, ParquetCompression::Mirror).is_err()
        {
            return Ok((None, 0));
        }
        let out = Output::create_for("--output-dir", &path)?;
        let mut copy =
            ParquetCopy::with_extra(out, &file.path, &pass.notes.columns(), pass.compression)?;
        let mut written = 0;
        if wanted.peek().is_some() {
            copy_rows(pass, &mut copy, &file.path, base, lines, &mut wanted, &mut written)?;
        }
        Ok((Some(copy.finish()?.close()?), written))
    } else {
        let mut copy = Copy::new(pass, true, progress);
        let mut out = Encoded::new(Output::create_for("--output-dir", &path)?, &path)?;
        copy.shard(source, base, lines, &mut &shard.wanted[..], &mut out)?;
        let out = out.finish().with_context(|| format!("{}: cannot write", path.display()))?;
        Ok((Some(out.close()?), copy.written))
    }
}

/// Runs `task` for `0..n` on the threads of `pool`, each thread taking the next index in
/// turn (so at most one task per thread at a time, started in index order), and returns
/// the results in index order, as a loop would. The error returned is the first in index
/// order, as a loop would meet it: once a task fails no later index is started, while
/// every earlier one has been or is still run to its end. On an error the other tasks'
/// results are dropped.
fn in_order<T: Send>(
    pool: &rayon::ThreadPool,
    n: usize,
    task: impl Fn(usize) -> anyhow::Result<T> + Sync,
) -> anyhow::Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let done: Vec<Vec<(usize, anyhow::Result<T>)>> = pool.broadcast(|_| {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n || i > failed.load(Ordering::Relaxed) {
                return done;
            }
            let result = task(i);
            if result.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            done.push((i, result));
        }
    });
    let mut results: Vec<Option<anyhow::Result<T>>> = (0..n).map(|_| None).collect();
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    let mut out = Vec::with_capacity(n);
    for (i, result) in results.into_iter().enumerate() {
        // An index not run comes after one that failed, which has returned.
        let Some(result) = result else { anyhow::bail!("internal error: task {i} was not run") };
        out.push(result?);
    }
    Ok(out)
}

/// Bytes and lines of the second pass so far, over every file (for the progress bar).
#[derive(Default)]
struct Progress {
    bytes: AtomicU64,
    lines: AtomicU64,
}

impl Progress {
    /// Adds what a file read since its last report, and shows the totals.
    fn add(&self, reporter: &Reporter, bytes: u64, lines: u64) {
        let bytes = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let lines = self.lines.fetch_add(lines, Ordering::Relaxed) + lines;
        reporter.progress(bytes, lines);
    }
}

/// The Parquet inputs into one output with the schema and compression of the first file
/// read.
fn parquet_one(
    pass: &Pass<'_>,
    wanted: &mut Iter<'_>,
    out: Output,
) -> anyhow::Result<(Vec<Output>, u64)> {
    let paths: Vec<&Path> = pass.sources.iter().filter_map(Source::path).collect();
    let shard_lines = pass.corpus.shard_lines();
    // The schema of the first file that was read (a bad file has no rows, and was reported
    // in the first pass), or of a file without rows that is Parquet.
    let like = paths.iter().zip(shard_lines).find(|(_, lines)| **lines > 0).map(|(p, _)| *p);
    let like = like.or_else(|| {
        paths
            .iter()
            .copied()
            .find(|p| ParquetCopy::new(std::io::sink(), p, ParquetCompression::Mirror).is_ok())
    });
    let Some(like) = like else {
        // No input could be read (each was reported once as a bad file): there is no
        // schema to write, so the output is not written (its temporary file goes).
        drop(out);
        pass.reporter.warning(
            "no input could be read as Parquet: the output is not written (it has no schema)",
        );
        return Ok((Vec::new(), 0));
    };
    let mut copy = ParquetCopy::with_extra(out, like, &pass.notes.columns(), pass.compression)?;
    let mut written = 0u64;
    let mut base = 0;
    for (path, &rows) in paths.iter().zip(shard_lines) {
        if wanted.peek().is_some_and(|w| w.0 <= base + rows) {
            copy_rows(pass, &mut copy, path, base, rows, wanted, &mut written)?;
        }
        base += rows;
    }
    Ok((vec![copy.finish()?], written))
}

/// Copies the wanted rows of the Parquet file `path` (rows `base + 1 ..= base + rows` of
/// the concatenation), checking each against the first pass.
fn copy_rows(
    pass: &Pass<'_>,
    copy: &mut ParquetCopy<Output>,
    path: &Path,
    base: u64,
    rows: u64,
    wanted: &mut Iter<'_>,
    written: &mut u64,
) -> anyhow::Result<()> {
    let Parser::Json(columns) = pass.parser else {
        anyhow::bail!("Parquet input holds text columns: --format hash does not apply");
    };
    copy.copy(path, columns, |row, text, extra| {
        let at = base + row + 1;
        if at > base + rows || wanted.peek().is_none_or(|w| w.0 != at) {
            return Ok(false);
        }
        let Some(&(_, expected, doc)) = wanted.next() else { return Ok(false) };
        if text.is_none_or(|t| expected.is_some_and(|h| h != simhash_io::line_hash(t.as_bytes()))) {
            return Err(simhash_io::Error::from(std::io::Error::other(format!(
                "{}:{}: the input changed while it was read (this row differs from the first \
                 pass); nothing was written",
                path.display(),
                row + 1
            ))));
        }
        pass.notes.push(doc as usize, extra);
        *written += 1;
        Ok(true)
    })?;
    anyhow::ensure!(
        wanted.peek().is_none_or(|w| w.0 > base + rows),
        "{}: the input changed while it was read (row {} is gone)",
        path.display(),
        wanted.peek().map_or(0, |w| w.0 - base)
    );
    Ok(())
}

/// The second pass over JSONL and hash TSV inputs.
///
/// A file that can be read at offsets (a regular file that is not compressed, or standard
/// input's temporary copy) has only its wanted lines read, where the first pass found
/// them, a chunk of lines at a time on the job's threads ([`AtOffsets`]); any other
/// (`.gz`, `.zst`) is read again from its start, the lines not wanted skipped uncopied.
/// Either way every wanted line is hashed and checked against the first pass.
struct Copy<'p> {
    pass: &'p Pass<'p>,
    /// Each output gets its input's hash TSV header (`--output-dir`), or only the first.
    header_each: bool,
    header_written: bool,
    written: u64,
    /// Bytes and lines read, for the progress bar.
    progress: &'p Progress,
    /// The annotated line.
    line: Vec<u8>,
}

impl<'p> Copy<'p> {
    fn new(pass: &'p Pass<'p>, header_each: bool, progress: &'p Progress) -> Copy<'p> {
        Copy { pass, header_each, header_written: false, written: 0, progress, line: Vec::new() }
    }

    /// Copies the wanted lines of `source`, whose lines are `base + 1 ..= base + lines` of
    /// the concatenation (those of `wanted` that are in it, which are taken off its
    /// front). A file with nothing to write is not read again, unless its header is one to
    /// write.
    fn shard(
        &mut self,
        source: &Source,
        base: u64,
        lines: u64,
        wanted: &mut &[Entry],
        out: &mut (dyn Write + Send),
    ) -> anyhow::Result<()> {
        if self.header_each {
            self.header_written = false;
        }
        let needs_header = matches!(self.pass.parser, Parser::Hash) && !self.header_written;
        let mine = &wanted[..wanted.partition_point(|w| w.0 <= base + lines)];
        if mine.is_empty() && !needs_header {
            self.progress.add(self.pass.reporter, source.size.unwrap_or(0), lines);
            return Ok(());
        }
        // Offsets are kept with the line hashes (not for Parquet rows).
        let at_offsets =
            mine.first().is_none_or(|w| self.pass.corpus.offset(w.2 as usize).is_some());
        let file = if at_offsets { source.reopen_at_offsets()? } else { None };
        let Some(file) = file else {
            return self.in_sequence(source, base, lines, wanted, out);
        };
        let at = AtOffsets { pass: self.pass, file: &file, source, base, lines };
        if needs_header && let Some(header) = at.header()? {
            self.header_written = true;
            write_line(out, &header)?;
        }
        self.written += at.copy(mine, self.progress, out)?;
        *wanted = &wanted[mine.len()..];
        Ok(())
    }

    /// [`Copy::shard`] reading `source` from its start.
    fn in_sequence(
        &mut self,
        source: &Source,
        base: u64,
        lines: u64,
        wanted: &mut &[Entry],
        out: &mut (dyn Write + Send),
    ) -> anyhow::Result<()> {
        // What was added to the progress so far.
        let (mut shown_bytes, mut shown_lines) = (0, 0);
        let mut reader = LineReader::new(source.reopen()?, self.pass.max_record_bytes);
        let mut raw = Vec::new();
        let read_error = || format!("{}: read error", source.name);
        loop {
            let number = reader.line + 1;
            let entry = wanted.first().filter(|w| w.0 == base + number);
            // Only the first line of a hash TSV file may be a header.
            let maybe_header = number == 1 && matches!(self.pass.parser, Parser::Hash);
            if entry.is_none() && !maybe_header {
                if reader.skip_line().with_context(read_error)?.is_none() {
                    break;
                }
            } else {
                raw.clear();
                let Some(status) = reader.next_raw_line(&mut raw).with_context(read_error)? else {
                    break;
                };
                let buf = simhash_io::line_content(&raw);
                let header = status == LineStatus::Ok && self.pass.parser.skips_header(number, buf);
                if header {
                    if !self.header_written {
                        self.header_written = true;
                        write_line(out, &raw)?;
                    }
                } else if let Some(&(_, expected, doc)) = entry {
                    *wanted = &wanted[1..];
                    // The line must be the record that was read and matched in the first pass.
                    anyhow::ensure!(
                        status == LineStatus::Ok
                            && expected.is_none_or(|h| h == simhash_io::line_hash(buf)),
                        "{}:{number}: the input changed while it was read (this record differs \
                         from the first pass); nothing was written",
                        source.name,
                    );
                    self.written += 1;
                    let notes = self.pass.notes;
                    if matches!(notes, Notes::None) {
                        write_line(out, &raw)?;
                    } else {
                        self.line.clear();
                        record(notes, &source.name, number, doc as usize, &raw, &mut self.line)?;
                        out.write_all(&self.line)?;
                    }
                }
            }
            if reader.line % 4096 == 0 {
                let (bytes, lines) = (reader.bytes - shown_bytes, reader.line - shown_lines);
                self.progress.add(self.pass.reporter, bytes, lines);
                (shown_bytes, shown_lines) = (reader.bytes, reader.line);
            }
            if reader.line >= lines || wanted.first().is_none_or(|w| w.0 > base + lines) {
                break;
            }
        }
        anyhow::ensure!(
            wanted.first().is_none_or(|w| w.0 > base + lines),
            "{}: the input changed while it was read (line {} is gone)",
            source.name,
            wanted.first().map_or(0, |w| w.0 - base)
        );
        let bytes = source.size.unwrap_or(reader.bytes).saturating_sub(shown_bytes);
        self.progress.add(self.pass.reporter, bytes, lines.saturating_sub(shown_lines));
        Ok(())
    }
}

/// Appends one record to `out`: the line `raw` as it is (with a newline if it has none),
/// or with the annotation fields of `doc` before its closing `}`. `number`: the line's
/// number in the file named `name`, for messages.
fn record(
    notes: &Notes<'_>,
    name: &str,
    number: u64,
    doc: usize,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> anyhow::Result<()> {
    if matches!(notes, Notes::None) {
        out.extend_from_slice(raw);
    } else {
        let buf = simhash_io::line_content(raw);
        if let Some(field) = simhash_io::json_fields(buf, notes.names()) {
            anyhow::bail!(
                "{name}:{number}: the record already has a field {field:?}: --annotate would \
                 write it twice (rename the field first); nothing was written",
            );
        }
        // The record parsed as a JSON object: its last byte that is not white space is `}`.
        let end = buf.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap_or(0);
        anyhow::ensure!(
            buf.get(end) == Some(&b'}'),
            "{name}:{number}: not a JSON object: cannot annotate it",
        );
        out.extend_from_slice(&buf[..end]);
        notes.json(doc, out)?;
        out.extend_from_slice(&raw[end..]);
    }
    if out.last() != Some(&b'\n') {
        out.push(b'\n');
    }
    Ok(())
}

/// Bytes of lines one task of [`AtOffsets::copy`] reads (about: its lines are whole).
const CHUNK_BYTES: u64 = 512 << 10;

/// The longest run of lines not wanted that a task reads through rather than skips with a
/// read of its own.
const GAP_BYTES: u64 = 4 << 10;

/// Bytes read at first for a line whose end is not known.
const LINE_GUESS: u64 = 64 << 10;

/// Buffers to use again: those [`LinesAt`] read into, and those of chunks written.
#[derive(Default)]
struct Spare {
    read: std::sync::Mutex<Vec<Vec<u8>>>,
    written: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl Spare {
    fn take(list: &std::sync::Mutex<Vec<Vec<u8>>>) -> Vec<u8> {
        list.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop().unwrap_or_default()
    }

    fn put(list: &std::sync::Mutex<Vec<Vec<u8>>>, buffer: Vec<u8>) {
        list.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(buffer);
    }
}

/// One input file read at offsets: the wanted lines only, where the first pass found them
/// ([`Corpus::offset`]).
struct AtOffsets<'a> {
    pass: &'a Pass<'a>,
    file: &'a std::fs::File,
    source: &'a Source,
    base: u64,
    lines: u64,
}

/// Where a wanted line is: its entry, its offset in the file, the offset it ends before
/// at the latest (where the next document of the file starts, or the longest record
/// allows), and the end of the bytes to read with it in one read.
#[derive(Clone, Copy)]
struct Place {
    entry: Entry,
    offset: u64,
    limit: u64,
    reach: u64,
}

impl AtOffsets<'_> {
    /// The file's first line when it is a hash TSV header.
    fn header(&self) -> anyhow::Result<Option<Vec<u8>>> {
        let mut lines = LinesAt::new(self.file);
        let limit = self.pass.max_record_bytes.saturating_add(2);
        let line = lines.line(0, limit).with_context(|| self.read_error())?;
        let LineAt::Line(raw) = line else { return Ok(None) };
        let buf = simhash_io::line_content(raw);
        let fits = buf.len() as u64 <= self.pass.max_record_bytes;
        Ok((fits && self.pass.parser.skips_header(1, buf)).then(|| raw.to_vec()))
    }

    fn read_error(&self) -> String {
        format!("{}: read error", self.source.name)
    }

    /// Where the lines of `wanted` are.
    fn places(&self, wanted: &[Entry]) -> anyhow::Result<Vec<Place>> {
        let corpus = self.pass.corpus;
        let longest = self.pass.max_record_bytes.saturating_add(2);
        let mut places = Vec::with_capacity(wanted.len());
        for &entry in wanted {
            let doc = entry.2 as usize;
            let offset = corpus.offset(doc).context("internal error: no offset")?;
            // The next document, if it is in this file, starts after the line's end.
            let next = doc + 1;
            let bound = (next < corpus.len() && corpus.line(next) <= self.base + self.lines)
                .then(|| corpus.offset(next))
                .flatten()
                .filter(|&b| b > offset);
            let limit = offset.saturating_add(longest).min(bound.unwrap_or(u64::MAX));
            let reach = limit.min(offset.saturating_add(LINE_GUESS));
            places.push(Place { entry, offset, limit, reach });
        }
        Ok(places)
    }

    /// Copies the lines of `wanted` to `out` in order, checking each; returns how many.
    /// The lines are read in chunks of about [`CHUNK_BYTES`] on the job's threads, a
    /// window of chunks while the previous window is written.
    fn copy(
        &self,
        wanted: &[Entry],
        progress: &Progress,
        out: &mut (dyn Write + Send),
    ) -> anyhow::Result<u64> {
        let mut places = self.places(wanted)?;
        let mut ends = Vec::new();
        let mut start = 0;
        while let Some(first) = places.get(start).map(|p| p.offset) {
            let end =
                start + places[start..].partition_point(|p| p.offset - first < CHUNK_BYTES).max(1);
            // Within a chunk, a line near enough to the next one is read with it.
            for i in (start + 1..end).rev() {
                if places[i].offset <= places[i - 1].reach.saturating_add(GAP_BYTES) {
                    places[i - 1].reach = places[i - 1].reach.max(places[i].reach);
                }
            }
            ends.push(end);
            start = end;
        }
        let mut chunks = Vec::with_capacity(ends.len());
        let mut rest = &places[..];
        let mut at = 0;
        for end in ends {
            let (this, next) = rest.split_at(end - at);
            chunks.push(this);
            (rest, at) = (next, end);
        }
        let window = 4 * self.pass.pool.current_num_threads();
        // Buffers used before, to use again rather than clear new memory for each chunk.
        let spare = Spare::default();
        let write = |out: &mut (dyn Write + Send), done: Vec<anyhow::Result<Vec<u8>>>| {
            for bytes in done {
                let mut bytes = bytes?;
                out.write_all(&bytes)?;
                bytes.clear();
                Spare::put(&spare.written, bytes);
            }
            anyhow::Ok(())
        };
        let read = |chunk: &&[Place]| {
            let mut lines = LinesAt::with_buffer(self.file, Spare::take(&spare.read));
            let out = self.chunk(&mut lines, chunk, Spare::take(&spare.written));
            Spare::put(&spare.read, lines.into_buffer());
            out
        };
        let (mut shown_bytes, mut shown_lines) = (0, 0);
        self.pass.pool.install(|| {
            let mut done = Vec::new();
            for next in chunks.chunks(window) {
                let (written, read) = rayon::join(
                    || write(out, std::mem::take(&mut done)),
                    || next.par_iter().map(read).collect(),
                );
                written?;
                done = read;
                let Place { entry, offset, .. } = next[0][0];
                let line = entry.0 - self.base;
                progress.add(self.pass.reporter, offset - shown_bytes, line - shown_lines);
                (shown_bytes, shown_lines) = (offset, line);
            }
            write(out, done)
        })?;
        let bytes = self.source.size.unwrap_or(shown_bytes).saturating_sub(shown_bytes);
        progress.add(self.pass.reporter, bytes, self.lines.saturating_sub(shown_lines));
        Ok(wanted.len() as u64)
    }

    /// The output of one chunk's lines: read, checked and annotated.
    fn chunk(
        &self,
        lines: &mut LinesAt<'_>,
        places: &[Place],
        mut out: Vec<u8>,
    ) -> anyhow::Result<Vec<u8>> {
        for place in places {
            let (_, expected, doc) = place.entry;
            let number = place.entry.0 - self.base;
            lines.prefetch(place.offset, place.reach).with_context(|| self.read_error())?;
            let raw =
                match lines.line(place.offset, place.limit).with_context(|| self.read_error())? {
                    LineAt::Line(raw) => raw,
                    LineAt::Unended => &[],
                    LineAt::Gone => anyhow::bail!(
                        "{}: the input changed while it was read (line {number} is gone)",
                        self.source.name
                    ),
                };
            let buf = simhash_io::line_content(raw);
            // The line must be the record that was read and matched in the first pass.
            anyhow::ensure!(
                !raw.is_empty()
                    && buf.len() as u64 <= self.pass.max_record_bytes
                    && expected.is_none_or(|h| h == simhash_io::line_hash(buf)),
                "{}:{number}: the input changed while it was read (this record differs from \
                 the first pass); nothing was written",
                self.source.name,
            );
            record(self.pass.notes, &self.source.name, number, doc as usize, raw, &mut out)?;
        }
        Ok(out)
    }
}

/// Writes a line, adding the newline a last line may lack.
fn write_line(out: &mut dyn Write, line: &[u8]) -> anyhow::Result<()> {
    out.write_all(line)?;
    if line.last() != Some(&b'\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The directories `--output-dir` creates, removed again (when still empty) unless the run
/// succeeds: a failed run leaves nothing.
#[derive(Default)]
pub struct CreatedDirs {
    dirs: Vec<PathBuf>,
    keep: bool,
}

impl CreatedDirs {
    /// Creates `dir` and the directories above it that are missing, noting each.
    pub fn create(&mut self, dir: &Path) -> anyhow::Result<()> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d)
                .with_context(|| format!("--output-dir: cannot create {}", d.display()))?;
            self.dirs.push(d);
        }
        Ok(())
    }

    /// The run succeeded: the directories stay.
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        if !self.keep {
            for d in self.dirs.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

/// Whether the inputs are Parquet files; all or none must be (`what`: why, for the error).
pub fn parquet_inputs(inputs: &simhash_io::Inputs, what: &str) -> anyhow::Result<bool> {
    let files = inputs.files();
    let parquet = files.first().is_some_and(|f| simhash_io::is_parquet(&f.path));
    if let Some(other) = files.iter().find(|f| simhash_io::is_parquet(&f.path) != parquet) {
        anyhow::bail!(
            "{what}: {} and {} are not both Parquet",
            files[0].path.display(),
            other.path.display()
        );
    }
    Ok(parquet)
}
