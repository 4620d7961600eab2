//! [`DiskError`]: what went wrong with an on-disk index, naming the file.

use std::error::Error;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The error of the on-disk index.
///
/// Its [`Display`](fmt::Display) starts with the file or directory concerned and says what
/// is wrong, in lowercase with no trailing period; an underlying [`io::Error`] is its
/// [`source`](Error::source). Match on [`kind`](DiskError::kind).
#[derive(Debug)]
pub struct DiskError {
    repr: Box<Repr>,
}

/// What kind of failure a [`DiskError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiskErrorKind {
    /// Reading, writing, syncing or renaming a file failed.
    Io,
    /// A file of the index is truncated, altered or inconsistent: a checksum, a length or a
    /// structure does not match. Nothing from such a file is returned as data.
    Corrupt,
    /// The index was made with other settings than the ones given; the message names each
    /// differing setting ([`DiskError::settings`]).
    SettingsMismatch,
    /// Another writer holds the index's lock.
    Locked,
    /// The index was written in a format version this library does not read.
    Version,
    /// The settings are invalid, or a call does not fit the index (a MinHash sketch for a
    /// simhash index, a sketch with another number of bands).
    Invalid,
    /// No index at that path.
    NotFound,
    /// An index is already at that path, and the call creates one only where nothing is
    /// ([`Writer::create`](super::Writer::create)).
    Exists,
}

#[derive(Debug)]
struct Repr {
    kind: DiskErrorKind,
    path: Option<PathBuf>,
    what: String,
    settings: Vec<String>,
    source: Option<io::Error>,
}

impl DiskError {
    /// What kind of failure this is.
    pub fn kind(&self) -> DiskErrorKind {
        self.repr.kind
    }

    /// The file (or directory) concerned, if any.
    pub fn path(&self) -> Option<&Path> {
        self.repr.path.as_deref()
    }

    /// For [`DiskErrorKind::SettingsMismatch`], the names of the settings that differ.
    pub fn settings(&self) -> &[String] {
        &self.repr.settings
    }

    pub(crate) fn new(kind: DiskErrorKind, path: Option<&Path>, what: impl Into<String>) -> Self {
        DiskError {
            repr: Box::new(Repr {
                kind,
                path: path.map(Path::to_path_buf),
                what: what.into(),
                settings: Vec::new(),
                source: None,
            }),
        }
    }

    pub(crate) fn io(path: &Path, what: &str, source: io::Error) -> DiskError {
        let kind = if source.kind() == io::ErrorKind::NotFound {
            DiskErrorKind::NotFound
        } else {
            DiskErrorKind::Io
        };
        let mut e = DiskError::new(kind, Some(path), what);
        e.repr.source = Some(source);
        e
    }

    pub(crate) fn corrupt(path: &Path, what: impl Into<String>) -> DiskError {
        DiskError::new(DiskErrorKind::Corrupt, Some(path), what)
    }

    pub(crate) fn invalid(what: impl Into<String>) -> DiskError {
        DiskError::new(DiskErrorKind::Invalid, None, what)
    }

    pub(crate) fn mismatch(path: &Path, differing: Vec<(String, String, String)>) -> DiskError {
        let list: Vec<String> = differing
            .iter()
            .map(|(name, index, given)| format!("{name} (index {index}, given {given})"))
            .collect();
        let mut e = DiskError::new(
            DiskErrorKind::SettingsMismatch,
            Some(path),
            format!("the index was made with other settings: {}", list.join(", ")),
        );
        e.repr.settings = differing.into_iter().map(|(name, ..)| name).collect();
        e
    }
}

impl fmt::Display for DiskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.repr.what),
            None => f.write_str(&self.repr.what),
        }
    }
}

impl Error for DiskError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.repr.source.as_ref().map(|e| e as &(dyn Error + 'static))
    }
}
