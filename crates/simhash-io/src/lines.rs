//! Splitting an input into numbered lines, with a length limit.

use std::io::{self, BufRead, BufReader, Read};

/// One line as read: its bytes (without `\n` or `\r\n`), or only its length when it was
/// longer than the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineStatus {
    /// The line fit the limit: its bytes were appended.
    Ok,
    /// The line was longer than the limit: nothing was appended; its length (terminator
    /// included) is given.
    TooLong(u64),
}

/// Reads lines with a length limit, without ever holding more than the limit in memory.
///
/// A line ends at `\n` or `\r\n` (removed); the last line needs no end. A line longer than
/// the limit (terminator excluded) is measured, not kept: [`LineStatus::TooLong`]. Until it
/// passes the limit its bytes are kept (it may yet fit), so a buffer grows by at most the
/// limit and two bytes for a line (not by twice that, as a doubling `Vec` would), and is
/// given back its capacity from before the line once the line is over the limit.
///
/// ```
/// use simhash_io::{LineReader, LineStatus};
///
/// let mut lines = LineReader::new(&b"short\r\nmuch too long\n"[..], 8);
/// let mut buf = Vec::new();
/// assert_eq!(lines.next_line(&mut buf, None)?, Some(LineStatus::Ok));
/// assert_eq!((lines.line, &buf[..]), (1, &b"short"[..]));
/// buf.clear();
/// assert_eq!(lines.next_line(&mut buf, None)?, Some(LineStatus::TooLong(14)));
/// assert_eq!(lines.next_line(&mut buf, None)?, None);
/// assert_eq!(lines.bytes, 21);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: u64,
    /// 1-based number of the last line returned.
    pub line: u64,
    /// Bytes consumed so far.
    pub bytes: u64,
    /// The largest capacity a line's buffer reached (a test's view of the memory held).
    #[cfg(test)]
    most_held: usize,
}

impl<R: Read> LineReader<R> {
    /// Lines of `inner`, each at most `max` bytes (terminator excluded).
    pub fn new(inner: R, max: u64) -> LineReader<R> {
        LineReader {
            inner: BufReader::with_capacity(1 << 18, inner),
            max,
            line: 0,
            bytes: 0,
            #[cfg(test)]
            most_held: 0,
        }
    }

    /// Appends the next line (terminator removed) to `buf`. `None` at the end of input.
    /// When `raw` is given, the line's bytes with their terminator are appended there too.
    pub fn next_line(
        &mut self,
        buf: &mut Vec<u8>,
        raw: Option<&mut Vec<u8>>,
    ) -> io::Result<Option<LineStatus>> {
        let start = buf.len();
        let status = match self.read_raw(buf, raw)? {
            Some(LineStatus::Ok) => LineStatus::Ok,
            other => return Ok(other),
        };
        let total = (buf.len() - start) as u64;
        let len = line_content(&buf[start..]).len();
        buf.truncate(start + len);
        if len as u64 > self.max {
            buf.truncate(start);
            return Ok(Some(LineStatus::TooLong(total)));
        }
        Ok(Some(status))
    }

    /// Appends the next line to `raw` as it is, with its terminator (see [`line_content`]).
    /// `None` at the end of input. A line longer than the limit (terminator excluded) is
    /// measured, not kept, as by [`next_line`](LineReader::next_line).
    pub fn next_raw_line(&mut self, raw: &mut Vec<u8>) -> io::Result<Option<LineStatus>> {
        let start = raw.len();
        let status = match self.read_raw(raw, None)? {
            Some(LineStatus::Ok) => LineStatus::Ok,
            other => return Ok(other),
        };
        let total = (raw.len() - start) as u64;
        if line_content(&raw[start..]).len() as u64 > self.max {
            raw.truncate(start);
            return Ok(Some(LineStatus::TooLong(total)));
        }
        Ok(Some(status))
    }

    /// Appends the next line with its terminator to `buf` (and `raw`), or only measures it
    /// when it is longer than the limit allowing for `\r\n` (`TooLong`, nothing appended).
    fn read_raw(
        &mut self,
        buf: &mut Vec<u8>,
        mut raw: Option<&mut Vec<u8>>,
    ) -> io::Result<Option<LineStatus>> {
        let start = buf.len();
        let raw_start = raw.as_deref().map_or(0, Vec::len);
        let (capacity, raw_capacity) = (buf.capacity(), raw.as_deref().map_or(0, Vec::capacity));
        let max = self.max;
        // The most a line keeps: the limit and a "\r\n".
        let keep = to_index(max.saturating_add(2));
        let mut too_long = false;
        #[cfg(test)]
        let mut most_held = 0;
        let total = self.walk_line(|piece, total| {
            if !too_long && total > max.saturating_add(2) {
                // Over the limit even allowing for "\r\n": stop keeping bytes, and give
                // back the memory the line grew the buffers by.
                too_long = true;
                buf.truncate(start);
                buf.shrink_to(capacity);
                if let Some(raw) = raw.as_deref_mut() {
                    raw.truncate(raw_start);
                    raw.shrink_to(raw_capacity);
                }
            }
            if !too_long {
                extend_within(buf, piece, start.saturating_add(keep));
                if let Some(raw) = raw.as_deref_mut() {
                    extend_within(raw, piece, raw_start.saturating_add(keep));
                }
            }
            #[cfg(test)]
            {
                let raw = raw.as_deref().map_or(0, Vec::capacity);
                most_held = most_held.max(buf.capacity()).max(raw);
            }
        })?;
        #[cfg(test)]
        {
            self.most_held = self.most_held.max(most_held);
        }
        Ok(total.map(|total| if too_long { LineStatus::TooLong(total) } else { LineStatus::Ok }))
    }

    /// Advances over the next line without copying it; returns its length, terminator
    /// included. `None` at the end of input. Counts the line as [`next_line`] does.
    ///
    /// [`next_line`]: LineReader::next_line
    pub fn skip_line(&mut self) -> io::Result<Option<u64>> {
        self.walk_line(|_, _| {})
    }

    /// Advances over the next line, handing `piece` each run of its bytes (terminator
    /// included) with the line's length so far, and counts it; returns its length, or
    /// `None` at the end of input.
    fn walk_line(&mut self, mut piece: impl FnMut(&[u8], u64)) -> io::Result<Option<u64>> {
        let mut total: u64 = 0;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (len, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            total += len as u64;
            piece(&chunk[..len], total);
            self.inner.consume(len);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.line += 1;
        self.bytes += total;
        Ok(Some(total))
    }
}

/// Appends `piece` to `buf`, growing it as `Vec` does (doubling) but never past `most`
/// bytes (unless `piece` needs more): a line over the limit grows its buffer to about the
/// limit, not to twice it.
fn extend_within(buf: &mut Vec<u8>, piece: &[u8], most: usize) {
    let need = buf.len() + piece.len();
    if need > buf.capacity() {
        let grown = buf.capacity().saturating_mul(2).min(most).max(need);
        buf.reserve_exact(grown - buf.len());
    }
    buf.extend_from_slice(piece);
}

/// A line read at a known offset by [`LinesAt::line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineAt<'a> {
    /// The line with its terminator (without one when the file ends in it).
    Line(&'a [u8]),
    /// The file ends at or before the offset.
    Gone,
    /// No line end before the limit, and the file goes on.
    Unended,
}

/// Reads the lines that start at known offsets of a file (a second pass reading only some
/// lines of its input), in increasing order, with few reads: a read covers the lines asked
/// for next ([`LinesAt::prefetch`]), and holds on to the bytes read.
///
/// ```
/// use simhash_io::{LineAt, LinesAt};
/// use std::io::Write;
///
/// let mut file = tempfile::tempfile()?;
/// file.write_all(b"one\ntwo\r\nthree")?;
/// let mut lines = LinesAt::new(&file);
/// lines.prefetch(0, 9)?;
/// assert_eq!(lines.line(4, 100)?, LineAt::Line(b"two\r\n"));
/// assert_eq!(lines.line(9, 100)?, LineAt::Line(b"three"));
/// assert_eq!(lines.line(0, 2)?, LineAt::Unended);
/// assert_eq!(lines.line(14, 100)?, LineAt::Gone);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LinesAt<'f> {
    file: &'f std::fs::File,
    /// The bytes held start at this offset.
    at: u64,
    /// The bytes held are `data[..held]`; the rest of `data` is room for the next read (it
    /// is filled once, never cleared, so that a read does not clear memory first).
    data: Vec<u8>,
    held: usize,
    /// The file ends where the bytes held do.
    eof: bool,
}

/// Bytes read at first for a line whose end is not known: a line longer than this is read
/// in reads of twice as many bytes each time.
const LINE_GUESS: u64 = 64 << 10;

impl<'f> LinesAt<'f> {
    /// Lines of `file`, nothing read yet.
    pub fn new(file: &'f std::fs::File) -> LinesAt<'f> {
        LinesAt::with_buffer(file, Vec::new())
    }

    /// [`LinesAt::new`] reading into `buffer` (its bytes are overwritten; the memory of a
    /// buffer used before, from [`LinesAt::into_buffer`], is not cleared again).
    pub fn with_buffer(file: &'f std::fs::File, buffer: Vec<u8>) -> LinesAt<'f> {
        LinesAt { file, at: 0, data: buffer, held: 0, eof: false }
    }

    /// The buffer, for another [`LinesAt::with_buffer`].
    pub fn into_buffer(self) -> Vec<u8> {
        self.data
    }

    /// Reads the bytes from `offset` to `end` in one read, unless they are held already.
    pub fn prefetch(&mut self, offset: u64, end: u64) -> io::Result<()> {
        if offset < self.at || (end > self.held_end() && !self.eof) {
            self.read(offset, end)?;
        }
        Ok(())
    }

    /// The line that starts at `offset`, looked for up to `limit` (the line and its
    /// terminator end there at the latest).
    pub fn line(&mut self, offset: u64, limit: u64) -> io::Result<LineAt<'_>> {
        if limit <= offset {
            return Ok(LineAt::Unended);
        }
        if offset < self.at || (offset >= self.held_end() && !self.eof) {
            self.read(offset, limit.min(offset.saturating_add(LINE_GUESS)))?;
        }
        let start = match usize::try_from(offset - self.at) {
            Ok(start) if start < self.held => start,
            _ => return Ok(LineAt::Gone),
        };
        let mut searched = start;
        loop {
            let stop = self.held.min(to_index(limit.saturating_sub(self.at)));
            if let Some(i) = memchr::memchr(b'\n', &self.data[searched..stop]) {
                return Ok(LineAt::Line(&self.data[start..=searched + i]));
            }
            if self.eof && stop == self.held {
                return Ok(LineAt::Line(&self.data[start..self.held]));
            }
            if self.held_end() >= limit {
                return Ok(LineAt::Unended);
            }
            searched = stop;
            // Twice as many bytes again, at most up to the limit.
            let more = (self.held - start).max(1) as u64;
            let end = limit.min(self.held_end().saturating_add(more));
            self.extend(end)?;
        }
    }

    fn held_end(&self) -> u64 {
        self.at + self.held as u64
    }

    /// Holds the bytes from `offset` to `end` (fewer at the end of the file), dropping the
    /// ones held before.
    fn read(&mut self, offset: u64, end: u64) -> io::Result<()> {
        self.at = offset;
        self.held = 0;
        self.eof = false;
        self.extend(end)
    }

    /// Holds the bytes up to `end` too (fewer at the end of the file).
    fn extend(&mut self, end: u64) -> io::Result<()> {
        let from = self.held;
        let want = to_index(end.saturating_sub(self.held_end()));
        if self.data.len() < from + want {
            self.data.resize(from + want, 0);
        }
        let n = read_at(self.file, &mut self.data[from..from + want], self.at + from as u64)?;
        self.held = from + n;
        self.eof = n < want;
        Ok(())
    }
}

/// A length in memory: lengths over `usize` (32-bit targets) are clamped, to fail at the
/// allocation rather than wrap.
fn to_index(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Reads from `file` at `offset` until `buf` is full or the file ends; returns how many
/// bytes were read. On Unix the file's cursor does not move, and threads can read at once.
pub fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read_once_at(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(unix)]
fn read_once_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_once_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::io::{Seek, SeekFrom};
    // One reader at a time: a cloned handle shares the cursor.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read(buf)
}

/// The line `raw` (as read, with its terminator if it has one) without its `\n` or `\r\n`.
///
/// ```
/// assert_eq!(simhash_io::line_content(b"a\r\n"), b"a");
/// assert_eq!(simhash_io::line_content(b"a\r"), b"a\r");
/// assert_eq!(simhash_io::line_content(b"\r\n"), b"");
/// ```
pub fn line_content(raw: &[u8]) -> &[u8] {
    match raw {
        [rest @ .., b'\r', b'\n'] | [rest @ .., b'\n'] => rest,
        _ => raw,
    }
}

/// Reading at an offset, which several threads can do at once on one file (`pread`).
pub trait ReadAt {
    /// Reads bytes at `offset` into `buf`; how many (0 at the end of the input).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
}

/// The lines that start in one block of a file, as [`read_block`] reads them: each line's
/// bytes (terminator removed) are `data[start..end]`.
#[derive(Debug, Default)]
pub struct BlockLines {
    /// The bytes read: from the byte before the block to its end, and the rest of its
    /// last line unless too long.
    pub data: Vec<u8>,
    /// The offset in the file of `data`'s first byte: a line whose bytes start at `s` in
    /// `data` starts at `origin + s` in the file.
    pub origin: u64,
    /// Per line, in order: where its bytes are in `data`, and its status (a line over the
    /// limit has an empty range).
    pub lines: Vec<(usize, usize, LineStatus)>,
}

/// Reads the lines of `file` that start at an offset within `start..end` into `out`
/// (cleared first), with positional reads: the same lines, bytes and statuses as
/// [`LineReader`] (limit `max`) reads, once each, when a file is cut into blocks that
/// together cover it.
///
/// A line starts at offset 0 and after each `\n`. The block's last line is read to its end,
/// past `end` if need be; a line longer than the limit is measured, not held, whichever
/// block it starts in: once a MiB of a line is held, the rest of it is measured first
/// (read without being kept), and then read only if the line fits the limit. So the bytes
/// held never pass the block and a MiB, or the block and the limit, whichever is less,
/// besides a line that fits. On a read error, the lines read before it are in `out`.
///
/// ```
/// use simhash_io::{BlockLines, LineStatus, read_block};
///
/// let file: &[u8] = b"ab\ncd\r\nef";
/// let mut out = BlockLines::default();
/// read_block(file, 2, 5, 100, &mut out)?; // "cd\r\n" starts at 3
/// // `data` starts at offset 1, the byte before the block.
/// assert_eq!(out.lines, [(2, 4, LineStatus::Ok)]);
/// assert_eq!(&out.data[2..4], b"cd");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_block<F: ReadAt + ?Sized>(
    file: &F,
    start: u64,
    end: u64,
    max: u64,
    out: &mut BlockLines,
) -> io::Result<()> {
    read_block_measuring(file, (start, end), max, out, MEASURE_FROM)
}

/// [`read_block`], measuring a line first once `measure_from` bytes of it are held.
fn read_block_measuring<F: ReadAt + ?Sized>(
    file: &F,
    (start, end): (u64, u64),
    max: u64,
    out: &mut BlockLines,
    measure_from: usize,
) -> io::Result<()> {
    out.data.clear();
    out.lines.clear();
    if end <= start {
        return Ok(());
    }
    // From the byte before the block, which says whether a line starts at `start`.
    let from = start.saturating_sub(1);
    out.origin = from;
    let span = usize::try_from(end - from).unwrap_or(usize::MAX);
    let mut eof = fill_at(file, &mut out.data, from, span)?;
    let mut at = if start == 0 {
        0
    } else {
        match memchr::memchr(b'\n', &out.data) {
            Some(i) => i + 1,
            None => return Ok(()),
        }
    };
    // `at` is a line start, at offset `from + at`.
    while from + (at as u64) < end && at < out.data.len() {
        let Some(i) = memchr::memchr(b'\n', &out.data[at..]) else {
            if !eof {
                // The line goes on past the bytes read.
                let held = out.data.len() - at;
                let mut rest = None;
                if held as u64 > max.saturating_add(2) || held >= measure_from {
                    // A long line: its length first, read without keeping the bytes.
                    rest = Some(measure_line(file, from + out.data.len() as u64)?);
                }
                let total = held as u64 + rest.unwrap_or(0);
                if total > max.saturating_add(2) {
                    // Over the limit even allowing for "\r\n": measured, not held.
                    out.data.truncate(at);
                    out.lines.push((at, at, LineStatus::TooLong(total)));
                    return Ok(());
                }
                let want = match rest {
                    // The file ends here (it shrank since the block was read).
                    Some(0) => {
                        eof = true;
                        continue;
                    }
                    // The line fits: read it whole, as measured.
                    Some(_) => at + to_index(total),
                    // Twice as many bytes, but no more than the limit (and "\r\n") and a
                    // byte allows, to know whether the line is over it.
                    None => (out.data.len() + held.max(1 << 16))
                        .min(at.saturating_add(to_index(max.saturating_add(3)))),
                };
                eof = fill_at(file, &mut out.data, from, want)?;
                continue;
            }
            // The input's last line, without an end.
            push_line(out, at, out.data.len(), max);
            break;
        };
        let next = at + i + 1;
        push_line(out, at, next, max);
        at = next;
    }
    Ok(())
}

/// A line that goes on past this many bytes held is measured before it is read further
/// ([`read_block`]): one over the limit is then never held, and one within it is read once
/// more, whole (rare: lines of a MiB).
const MEASURE_FROM: usize = 1 << 20;

/// Records the line `data[start..end]` (terminator included).
fn push_line(out: &mut BlockLines, start: usize, end: usize, max: u64) {
    let bytes = &out.data[start..end];
    let mut len = bytes.len();
    if bytes.last() == Some(&b'\n') {
        len -= 1;
        if len > 0 && bytes[len - 1] == b'\r' {
            len -= 1;
        }
    }
    if len as u64 > max {
        out.lines.push((start, start, LineStatus::TooLong(bytes.len() as u64)));
    } else {
        out.lines.push((start, start + len, LineStatus::Ok));
    }
}

/// Reads `file` from `offset` into `buf` (bytes from offset `from` on) until it holds
/// `want` bytes or the input ends; true at its end.
fn fill_at<F: ReadAt + ?Sized>(
    file: &F,
    buf: &mut Vec<u8>,
    from: u64,
    want: usize,
) -> io::Result<bool> {
    // Exactly as much room as asked for: the callers grow `want` by doubling already, and
    // a line near the limit must not take twice the limit.
    buf.reserve_exact(want.saturating_sub(buf.len()));
    while buf.len() < want {
        let len = buf.len();
        buf.resize(want, 0);
        match file.read_at(&mut buf[len..], from + len as u64) {
            Ok(0) => {
                buf.truncate(len);
                return Ok(true);
            }
            Ok(n) => buf.truncate(len + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => {
                buf.truncate(len);
                return Err(e);
            }
        }
    }
    Ok(false)
}

/// The bytes of a line from `offset` to its end (its `\n` included, or the input's end),
/// read a piece at a time and not kept.
fn measure_line<F: ReadAt + ?Sized>(file: &F, mut offset: u64) -> io::Result<u64> {
    let mut total = 0;
    let mut piece = vec![0u8; 1 << 16];
    loop {
        let n = match file.read_at(&mut piece, offset) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(total);
        }
        if let Some(i) = memchr::memchr(b'\n', &piece[..n]) {
            return Ok(total + i as u64 + 1);
        }
        total += n as u64;
        offset += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: u64, capacity: usize) -> Vec<(u64, Result<String, u64>)> {
        let mut r = LineReader::new(input, max);
        r.inner = BufReader::with_capacity(capacity, input);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while let Some(status) = r.next_line(&mut buf, None).unwrap() {
            out.push((
                r.line,
                match status {
                    LineStatus::Ok => Ok(String::from_utf8(buf.clone()).unwrap()),
                    LineStatus::TooLong(n) => Err(n),
                },
            ));
            buf.clear();
        }
        out
    }

    #[test]
    fn splits_lines_with_any_buffer_size() {
        for capacity in [1, 2, 3, 7, 1 << 16] {
            let got = lines(b"a\r\nbb\n\nccc", 100, capacity);
            assert_eq!(
                got,
                [
                    (1, Ok("a".to_string())),
                    (2, Ok("bb".to_string())),
                    (3, Ok(String::new())),
                    (4, Ok("ccc".to_string()))
                ],
                "capacity {capacity}"
            );
            assert_eq!(lines(b"", 100, capacity), []);
            assert_eq!(lines(b"\n", 100, capacity), [(1, Ok(String::new()))]);
        }
    }

    #[test]
    fn raw_lines_are_the_lines_with_their_terminators() {
        let input = &b"a\r\nbb\n\n\r\n0123456789\n12345\r\n123456\r\nc\r"[..];
        for capacity in [1, 2, 3, 7, 1 << 16] {
            let mut lines = LineReader::new(input, 5);
            lines.inner = BufReader::with_capacity(capacity, input);
            let mut raws = LineReader::new(input, 5);
            raws.inner = BufReader::with_capacity(capacity, input);
            let (mut buf, mut raw, mut alone) = (Vec::new(), Vec::new(), Vec::new());
            loop {
                let status = lines.next_line(&mut buf, Some(&mut raw)).unwrap();
                assert_eq!(raws.next_raw_line(&mut alone).unwrap(), status);
                assert_eq!((lines.line, lines.bytes), (raws.line, raws.bytes));
                match status {
                    None => break,
                    Some(LineStatus::Ok) => {
                        assert_eq!(alone, raw);
                        assert_eq!(line_content(&alone), &buf[..]);
                    }
                    Some(LineStatus::TooLong(_)) => assert!(alone.is_empty() && buf.is_empty()),
                }
                buf.clear();
                raw.clear();
                alone.clear();
            }
            assert_eq!(raws.line, 8, "capacity {capacity}");
        }
    }

    /// Each line of `data` with its terminator, and where it starts.
    fn naive(data: &[u8]) -> Vec<(u64, &[u8])> {
        let mut lines = Vec::new();
        let mut start = 0;
        while start < data.len() {
            let end = data[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(data.len(), |i| start + i + 1);
            lines.push((start as u64, &data[start..end]));
            start = end;
        }
        lines
    }

    #[test]
    fn lines_at_offsets_are_the_lines_there() {
        use std::io::Write;
        let long = "x".repeat(200_000);
        let inputs = [
            String::new(),
            "a".into(),
            "a\n".into(),
            "a\r\nbb\n\n\r\nccc".into(),
            format!("{long}\nshort\n{long}\r\n{long}"),
            format!("one\n{long}{long}\n\n"),
        ];
        for input in &inputs {
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(input.as_bytes()).unwrap();
            let lines = naive(input.as_bytes());
            let end = input.len() as u64;
            // Every line, every other line, and every line with a read ahead of each size.
            for (step, ahead) in [(1, 0), (2, 0), (1, 3), (1, 100_000), (3, 1 << 20)] {
                let mut at = LinesAt::new(&file);
                for &(offset, line) in lines.iter().step_by(step) {
                    at.prefetch(offset, offset + ahead).unwrap();
                    let limit = offset + line.len() as u64;
                    assert_eq!(at.line(offset, limit + 7).unwrap(), LineAt::Line(line));
                    assert_eq!(at.line(offset, limit).unwrap(), LineAt::Line(line));
                    if line.ends_with(b"\n") {
                        assert_eq!(at.line(offset, limit - 1).unwrap(), LineAt::Unended);
                    }
                }
                assert_eq!(at.line(end, end + 10).unwrap(), LineAt::Gone);
                assert_eq!(at.line(end + 5, end + 10).unwrap(), LineAt::Gone);
            }
        }
    }

    #[test]
    fn skipped_lines_are_counted_as_read_ones() {
        for capacity in [1, 2, 3, 7, 1 << 16] {
            let input = &b"a\r\nbb\n\n0123456789\nccc"[..];
            let mut r = LineReader::new(input, 5);
            r.inner = BufReader::with_capacity(capacity, input);
            let mut buf = Vec::new();
            assert_eq!(r.skip_line().unwrap(), Some(3));
            assert_eq!(r.next_line(&mut buf, None).unwrap(), Some(LineStatus::Ok));
            assert_eq!((r.line, &buf[..]), (2, &b"bb"[..]));
            assert_eq!(r.skip_line().unwrap(), Some(1));
            assert_eq!(r.skip_line().unwrap(), Some(11));
            assert_eq!((r.line, r.bytes), (4, 18));
            assert_eq!(r.skip_line().unwrap(), Some(3));
            assert_eq!(r.skip_line().unwrap(), None);
            assert_eq!((r.line, r.bytes), (5, 21), "capacity {capacity}");
        }
    }

    #[test]
    fn long_lines_are_measured_not_kept() {
        for capacity in [1, 4, 1 << 16] {
            let got = lines(b"0123456789\nabc\n0123456789", 5, capacity);
            assert_eq!(got, [(1, Err(11)), (2, Ok("abc".to_string())), (3, Err(10))]);
            // Exactly at the limit, with CRLF.
            assert_eq!(lines(b"12345\r\n", 5, capacity), [(1, Ok("12345".to_string()))]);
        }
    }

    /// A line over the limit is measured as it streams by: the buffers it is read into
    /// grow to about the limit, never to the line (here 64 times the limit), nor to twice
    /// the limit as doubling a `Vec` would; after it they are as large as before.
    #[test]
    fn a_long_line_grows_the_buffers_to_the_limit_at_most() {
        const MAX: usize = 1 << 20;
        let mut input = b"short\n".to_vec();
        input.resize(input.len() + 64 * MAX, b'x');
        input.extend_from_slice(b"\nafter\n");
        let long = Some(LineStatus::TooLong(64 * MAX as u64 + 1));
        let mut r = LineReader::new(&input[..], MAX as u64);
        let (mut buf, mut raw) = (Vec::new(), Vec::new());
        assert_eq!(r.next_line(&mut buf, Some(&mut raw)).unwrap(), Some(LineStatus::Ok));
        let before = (buf.capacity(), raw.capacity());
        // The long line, appended after the short one (as a batch holds lines).
        assert_eq!(r.next_line(&mut buf, Some(&mut raw)).unwrap(), long);
        assert_eq!((&buf[..], r.line), (&b"short"[..], 2));
        assert_eq!((buf.capacity(), raw.capacity()), before);
        assert!(r.most_held <= 5 + MAX + 2, "buffers of {} for a limit of {MAX}", r.most_held);
        assert_eq!(r.next_line(&mut buf, Some(&mut raw)).unwrap(), Some(LineStatus::Ok));
        assert_eq!(&buf[..], b"shortafter");
        // Raw lines alone.
        let mut r = LineReader::new(&input[..], MAX as u64);
        raw.clear();
        assert_eq!(r.next_raw_line(&mut raw).unwrap(), Some(LineStatus::Ok));
        assert_eq!(r.next_raw_line(&mut raw).unwrap(), long);
        assert!(r.most_held <= 6 + MAX + 2, "buffer of {} for a limit of {MAX}", r.most_held);
        assert_eq!(r.next_raw_line(&mut raw).unwrap(), Some(LineStatus::Ok));
        assert_eq!(&raw[..], b"short\nafter\n");
    }

    /// A line that goes on past the block is measured once a MiB of it is held: one over
    /// the limit is not held further (here the limit is 16 MiB and the line 64 MiB), one
    /// within it is read whole.
    #[test]
    fn a_block_holds_a_long_line_only_when_it_fits() {
        const MIB: usize = 1 << 20;
        let mut input = b"short\n".to_vec();
        input.resize(input.len() + 64 * MIB, b'x');
        input.extend_from_slice(b"\r\nafter\n");
        let mut out = BlockLines::default();
        read_block(&input[..], 0, 4096, 16 * MIB as u64, &mut out).unwrap();
        let long = LineStatus::TooLong(64 * MIB as u64 + 2);
        assert_eq!(out.lines, [(0, 5, LineStatus::Ok), (6, 6, long)]);
        assert!(out.data.capacity() <= 2 * MIB + 4096, "capacity {}", out.data.capacity());
        // Within the limit: the line whole, exactly.
        read_block(&input[..], 0, 4096, 64 * MIB as u64, &mut out).unwrap();
        assert_eq!(out.lines, [(0, 5, LineStatus::Ok), (6, 6 + 64 * MIB, LineStatus::Ok)]);
        assert!(out.data.capacity() <= 64 * MIB + 4096, "capacity {}", out.data.capacity());
        // Over the limit by less than a MiB: held up to the limit and a byte or so.
        read_block(&input[..], 0, 4096, 63 * MIB as u64, &mut out).unwrap();
        assert_eq!(out.lines[1], (6, 6, long));
    }

    /// Every line of `input` as the blocks of `block` bytes read them: (number, bytes or
    /// length), with a reader that returns at most `piece` bytes a call, measuring a line
    /// once `measure_from` bytes of it are held.
    fn block_lines(
        input: &[u8],
        max: u64,
        block: u64,
        (piece, measure_from): (usize, usize),
    ) -> Vec<(u64, Result<String, u64>)> {
        let file = Pieces(input, piece);
        let mut out = Vec::new();
        let mut lines = BlockLines::default();
        let mut start = 0;
        while start < input.len() as u64 {
            let end = (start + block).min(input.len() as u64);
            read_block_measuring(&file, (start, end), max, &mut lines, measure_from).unwrap();
            for &(s, e, status) in &lines.lines {
                out.push((
                    out.len() as u64 + 1,
                    match status {
                        LineStatus::Ok => Ok(String::from_utf8(lines.data[s..e].to_vec()).unwrap()),
                        LineStatus::TooLong(n) => Err(n),
                    },
                ));
            }
            start = end;
        }
        out
    }

    /// A file that returns at most `.1` bytes a read.
    struct Pieces<'a>(&'a [u8], usize);

    impl ReadAt for Pieces<'_> {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            let n = buf.len().min(self.1);
            self.0.read_at(&mut buf[..n], offset)
        }
    }

    #[test]
    fn blocks_read_the_lines_that_line_reader_reads() {
        let fixed: [&[u8]; 9] = [
            b"",
            b"\n",
            b"a\r\nbb\n\nccc",
            b"0123456789\nabc\n0123456789",
            b"12345\r\n",
            b"abc\r",
            b"\r\n\r\n\n",
            b"x\n0123456789012345678901234567890123456789\ny",
            b"0123456789012345678901234567890123456789",
        ];
        let mut rng = crate::test_rng::Rng(17);
        let mut inputs: Vec<Vec<u8>> = fixed.iter().map(|i| i.to_vec()).collect();
        // Short inputs, as many lines as bytes: each is read at every block and piece size
        // (a block of one byte reads a byte at a time, so the cost grows with the square).
        for _ in 0..60 {
            let len = rng.below(80);
            let alphabet = b"ab\r\n\n";
            inputs.push((0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect());
        }
        for input in &inputs {
            for max in [0, 1, 2, 5, 8, 30, 1000] {
                let want = lines(input, max, 1 << 16);
                for block in [1, 2, 3, 7, 1000] {
                    // Lines measured before they are held from 2 bytes on, too.
                    for piece in [(1, MEASURE_FROM), (1 << 16, MEASURE_FROM), (1 << 16, 2)] {
                        let got = block_lines(input, max, block, piece);
                        assert_eq!(
                            got,
                            want,
                            "input {:?} max {max} block {block} piece {piece:?}",
                            String::from_utf8_lossy(input)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_block_inside_a_line_has_no_lines() {
        let mut out = BlockLines::default();
        let file: &[u8] = b"0123456789\nab";
        read_block(file, 3, 8, 100, &mut out).unwrap();
        assert_eq!(out.lines, []);
        // A line starting at the block's end belongs to the next block.
        read_block(file, 3, 11, 100, &mut out).unwrap();
        assert_eq!(out.lines, []);
        read_block(file, 3, 12, 100, &mut out).unwrap();
        assert_eq!(out.lines, [(9, 11, LineStatus::Ok)]);
        assert_eq!(&out.data[9..11], b"ab");
    }
}
