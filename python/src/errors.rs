//! Rust errors as Python exceptions, with the library's messages.

use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use simhash_index::disk::{DiskError, DiskErrorKind};
use simhash_index::lsh::{EngineError, EngineErrorKind};

create_exception!(
    _native,
    CorruptIndexError,
    PyOSError,
    "An index file is damaged (truncated or altered): the message names it."
);
create_exception!(
    _native,
    IndexLockedError,
    PyOSError,
    "Another writer holds the index's lock (one writer at a time; readers are never blocked)."
);

/// The error and its sources, as one message (`what: why: deeper why`).
fn message(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// A disk index error: `FileNotFoundError`, `OSError`, [`CorruptIndexError`],
/// [`IndexLockedError`] or `ValueError` (settings), by its kind.
#[allow(clippy::needless_pass_by_value)] // a `map_err` adapter
pub(crate) fn disk(e: DiskError) -> PyErr {
    let text = message(&e);
    match e.kind() {
        DiskErrorKind::NotFound => PyFileNotFoundError::new_err(text),
        DiskErrorKind::Io => PyOSError::new_err(text),
        DiskErrorKind::Corrupt => CorruptIndexError::new_err(text),
        DiskErrorKind::Locked => IndexLockedError::new_err(text),
        DiskErrorKind::SettingsMismatch | DiskErrorKind::Invalid | DiskErrorKind::Version => {
            PyValueError::new_err(text)
        }
        _ => PyRuntimeError::new_err(text),
    }
}

/// A MinHash engine error: `ValueError` for settings, `OSError` for its temporary files.
#[allow(clippy::needless_pass_by_value)] // a `map_err` adapter
pub(crate) fn engine(e: EngineError) -> PyErr {
    let text = message(&e);
    match e.kind() {
        EngineErrorKind::Config | EngineErrorKind::Mismatch => PyValueError::new_err(text),
        EngineErrorKind::Io | EngineErrorKind::TempFile => PyOSError::new_err(text),
        _ => PyRuntimeError::new_err(text),
    }
}

/// Any other library error (settings checked by the library) as a `ValueError`.
#[allow(clippy::needless_pass_by_value)] // a `map_err` adapter
pub(crate) fn value(e: impl std::error::Error) -> PyErr {
    PyValueError::new_err(message(&e))
}
