//! `simhash_rs.audit(report, labels)`: the estimate `simhash audit --json` prints, as its
//! JSON text (the package parses it into a dict), from the same library function.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The estimate of `report` (a `--report` page) and `labels` (a labels file exported from
/// it) as JSON. Labels of another run raise `ValueError` naming both run ids; an unreadable
/// file `OSError`.
#[pyfunction]
pub(crate) fn audit(py: Python<'_>, report: &str, labels: &str) -> PyResult<String> {
    let (report, labels) = (std::path::Path::new(report), std::path::Path::new(labels));
    let estimate = py.detach(|| simhash_jobs::audit::audit(report, labels)).map_err(|e| {
        match e.find::<simhash_jobs::audit::OtherRun>() {
            Some(other) => PyValueError::new_err(other.to_string()),
            None => crate::errors::job(e),
        }
    })?;
    Ok(estimate.json())
}
