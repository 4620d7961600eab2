//! Opening inputs (files, stdin, `.gz`, `.zst`) and splitting them into numbered lines.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// An input to read from: its name for messages, and how to open it (again).
#[derive(Debug)]
pub struct Source {
    /// Shown in messages: the path, or `<stdin>`.
    pub name: String,
    /// `None` for standard input.
    path: Option<PathBuf>,
    /// A regular file can be read twice; stdin, pipes and devices must be spooled.
    regular: bool,
    /// Bytes to read, when known (for the progress bar): uncompressed regular files only.
    pub size: Option<u64>,
    /// What was read from a non-regular input, in an unnamed temporary file (the system
    /// removes it however the process ends), for a second pass.
    spool: Option<File>,
}

impl Source {
    pub fn new(path: &Path) -> Source {
        if path == Path::new("-") {
            return Source {
                name: "<stdin>".into(),
                path: None,
                regular: false,
                size: None,
                spool: None,
            };
        }
        let meta = std::fs::metadata(path).ok();
        let regular = meta.as_ref().is_some_and(std::fs::Metadata::is_file);
        let size = meta.filter(|m| m.is_file() && compression(path).is_none()).map(|m| m.len());
        Source {
            name: path.display().to_string(),
            path: Some(path.to_path_buf()),
            regular,
            size,
            spool: None,
        }
    }

    /// Opens the input for reading, decompressing by extension. With `spool`, an input that
    /// cannot be read twice (stdin, a pipe) is also copied to a temporary file that
    /// [`Source::reopen`] reads back.
    ///
    /// The input is registered first ([`crate::output::register_inputs`]): it fails if an
    /// output of this run is the same file. Data that looks compressed (by its first bytes)
    /// in an input not named `.gz` or `.zst` is an error.
    pub fn open(&mut self, spool: bool) -> anyhow::Result<Box<dyn Read + Send>> {
        crate::output::register_inputs(&[self.path.as_deref().unwrap_or(Path::new("-"))])?;
        let reader: Box<dyn Read + Send> = match &self.path {
            None => sniffed(&self.name, Box::new(io::stdin()))?,
            Some(path) => open_path(path)?,
        };
        if !spool || self.regular {
            return Ok(reader);
        }
        let file = crate::output::temp_file(&format!("a copy of {}", self.name))?;
        let copy = file.try_clone().context("cannot open the input's temporary copy")?;
        self.spool = Some(file);
        Ok(Box::new(Tee { inner: reader, copy: io::BufWriter::with_capacity(1 << 16, copy) }))
    }

    /// Opens the input again for a second pass (already decompressed when spooled).
    pub fn reopen(&self) -> anyhow::Result<Box<dyn Read + Send>> {
        if let Some(spool) = &self.spool {
            let mut file = spool.try_clone().context("cannot reopen the input's temporary copy")?;
            file.seek(io::SeekFrom::Start(0))
                .context("cannot rewind the input's temporary copy")?;
            return Ok(Box::new(file));
        }
        match &self.path {
            Some(path) if self.regular => open_path(path),
            _ => anyhow::bail!("{}: cannot be read twice", self.name),
        }
    }
}

#[derive(Clone, Copy)]
enum Compression {
    Gzip,
    Zstd,
}

fn compression(path: &Path) -> Option<Compression> {
    let ext = path.extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("gz") {
        Some(Compression::Gzip)
    } else if ext.eq_ignore_ascii_case("zst") {
        Some(Compression::Zstd)
    } else {
        None
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
        None => sniffed(&path.display().to_string(), Box::new(file))?,
    })
}

/// The compression that `head` (a file's first bytes) starts with: gzip's or zstd's magic.
pub fn magic(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some("gzip")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd")
    } else {
        None
    }
}

/// The error for compressed data in an input named `name`, which has no `.gz` or `.zst`
/// extension (one clear message instead of a bad record per line).
pub fn compressed_error(name: &str, head: &[u8]) -> anyhow::Result<()> {
    match magic(head) {
        Some(kind) => {
            let (ext, tool) = if kind == "gzip" { (".gz", "zcat") } else { (".zst", "zstdcat") };
            anyhow::bail!(
                "{name}: looks {kind}-compressed but is not named {ext}: rename it (or pipe it \
                 through {tool})"
            )
        }
        None => Ok(()),
    }
}

/// Reads the first bytes of `reader` to refuse compressed data, and gives them back.
fn sniffed(name: &str, mut reader: Box<dyn Read + Send>) -> anyhow::Result<Box<dyn Read + Send>> {
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("{name}: read error")),
        }
    }
    compressed_error(name, &head[..n])?;
    Ok(Box::new(io::Cursor::new(head[..n].to_vec()).chain(reader)))
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
