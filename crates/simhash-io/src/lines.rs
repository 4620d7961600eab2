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
/// the limit (terminator excluded) is measured, not kept: [`LineStatus::TooLong`].
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
}

impl<R: Read> LineReader<R> {
    /// Lines of `inner`, each at most `max` bytes (terminator excluded).
    pub fn new(inner: R, max: u64) -> LineReader<R> {
        LineReader { inner: BufReader::with_capacity(1 << 18, inner), max, line: 0, bytes: 0 }
    }

    /// Appends the next line (terminator removed) to `buf`. `None` at the end of input.
    /// When `raw` is given, the line's bytes with their terminator are appended there too.
    pub fn next_line(
        &mut self,
        buf: &mut Vec<u8>,
        mut raw: Option<&mut Vec<u8>>,
    ) -> io::Result<Option<LineStatus>> {
        let start = buf.len();
        let mut total: u64 = 0;
        let mut too_long = false;
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
            let (piece, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..=i], true),
                None => (chunk, false),
            };
            let len = piece.len();
            total += len as u64;
            if !too_long && total > self.max.saturating_add(2) {
                // Over the limit even allowing for "\r\n": stop keeping bytes.
                too_long = true;
                buf.truncate(start);
            }
            if !too_long {
                buf.extend_from_slice(piece);
                if let Some(raw) = raw.as_deref_mut() {
                    raw.extend_from_slice(piece);
                }
            }
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
        if too_long {
            return Ok(Some(LineStatus::TooLong(total)));
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.len() > start && buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if (buf.len() - start) as u64 > self.max {
            buf.truncate(start);
            return Ok(Some(LineStatus::TooLong(total)));
        }
        Ok(Some(LineStatus::Ok))
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
    fn long_lines_are_measured_not_kept() {
        for capacity in [1, 4, 1 << 16] {
            let got = lines(b"0123456789\nabc\n0123456789", 5, capacity);
            assert_eq!(got, [(1, Err(11)), (2, Ok("abc".to_string())), (3, Err(10))]);
            // Exactly at the limit, with CRLF.
            assert_eq!(lines(b"12345\r\n", 5, capacity), [(1, Ok("12345".to_string()))]);
        }
    }
}
