//! The crate's error type: what went wrong with an input or an output, as a message that
//! names the file, wrapping the [`io::Error`] behind it when there is one.

use std::fmt;
use std::io;

/// An input or output failed: cannot be opened, read, written or put in place, or may not be
/// used (compressed data without the extension, an output that is an input).
///
/// `Display` is the message without its cause (lowercase, no trailing period), naming the
/// file; [`std::error::Error::source`] is the [`io::Error`] behind it, so that a chain
/// printer such as `anyhow`'s `{:#}` shows `x.jsonl: cannot open: No such file or
/// directory (os error 2)`. An error made from a bare [`io::Error`] (a failed write, whose
/// message names the output already) displays as that error.
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    /// `None` when the io error is the whole message.
    message: Option<String>,
    io: Option<io::Error>,
}

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Opening, reading, writing, syncing or renaming failed ([`Error::io_error`] says how).
    Io,
    /// An input not named `.gz` or `.zst` starts like gzip or zstd data.
    Compressed,
    /// An output is an input, or another output, of the same run.
    SameFile,
    /// An input cannot be read a second time (standard input that was not spooled).
    NotRereadable,
    /// An output path names a directory.
    IsDirectory,
    /// The same input file (or standard input) is given twice.
    DuplicateInput,
    /// A directory given as an input holds no file that is read.
    NoInputFiles,
    /// A Parquet input cannot be read: not Parquet (or truncated), no text column, a column
    /// of the wrong type, a bad page.
    BadParquet,
    /// Standard input is an input, but it was closed when the process started
    /// ([`crate::stdin_was_closed`]).
    StdinClosed,
    /// Standard output is an output, but it was closed when the process started
    /// ([`crate::stdout_was_closed`]).
    StdoutClosed,
    /// An existing output file that the user may not write (the shell's `>` would refuse
    /// it; renaming over it would not).
    ReadOnly,
    /// An output file named as compressed (`.gz`, `.zst`) that is written as it is: only
    /// the files of an output directory are compressed as their names say
    /// ([`crate::Output::create_encoded_for`]).
    CompressedName,
}

impl Error {
    /// An error with a message and no underlying io error.
    pub(crate) fn msg(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner { kind, message: Some(message.into()), io: None }))
    }

    /// An io error with `message` as its context (shown before it).
    pub(crate) fn io(message: impl Into<String>, io: io::Error) -> Error {
        Error(Box::new(Inner { kind: ErrorKind::Io, message: Some(message.into()), io: Some(io) }))
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The io error behind this one, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.0.io.as_ref()
    }
}

impl From<io::Error> for Error {
    fn from(io: io::Error) -> Error {
        Error(Box::new(Inner { kind: ErrorKind::Io, message: None, io: Some(io) }))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0.message, &self.0.io) {
            (Some(message), _) => f.write_str(message),
            (None, Some(io)) => io.fmt(f),
            (None, None) => f.write_str("input/output error"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match (&self.0.message, &self.0.io) {
            (Some(_), Some(io)) => Some(io),
            (None, Some(io)) => io.source(),
            _ => None,
        }
    }
}

/// Whether `err` or any error in its [`source`](std::error::Error::source) chain is a
/// closed pipe ([`io::ErrorKind::BrokenPipe`]): the reader of the output stopped reading
/// (`simhash ... | head`), which the binaries count as success.
///
/// ```
/// use std::io;
///
/// let closed = io::Error::new(io::ErrorKind::BrokenPipe, "<stdout>: Broken pipe");
/// assert!(simhash_io::is_broken_pipe(&closed));
/// let wrapped: simhash_io::Error = closed.into();
/// assert!(simhash_io::is_broken_pipe(&wrapped));
/// assert!(!simhash_io::is_broken_pipe(&io::Error::other("disk full")));
/// ```
pub fn is_broken_pipe(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(e) = cause {
        let io = e
            .downcast_ref::<io::Error>()
            .or_else(|| e.downcast_ref::<Error>().and_then(Error::io_error));
        if io.is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe) {
            return true;
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("writing failed")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn broken_pipe_anywhere_in_the_chain() {
        let pipe = || io::Error::new(io::ErrorKind::BrokenPipe, "x");
        assert!(is_broken_pipe(&Outer(pipe())));
        assert!(is_broken_pipe(&Error::io("out: cannot write", pipe())));
        assert!(is_broken_pipe(&Error::from(pipe())));
        assert!(!is_broken_pipe(&Outer(io::Error::other("x"))));
        assert!(!is_broken_pipe(&Error::msg(ErrorKind::SameFile, "refusing")));
    }

    #[test]
    fn display_and_source() {
        let e = Error::io("x: cannot open", io::Error::new(io::ErrorKind::NotFound, "gone"));
        assert_eq!(e.to_string(), "x: cannot open");
        assert_eq!(std::error::Error::source(&e).map(ToString::to_string).as_deref(), Some("gone"));
        assert_eq!(e.kind(), ErrorKind::Io);
        let bare = Error::from(io::Error::other("out: No space left on device"));
        assert_eq!(bare.to_string(), "out: No space left on device");
        assert!(std::error::Error::source(&bare).is_none());
        assert_eq!(Error::msg(ErrorKind::Compressed, "c").kind(), ErrorKind::Compressed);
    }
}
