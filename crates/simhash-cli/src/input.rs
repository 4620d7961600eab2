//! Opening inputs (files, stdin, `.gz`, `.zst`) and splitting them into numbered lines.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// An input to read from: its name for messages, and how to open it (again).
#[derive(Debug)]
pub struct Source {
    /// Shown in messages: the path, or `<stdin>`.
    pub name: String,
    path: Option<PathBuf>,
    /// Bytes to read, when known (for the progress bar): uncompressed files only.
    pub size: Option<u64>,
    /// Standard input copied to a temporary file, for a second pass.
    spool: Option<tempfile::NamedTempFile>,
}

impl Source {
    pub fn new(path: &Path) -> Source {
        if path == Path::new("-") {
            return Source { name: "<stdin>".into(), path: None, size: None, spool: None };
        }
        let compressed = compression(path).is_some();
        let size = if compressed { None } else { std::fs::metadata(path).ok().map(|m| m.len()) };
        Source {
            name: path.display().to_string(),
            path: Some(path.to_path_buf()),
            size,
            spool: None,
        }
    }

    /// Opens the input for reading, decompressing by extension. For standard input with
    /// `spool`, everything read is also copied to a temporary file that [`Source::reopen`]
    /// reads back.
    pub fn open(&mut self, spool: bool) -> anyhow::Result<Box<dyn Read + Send>> {
        let Some(path) = &self.path else {
            let stdin: Box<dyn Read + Send> = Box::new(io::stdin());
            if !spool {
                return Ok(stdin);
            }
            let file = tempfile::NamedTempFile::new()
                .context("cannot create a temporary file to hold standard input")?;
            let copy = file.reopen().context("cannot open the standard input spool file")?;
            self.spool = Some(file);
            return Ok(Box::new(Tee { inner: stdin, copy: io::BufWriter::new(copy) }));
        };
        open_path(path)
    }

    /// Opens the input again for a second pass.
    pub fn reopen(&self) -> anyhow::Result<Box<dyn Read + Send>> {
        match (&self.path, &self.spool) {
            (Some(path), _) => open_path(path),
            (None, Some(spool)) => {
                Ok(Box::new(spool.reopen().context("cannot reopen the standard input spool file")?))
            }
            (None, None) => anyhow::bail!("standard input cannot be read twice"),
        }
    }
}

#[derive(Clone, Copy)]
enum Compression {
    Gzip,
    Zstd,
}

fn compression(path: &Path) -> Option<Compression> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => Some(Compression::Gzip),
        Some("zst") => Some(Compression::Zstd),
        _ => None,
    }
}

fn open_path(path: &Path) -> anyhow::Result<Box<dyn Read + Send>> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    Ok(match compression(path) {
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Some(Compression::Zstd) => Box::new(
            zstd::Decoder::new(file)
                .with_context(|| format!("{}: cannot start zstd decoding", path.display()))?,
        ),
        None => Box::new(file),
    })
}

/// Copies what it reads to a file (standard input's spool).
struct Tee<R> {
    inner: R,
    copy: io::BufWriter<File>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        if n == 0 {
            self.copy.flush()?;
        }
        Ok(n)
    }
}

/// One line as read: its bytes (without `\n` or `\r\n`), or only its length when it was
/// longer than the limit.
#[derive(Debug, PartialEq, Eq)]
pub enum LineStatus {
    Ok,
    TooLong(u64),
}

/// Reads lines with a length limit, without ever holding more than the limit in memory.
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: u64,
    /// 1-based number of the last line returned.
    pub line: u64,
    /// Bytes consumed so far.
    pub bytes: u64,
}

impl<R: Read> LineReader<R> {
    pub fn new(inner: R, max: u64) -> LineReader<R> {
        LineReader { inner: BufReader::with_capacity(1 << 16, inner), max, line: 0, bytes: 0 }
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
            let (piece, done) = match chunk.iter().position(|&b| b == b'\n') {
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
