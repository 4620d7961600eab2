//! The second pass over JSONL and hash TSV inputs: each wanted line copied (annotated
//! when asked), read at offsets where the file allows, else from the file's start.

use std::io::Write;

use simhash_io::{LineReader, LineStatus, Parser, Source};

use super::notes::record;
use super::offsets::AtOffsets;
use super::{Entry, Notes, Pass, PassProgress, write_line};
use crate::error::{Context, Result, ensure};

/// The second pass over JSONL and hash TSV inputs.
///
/// A file that can be read at offsets (a regular file that is not compressed, or standard
/// input's temporary copy) has only its wanted lines read, where the first pass found
/// them, a chunk of lines at a time on the job's threads ([`AtOffsets`]); any other
/// (`.gz`, `.zst`) is read again from its start, the lines not wanted skipped uncopied.
/// Either way every wanted line is hashed and checked against the first pass.
pub(super) struct Copy<'p> {
    pass: &'p Pass<'p>,
    /// Each output gets its input's hash TSV header (`--output-dir`), or only the first.
    header_each: bool,
    header_written: bool,
    /// Records written so far.
    pub(super) written: u64,
    /// Bytes and lines read, for the progress bar.
    progress: &'p PassProgress,
    /// The annotated line.
    line: Vec<u8>,
}

impl<'p> Copy<'p> {
    /// A copy for `pass` (`header_each`: each output gets its input's hash TSV header).
    pub(super) fn new(
        pass: &'p Pass<'p>,
        header_each: bool,
        progress: &'p PassProgress,
    ) -> Copy<'p> {
        Copy { pass, header_each, header_written: false, written: 0, progress, line: Vec::new() }
    }

    /// Copies the wanted lines of `source`, whose lines are `base + 1 ..= base + lines` of
    /// the concatenation (those of `wanted` that are in it, which are taken off its
    /// front). A file with nothing to write is not read again, unless its header is one to
    /// write.
    pub(super) fn shard(
        &mut self,
        source: &Source,
        base: u64,
        lines: u64,
        wanted: &mut &[Entry],
        out: &mut (dyn Write + Send),
    ) -> Result<()> {
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
    ) -> Result<()> {
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
                    ensure!(
                        status == LineStatus::Ok
                            && expected.is_none_or(|h| h == simhash_io::line_hash(buf)),
                        Input,
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
        ensure!(
            wanted.first().is_none_or(|w| w.0 > base + lines),
            Input,
            "{}: the input changed while it was read (line {} is gone)",
            source.name,
            wanted.first().map_or(0, |w| w.0 - base)
        );
        let bytes = source.size.unwrap_or(reader.bytes).saturating_sub(shown_bytes);
        self.progress.add(self.pass.reporter, bytes, lines.saturating_sub(shown_lines));
        Ok(())
    }
}
