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
    disk_exception(e.kind(), message(&e))
}

/// The exception of a disk index error's kind, with `text`.
fn disk_exception(kind: DiskErrorKind, text: String) -> PyErr {
    match kind {
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
    engine_exception(e.kind(), message(&e))
}

/// The exception of a MinHash engine error's kind, with `text`.
fn engine_exception(kind: EngineErrorKind, text: String) -> PyErr {
    match kind {
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

/// An application-layer error ([`simhash_jobs::JobError`]): the engine's or the index's
/// error behind it mapped as [`engine`] and [`disk`] map them (so a step run through
/// `simhash_jobs` raises what the engine's own call raised), a settings refusal as a
/// `ValueError`, an input or output as an `OSError` (`FileNotFoundError` for a missing
/// file), anything else a `RuntimeError`.
#[allow(clippy::needless_pass_by_value)] // a `map_err` adapter
pub(crate) fn job(e: simhash_jobs::JobError) -> PyErr {
    use simhash_jobs::ErrorKind;
    let text = message(&e);
    if let Some(inner) = e.find::<DiskError>() {
        return disk_exception(inner.kind(), text);
    }
    if let Some(inner) = e.find::<EngineError>() {
        return engine_exception(inner.kind(), text);
    }
    match e.kind() {
        ErrorKind::Settings => PyValueError::new_err(text),
        // A file that is not there: `FileNotFoundError` (an `OSError`), as Python's own.
        ErrorKind::Input | ErrorKind::Output | ErrorKind::Io
            if e.find::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) =>
        {
            PyFileNotFoundError::new_err(text)
        }
        ErrorKind::Input | ErrorKind::Output | ErrorKind::Io => PyOSError::new_err(text),
        _ => PyRuntimeError::new_err(text),
    }
}
