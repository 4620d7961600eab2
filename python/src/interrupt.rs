//! Long calls that Ctrl-C can interrupt.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often a waiting call checks for signals.
const POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a thread of its own (its parallel parts on rayon's pool) while this
/// thread waits with the GIL released, checking for signals every 50 ms: a pending
/// `KeyboardInterrupt` (or any exception a signal handler raises) is returned at once, and
/// the work's result, when it comes, is dropped. A panic in `work` is a `RuntimeError`
/// naming it, never an abort.
pub(crate) fn run<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new()
        .name("simhash_rs".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(work));
            // The caller may have gone (interrupted): nobody to tell.
            let _ = tx.send(result);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    loop {
        match py.detach(|| rx.recv_timeout(POLL)) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => return Err(panicked(&*panic)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "internal error: the worker thread ended without an answer",
                ));
            }
        }
    }
}

/// Runs `work` with the GIL released on this thread; a panic is a `RuntimeError`.
pub(crate) fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(work))).map_err(|p| panicked(&*p))
}

fn panicked(panic: &(dyn std::any::Any + Send)) -> PyErr {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned());
    PyRuntimeError::new_err(format!("internal error in simhash_rs: {what}"))
}
