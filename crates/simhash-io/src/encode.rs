//! Outputs compressed as their name says (`.gz`, `.zst`), so that an output mirrors its
//! input's compression.

use std::io::{self, Write};
use std::path::Path;

use crate::error::Error;
use crate::output::Output;
use crate::source::{Compression, compression};

/// An [`Output`] written through the compression its path names (`.gz`: gzip at the
/// default level; `.zst`: zstd at level 3), or as it is. [`Encoded::finish`] ends the
/// compressed stream and gives the output back to commit.
///
/// ```
/// use std::io::Write;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out.jsonl.zst");
/// let out = simhash_io::Output::create_encoded_for("--output-dir", &path)?;
/// let mut out = simhash_io::Encoded::new(out, &path)?;
/// out.write_all(b"{\"text\":\"a\"}\n")?;
/// out.finish()?.commit()?;
/// assert_eq!(zstd::decode_all(std::fs::File::open(&path)?)?, b"{\"text\":\"a\"}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub enum Encoded {
    /// Written as it is.
    Plain(Output),
    /// gzip.
    Gzip(flate2::write::GzEncoder<Output>),
    /// zstd.
    Zstd(zstd::Encoder<'static, Output>),
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoded::Plain(_) => "Encoded::Plain",
            Encoded::Gzip(_) => "Encoded::Gzip",
            Encoded::Zstd(_) => "Encoded::Zstd",
        })
    }
}

impl Encoded {
    /// `out` compressed as `path`'s extension says ([`compression`]).
    pub fn new(out: Output, path: &Path) -> Result<Encoded, Error> {
        Ok(match compression(path) {
            None => Encoded::Plain(out),
            Some(Compression::Gzip) => {
                Encoded::Gzip(flate2::write::GzEncoder::new(out, flate2::Compression::default()))
            }
            Some(Compression::Zstd) => Encoded::Zstd(zstd::Encoder::new(out, 3).map_err(|e| {
                Error::io(format!("{}: cannot start zstd encoding", path.display()), e)
            })?),
        })
    }

    /// Ends the compressed stream: the output, ready to commit.
    pub fn finish(self) -> io::Result<Output> {
        match self {
            Encoded::Plain(out) => Ok(out),
            Encoded::Gzip(gz) => gz.finish(),
            Encoded::Zstd(zst) => zst.finish(),
        }
    }
}

impl Write for Encoded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoded::Plain(w) => w.write(buf),
            Encoded::Gzip(w) => w.write(buf),
            Encoded::Zstd(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Encoded::Plain(w) => w.write_all(buf),
            Encoded::Gzip(w) => w.write_all(buf),
            Encoded::Zstd(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoded::Plain(w) => w.flush(),
            Encoded::Gzip(w) => w.flush(),
            Encoded::Zstd(w) => w.flush(),
        }
    }
}
