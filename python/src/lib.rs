//! The native module of the `simhash_rs` Python package (`simhash_rs._native`).
//!
//! The public Python API is the `simhash_rs` package (`python/simhash_rs`, whose modules
//! `__init__.py` re-exports): it cuts inputs into chunks (a list, any iterable of `str`, or
//! a pyarrow / polars string column), passes the matching arguments as given (`settings`
//! resolves them by the one settings contract) and calls the classes here, which do the
//! work on rayon's pool with the GIL released. Long searches run on a thread of their own
//! while the calling thread waits with the GIL released and checks for signals, so Ctrl-C
//! raises `KeyboardInterrupt` in the middle of a search (`interrupt::run`). The engines are
//! the workspace's own (`simhash-core`, `simhash-index`): the same decisions as the
//! `simhash` command line.

use pyo3::prelude::*;

mod audit;
mod contamination;
mod disk;
mod errors;
mod interrupt;
mod matcher;
mod page;
mod settings;
mod sketch;
mod table;
mod texts;

/// The module: classes and functions that the `simhash_rs` package wraps.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_PERM", simhash_core::MAX_PERM)?;
    m.add("MAX_WINDOW", simhash_core::MAX_WINDOW)?;
    m.add("CorruptIndexError", m.py().get_type::<errors::CorruptIndexError>())?;
    m.add("IndexLockedError", m.py().get_type::<errors::IndexLockedError>())?;
    m.add_function(wrap_pyfunction!(sketch::hamming, m)?)?;
    m.add_function(wrap_pyfunction!(sketch::preset_window, m)?)?;
    m.add_function(wrap_pyfunction!(settings::resolve_settings, m)?)?;
    m.add_function(wrap_pyfunction!(audit::audit, m)?)?;
    m.add_class::<sketch::Fingerprinter>()?;
    m.add_class::<sketch::MinHasher>()?;
    m.add_class::<matcher::Matcher>()?;
    m.add_class::<page::DedupRun>()?;
    m.add_class::<contamination::Contamination>()?;
    m.add_class::<table::HammingTable>()?;
    m.add_class::<disk::NativeIndex>()?;
    m.add_class::<disk::NativeWriter>()?;
    m.add_class::<disk::NativeDedup>()?;
    Ok(())
}
