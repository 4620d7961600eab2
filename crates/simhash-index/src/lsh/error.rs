//! The MinHash engine's error: a store's failed I/O (with the [`io::Error`] as its source),
//! a configuration that cannot work, or a call out of order.

use std::error::Error;
use std::fmt;
use std::io;

use super::LshError;

/// The error of the MinHash engine ([`SketchStore`](super::SketchStore)s, the searches and
/// [`MinHashDedup`](super::MinHashDedup)).
///
/// Its [`Display`](fmt::Display) says what failed, in lowercase with no trailing period; the
/// underlying [`io::Error`] (or configuration error) is its [`source`](Error::source), so
/// `{:#}` with `anyhow` prints `what failed: why`. Match on [`kind`](EngineError::kind).
#[derive(Debug)]
pub struct EngineError {
    repr: Repr,
}

/// What kind of failure an [`EngineError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EngineErrorKind {
    /// No temporary file could be created for a spilled store.
    TempFile,
    /// Writing or reading a store's temporary files failed.
    Io,
    /// A setting is invalid (a threshold, `num_perm`, or a banding that needs more slots
    /// than the signature has).
    Config,
    /// A sketch does not fit the store (another number of bands), or a priority list does
    /// not fit the documents.
    Mismatch,
    /// More than `u32::MAX` documents.
    TooManyDocuments,
    /// A document was added to a spilled store after it was searched.
    Finished,
}

#[derive(Debug)]
enum Repr {
    Io { kind: EngineErrorKind, what: String, source: io::Error },
    Config(Box<dyn Error + Send + Sync + 'static>),
    Other { kind: EngineErrorKind, what: String },
}

impl EngineError {
    /// What kind of failure this is.
    pub fn kind(&self) -> EngineErrorKind {
        match &self.repr {
            Repr::Io { kind, .. } | Repr::Other { kind, .. } => *kind,
            Repr::Config(_) => EngineErrorKind::Config,
        }
    }

    pub(crate) fn temp_file(source: io::Error) -> EngineError {
        let what = format!(
            "cannot create a temporary file for the MinHash sketches in {} (set TMPDIR to a \
             writable directory)",
            std::env::temp_dir().display()
        );
        EngineError { repr: Repr::Io { kind: EngineErrorKind::TempFile, what, source } }
    }

    pub(crate) fn io(what: &str, source: io::Error) -> EngineError {
        EngineError { repr: Repr::Io { kind: EngineErrorKind::Io, what: what.into(), source } }
    }

    pub(crate) fn write(source: io::Error) -> EngineError {
        EngineError::io("cannot write the MinHash sketches to a temporary file", source)
    }

    pub(crate) fn read(source: io::Error) -> EngineError {
        EngineError::io("cannot read the MinHash sketches back from their temporary file", source)
    }

    pub(crate) fn config(source: impl Error + Send + Sync + 'static) -> EngineError {
        EngineError { repr: Repr::Config(Box::new(source)) }
    }

    pub(crate) fn other(kind: EngineErrorKind, what: impl Into<String>) -> EngineError {
        EngineError { repr: Repr::Other { kind, what: what.into() } }
    }
}

impl From<LshError> for EngineError {
    fn from(e: LshError) -> EngineError {
        EngineError::config(e)
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Io { what, .. } | Repr::Other { what, .. } => f.write_str(what),
            Repr::Config(_) => f.write_str("invalid MinHash settings"),
        }
    }
}

impl Error for EngineError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.repr {
            Repr::Io { source, .. } => Some(source),
            Repr::Config(source) => Some(&**source),
            Repr::Other { .. } => None,
        }
    }
}
