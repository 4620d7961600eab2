//! Opening inputs: files, standard input, `.gz` and `.zst` (by extension), refusing
//! compressed data without the extension, and spooling what cannot be read twice.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, ErrorKind};

/// Standard input was closed when the process started (`simhash dedup - <&-`), as noted
/// before `main` by [`note_closed_stdin`].
static STDIN_CLOSED: AtomicBool = AtomicBool::new(false);

/// Standard output was closed when the process started (`simhash dedup x -o - >&-`), noted
/// with [`STDIN_CLOSED`]: Rust's runtime then puts `/dev/null` there, and writing it would
/// succeed with nothing written.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Runs before `main` (an ELF `.init_array` or Mach-O `__mod_init_func` entry), before
/// Rust's runtime puts `/dev/null` on a closed descriptor 0, 1 or 2: after that, a closed
/// standard input reads as an empty one and cannot be told from `< /dev/null`.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "macos"))]
#[used]
#[cfg_attr(not(target_os = "macos"), unsafe(link_section = ".init_array"))]
#[cfg_attr(target_os = "macos", unsafe(link_section = "__DATA,__mod_init_func"))]
static NOTE_CLOSED_STDIN: extern "C" fn() = note_closed_stdin;

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "macos"))]
extern "C" fn note_closed_stdin() {
    // SAFETY: F_GETFD only asks about the descriptor; it touches no memory of ours.
    if unsafe { libc::fcntl(0, libc::F_GETFD) } == -1 {
        STDIN_CLOSED.store(true, Ordering::Relaxed);
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Whether standard input was closed when the process started (only known on Linux,
/// Android, FreeBSD and macOS; elsewhere `false`). Rust's runtime then opened `/dev/null`
/// in its place, so reading it would give an empty input: [`Inputs::expand`] refuses `-`
/// instead.
///
/// [`Inputs::expand`]: crate::Inputs::expand
pub fn stdin_was_closed() -> bool {
    noted(&STDIN_CLOSED)
}

/// What [`note_closed_stdin`] noted in `flag`.
fn noted(flag: &AtomicBool) -> bool {
    // Naming the constructor here keeps it linked wherever this function is.
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "macos"
    ))]
    std::hint::black_box(&NOTE_CLOSED_STDIN);
    flag.load(Ordering::Relaxed)
}

/// Whether standard output was closed when the process started (known where
/// [`stdin_was_closed`] is; elsewhere `false`): an output of `-` (or `/dev/stdout`) is then
/// refused ([`crate::Output::create_for`], [`closed_stdout_error`]), where writing Rust's
/// `/dev/null` in its place would report success with nothing written.
pub fn stdout_was_closed() -> bool {
    noted(&STDOUT_CLOSED)
}

/// The error for a closed standard output given as an output (`flag`, for the message:
/// `-o`, `--removed`; empty when there is no flag).
pub fn closed_stdout_error(flag: &str) -> Error {
    let message = if flag.is_empty() {
        "standard output is closed: redirect it to a file, or `> /dev/null` to discard the \
         output"
            .to_string()
    } else {
        format!(
            "standard output is closed ({flag} -): give {flag} a file, or `> /dev/null` to \
             discard the output"
        )
    };
    Error::msg(ErrorKind::StdoutClosed, message)
}

/// A temporary file that the system removes however the process ends. Failing, the message
/// names the directory (`TMPDIR`) and what the file was for.
pub fn temp_file(what: &str) -> Result<File, Error> {
    tempfile::tempfile().map_err(|e| {
        Error::io(
            format!(
                "cannot create a temporary file for {what} in {} (set TMPDIR to a writable \
                 directory)",
                std::env::temp_dir().display()
            ),
            e,
        )
    })
}

/// The error for a closed standard input given as an input (`-`, or no input at all).
pub(crate) fn closed_stdin_error() -> Error {
    Error::msg(
        ErrorKind::StdinClosed,
        "standard input is closed: give an input file, or `< /dev/null` for an empty input",
    )
}

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
    /// Whether this is standard input.
    pub fn is_stdin(&self) -> bool {
        self.path.is_none()
    }

    /// The input at `path`; `-` is standard input. Nothing is opened yet.
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

    /// The input's path; `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Opens the input for reading, decompressing by extension. With `spool`, an input that
    /// cannot be read twice (stdin, a pipe) is also copied to a temporary file that
    /// [`Source::reopen`] reads back.
    ///
    /// The input is registered first (`run::register_inputs`): it fails if an output of
    /// this run is the same file. Data that looks compressed (by its first bytes) in an
    /// input not named `.gz` or `.zst` is an error.
    pub fn open(&mut self, spool: bool) -> Result<Box<dyn Read + Send>, Error> {
        crate::paths::register_inputs(&[self.path.as_deref().unwrap_or(Path::new("-"))])?;
        let reader: Box<dyn Read + Send> = match &self.path {
            None if stdin_was_closed() => return Err(closed_stdin_error()),
            None => sniffed(&self.name, Box::new(io::stdin()))?,
            Some(path) => open_path(path)?,
        };
        if !spool || self.regular {
            return Ok(reader);
        }
        let file = temp_file(&format!("a copy of {}", self.name))?;
        let copy =
            file.try_clone().map_err(|e| Error::io("cannot open the input's temporary copy", e))?;
        self.spool = Some(file);
        let copy = io::BufWriter::with_capacity(1 << 16, copy);
        Ok(Box::new(Tee { inner: reader, copy, of: self.name.clone() }))
    }

    /// Opens a regular, uncompressed file for positional reads ([`crate::read_block`]),
    /// with its length then; `None` for any other input (standard input, a pipe, `.gz`,
    /// `.zst`), which [`Source::open`] reads as a stream. Checked as [`Source::open`]
    /// checks: registered as an input, and refused when it looks compressed.
    pub fn open_at(&mut self) -> Result<Option<(File, u64)>, Error> {
        let Some(path) = self.path.as_deref().filter(|p| self.regular && compression(p).is_none())
        else {
            return Ok(None);
        };
        crate::paths::register_inputs(&[path])?;
        let mut file = File::open(path)
            .map_err(|e| Error::io(format!("{}: cannot open", path.display()), e))?;
        let name = path.display().to_string();
        let read_error = |e| Error::io(format!("{name}: read error"), e);
        let (head, n) = read_head(&mut file).map_err(read_error)?;
        refuse_compressed(&name, &head[..n])?;
        let len = file.metadata().map_err(read_error)?.len();
        Ok(Some((file, len)))
    }

    /// Opens the input again for a second pass (already decompressed when spooled).
    pub fn reopen(&self) -> Result<Box<dyn Read + Send>, Error> {
        if let Some(spool) = &self.spool {
            let mut file = spool
                .try_clone()
                .map_err(|e| Error::io("cannot reopen the input's temporary copy", e))?;
            file.seek(io::SeekFrom::Start(0))
                .map_err(|e| Error::io("cannot rewind the input's temporary copy", e))?;
            return Ok(Box::new(file));
        }
        match &self.path {
            Some(path) if self.regular => open_path(path),
            _ => Err(Error::msg(
                ErrorKind::NotRereadable,
                format!("{}: cannot be read twice", self.name),
            )),
        }
    }

    /// The input as a file to read at byte offsets, for a second pass that reads only some
    /// of its lines: the temporary copy of an input that was spooled, or a regular file
    /// that is not compressed (the offsets of a record in the first pass are offsets in
    /// the file). `None` for a compressed file, whose offsets are in the decompressed
    /// stream: [`Source::reopen`] reads it again from its start.
    pub fn reopen_at_offsets(&self) -> Result<Option<File>, Error> {
        if let Some(spool) = &self.spool {
            let file = spool
                .try_clone()
                .map_err(|e| Error::io("cannot reopen the input's temporary copy", e))?;
            return Ok(Some(file));
        }
        match &self.path {
            Some(path) if self.regular && compression(path).is_none() => File::open(path)
                .map(Some)
                .map_err(|e| Error::io(format!("{}: cannot open", path.display()), e)),
            Some(_) if self.regular => Ok(None),
            _ => Err(Error::msg(
                ErrorKind::NotRereadable,
                format!("{}: cannot be read twice", self.name),
            )),
        }
    }
}

/// How an input is compressed, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// `.gz` (any number of gzip members, as `zcat` reads them).
    Gzip,
    /// `.zst`.
    Zstd,
}

/// The compression a path's extension names (`.gz`, `.zst`, in any case), if any.
///
/// ```
/// use std::path::Path;
/// use simhash_io::{Compression, compression};
///
/// assert_eq!(compression(Path::new("corpus.jsonl.GZ")), Some(Compression::Gzip));
/// assert_eq!(compression(Path::new("corpus.jsonl")), None);
/// ```
pub fn compression(path: &Path) -> Option<Compression> {
    let ext = path.extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("gz") {
        Some(Compression::Gzip)
    } else if ext.eq_ignore_ascii_case("zst") {
        Some(Compression::Zstd)
    } else {
        None
    }
}

fn open_path(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let file =
        File::open(path).map_err(|e| Error::io(format!("{}: cannot open", path.display()), e))?;
    Ok(match compression(path) {
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Some(Compression::Zstd) => Box::new(zstd::Decoder::new(file).map_err(|e| {
            Error::io(format!("{}: cannot start zstd decoding", path.display()), e)
        })?),
        None => sniffed(&path.display().to_string(), Box::new(file))?,
    })
}

/// The compression that `head` (a file's first bytes) starts with: gzip's or zstd's magic.
fn magic(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some("gzip")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd")
    } else {
        None
    }
}

/// Fails when `head` (the first bytes of an input named `name`, which has no `.gz` or
/// `.zst` extension) starts like compressed data: one clear message instead of a bad record
/// per line.
///
/// ```
/// let err = simhash_io::refuse_compressed("x.jsonl", &[0x1f, 0x8b, 8, 0]).unwrap_err();
/// assert_eq!(err.kind(), simhash_io::ErrorKind::Compressed);
/// assert_eq!(
///     err.to_string(),
///     "x.jsonl: looks gzip-compressed but is not named .gz: rename it (or pipe it through zcat)"
/// );
/// assert!(simhash_io::refuse_compressed("x.jsonl", b"{\"text\"").is_ok());
/// ```
pub fn refuse_compressed(name: &str, head: &[u8]) -> Result<(), Error> {
    match magic(head) {
        Some(kind) => {
            let (ext, tool) = if kind == "gzip" { (".gz", "zcat") } else { (".zst", "zstdcat") };
            Err(Error::msg(
                ErrorKind::Compressed,
                format!(
                    "{name}: looks {kind}-compressed but is not named {ext}: rename it (or pipe \
                     it through {tool})"
                ),
            ))
        }
        None => Ok(()),
    }
}

/// Reads the first bytes of `reader` (at most 4, fewer at its end), retrying interrupted
/// reads.
pub(crate) fn read_head(reader: &mut dyn Read) -> io::Result<([u8; 4], usize)> {
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((head, n))
}

/// [`refuse_compressed`] for the file at `path` (regular and not named `.gz` or `.zst`),
/// checked without reading it whole. A file that cannot be opened or read passes: reading
/// it reports that.
pub fn refuse_compressed_file(path: &Path) -> Result<(), Error> {
    let Ok(mut file) = File::open(path) else {
        return Ok(());
    };
    match read_head(&mut file) {
        Ok((head, n)) => refuse_compressed(&path.display().to_string(), &head[..n]),
        Err(_) => Ok(()),
    }
}

/// Reads the first bytes of `reader` to refuse compressed data, and gives them back.
fn sniffed(name: &str, mut reader: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>, Error> {
    let (head, n) =
        read_head(&mut reader).map_err(|e| Error::io(format!("{name}: read error"), e))?;
    refuse_compressed(name, &head[..n])?;
    Ok(Box::new(io::Cursor::new(head[..n].to_vec()).chain(reader)))
}

/// Copies what it reads to a file (standard input's spool). A failure to write the copy
/// (a full TMPDIR) names the copy and where it is, not the input: the input read fine.
struct Tee<R, W> {
    inner: R,
    copy: W,
    /// The input's name, for messages.
    of: String,
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let written = self
            .copy
            .write_all(&buf[..n])
            .and_then(|()| if n == 0 { self.copy.flush() } else { Ok(()) });
        written.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot write the temporary copy of {} in {} (TMPDIR; set it to a directory \
                     with room): {e}",
                    self.of,
                    std::env::temp_dir().display()
                ),
            )
        })?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails as a full disk does.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A full TMPDIR while standard input is copied names the copy and TMPDIR, not the
    /// input (which read fine), and keeps the cause.
    #[test]
    fn a_full_tmpdir_names_the_copy() {
        let mut tee = Tee { inner: &b"a line\n"[..], copy: Full, of: "<stdin>".into() };
        let err = tee.read(&mut [0; 16]).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("cannot write the temporary copy of <stdin> in "), "{message}");
        assert!(message.contains("(TMPDIR; set it to a directory with room)"), "{message}");
        assert!(message.contains("No space left on device"), "{message}");
        // Nothing to copy, nothing to fail.
        let mut tee = Tee { inner: &b""[..], copy: Vec::new(), of: "<stdin>".into() };
        assert_eq!(tee.read(&mut [0; 16]).unwrap(), 0);
    }
}
