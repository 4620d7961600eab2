//! A JSONL or hash TSV file read at offsets: only the wanted lines, where the first pass
//! found them, in chunks on the job's threads.

use std::io::Write;

use rayon::prelude::*;
use simhash_io::{LineAt, LinesAt, Source};

use super::notes::record;
use super::{Entry, Pass, PassProgress};
use crate::error::{Context, JobError, Result, bail, ensure};

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
/// ([`Corpus::offset`](crate::Corpus::offset)).
pub(super) struct AtOffsets<'a> {
    /// The pass.
    pub(super) pass: &'a Pass<'a>,
    /// The file, opened for reads at offsets.
    pub(super) file: &'a std::fs::File,
    /// Its source (name and size).
    pub(super) source: &'a Source,
    /// The lines of the files before it.
    pub(super) base: u64,
    /// Its lines.
    pub(super) lines: u64,
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
    pub(super) fn header(&self) -> Result<Option<Vec<u8>>> {
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
    fn places(&self, wanted: &[Entry]) -> Result<Vec<Place>> {
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
    pub(super) fn copy(
        &self,
        wanted: &[Entry],
        progress: &PassProgress,
        out: &mut (dyn Write + Send),
    ) -> Result<u64> {
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
        let write = |out: &mut (dyn Write + Send), done: Vec<Result<Vec<u8>>>| {
            for bytes in done {
                let mut bytes = bytes?;
                out.write_all(&bytes)?;
                bytes.clear();
                Spare::put(&spare.written, bytes);
            }
            Ok::<(), JobError>(())
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
    ) -> Result<Vec<u8>> {
        for place in places {
            let (_, expected, doc) = place.entry;
            let number = place.entry.0 - self.base;
            lines.prefetch(place.offset, place.reach).with_context(|| self.read_error())?;
            let raw =
                match lines.line(place.offset, place.limit).with_context(|| self.read_error())? {
                    LineAt::Line(raw) => raw,
                    LineAt::Unended => &[],
                    LineAt::Gone => bail!(
                        Input,
                        "{}: the input changed while it was read (line {number} is gone)",
                        self.source.name
                    ),
                };
            let buf = simhash_io::line_content(raw);
            // The line must be the record that was read and matched in the first pass.
            ensure!(
                !raw.is_empty()
                    && buf.len() as u64 <= self.pass.max_record_bytes
                    && expected.is_none_or(|h| h == simhash_io::line_hash(buf)),
                Input,
                "{}:{number}: the input changed while it was read (this record differs from \
                 the first pass); nothing was written",
                self.source.name,
            );
            record(self.pass.notes, &self.source.name, number, doc as usize, raw, &mut out)?;
        }
        Ok(out)
    }
}
